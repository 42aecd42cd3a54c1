"""The critical path's brute-force twins: random multi-thread traces with hand-offs of every
rule, the graph of program order and hand-offs built explicitly (networkx), and the
innermost call at a time by a scan of every call."""
from __future__ import annotations

import networkx as nx
import numpy as np

from tracevis3d.model import KIND_OTHER, KIND_RELEASE, KIND_WAIT, Trace

#: function ids of the random traces
F_WORK, F_WAIT, F_RELEASE, F_START, F_JOIN, F_LAUNCH = range(6)
NAMES = ["work", "Lock.acquire", "Lock.release", "Thread.start", "Thread.join", "launch"]


def random_sync_trace(seed: int, threads: int = 4, roots: int = 6, max_depth: int = 3, ints: bool = False,
                      flows: bool = True) -> Trace:
    """A random valid trace: per thread, roots in sequence with gaps, children nested at random;
    a quarter of the calls wait, a fifth release (on 3 objects, own objects: SyncTrace pairs
    them), thread 0's first calls start the other threads (each thread begins inside one),
    some waits are joins, and random flows from launches reach other threads' root calls.
    ``ints``: times on a coarse integer grid (equal timestamps everywhere)."""
    rng = np.random.default_rng(seed)
    func, start, end, parent, thread, kind, objs = [], [], [], [], [], [], []

    def rnd(x):
        return float(np.round(x / 7.0) * 7.0) if ints else float(x)

    def call(p, s, e, t, f, k):
        func.append(f)
        start.append(s)
        end.append(e)
        parent.append(p)
        thread.append(t)
        kind.append(k)
        objs.append([int(rng.integers(3))] if k in (KIND_WAIT, KIND_RELEASE) else [])
        return len(func) - 1

    def rec(p, s, e, d, t):
        r = rng.random()
        if d > 0 and r < 0.3:
            f, k = (F_JOIN, KIND_WAIT) if rng.random() < 0.2 else (F_WAIT, KIND_WAIT)
        elif d > 0 and r < 0.55:
            f, k = F_RELEASE, KIND_RELEASE
        elif d > 0 and r < 0.7:
            f, k = F_LAUNCH, KIND_OTHER
        else:
            f, k = F_WORK, KIND_OTHER
        i = call(p, s, e, t, f, k)
        if d >= max_depth:
            return
        cur = s
        for _ in range(int(rng.integers(0, 4))):
            a = rnd(cur + (e - cur) * rng.uniform(0, 0.2))
            b = rnd(a + (e - a) * rng.uniform(0.1, 0.7))
            if not (cur <= a < b <= e):
                break
            rec(i, a, b, d + 1, t)
            cur = b

    begin = np.sort(rng.uniform(5, 60, threads))
    begin[0] = 0.0
    for t in range(threads):
        tc = rnd(begin[t])
        if t == 0:  # the starts of the other threads, each containing or before its first call
            for u in range(1, threads):
                s = rnd(begin[u] - rng.uniform(0.5, 6))
                e = rnd(begin[u] + rng.uniform(-1, 4))
                if tc <= s < e:
                    call(-1, s, e, 0, F_START, KIND_OTHER)
                    tc = e
        for _ in range(roots):
            dur = rnd(rng.exponential(80.0) + 2)
            if dur <= 0:
                continue
            rec(-1, tc, tc + dur, 0, t)
            tc = rnd(tc + dur + rng.exponential(8))
    n = len(func)
    # per-thread pre-order: calls were made thread by thread, depth first
    ptr = np.zeros(n + 1, np.int64)
    ptr[1:] = np.cumsum([len(o) for o in objs])
    ids = np.array([x for o in objs for x in o], np.int32)
    tables = dict(obj_ptr=ptr, obj_ids=ids, object_names=["a", "b", "c"])
    if flows:  # into root calls: half from a launch in the time before the root, half from any launch
        fr = np.flatnonzero(np.array(func) == F_LAUNCH)
        st, th, par = np.array(start), np.array(thread), np.array(parent)
        roots_ = np.flatnonzero(par < 0)
        src, dst = [], []
        for r in roots_.tolist():
            if not fr.size:
                break
            prev = roots_[(th[roots_] == th[r]) & (roots_ < r)]
            ws = np.array(end)[prev].max() if prev.size else 0.0
            inside = fr[(st[fr] >= ws) & (st[fr] <= st[r]) & (th[fr] != th[r])]
            pick = inside if inside.size and rng.random() < 0.5 else fr[th[fr] != th[r]]
            if pick.size and rng.random() < 0.6:
                src.append(int(rng.choice(pick)))
                dst.append(r)
        src, dst = np.array(src, np.int64), np.array(dst, np.int64)
        if src.size:
            tables.update(flow_id=np.arange(src.size, dtype=np.int64), flow_from=src.astype(np.int32),
                          flow_to=dst.astype(np.int32), flow_cat=np.zeros(src.size, np.int32), flow_cat_names=[""])
    return Trace.from_arrays(func, start, end, parent, thread, function_names=NAMES, kind=np.array(kind, np.uint8),
                             thread_names=[f"t{k}" for k in range(threads)], **tables).check()


