"""Who woke whom, for the critical path: the hand-offs the path may take (`critical_path`).

A *woken interval* of thread T is a wait call of T (the one T was blocked in when the
release came: the innermost call active on T at the release's time, a wait call inside the
wait the rule names), or the time before one of T's root calls (since T0 or since its
previous root call).  Its waker is a release on another thread U at ``tr`` inside it; of
several, the latest.  The rules, each a function below (`candidates` calls them all):

1. *sync objects* (`sync_rows`) -- every SyncTrace correspondence (`Synchronisation`: a wait
   and a release on one object, the release starting inside the wait: lock release →
   acquire, queue put → get, condition notify → wait, event set → wait, future result →
   ``Future.result``); ``tr`` the release's start;
2. *thread start* (`thread_starts`) -- the time before T's first call, woken by a call that
   creates a thread (`START_NAMES`) on another thread: the latest one whose time contains
   T's first call, else the latest before it (Python's ``Thread.start`` returns only once
   the new thread runs);
3. *join* (`joins`) -- a wait named like a thread join (`is_join`) woken by the end of the
   joined thread: the thread its ``self`` repr names (``<Thread(parse_0, started ..)>``,
   VizTracer's ``--log_func_args``), else the thread whose last call ended last inside the
   wait; ``tr`` that end;
4. *device sync* (`device_syncs`) -- a wait named like a device synchronisation
   (`DEVICE_SYNCS`) woken by the last call that ended inside it on a thread T's flows reach
   (a GPU stream: T launched work there);
5. *queues by type* (`queues_by_type`) -- a queue's get that carries no object of its own
   (VizTracer records no args for C functions: the executor's ``_queue.SimpleQueue.get``)
   woken by the latest put of the same queue type (`queue_method`) inside it on another
   thread (SyncTrace's call-site pseudo-objects keep ``submit``'s puts and ``_worker``'s
   gets apart);
6. *flows* (`flows`) -- a flow event into a call that starts one of T's root calls wakes
   the time before that root call; ``tr`` the flow's source call's start (PyTorch's CPU
   launches → GPU kernels: HTA's launch edge starts there too).

Rules 1, 3, 4 and 5 name a wait W; the interval woken is the wait call c innermost on T at
``tr`` when c lies in W's subtree (T blocked in c: ``_thread.lock.acquire`` inside
``Condition.wait`` inside ``Queue.get``), so T runs from c's end, not from W's: what W does
after waking (``Queue.get`` notifying the putters) is on the path as running.
"""
from __future__ import annotations

import numpy as np

from ..model import KIND_RELEASE, KIND_WAIT, Trace

#: why a segment is on the path (`CriticalPath.why`)
RUNNING, WAITING, HANDOFF, IDLE = 0, 1, 2, 3
WHY_NAMES = ("running", "waiting (no known waker)", "hand-off", "idle (no known waker)")
HK_NONE, HK_SYNC, HK_START, HK_JOIN, HK_DEVICE, HK_QUEUE, HK_FLOW = 0, 1, 2, 3, 4, 5, 6
HANDOFF_KINDS = ("", "sync object", "thread start", "join", "device sync", "queue (by type)", "flow")
#: function names (the part before `` (file:line)``) whose call creates a thread
START_NAMES = ("Thread.start", "_thread.start_new_thread", "thread.start_new_thread", "_thread.start_joinable_thread",
               "start_new_thread", "pthread_create", "thrd_create", "CreateThread", "_beginthreadex")
#: device synchronisations: the CPU waits until the device's queued work is done
DEVICE_SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
                "cuCtxSynchronize", "cuEventSynchronize", "hipStreamSynchronize", "hipDeviceSynchronize",
                "hipEventSynchronize")
#: methods of a queue that wait for an item, and that put one
QUEUE_GETS = ("get", "get_nowait", "pop", "popleft")
QUEUE_PUTS = ("put", "put_nowait", "push", "append")
#: thread-start candidates looked at per thread (the latest ones before its first call)
START_LOOKBACK = 64


