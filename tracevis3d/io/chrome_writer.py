"""Trace → Chrome Trace Event JSON (opens in Perfetto, chrome://tracing, speedscope).

``style="viztracer"`` reproduces what VizTracer writes (``X`` events ordered by
END time, so children come before parents, threads interleaved, absolute
timestamps with nanosecond decimals, names ``func (file:line)``, ``M`` name
events first) -- the benchmark uses it to make realistic 1M-event files.
``style="sorted"`` writes X events in pre-order per thread.
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from ..model import Trace


#: calls formatted per chunk of the streamed export (a few tens of MB of text at most)
CHUNK_CALLS = 1 << 16
#: a stored time past this many µs (about 290,000 years) cannot be exported in nanoseconds
MAX_EXPORT_US = 9.0e15


def _metadata_events(trace: Trace) -> list:
    out = []
    proc_rank: dict = {}
    for t in range(trace.n_threads):
        pid, tid = int(trace.thread_pid[t]), int(trace.thread_tid[t])
        if pid not in proc_rank:  # keep the thread order on re-import
            proc_rank[pid] = len(proc_rank)
            out.append(json.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "process_sort_index",
                                   "args": {"sort_index": proc_rank[pid]}}))
        out.append(json.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                               "args": {"sort_index": t}}))
        out.append(json.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                               "args": {"name": trace.thread_names[t]}}))
        if trace.process_names[t]:
            out.append(json.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "process_name",
                                   "args": {"name": trace.process_names[t]}}))
    return out


def _check_times(trace: Trace, origin: float) -> None:
    for what, v in (("start", trace.start), ("duration", trace.duration), ("instant", trace.instant_ts)):
        if v.size and not (np.isfinite(v).all() and float(np.abs(v).max()) + abs(origin) < MAX_EXPORT_US):
            bad = v[~np.isfinite(v) | (np.abs(v) + abs(origin) >= MAX_EXPORT_US)][0]
            raise ValueError(f"cannot export a call {what} of {bad!r} µs (clock origin {origin!r} µs) as "
                             f"Chrome JSON: times must be finite and under {MAX_EXPORT_US:.0e} µs")


def iter_chrome_json(trace: Trace, style: str = "sorted", clock_origin: float | None = None,
                     with_args: bool = True, chunk_calls: int = CHUNK_CALLS):
    """Chrome Trace Event JSON of ``trace`` as a sequence of byte strings (their
    concatenation is the document): metadata events, the calls ``CHUNK_CALLS`` at a time
    (`kernels.jsonwrite.x_events`), the instants.  Memory: the order of the calls and one
    chunk's text, whatever the trace's size."""
    from ..kernels.jsonwrite import EVENT_FIXED_BYTES, x_events

    if style not in ("sorted", "viztracer"):
        raise ValueError(f"style must be 'sorted' or 'viztracer', got {style!r}")
    origin = float(trace.meta.get("clock_origin", 0.0) if clock_origin is None else clock_origin)
    _check_times(trace, origin)
    head = '{"traceEvents": [' if style == "viztracer" else '{"displayTimeUnit": "ms", "traceEvents": ['
    meta = _metadata_events(trace)
    yield (head + ", ".join(meta)).encode("utf-8")
    sep = bool(meta)
    n = len(trace)
    names = [json.dumps(s).encode("utf-8") for s in trace.function_names]
    name_len = np.array([len(b) for b in names], np.int64)
    name_ptr = np.zeros(len(names) + 1, np.int64)
    np.cumsum(name_len, out=name_ptr[1:])
    name_blob = np.frombuffer(b"".join(names), np.uint8) if names else np.zeros(0, np.uint8)
    # the calls' argument objects: slot k of args_ptr/args_blob belongs to call args_call[k]
    arg_slot = np.full(n, -1, np.int64)
    args_len = np.zeros(n, np.int64)
    args_ptr = np.asarray(trace.args_ptr, np.int64)
    args_blob = np.asarray(trace.args_blob, np.uint8)
    if with_args and len(trace.args_call):
        with_a = np.asarray(trace.args_call, np.int64)
        arg_slot[with_a] = np.arange(with_a.size)
        args_len[with_a] = np.diff(args_ptr)
    # VizTracer writes a call when it ends: children before parents
    order = np.lexsort((-trace.start, trace.end)) if style == "viztracer" else np.arange(n, dtype=np.int64)
    pid = np.asarray(trace.thread_pid, np.int64)
    tid = np.asarray(trace.thread_tid, np.int64)
    for lo in range(0, n, max(int(chunk_calls), 1)):
        calls = order[lo: lo + chunk_calls]
        size = calls.size * EVENT_FIXED_BYTES + int(name_len[trace.func[calls]].sum()) + int(args_len[calls].sum())
        buf = np.empty(size, np.uint8)
        m = x_events(calls, trace.start, trace.duration, origin, trace.thread, trace.func, pid, tid, name_blob,
                     name_ptr, arg_slot, args_blob, args_ptr, sep, buf)
        sep = True
        yield buf[:m].tobytes()
    instants = []
    for k in range(len(trace.instant_ts)):
        t = int(trace.instant_thread[k])
        p, q = (int(trace.thread_pid[t]), int(trace.thread_tid[t])) if t >= 0 else (0, 0)
        instants.append(json.dumps({"ph": "i", "pid": p, "tid": q, "ts": float(trace.instant_ts[k] + origin),
                                    "s": chr(int(trace.instant_scope[k])) if trace.instant_scope[k] else "t",
                                    "name": trace.instant_names[int(trace.instant_name[k])]}))
        if len(instants) >= chunk_calls:
            yield ((", " if sep else "") + ", ".join(instants)).encode("utf-8")
            sep, instants = True, []
    if instants:
        yield ((", " if sep else "") + ", ".join(instants)).encode("utf-8")
    yield (']}' if style == "sorted" else '], "viztracer_metadata": {"version": "tracevis3d-export"}}').encode()


def chrome_json_bytes(trace: Trace, style: str = "sorted", clock_origin: float | None = None,
                      with_args: bool = True) -> bytes:
    """The whole document of `iter_chrome_json` in memory (small traces, tests)."""
    return b"".join(iter_chrome_json(trace, style, clock_origin, with_args))


def save_chrome(trace: Trace, path, style: str = "sorted", gzip_level: int | None = None) -> None:
    """Write ``trace`` as Chrome Trace Event JSON (gzip when the name ends in .gz), streamed
    (`iter_chrome_json`: bounded memory at any size) into a temporary file beside ``path``
    that replaces ``path`` only once complete: a failed export never leaves a half file nor
    loses the one that was there."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tv3d-export-", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.endswith(".gz"):
                import gzip

                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=gzip_level or 6,
                                   mtime=0) as f:
                    for part in iter_chrome_json(trace, style=style):
                        f.write(part)
            else:
                for part in iter_chrome_json(trace, style=style):
                    raw.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
