"""How much each thread works (bpy-free): the work of a call (its self time, waits and I/O
counted as none), the thread that does a program's work, the thread of another run that does
the same work, the lanes a figure of many threads keeps (`busiest_lanes`), and what a lane
runs (`lane_lead_calls`: the thread view's caption of a section too narrow for names).  The select
stage (`select`) and the comparison's choice of threads (`compare_sides`, `compare_tubes`)
ask it; a thread's sections (`select.thread_sections`) are the select stage's.
"""
from __future__ import annotations

import re

import numpy as np

from ..model import Trace


def working_thread(trace: Trace, sections: np.ndarray | None = None) -> int:
    """The thread that does the program's work: the most time in calls that are not waits or I/O,
    a thread's loop counting only its children (`_working_calls`), weighted by
    log(1 + calls) (a pool program's busiest worker, not its main thread that waits on
    futures; a deep CPU thread, not a one-call profiler span or a flat GPU stream; not a
    browser thread idle in its message loop).  With ``sections`` (`thread_sections`), the
    section that does (a server's request threads together, not its accept loop), and its
    busiest thread."""
    work = _work_of(trace, slice(None)) * _working_calls(trace)
    busy = np.bincount(trace.thread, weights=work, minlength=trace.n_threads)
    calls = np.bincount(trace.thread, minlength=trace.n_threads)
    if not busy.size:
        return 0
    if sections is None:
        return int(np.argmax(busy * np.log1p(calls)))
    s_busy = np.bincount(sections, weights=busy, minlength=trace.n_threads)
    s_calls = np.bincount(sections, weights=calls, minlength=trace.n_threads)
    best = int(np.argmax(s_busy * np.log1p(s_calls)))
    return _busiest_member(sections, best, busy)


def _busiest_member(sections: np.ndarray, section: int, weight: np.ndarray) -> int:
    members = np.flatnonzero(sections == section)
    return int(members[np.argmax(weight[members])])


#: a root with children that lasts this share of its thread's span or more is its thread's loop
LOOP_SPAN_SHARE = 0.5


def _working_calls(trace: Trace) -> np.ndarray:
    """bool per call: it counts towards its thread's work, not being a loop: a root with
    children that lasts `LOOP_SPAN_SHARE` of its thread's span or more is the idle loop of a
    thread that waits for tasks (Chrome's ``RunLoop::Run`` on 60 of 82 threads of a page load:
    its self time is the thread's idle time, 3 s on a renderer's compositor as on its main
    thread); its children count.  A task that is a root of its own counts whole."""
    roots = np.flatnonzero(trace.parent < 0)  # a thread's span is its roots' (every call lies in one)
    th = trace.thread[roots]
    t0 = np.full(trace.n_threads, np.inf)
    t1 = np.full(trace.n_threads, -np.inf)
    np.minimum.at(t0, th, trace.start[roots])
    np.maximum.at(t1, th, trace.end[roots])
    span = np.maximum(t1 - t0, 0.0)[th]
    has_children = trace.end_index[roots] > roots + 1
    out = np.ones(len(trace), np.bool_)
    out[roots[has_children & (trace.end[roots] - trace.start[roots] >= LOOP_SPAN_SHARE * span)]] = False
    return out


def _work_of(trace: Trace, mask) -> np.ndarray:
    """Self time of ``trace``'s calls in ``mask``, waits and I/O counted as none (a server's
    accept loop blocked in ``select.poll``, a client blocked in ``recv``, do no work)."""
    from ..model import KIND_IO, KIND_WAIT

    kind = trace.kind[mask]
    return np.where((kind == KIND_WAIT) | (kind == KIND_IO), 0.0, np.maximum(trace.self_time[mask], 0.0))


def _work_by_function(trace: Trace, mask) -> np.ndarray:
    """Self time (waits and I/O left out) per function of ``trace``'s calls in ``mask``."""
    return np.bincount(trace.func[mask], weights=_work_of(trace, mask), minlength=trace.n_functions)[:trace.n_functions]


