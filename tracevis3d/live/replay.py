"""Play a recorded trace through the live protocol, in time order:
``python -m tracevis3d replay TRACE ENDPOINT [--speed X]``.

Per thread, the ENTER/EXIT sequence of a pre-order call tree is: enter i, the events of
i's subtree, exit i; threads are merged by time (a stable sort keeps each thread's order,
its timestamps never decrease in a valid Trace).
"""
from __future__ import annotations

import math
import time

import numpy as np

from . import protocol as P
from .transport import Curve


#: the protocol's clock is int64 nanoseconds; times stay below this many ns (146 years)
#: so that sums and differences of two of them cannot wrap either
MAX_TICKS = 1 << 62


def clock_shift_us(trace) -> float:
    """µs to subtract from every time of ``trace`` so its ticks fit `MAX_TICKS`: 0 when
    they fit as they are (the stream keeps the trace's own origin), else its earliest time
    (the HELLO's clock origin carries the shift).  A trace whose span itself does not fit
    is refused with a one-line ValueError (valid traces may hold any |time| < 1e21 µs:
    converted to int64 ns as they were, every call was lost)."""
    if not len(trace):
        return 0.0
    lo = min(float(trace.start.min()), float(trace.end.min()))
    hi = max(float(trace.start.max()), float(trace.end.max()))
    if max(abs(lo), abs(hi)) * 1000.0 < MAX_TICKS:
        return 0.0
    if (hi - lo) * 1000.0 >= MAX_TICKS:
        raise ValueError(f"replay: the trace spans {hi - lo:.6g} µs, more than the live protocol's 64-bit "
                         f"nanosecond clock carries ({MAX_TICKS / 1000:.6g} µs); cut a time window out of it first")
    return lo


def trace_events(trace, shift_us: float | None = None) -> np.ndarray:
    """All ENTER/EXIT records of ``trace`` in time order (ts in ns from the trace origin,
    moved by ``shift_us``: default `clock_shift_us`)."""
    n = len(trace)
    shift = clock_shift_us(trace) if shift_us is None else shift_us
    idx = np.arange(n, dtype=np.int64)
    # per-thread structural order: enter i -> key (i, 1, 0); exit i -> (end_index[i], 0, -depth[i])
    major = np.concatenate([idx, trace.end_index.astype(np.int64)])
    minor = np.concatenate([np.ones(n, np.int64), np.zeros(n, np.int64)])
    deep = np.concatenate([np.zeros(n, np.int64), -trace.depth.astype(np.int64)])
    order = np.lexsort((deep, minor, major))
    call = np.concatenate([idx, idx])[order]
    is_exit = order >= n
    ts_us = np.where(is_exit, trace.end[call], trace.start[call])
    ticks = np.rint((ts_us - shift) * 1000.0).astype(np.int64)
    ticks -= min(int(ticks.min()), 0) if n else 0
    rec = np.zeros(2 * n, P.EVENT_DTYPE)
    rec["type"] = np.where(is_exit, P.EXIT, P.ENTER)
    rec["thread"] = trace.thread[call]
    rec["func"] = trace.func[call]
    rec["ts"] = ticks
    # merge the threads by time, keeping each thread's order (stable)
    return rec[np.lexsort((np.arange(2 * n), ticks))] if trace.n_threads > 1 else rec


def replay(trace, endpoint: str, speed: float = 0.0, bind: bool = False, curve: Curve | None = None,
           wait_subscriber: float = 5.0, batch: int = 65536, linger: float = 5.0, block_seconds: float = 10.0, progress=None) -> dict:
    """Send ``trace``; ``speed`` 1 = the recorded pace, 2 = twice as fast, 0 = as fast as possible.

    A replay is not a traced program: when the viewer is slow it waits up to ``block_seconds``
    per message for room instead of dropping (so a test replay is complete)."""
    from .wire import WireSender

    if trace.n_threads > P.MAX_THREADS:
        raise ValueError(f"{trace.n_threads} threads: the protocol carries at most {P.MAX_THREADS}")
    shift = clock_shift_us(trace)
    try:
        origin_us = float(trace.meta.get("clock_origin", 0.0) or 0.0) + shift
    except (TypeError, ValueError):
        raise ValueError(f"replay: the trace's clock_origin {trace.meta.get('clock_origin')!r} is not a number") from None
    if not math.isfinite(origin_us) or abs(origin_us) * 1000.0 >= MAX_TICKS:
        origin_us = 0.0  # not representable: the viewer counts from the trace's first time (said in the result)
    origin_ns = int(round(origin_us * 1000.0))
    wire = WireSender(endpoint, bind=bind, curve=curve, program=str(trace.meta.get("source", "replay")),
                      pid=int(trace.thread_pid[0]) if trace.n_threads else 0, clock_origin_ns=origin_ns,
                      linger_ms=int(linger * 1000))
    try:
        wire.add_functions(list(zip(trace.function_names, trace.function_files,
                                    (int(x) for x in trace.function_lines))))
        for t in range(trace.n_threads):
            wire.set_thread(t, (int(trace.thread_pid[t]), int(trace.thread_tid[t]),
                                trace.thread_names[t], trace.process_names[t]))
        wire.wait_subscriber(wait_subscriber)
        wire.block_seconds = block_seconds
        rec = trace_events(trace, shift)
        t_wall0 = time.perf_counter()
        t_rec0 = int(rec["ts"][0]) if rec.shape[0] else 0
        k, n = 0, rec.shape[0]
        while k < n:
            if speed > 0:
                due_ns = t_rec0 + (time.perf_counter() - t_wall0) * speed * 1e9
                hi = int(np.searchsorted(rec["ts"], due_ns, side="right"))
                hi = min(max(hi, k), k + batch)
                if hi == k:
                    wait = (int(rec["ts"][k]) - due_ns) / speed / 1e9
                    time.sleep(min(max(wait, 0.0005), 0.01))
                    wire.poll_subscriptions()
                    continue
            else:
                hi = min(k + batch, n)
            wire.send_events(rec[k:hi])
            k = hi
            if progress:
                progress(k / n)
        return dict(events=n, sent=wire.events_sent, dropped=wire.dropped_events, messages=wire.seq,
                    shifted_us=shift)
    finally:
        wire.close()