def short_function(name: str) -> str:
    """``Thread.join (/usr/lib/python3.11/threading.py:1087)`` → ``Thread.join``."""
    return name.split(" (", 1)[0].strip()


def is_join(name: str) -> bool:
    """A function that waits for a thread's end: ``<receiver>.join`` whose receiver names a
    thread (``Thread.join``, ``_ThreadHandle.join``, ``std::thread::join``), ``pthread_join``,
    or ``'join' of '_thread...'``.  String tests, no regex: linear in the name."""
    low = short_function(name).lower()
    if low in ("pthread_join", "thrd_join") or "'join' of '_thread" in low or "'join' of 'thread" in low:
        return True
    for sep in (".", "::"):
        head, s, tail = low.rpartition(sep)
        if s and tail == "join":
            return "thread" in head.rpartition(".")[2].rpartition("::")[2]
    return False


def is_start(name: str) -> bool:
    """A function that creates a thread (`START_NAMES`)."""
    short = short_function(name)
    return short in START_NAMES or short.rpartition(".")[2] in ("start_new_thread", "start_joinable_thread")


def is_device_sync(name: str) -> bool:
    """A device synchronisation (`DEVICE_SYNCS`)."""
    return short_function(name) in DEVICE_SYNCS


def queue_method(name: str):
    """(queue type, "get" | "put") of a queue's method (``_queue.SimpleQueue.get`` →
    ``("_queue.SimpleQueue", "get")``: the type's last part names a queue), else None."""
    head, _, meth = short_function(name).rpartition(".")
    if not head or "queue" not in head.rpartition(".")[2].lower():
        return None
    if meth in QUEUE_GETS:
        return head, "get"
    if meth in QUEUE_PUTS:
        return head, "put"
    return None


def functions_where(trace: Trace, test) -> np.ndarray:
    """Function ids whose name passes ``test`` (one test per distinct function)."""
    return np.array([f for f, s in enumerate(trace.function_names) if test(s)], np.int64)