def innermost_brute(trace: Trace, thread: int, t: float, closed_right: bool = True) -> int:
    """The deepest call of ``thread`` with start < t <= end (``closed_right``) or
    start <= t < end, by a scan of every call; -1 when none."""
    m = trace.thread == thread
    if closed_right:
        m &= (trace.start < t) & (t <= trace.end)
    else:
        m &= (trace.start <= t) & (t < trace.end)
    idx = np.flatnonzero(m)
    return int(idx[np.argmax(trace.depth[idx])]) if idx.size else -1


def _blocked(iv: dict, k: int) -> list:
    """Blocked parts [b, we] of thread k's woken intervals: b the later of the interval's start
    and the thread's own last release (of any hand-off) inside it."""
    own = iv["tr"][iv["from"] == k]
    out = []
    for j in np.flatnonzero(iv["waiter"] == k):
        ws, we = iv["ws"][j], iv["we"][j]
        inside = own[(own >= ws) & (own < we)]
        out.append((max(ws, inside.max()) if inside.size else ws, we))
    return out


def _covered(a: float, b: float, parts: list) -> float:
    """Length of [a, b] inside the union of ``parts``."""
    segs = sorted((max(a, x), min(b, y)) for x, y in parts if min(b, y) > max(a, x))
    tot, cur = 0.0, a
    for x, y in segs:
        x = max(x, cur)
        if y > x:
            tot += y - x
            cur = y
    return tot


def path_graph(cp):
    """(graph, node order per thread): nodes ("S", k) at T0, ("W", j) wake of woken interval
    j, ("R", j) its release, ("E", k) at T1, per thread in (time, rank) order, wake-ups before
    releases at equal times; program-order edges weigh the time elapsed outside blocked parts,
    hand-off edges ``we - tr``; a source and a sink."""
    iv = cp.meta["intervals"]
    t0, t1 = cp.t_first, cp.t_last
    G = nx.DiGraph()
    order = {}
    for k in cp.threads.tolist():
        nodes = [(t0, -1, 0, ("S", k)), (t1, 3, 0, ("E", k))]
        nodes += [(iv["we"][j], 0, j, ("W", j)) for j in np.flatnonzero(iv["waiter"] == k)]
        nodes += [(iv["tr"][j], 1, j, ("R", j)) for j in np.flatnonzero(iv["from"] == k)]
        nodes.sort(key=lambda x: x[:3])
        blocked = _blocked(iv, k)
        for p, q in zip(nodes[:-1], nodes[1:]):
            G.add_edge(p[3], q[3], weight=(q[0] - p[0]) - _covered(p[0], q[0], blocked))
        G.add_edge("source", ("S", k), weight=0.0)
        G.add_edge(("E", k), "sink", weight=0.0)
        order[k] = [x[3] for x in nodes]
    for j in range(iv["we"].size):
        G.add_edge(("R", j), ("W", j), weight=iv["we"][j] - iv["tr"][j])
    return G, order


def walk_nodes(cp, order: dict) -> list:
    """The walk's path as graph nodes: per piece, its thread's nodes from where it starts
    (T0's node, or the wake it was woken at) to where it ends (the release it hands off
    from, or T1's node), then the hand-off's wake."""
    p_t, p_a, p_b, p_h = cp.meta["pieces"]
    path = ["source"]
    for j in range(p_t.size):
        k = int(p_t[j])
        first = ("S", k) if j == 0 else ("W", int(p_h[j - 1]))
        last = ("E", k) if j == p_t.size - 1 else ("R", int(p_h[j]))
        seq = order[k]
        a, b = seq.index(first), seq.index(last)
        if b < a:
            raise AssertionError(f"piece {j} on thread {k} runs backwards in program order ({first} after {last})")
        path += seq[a:b + 1]
    return path + ["sink"]
