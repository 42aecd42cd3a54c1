"""The plain-text report of a `Synchronisation`: who waited on whom, how long, on what."""
from __future__ import annotations

import numpy as np


def fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} µs"


def _short(name: str) -> str:
    return name.split(" (", 1)[0]


def summary_text(sync, max_pairs: int = 12) -> str:
    """Header, then per (waiter ← releaser) pair, longest total first: total wait, count,
    the longest waits (function, duration, object, releasing function)."""
    tr = sync.trace
    names = tr.thread_names
    lines = [f"{len(sync):,} correspondences ({sync.n_handoffs:,} hand-offs) between "
             f"{tr.n_threads} threads on {len(np.unique(sync.object)):,} objects"
             + (f"; {sync.dropped:,} more not kept (over {sync.meta['max_per_wait']} per wait)" if sync.dropped else "")]
    pu = sync.pair_wait_us
    order = np.argsort(-pu, axis=None, kind="stable")
    shown = 0
    for flat in order.tolist():
        a, b = divmod(flat, pu.shape[1])
        if pu[a, b] <= 0 or shown >= max_pairs:
            break
        shown += 1
        lines.append(f"{names[a]} waited {fmt_us(pu[a, b])} on {names[b]} ({int(sync.pair_waits[a, b])} waits)")
        for k in sync.longest_waits(a, b, 3).tolist():
            top = int(sync.meta["top_wait"][k])
            lines.append(f"    {fmt_us(tr.end[top] - tr.start[top]):>9}  {_short(tr.name(top))}  on "
                         f"{sync.object_names[sync.object[k]]}  ended by {_short(tr.name(int(sync.meta['top_release'][k])))}")
    if shown == 0:
        lines.append("no thread waited on another (no wait and release calls on a shared object overlap)")
    return "\n".join(lines)


def describe_call_sync(sync, call: int, limit: int = 6) -> str:
    """Details on demand for a picked call: the hand-offs whose wait or release lies in its
    subtree (who released its waits, for whom it released), longest first."""
    tr = sync.trace
    rows = sync.of_call(call)
    rows = rows[sync.primary[rows]]
    if rows.size == 0:
        return f"{_short(tr.name(call))} ({tr.thread_names[tr.thread[call]]}): no hand-off with another thread"
    w, r = sync.wait_call[rows], sync.release_call[rows]
    order = np.argsort(-(tr.end[w] - tr.start[w]), kind="stable")[:limit]
    lines = [f"{_short(tr.name(call))} ({tr.thread_names[tr.thread[call]]}): {rows.size} hand-offs"]
    for k in order.tolist():
        wi, ri = int(w[k]), int(r[k])
        lines.append(f"{tr.thread_names[tr.thread[wi]]} {_short(tr.name(wi))} waited {fmt_us(tr.end[wi] - tr.start[wi])}, "
                     f"released by {tr.thread_names[tr.thread[ri]]} {_short(tr.name(ri))} (call {ri}) at "
                     f"{fmt_us(tr.start[ri])} on {sync.object_names[sync.object[rows[k]]]}")
    return "\n".join(lines)
