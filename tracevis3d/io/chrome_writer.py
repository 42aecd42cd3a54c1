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

import numpy as np

from ..model import Trace
from .atomic import replaced_whole


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
    for what, v in (("a call start", trace.start), ("a call duration", trace.duration),
                    ("an instant", trace.instant_ts), ("a counter sample time", trace.counter_ts),
                    ("an async slice start", trace.async_start), ("an async slice end", trace.async_end)):
        if v.size and not (np.isfinite(v).all() and float(np.abs(v).max()) + abs(origin) < MAX_EXPORT_US):
            bad = v[~np.isfinite(v) | (np.abs(v) + abs(origin) >= MAX_EXPORT_US)][0]
            raise ValueError(f"cannot export {what} of {bad!r} µs (clock origin {origin!r} µs) as "
                             f"Chrome JSON: times must be finite and under {MAX_EXPORT_US:.0e} µs")
    if trace.counter_value.size and not np.isfinite(trace.counter_value).all():
        bad = trace.counter_value[~np.isfinite(trace.counter_value)][0]
        raise ValueError(f"cannot export a counter value of {bad!r} as Chrome JSON: JSON has no {bad!r}")


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
    for part in instant_events(trace, origin, chunk_calls):
        yield (b", " if sep else b"") + part
        sep = True
    for part in side_events(trace, origin, chunk_calls):
        yield (b", " if sep else b"") + part
        sep = True
    # a trace whose recorder's buffer was full (`io.chrome`: meta["complete_from"]) says so again, as VizTracer does
    overflow = isinstance(trace.meta, dict) and trace.meta.get("complete_from") is not None
    if style == "sorted":
        yield ('], "viztracer_metadata": {"overflow": true}}' if overflow else ']}').encode()
    else:
        yield ('], "viztracer_metadata": {"version": "tracevis3d-export"' + (', "overflow": true' if overflow else "")
               + '}}').encode()


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


def _numbers(values) -> list:
    """The JSON texts (bytes, shortest round-trip form) of float64 ``values``: one orjson call
    per chunk, not one json.dumps per number (10^6 counter samples: 12 s of export, 22× the
    calls')."""
    import orjson

    v = np.ascontiguousarray(values, np.float64)
    return orjson.dumps(v, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",") if v.size else []


def _json(text: str) -> bytes:
    return json.dumps(text).encode("utf-8")


def _thread_ids(trace: Trace) -> list:
    """Per thread, its events' ``"pid":P,"tid":T`` (bytes)."""
    return [b'"pid":%d,"tid":%d' % (p, q) for p, q in zip(trace.thread_pid.tolist(), trace.thread_tid.tolist())]


def instant_events(trace: Trace, origin: float, chunk: int = CHUNK_CALLS):
    """JSON text (bytes: comma-separated ``i`` events, one piece per ``chunk`` instants) of the
    trace's instants: on their thread, or their process's (``pid``, tid 0) for the process
    and global scopes."""
    n = trace.instant_ts.size
    if not n:
        return
    names = [_json(x) for x in trace.instant_names]
    on_thread = _thread_ids(trace)
    for lo in range(0, n, max(int(chunk), 1)):
        hi = min(lo + chunk, n)
        th, pid = trace.instant_thread[lo:hi].tolist(), trace.instant_pid[lo:hi].tolist()
        scope = [bytes([c]) if c else b"t" for c in trace.instant_scope[lo:hi].tolist()]
        yield b",".join(b'{"ph":"i",%s,"ts":%s,"s":"%s","name":%s}' % (
            on_thread[t] if t >= 0 else b'"pid":%d,"tid":0' % max(p, 0), ts, sc, names[k])
            for t, p, ts, sc, k in zip(th, pid, _numbers(trace.instant_ts[lo:hi] + origin), scope,
                                       trace.instant_name[lo:hi].tolist()))


def side_events(trace: Trace, origin: float, chunk: int = CHUNK_CALLS):
    """JSON text (bytes: comma-separated events, one piece per chunk) of what a trace carries
    besides calls and instants: counters (one ``C`` event per sample, its series the args
    key), async slices (``b``/``e`` pairs of their track's category and id) and flows (``s`` at
    a time inside the source call's own time, ``f`` with ``bp: "e"`` likewise in the target:
    `flow_point_times`), so that a re-import binds them to the same calls.  Per chunk a few
    vectorised steps and one join: the texts that repeat (a series' head, a track's keys, a
    thread's ids) are made once."""
    chunk = max(int(chunk), 1)
    n = trace.counter_ts.size
    if n:
        heads = [b'{"ph":"C","pid":%d,"name":%s,"args":{%s:' % (
            int(trace.series_pid[sr]), _json(trace.counter_names[int(trace.series_counter[sr])]),
            _json(trace.series_names[sr])) for sr in range(len(trace.series_names))]
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            yield b",".join(heads[sr] + v + b'},"ts":' + ts + b"}" for sr, v, ts in zip(
                trace.counter_series[lo:hi].tolist(), _numbers(trace.counter_value[lo:hi]),
                _numbers(trace.counter_ts[lo:hi] + origin)))
    n = trace.async_start.size
    if n:
        tracks = [(b'"pid":%d,"tid":0,"cat":%s,%s' % (int(trace.async_track_pid[tk]), _json(trace.async_track_cats[tk]),
                                                      _async_id_json(trace, tk).encode("utf-8")))
                  for tk in range(trace.async_track_pid.size)]
        names = [_json(x) for x in trace.async_names]
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            yield b",".join(b'{"ph":"b",%s"name":%s,"ts":%s},{"ph":"e",%s"name":%s,"ts":%s}' % (
                tracks[tk], names[nm], t0, tracks[tk], names[nm], t1) for tk, nm, t0, t1 in zip(
                trace.async_track[lo:hi].tolist(), trace.async_name[lo:hi].tolist(),
                _numbers(trace.async_start[lo:hi] + origin), _numbers(trace.async_end[lo:hi] + origin)))
    n = trace.flow_id.size
    if n:
        cats = [_json(c or "flow") for c in trace.flow_cat_names] or [b'"flow"']  # flows chain by (cat, id)
        on_thread = _thread_ids(trace)
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            src, dst = trace.flow_from[lo:hi], trace.flow_to[lo:hi]
            cat = trace.flow_cat[lo:hi].tolist() if trace.flow_cat_names else [0] * (hi - lo)
            yield b",".join(
                b'{"ph":"s",%s,"cat":%s,"name":"flow","id":%d,"ts":%s},'
                b'{"ph":"f",%s,"cat":%s,"name":"flow","id":%d,"ts":%s,"bp":"e"}' % (
                    on_thread[ta], cats[c], k, t0, on_thread[tb], cats[c], k, t1)
                for ta, tb, c, k, t0, t1 in zip(
                    trace.thread[src].tolist(), trace.thread[dst].tolist(), cat, trace.flow_id[lo:hi].tolist(),
                    _numbers(flow_point_times(trace, src) + origin), _numbers(flow_point_times(trace, dst) + origin)))


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
    that replaces ``path`` only once complete (`atomic.replaced_whole`): a failed export never
    leaves a half file nor loses the one that was there."""
    path = os.fspath(path)
    with replaced_whole(path) as tmp, open(tmp, "wb") as raw:
        if path.endswith(".gz"):
            import gzip

            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=gzip_level or 6, mtime=0) as f:
                for part in iter_chrome_json(trace, style=style):
                    f.write(part)
        else:
            for part in iter_chrome_json(trace, style=style):
                raw.write(part)
