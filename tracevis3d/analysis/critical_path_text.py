"""The critical path's summary as text ("62 % of the wall time on parse_0: ..."), and the
rows the figures' legends take from it."""
from __future__ import annotations

import numpy as np


def fmt_us(us: float) -> str:
    """µs as a short time: 850 µs, 12.4 ms, 3.91 s."""
    us = float(us)
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} µs"


def pct(x: float, total: float) -> str:
    """A share as a whole percentage ("<1 %" for a small non-zero one)."""
    if total <= 0:
        return "0 %"
    p = 100.0 * x / total
    return "<1 %" if 0 < p < 0.5 else f"{p:.0f} %"


#: a function's name in the summary is cut at this many characters (C++ kernels' names run to 1,000)
MAX_NAME = 48


def function_label(trace, f: int) -> str:
    """A function's short name (``threading.Thread.join``, ``aten::addmm``, a C++ kernel's
    name without its template arguments), at most `MAX_NAME` characters."""
    from ..naming import describe_function

    name = describe_function(trace.function_names[f])[3] or trace.function_names[f]
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"


def thread_rows(cp, max_threads: int = 6, max_functions: int = 3) -> list:
    """[(thread, µs, [(function, µs), ...]), ...]: the threads the path spends most time on,
    most first, each with its functions (innermost calls' own time), most first."""
    per = cp.by_thread()
    order = [int(k) for k in np.argsort(-per, kind="stable") if per[k] > 0][:max_threads]
    rows = []
    for k in order:
        fs = cp.by_function(k)
        top = [int(f) for f in np.argsort(-fs, kind="stable")[:max_functions] if fs[f] > 0]
        rows.append((k, float(per[k]), [(f, float(fs[f])) for f in top]))
    return rows


def summary_text(cp, max_threads: int = 6, max_functions: int = 5) -> str:
    """Lines: the span and hand-offs; per thread (most first) its share of the wall time and
    its functions' shares; hand-offs by kind; waiting with no known waker and idle."""
    from .critical_path_handoffs import HANDOFF_KINDS, IDLE, WAITING

    tr = cp.trace
    span = cp.span
    hand = cp.handoffs
    lines = [f"Critical path: {fmt_us(span)} of wall time, {hand.size} hand-off{'s' if hand.size != 1 else ''} on it "
             f"({cp.n_handoffs_known} known in the trace)"]
    for k, us, fs in thread_rows(cp, max_threads, max_functions):
        parts = ", ".join(f"{function_label(tr, f)} {pct(x, span)}" for f, x in fs)
        lines.append(f"  {pct(us, span)} of the wall time on {tr.thread_names[k]}" + (f": {parts}" if parts else ""))
    shown = {k for k, _, _ in thread_rows(cp, max_threads, 0)}
    rest = sum(float(x) for k, x in enumerate(cp.by_thread()) if k not in shown)
    if rest > 0:
        lines.append(f"  {pct(rest, span)} on other threads")
    if hand.size:
        d = cp.duration[hand]
        kinds = np.bincount(cp.handoff_kind[hand], minlength=len(HANDOFF_KINDS))
        what = ", ".join(f"{int(n)} {HANDOFF_KINDS[k]}" for k, n in enumerate(kinds) if n)
        lines.append(f"  {pct(float(d.sum()), span)} in hand-offs (release to wake-up): {what}")
    why = cp.by_why()
    lines.append(f"  {pct(float(why[WAITING]), span)} waiting with no known waker, "
                 f"{pct(float(why[IDLE]), span)} idle (in no call) with no known waker")
    return "\n".join(lines)
