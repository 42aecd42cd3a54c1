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


def chrome_json_bytes(trace: Trace, style: str = "sorted", clock_origin: float | None = None,
                      with_args: bool = True) -> bytes:
    if style not in ("sorted", "viztracer"):
        raise ValueError(f"style must be 'sorted' or 'viztracer', got {style!r}")
    origin = trace.meta.get("clock_origin", 0.0) if clock_origin is None else clock_origin
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
    names = [json.dumps(s) for s in trace.function_names]
    n = len(trace)
    order = np.lexsort((-trace.start, trace.end)) if style == "viztracer" else np.arange(n)
    ts = trace.start[order] + origin
    dur = trace.duration[order]
    th = trace.thread[order]
    fn = trace.func[order]
    pids = trace.thread_pid[th]
    tids = trace.thread_tid[th]
    args_of = {}
    if with_args and len(trace.args_call):
        for k, c in enumerate(trace.args_call):
            args_of[int(c)] = trace.args_blob[trace.args_ptr[k]: trace.args_ptr[k + 1]].tobytes().decode("utf-8")
    ts_s = np.char.mod("%.3f", ts) if style == "viztracer" else [repr(float(x)) for x in ts]
    dur_s = np.char.mod("%.3f", dur) if style == "viztracer" else [repr(float(x)) for x in dur]
    for k in range(n):
        a = args_of.get(int(order[k])) if args_of else None
        extra = f', "args": {a}' if a is not None else ""
        out.append(f'{{"pid": {pids[k]}, "tid": {tids[k]}, "ts": {ts_s[k]}, "ph": "X", '
                   f'"cat": "FEE", "name": {names[fn[k]]}, "dur": {dur_s[k]}{extra}}}')
    for k in range(len(trace.instant_ts)):
        t = int(trace.instant_thread[k])
        pid, tid = (int(trace.thread_pid[t]), int(trace.thread_tid[t])) if t >= 0 else (0, 0)
        out.append(json.dumps({"ph": "i", "pid": pid, "tid": tid, "ts": float(trace.instant_ts[k] + origin),
                               "s": chr(int(trace.instant_scope[k])) if trace.instant_scope[k] else "t",
                               "name": trace.instant_names[int(trace.instant_name[k])]}))
    head = '{"traceEvents": [' if style == "viztracer" else '{"displayTimeUnit": "ms", "traceEvents": ['
    tail = ']}' if style == "sorted" else '], "viztracer_metadata": {"version": "tracevis3d-export"}}'
    return (head + ", ".join(out) + tail).encode("utf-8")


def save_chrome(trace: Trace, path, style: str = "sorted", gzip_level: int | None = None) -> None:
    """Write ``trace`` as Chrome Trace Event JSON (gzip when the name ends in .gz)."""
    data = chrome_json_bytes(trace, style=style)
    path = os.fspath(path)
    if path.endswith(".gz"):
        import gzip

        data = gzip.compress(data, compresslevel=gzip_level or 6)
    with open(path, "wb") as f:
        f.write(data)
