"""The live tracer writing the whole run to one Chrome JSON file (no sockets): the
reference a live viewer's trace is compared with (``python -m tracevis3d.live record``)."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import numpy as np

from . import protocol as P
from .convert import Converter
from .tracer import make_hooks


class Recorder:
    def __init__(self):
        self.parts: list = []
        self.hooks = make_hooks(self._sink, native=False)  # the reference: Python hooks
        self.converter = Converter(self.hooks.origin)

    def _sink(self, slot, batch) -> None:
        self.parts.append(self.converter.convert(slot.index, batch))

    def start(self) -> "Recorder":
        self.hooks.start()
        return self

    def stop(self):
        """Stop and return the run as a Trace (built from the events like a viewer does)."""
        rest = self.hooks.stop()
        now = self.hooks.clock()
        for slot, batch in rest:
            self._sink(slot, batch)
        for _, rec in self.converter.close_all(now):
            self.parts.append(rec)
        return events_to_trace(np.concatenate(self.parts) if self.parts else np.zeros(0, P.EVENT_DTYPE),
                               self.converter.funcs.entries,
                               [(os.getpid(), s.native_id, s.name) for s in self.hooks.slots])


def events_to_trace(rec: np.ndarray, functions: list, threads: list):
    """A Trace from protocol records (threads in table order, calls in pre-order)."""
    from ..kernels.live import MAX_EXIT_SEARCH, apply_thread_events
    from ..model import Trace
    from ..names import parse_function_name
    from ..kinds import classify_functions

    cols = {k: [] for k in ("func", "start", "end", "depth", "parent", "end_index", "thread")}
    base = 0
    for t in range(len(threads)):
        r = rec[rec["thread"] == t]
        m = r.shape[0]
        func, start, end = np.zeros(m, np.int32), np.zeros(m), np.zeros(m)
        depth, parent, endi, stack = (np.zeros(m, np.int32) for _ in range(4))
        n, sp, *_ = apply_thread_events(r["type"], r["func"].astype(np.int32), r["ts"] / 1000.0, func, start,
                                        end, depth, parent, endi, 0, stack, 0, -np.inf, MAX_EXIT_SEARCH)
        endi[stack[:sp]] = n
        for k, v in (("func", func), ("start", start), ("end", end), ("depth", depth)):
            cols[k].append(v[:n])
        cols["parent"].append(np.where(parent[:n] >= 0, parent[:n] + base, -1))
        cols["end_index"].append(endi[:n] + base)
        cols["thread"].append(np.full(n, t, np.int32))
        base += n
    c = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
    names = [f[0] for f in functions]
    parsed = [parse_function_name(nm, fl, ln) for nm, fl, ln in functions]
    fkind = classify_functions(names) if names else np.zeros(0, np.uint8)
    func = c["func"].astype(np.int32)
    return Trace(
        func=func, start=c["start"].astype(np.float64), end=c["end"].astype(np.float64),
        depth=c["depth"].astype(np.int32), parent=c["parent"].astype(np.int32),
        end_index=c["end_index"].astype(np.int32), thread=c["thread"].astype(np.int32),
        kind=(fkind[func] if func.size else np.zeros(0, np.uint8)).astype(np.uint8),
        obj_ptr=np.zeros(func.shape[0] + 1, np.int64), obj_ids=np.zeros(0, np.int32),
        function_names=names, function_files=[f[1] or p.file for f, p in zip(functions, parsed)],
        function_lines=np.array([f[2] if f[2] >= 0 else p.line for f, p in zip(functions, parsed)], np.int32),
        function_cats=[""] * len(names), function_paths=[p.path for p in parsed],
        thread_pid=np.array([t[0] for t in threads], np.int64),
        thread_tid=np.array([t[1] for t in threads], np.int64),
        thread_names=[t[2] for t in threads], thread_sort=np.arange(len(threads), dtype=np.int32),
        process_names=[os.path.basename(sys.argv[0] or "python")] * len(threads),
        meta={"source": "tracevis3d.live record", "clock_origin": 0.0})


@contextmanager
def record(path: str | None = None):
    """Trace the block with the live tracer; save a Chrome JSON file at ``path`` when given."""
    r = Recorder().start()
    box = {}
    try:
        yield box
    finally:
        trace = r.stop()
        box["trace"] = trace
        if path:
            from ..io.chrome_writer import save_chrome

            save_chrome(trace, path)