def corresponding_thread(trace: Trace, other: Trace, other_thread: int, sections: np.ndarray | None = None,
                         other_sections: np.ndarray | None = None) -> int:
    """The thread of ``trace`` that does the work thread ``other_thread`` of ``other`` does:
    the most self time in common, function by function (by name; waits left out),
    ``Σ_f min(w_other(f), w_t(f))``.  A thread pool hands its tasks to whichever worker is
    free, so the same work runs on "mixed_1" in one run and "mixed_4" in the next, and a
    thread's name does not say which of the other run's threads to compare it with.  Its kind
    does (`thread_kind`: the name with its numbers as '#'): the threads of ``other_thread``'s
    kind are preferred where one of them has work in common (two page loads of a browser: a
    2.6 s task of the renderer's main thread is named differently in each, and its
    compositor thread had more in common by name than the other main thread).  With nothing
    in common, `working_thread`.  With sections (`thread_sections` of ``trace`` and
    of ``other``): the work of ``other_thread``'s section, compared with each section's, and
    the member of the best section with most of it."""
    if trace.n_threads <= 1:
        return 0
    mine_other = (other.thread == int(other_thread)) if other_sections is None else \
        (other_sections[other.thread] == other_sections[int(other_thread)])
    mine_other &= _working_calls(other)  # an idle message loop is no work in common
    w_other = _work_by_function(other, mine_other)
    f_other = np.flatnonzero(w_other > 0)
    pos = {other.function_names[f]: k for k, f in enumerate(f_other)}
    k_of = np.array([pos.get(nm, -1) for nm in trace.function_names], np.int64)
    k = k_of[trace.func]
    mine = (k >= 0) & _working_calls(trace)
    # per (thread, function) pair that occurs: its self time (sorted keys, never a dense
    # threads × functions table: memory linear in the calls whatever the two counts)
    key = trace.thread[mine].astype(np.int64) * max(f_other.size, 1) + k[mine]
    st = _work_of(trace, mine)
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
    pair_time = np.add.reduceat(st[order], first) if key.size else np.zeros(0)
    pair_key = key[first]
    w = np.minimum(pair_time, w_other[f_other][pair_key % max(f_other.size, 1)] if f_other.size else 0.0)
    common = np.bincount(pair_key // max(f_other.size, 1), weights=w, minlength=trace.n_threads)
    kind = same_kind_threads(trace, other, int(other_thread))
    if (common * kind).max(initial=0.0) > 0:  # a thread of the same kind, where one shares work
        common = common * kind
    if common.max(initial=0.0) <= 0:
        return working_thread(trace, sections)
    if sections is None:
        return int(np.argmax(common))
    return _busiest_member(sections, int(np.argmax(np.bincount(sections, weights=common,
                                                                   minlength=trace.n_threads))), common)


_DIGITS = re.compile(r"\d+")


def thread_kind(trace: Trace, t: int) -> tuple:
    """(process name, thread name) of thread ``t`` with every run of digits as '#': the
    workers of a pool ("mixed_1", "mixed_4"), a browser's renderers and their threads
    ("Renderer: CrRendererMain" ×3) are of one kind."""
    return (_DIGITS.sub("#", trace.process_names[t]), _DIGITS.sub("#", trace.thread_names[t]))


def same_kind_threads(trace: Trace, other: Trace, other_thread: int) -> np.ndarray:
    """bool per thread of ``trace``: of the kind of ``other``'s thread ``other_thread``
    (`thread_kind`)."""
    want = thread_kind(other, other_thread)
    return np.array([thread_kind(trace, t) == want for t in range(trace.n_threads)], np.bool_)


def busiest_lanes(trace: Trace, groups: list, cap: int, always=()) -> np.ndarray:
    """Which of the lanes (``groups``: each lane's threads) a figure of at most ``cap`` lanes
    keeps (bool per lane): the lanes ``always`` first, then those whose threads work the
    most, the self time of their calls but a thread's loop's (`_working_calls`), waits and
    I/O left out (`_work_of`): a root that spans the whole trace is mostly the idle loop of a
    thread that waits for tasks (Chrome's ``RunLoop::Run`` on 60 of 82 threads of a page load).  Ties: the earlier lane.  O(calls)."""
    below = _working_calls(trace)
    work = np.bincount(trace.thread[below], weights=_work_of(trace, below), minlength=trace.n_threads)
    lane_work = np.array([work[np.asarray(g, np.int64)].sum() for g in groups])
    lane_work[list(always)] = np.inf
    keep = np.zeros(len(groups), np.bool_)
    keep[np.lexsort((np.arange(len(groups)), -lane_work))[:cap]] = True
    return keep


def lane_lead_calls(trace: Trace, d, lanes) -> dict:
    """What each of ``lanes`` runs, for a caption where its bars are too narrow to name: lane ->
    the widest drawn call (``d``: `geometry.Drawn`) of the function that covers the most of the
    lane's drawn time, the union of its bars (a recursive function's nested calls counted once),
    among the program's own calls: not runtime infrastructure (`naming.INFRA_FUNCTIONS`: a
    worker's ``Thread.run`` / ``_worker`` span all of it), not waits or I/O, not folded bands.
    A worker of a pool gets its task function (``task_md``), not the pool's loop; a lane with no
    such call gets none."""
    from ..model import KIND_IO, KIND_WAIT
    from ..naming import function_table

    lanes = np.asarray(sorted(set(int(k) for k in lanes)), np.int64)
    if not lanes.size or not len(d.idx):
        return {}
    ft = function_table(trace)
    kind = trace.kind[d.idx]
    wanted = np.zeros(int(max(d.lane.max(), lanes.max())) + 1, np.bool_)
    wanted[lanes] = True
    keep = np.flatnonzero(wanted[d.lane] & ~d.folded & ~ft.infra[d.func] & (kind != KIND_WAIT) & (kind != KIND_IO))
    if not keep.size:
        return {}
    lane, func, s, e = d.lane[keep].astype(np.int64), d.func[keep].astype(np.int64), d.start[keep], d.end[keep]
    order = np.lexsort((s, func, lane))
    lane, func, s, e, keep = lane[order], func[order], s[order], e[order], keep[order]
    new_group = np.r_[True, (lane[1:] != lane[:-1]) | (func[1:] != func[:-1])]
    gid = np.cumsum(new_group) - 1
    # the union of each group's bars: a bar adds what lies past the latest end before it
    # (a running maximum per group, on ranks so that group offsets stay exact integers)
    times, rank = np.unique(np.r_[s, e], return_inverse=True)
    e_rank = rank[s.size:]
    span = int(times.size) + 1
    run = np.maximum.accumulate(gid * span + e_rank) - gid * span  # the latest end so far in its group
    prev = np.r_[-1, run[:-1]]
    prev[new_group] = -1
    covered = np.where(prev >= 0, times[np.maximum(prev, 0)], -np.inf)
    union = np.bincount(gid, weights=np.maximum(e - np.maximum(s, covered), 0.0))
    g_lane = lane[new_group]
    out = {}
    for k in np.unique(g_lane).tolist():
        groups = np.flatnonzero(g_lane == k)
        g = int(groups[np.argmax(union[groups])])
        members = np.flatnonzero(gid == g)
        out[int(k)] = int(keep[members[np.argmax(e[members] - s[members])]])
    return out
