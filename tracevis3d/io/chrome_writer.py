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
#: the metadata event that keeps a counter series' unit (Chrome's ``C`` events have none; other
#: readers skip metadata names they do not know): args ``counter``, ``series``, ``unit``
COUNTER_UNIT_EVENT = "tracevis3d_counter_unit"


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
    for sr, unit in enumerate(trace.series_units):  # Chrome's C events carry no unit: one M event a series
        if unit:
            out.append(json.dumps({"ph": "M", "pid": int(trace.series_pid[sr]), "tid": 0, "name": COUNTER_UNIT_EVENT,
                                   "args": {"counter": trace.counter_names[int(trace.series_counter[sr])],
                                            "series": trace.series_names[sr], "unit": unit}}))
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
        p, q = (int(trace.thread_pid[t]), int(trace.thread_tid[t])) if t >= 0 else (max(int(trace.instant_pid[k]), 0), 0)
        instants.append(json.dumps({"ph": "i", "pid": p, "tid": q, "ts": float(trace.instant_ts[k] + origin),
                                    "s": chr(int(trace.instant_scope[k])) if trace.instant_scope[k] else "t",
                                    "name": trace.instant_names[int(trace.instant_name[k])]}))
        if len(instants) >= chunk_calls:
            yield ((", " if sep else "") + ", ".join(instants)).encode("utf-8")
            sep, instants = True, []
    if instants:
        yield ((", " if sep else "") + ", ".join(instants)).encode("utf-8")
        sep = True
    for part in side_events(trace, origin, chunk_calls):
        yield ((", " if sep else "") + part).encode("utf-8")
        sep = True
    yield (']}' if style == "sorted" else '], "viztracer_metadata": {"version": "tracevis3d-export"}}').encode()


def flow_point_times(trace: Trace, calls: np.ndarray) -> np.ndarray:
    """A time inside each call's own time (not inside a child), where Chrome's enclosing-slice
    rule binds a flow point to the call itself: the middle of the time before its first child
    (or of the whole call, without children), else of the time after its last child; the start
    when children cover it all (the point then binds to the child that starts with it)."""
    calls = np.asarray(calls, np.int64)
    n = len(trace)
    start, end = trace.start[calls], trace.end[calls]
    first = np.minimum(calls + 1, max(n - 1, 0))
    has_child = (calls + 1 < n) & (trace.parent[first] == calls)
    free_start = ~has_child | (trace.start[first] > start)
    last_end = _last_child_end(trace, calls, has_child)
    lead_end = np.where(has_child, np.minimum(trace.start[first], end), end)
    gap = np.where(last_end < end, (last_end + end) / 2, start)
    # the middle of a gap, not its edge: the calls' times are written to the nanosecond
    return np.where(free_start, (start + lead_end) / 2, gap)


def _last_child_end(trace: Trace, calls: np.ndarray, has_child: np.ndarray) -> np.ndarray:
    """The end of each call's last child (its start when it has none): from the subtree's
    last call (pre-order) up the parents to the call's child, one vectorised step per level."""
    out = trace.start[calls].astype(np.float64)
    idx = np.flatnonzero(has_child)
    if idx.size:
        c = calls[idx]
        j = np.asarray(trace.end_index, np.int64)[c] - 1
        todo = trace.parent[j] != c
        while todo.any():
            j[todo] = trace.parent[j[todo]]
            todo = trace.parent[j] != c
        out[idx] = trace.end[j]
    return out


def side_events(trace: Trace, origin: float, chunk: int = CHUNK_CALLS):
    """JSON text (comma-separated events, one string per chunk) of what a trace carries besides
    calls and instants: counters (one ``C`` event per sample, its series the args key), async
    slices (``b``/``e`` pairs of their track's category and id) and flows (``s`` at a time
    inside the source call's own time, ``f`` with ``bp: "e"`` likewise in the target:
    `flow_point_times`), so that a re-import binds them to the same calls."""
    parts = []

    def flush():
        nonlocal parts
        text = ", ".join(parts)
        parts = []
        return text

    def num(v: float) -> str:
        return json.dumps(float(v))

    for k in range(trace.counter_ts.size):
        sr = int(trace.counter_series[k])
        c = int(trace.series_counter[sr])
        parts.append(f'{{"ph":"C","pid":{int(trace.series_pid[sr])},"ts":{num(trace.counter_ts[k] + origin)},'
                     f'"name":{json.dumps(trace.counter_names[c])},'
                     f'"args":{{{json.dumps(trace.series_names[sr])}:{num(trace.counter_value[k])}}}}}')
        if len(parts) >= chunk:
            yield flush()
    track_keys = [_async_id_json(trace, tk) for tk in range(trace.async_track_pid.size)]
    for k in range(trace.async_start.size):
        tk = int(trace.async_track[k])
        head = (f'"pid":{int(trace.async_track_pid[tk])},"tid":0,"cat":{json.dumps(trace.async_track_cats[tk])},'
                f'{track_keys[tk]}"name":{json.dumps(trace.async_names[int(trace.async_name[k])])}')
        parts.append(f'{{"ph":"b",{head},"ts":{num(trace.async_start[k] + origin)}}}')
        parts.append(f'{{"ph":"e",{head},"ts":{num(trace.async_end[k] + origin)}}}')
        if len(parts) >= chunk:
            yield flush()
    if trace.flow_id.size:
        t_from = flow_point_times(trace, trace.flow_from)
        t_to = flow_point_times(trace, trace.flow_to)
        cats = [json.dumps(c or "flow") for c in trace.flow_cat_names]  # flows chain by (cat, id)
        for k in range(trace.flow_id.size):
            cat = cats[int(trace.flow_cat[k])] if cats else '"flow"'
            for ph, call, ts, extra in (("s", trace.flow_from[k], t_from[k], ""),
                                        ("f", trace.flow_to[k], t_to[k], ',"bp":"e"')):
                th = int(trace.thread[call])
                parts.append(f'{{"ph":"{ph}","pid":{int(trace.thread_pid[th])},"tid":{int(trace.thread_tid[th])},'
                             f'"cat":{cat},"name":"flow","id":{int(trace.flow_id[k])},"ts":{num(ts + origin)}{extra}}}')
            if len(parts) >= chunk:
                yield flush()
    if parts:
        yield flush()


def _async_id_json(trace: Trace, tk: int) -> str:
    """The id keys of async track ``tk`` as the file had them (``id``, ``id2.global`` or
    ``id2.local``, and ``scope``), each followed by a comma."""
    kind = int(trace.async_track_id_kind[tk])
    idt = json.dumps(trace.async_track_ids[tk])
    out = {0: "", 1: f'"id":{idt},', 2: f'"id2":{{"global":{idt}}},', 3: f'"id2":{{"local":{idt}}},'}[kind]
    scope = trace.async_track_scopes[tk]
    return out + (f'"scope":{json.dumps(scope)},' if scope else "")


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