class Tables:
    """What the rules share: the trace, the threads the path may take, T0, each thread's
    innermost-call timeline (`kernels.critical_path.innermost_timeline`), its root calls in
    order with where the time before each starts, and the candidate columns collected."""

    def __init__(self, trace: Trace, ok: np.ndarray, t0: float, timeline: tuple):
        self.trace, self.ok, self.t0 = trace, ok, t0
        self.tl_ptr, self.tl_a, self.tl_b, self.tl_call = timeline
        tr = trace
        self.roots = np.flatnonzero((tr.depth == 0) & ok[tr.thread])
        self.root_thread = tr.thread[self.roots]
        ends = tr.end[self.roots]
        self.gap_start = np.full(self.roots.size, t0)
        if self.roots.size:
            new = np.r_[True, self.root_thread[1:] != self.root_thread[:-1]]
            bounds = np.r_[np.flatnonzero(new), self.roots.size]
            run = np.empty_like(ends)
            for a, b in zip(bounds[:-1], bounds[1:]):  # one numpy call per thread
                run[a:b] = np.maximum.accumulate(ends[a:b])
            self.gap_start[1:] = run[:-1]
            self.gap_start[new] = t0
        self.cols: list = []

    def innermost_at(self, threads: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """The innermost call active on each thread at each time (-1: none), the time taken as
        the end of an interval where it is one ((a, b]: a release at the instant a wait ends
        woke that wait)."""
        out = np.full(ts.size, -1, np.int64)
        for k in np.unique(threads).tolist():
            m = np.flatnonzero(threads == k)
            lo, hi = int(self.tl_ptr[k]), int(self.tl_ptr[k + 1])
            if hi <= lo:
                continue
            j = lo + np.searchsorted(self.tl_b[lo:hi], ts[m], side="left")
            j = np.minimum(j, hi - 1)
            out[m] = self.tl_call[j]
        return out

    def add(self, key, waiter, ws, we, tr, rel_thread, rel_call, woken, kind: int, order) -> None:
        """Candidates (woken interval key, waiter, its start and end, release time, releasing
        thread and call, the call woken, kind, program order of the wake): those with the
        release inside the interval, on another thread, both threads chosen."""
        rel_thread = np.asarray(rel_thread, np.int64)
        waiter = np.asarray(waiter, np.int64)
        keep = (rel_thread >= 0) & (rel_thread != waiter) & (tr >= ws) & (tr <= we)
        keep &= self.ok[np.maximum(rel_thread, 0)] & self.ok[waiter]
        cols = [np.asarray(x)[keep] for x in (key, waiter, ws, we, tr, rel_thread, rel_call, woken)]
        self.cols.append(cols + [np.full(int(keep.sum()), kind, np.uint8), np.asarray(order)[keep]])

    def add_wait(self, W, tr, rel_thread, rel_call, kind: int) -> None:
        """Candidates of a rule that names waits ``W``: the wait call innermost on W's thread at
        ``tr``, when it is a wait inside W's subtree, is the interval woken."""
        tr_ = self.trace
        W = np.asarray(W, np.int64)
        tr = np.asarray(tr, np.float64)
        c = self.innermost_at(tr_.thread[W], tr)
        cc = np.maximum(c, 0)
        ok = (c >= W) & (c < tr_.end_index[W]) & (tr_.kind[cc] == KIND_WAIT)
        W, tr, c = W[ok], tr[ok], cc[ok]
        self.add(2 * c, tr_.thread[c], tr_.start[c], tr_.end[c], tr, np.asarray(rel_thread)[ok],
                 np.asarray(rel_call)[ok], c, kind, tr_.end_index[c])

    def columns(self) -> list:
        if not self.cols:
            return [np.zeros(0, t) for t in (np.int64, np.int64, float, float, float, np.int64, np.int64, np.int64,
                                             np.uint8, np.int64)]
        return [np.concatenate([c[i] for c in self.cols]) for i in range(10)]


def sync_rows(tb: Tables, sync) -> None:
    """Rule 1: every SyncTrace correspondence."""
    t = tb.trace
    w, r = sync.wait_call.astype(np.int64), sync.release_call.astype(np.int64)
    tb.add_wait(w, t.start[r], t.thread[r], r, HK_SYNC)


def thread_starts(tb: Tables) -> None:
    """Rule 2: the time before each thread's first call, woken by a thread-creating call."""
    t = tb.trace
    roots, rt = tb.roots, tb.root_thread
    if not roots.size:
        return
    first = np.flatnonzero(np.r_[True, rt[1:] != rt[:-1]])
    funcs = functions_where(t, is_start)
    starters = np.flatnonzero(np.isin(t.func, funcs)) if funcs.size else funcs
    if not starters.size:
        return
    st = starters[np.argsort(t.start[starters], kind="stable")]
    got = np.full(first.size, -1, np.int64)
    for j, k in enumerate(first.tolist()):
        s_t, T = t.start[roots[k]], rt[k]
        hi = int(np.searchsorted(t.start[st], s_t, side="right"))
        look = st[max(0, hi - START_LOOKBACK):hi][::-1]  # latest first
        look = look[t.thread[look] != T]
        if look.size:
            inside = look[t.end[look] >= s_t]
            got[j] = inside[0] if inside.size else look[0]
    has = got >= 0
    fk, g = first[has], got[has]
    r = roots[fk]
    tb.add(2 * r + 1, rt[fk], tb.gap_start[fk], t.start[r], t.start[g], t.thread[g], g, r, HK_START, r)


def _object_thread(trace: Trace, calls: np.ndarray) -> np.ndarray:
    """The thread each call's ``self`` repr names (``<Thread(parse_0, started ..)>``), -1
    when none or not a thread of the trace."""
    from .sync_objects import self_of, object_from_self

    out = np.full(calls.size, -1, np.int64)
    if trace.args_call.size == 0 or calls.size == 0:
        return out
    by_name: dict = {}
    for k, nm in enumerate(trace.thread_names):
        by_name.setdefault(nm, k)
    pos = np.minimum(np.searchsorted(trace.args_call, calls), trace.args_call.size - 1)
    for j in np.flatnonzero(trace.args_call[pos] == calls).tolist():
        k = int(pos[j])
        s = self_of(trace.args_blob[trace.args_ptr[k]:trace.args_ptr[k + 1]].tobytes())
        obj = object_from_self(s) if s else None
        if obj and obj.endswith(")") and "Thread(" in obj:
            out[j] = by_name.get(obj[obj.index("(") + 1:-1], -1)
    return out


def outermost_waits(trace: Trace, ok: np.ndarray, funcs: np.ndarray) -> np.ndarray:
    """Outermost wait calls of the chosen threads whose function is one of ``funcs``."""
    from ..kernels.correspondence import outermost_of_kind

    if not funcs.size:
        return np.zeros(0, np.int64)
    top = outermost_of_kind(trace.kind, trace.parent, KIND_WAIT)
    w = np.flatnonzero(top == np.arange(len(trace)))
    return w[np.isin(trace.func[w], funcs) & ok[trace.thread[w]]]


def joins(tb: Tables) -> None:
    """Rule 3: joins, woken by the end of the joined thread."""
    t = tb.trace
    jw = outermost_waits(t, tb.ok, functions_where(t, is_join))
    if not jw.size or not tb.roots.size:
        return
    nt = t.n_threads
    t_end = np.full(nt, -np.inf)
    np.maximum.at(t_end, tb.root_thread, t.end[tb.roots])
    last_root = np.full(nt, -1, np.int64)
    last = np.flatnonzero(np.r_[tb.root_thread[1:] != tb.root_thread[:-1], True])
    last_root[tb.root_thread[last]] = tb.roots[last]
    named = _object_thread(t, jw)
    order = np.argsort(t_end, kind="stable")
    srt = t_end[order]
    U = np.full(jw.size, -1, np.int64)
    for j in range(jw.size):  # the named thread, else the latest end inside the wait on another thread
        T, ws, we = t.thread[jw[j]], t.start[jw[j]], t.end[jw[j]]
        n = named[j]
        if n >= 0 and n != T and ws <= t_end[n] <= we:
            U[j] = n
            continue
        p = int(np.searchsorted(srt, we, side="right")) - 1
        while p >= 0 and order[p] == T:
            p -= 1
        if p >= 0 and srt[p] >= ws:
            U[j] = order[p]
    has = U >= 0
    tb.add_wait(jw[has], t_end[U[has]], U[has], last_root[U[has]], HK_JOIN)


def device_syncs(tb: Tables) -> None:
    """Rule 4: device synchronisations, woken by the last call that ended inside them on a
    thread the waiting thread's flows reach."""
    t = tb.trace
    if not t.flow_from.size or not tb.roots.size:
        return
    dw = outermost_waits(t, tb.ok, functions_where(t, is_device_sync))
    if not dw.size:
        return
    pairs = np.unique(np.stack([t.thread[t.flow_from], t.thread[t.flow_to]], 1), axis=0)
    for T, U in pairs.tolist():
        mine = dw[t.thread[dw] == T]
        ru = tb.roots[tb.root_thread == U]
        if T == U or not tb.ok[U] or not mine.size or not ru.size:
            continue
        ends_u = np.maximum.accumulate(t.end[ru])
        p = np.searchsorted(ends_u, t.end[mine], side="right") - 1
        has = p >= 0
        has[has] = ends_u[p[has]] >= t.start[mine[has]]
        m, pu = mine[has], p[has]
        tb.add_wait(m, ends_u[pu], np.full(m.size, U, np.int64), ru[pu], HK_DEVICE)


def queues_by_type(tb: Tables, sync) -> None:
    """Rule 5: a queue get with no object of its own, woken by the latest put of its type."""
    from .sync_objects import SOURCE_OWN

    t = tb.trace
    sync_calls = (t.kind == KIND_WAIT) | (t.kind == KIND_RELEASE)
    meth = {f: q for f in np.unique(t.func[sync_calls]).tolist() if (q := queue_method(t.function_names[f]))}
    for qt in sorted({q[0] for q in meth.values()}):
        gets = [f for f, q in meth.items() if q == (qt, "get")]
        puts = [f for f, q in meth.items() if q == (qt, "put")]
        if not gets or not puts:
            continue
        g = np.flatnonzero(np.isin(t.func, gets) & (t.kind == KIND_WAIT))
        g = g[sync.obj_source[g] != SOURCE_OWN]
        p = np.flatnonzero(np.isin(t.func, puts))
        if not g.size or not p.size:
            continue
        p = p[np.argsort(t.start[p], kind="stable")]
        ps = t.start[p]
        k = np.searchsorted(ps, t.end[g], side="left") - 1  # the latest put before the get ends
        for _ in range(4):  # ... on another thread (a few back at most)
            same = (k >= 0) & (t.thread[p[np.maximum(k, 0)]] == t.thread[g])
            if not same.any():
                break
            k[same] -= 1
        has = k >= 0
        g, r = g[has], p[k[has]]
        tb.add_wait(g, t.start[r], t.thread[r], r, HK_QUEUE)


def flows(tb: Tables) -> None:
    """Rule 6: a flow into a call that starts a root call wakes the time before that root."""
    t = tb.trace
    if not t.flow_from.size or not tb.roots.size:
        return
    f, g = t.flow_from.astype(np.int64), t.flow_to.astype(np.int64)
    k = np.searchsorted(tb.roots, g, side="right") - 1
    has = k >= 0
    has[has] = (t.start[tb.roots[k[has]]] == t.start[g[has]]) & (t.thread[tb.roots[k[has]]] == t.thread[g[has]])
    f, k = f[has], k[has]
    r = tb.roots[k]
    tb.add(2 * r + 1, t.thread[r], tb.gap_start[k], t.start[r], t.start[f], t.thread[f], f, r, HK_FLOW, r)


def candidates(trace: Trace, sync, ok: np.ndarray, t0: float, timeline: tuple) -> list:
    """Every hand-off candidate of the six rules, as columns (key, waiter, ws, we, tr,
    releasing thread, release call, woken call, kind, order): key 2c for wait call c, 2r+1
    for the time before root call r; order the wake's place in program order."""
    tb = Tables(trace, ok, t0, timeline)
    sync_rows(tb, sync)
    thread_starts(tb)
    joins(tb)
    device_syncs(tb)
    queues_by_type(tb, sync)
    flows(tb)
    return tb.columns()


def woken_intervals(trace: Trace, sync, ok: np.ndarray, t0: float, timeline: tuple) -> dict:
    """The woken intervals, one waker each (the latest release; at equal times the earlier
    rule), sorted by (waiter thread, wake time, program order): the walk's table, with
    ``ptr`` the rows of each thread."""
    key, waiter, ws, we, tr, rel_t, rel_c, woken, kind, order = candidates(trace, sync, ok, t0, timeline)
    o = np.lexsort((-kind.astype(np.int64), tr, key))
    o = o[np.r_[key[o][1:] != key[o][:-1], True]] if o.size else o
    o = o[np.lexsort((order[o], we[o], waiter[o]))]
    ptr = np.searchsorted(waiter[o], np.arange(trace.n_threads + 1)).astype(np.int64)
    return {"ptr": ptr, "waiter": waiter[o].astype(np.int32), "ws": ws[o].astype(float), "we": we[o].astype(float),
            "tr": tr[o].astype(float), "from": rel_t[o].astype(np.int64), "release": rel_c[o].astype(np.int32),
            "woken": woken[o].astype(np.int32), "kind": kind[o].astype(np.uint8), "key": key[o]}
