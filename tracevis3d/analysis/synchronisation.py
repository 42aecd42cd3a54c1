"""Who waits on whom: the SyncTrace analysis (Sec. III-A, IV-B1) as one object of arrays.

    >>> s = tracevis3d.synchronisation(trace)
    >>> print(s.summary())
    >>> s.wait_call, s.release_call, s.object      # one entry per correspondence

Steps: objects of every wait/release call (`sync_objects`: own ``self``/args, nearest named
ancestor, call-site pseudo-object) → correspondences by a sweep per object (Eq. 6-7,
`kernels.correspondence`) → the outermost pair per hand-off → dur_w, dur_r, dur_o (Eq. 3-4,
`kernels.sync`) → per thread pair: total wait ended by the other thread, longest waits.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import KIND_IO, KIND_RELEASE, KIND_WAIT, Trace
from .sync_objects import SOURCE_NAMES, attribute_objects

#: correspondences kept per (wait, object): the latest releases in the wait (the last ended it)
MAX_PER_WAIT = 64
#: sync ancestors followed per side when looking for a dominating (outer) pair
MAX_CHAIN = 8


@dataclass(eq=False)
class Synchronisation:
    """The SyncTrace analysis of one trace.  Per correspondence k (sorted by wait call, then
    release start):

    - ``wait_call[k]``, ``release_call[k]`` int32: call indices into the trace (f_w ∈ S_w on
      one thread, f_r ∈ S_r on another, t_s(f_r) ∈ [t_s(f_w), t_e(f_w)], Eq. 6-7);
    - ``object[k]`` int32: an object both act on, index into ``object_names`` (the lowest when
      they share several); ``object_names`` starts with ``trace.object_names`` (same indices)
      followed by the objects this analysis recovered (``cls@0x..`` from ``self`` reprs,
      ``_ModuleLock('name')``, ``site:<receiver> in <caller>`` pseudo-objects);
    - ``primary[k]`` bool: no other correspondence pairs an enclosing wait with an
      enclosing release (``Queue.get``↔``Queue.put`` is primary, the ``Condition.wait``↔
      ``Condition.notify`` inside them is not): the candidate releases of a wait (a reentrant
      lock's holder releases it many times during one wait: numba's compiler lock, 128
      primary rows for 2 waits);
    - ``ends_wait[k]`` bool: the row whose release started last among the rows under the same
      outermost wait: the release that ended that wait, one row per **hand-off** (a wait ended
      by another thread: `n_handoffs`).

    Per call (length ``len(trace)``): ``dur_w``, ``dur_r``, ``dur_o`` float64 µs (Eq. 3-4);
    ``obj_ptr``/``obj_ids`` CSR of the objects of each wait/release call and ``obj_source``
    uint8 (0 none, 1 own, 2 ancestor, 3 call site, see `sync_objects`).

    Per thread pair (n_threads × n_threads, [waiter, releaser]): ``pair_wait_us`` total
    duration of the outermost waits whose ending release ran on the releaser, ``pair_waits``
    how many.  ``dropped``: correspondences not kept because a wait had more than
    ``MAX_PER_WAIT`` releases of one object inside it.
    """

    trace: Trace
    wait_call: np.ndarray
    release_call: np.ndarray
    object: np.ndarray
    primary: np.ndarray
    ends_wait: np.ndarray
    dur_w: np.ndarray
    dur_r: np.ndarray
    dur_o: np.ndarray
    obj_ptr: np.ndarray
    obj_ids: np.ndarray
    obj_source: np.ndarray
    object_names: list
    pair_wait_us: np.ndarray
    pair_waits: np.ndarray
    dropped: int = 0
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.wait_call.shape[0])

    @property
    def n_handoffs(self) -> int:
        """Hand-offs: waits ended by a release on another thread (one ``ends_wait`` row each)."""
        return int(self.ends_wait.sum())

    def __repr__(self) -> str:
        return (f"<Synchronisation {len(self)} correspondences ({self.n_handoffs} hand-offs), "
                f"{len(self.object_names)} objects, {self.trace.n_threads} threads>")

    # ------------------------------------------------------------------ queries
    @property
    def waiting_thread(self) -> np.ndarray:
        return self.trace.thread[self.wait_call]

    @property
    def releasing_thread(self) -> np.ndarray:
        return self.trace.thread[self.release_call]

    def objects_of(self, call: int) -> list:
        """Names of the objects call ``call`` waits on or releases."""
        return [self.object_names[k] for k in self.obj_ids[self.obj_ptr[call]:self.obj_ptr[call + 1]]]

    def of_call(self, call: int) -> np.ndarray:
        """Rows whose wait or release call is ``call`` or lies in its subtree."""
        lo, hi = int(call), int(self.trace.end_index[call])
        w, r = self.wait_call, self.release_call
        return np.flatnonzero(((w >= lo) & (w < hi)) | ((r >= lo) & (r < hi)))

    def longest_waits(self, waiter: int, releaser: int, k: int = 3) -> np.ndarray:
        """The ``k`` longest outermost waits of thread ``waiter`` ended by thread
        ``releaser``: rows (``ends_wait``) ordered by wait duration, longest first."""
        rows = np.flatnonzero(self.ends_wait & (self.waiting_thread == waiter) & (self.releasing_thread == releaser))
        top = self.meta["top_wait"][rows]
        d = self.trace.end[top] - self.trace.start[top]
        return rows[np.argsort(-d, kind="stable")[:k]]

    def summary(self, max_pairs: int = 12) -> str:
        """Who waited on whom and how long, as plain text."""
        from .sync_summary import summary_text

        return summary_text(self, max_pairs)


def _pairs(trace: Trace, obj_ptr, obj_ids, which: int):
    """(call, object) pairs of the calls of kind ``which``, sorted by (object, start)."""
    calls = np.flatnonzero(trace.kind == which)
    lens = obj_ptr[calls + 1] - obj_ptr[calls]
    call = np.repeat(calls, lens).astype(np.int32)
    within = np.arange(call.size, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    obj = obj_ids[np.repeat(obj_ptr[calls], lens) + within]
    order = np.lexsort((trace.start[call], obj))
    return np.ascontiguousarray(call[order]), np.ascontiguousarray(obj[order])


def synchronisation(trace: Trace, max_per_wait: int = MAX_PER_WAIT) -> Synchronisation:
    """The SyncTrace analysis of ``trace`` (see `Synchronisation`)."""
    from ..kernels import correspondence as kc
    from ..kernels.sync import kind_durations

    if not isinstance(trace, Trace):
        raise TypeError(f"synchronisation needs a Trace, got {type(trace).__name__}")
    n = len(trace)
    obj_ptr, obj_ids, source, names = attribute_objects(trace)
    w_call, w_obj = _pairs(trace, obj_ptr, obj_ids, KIND_WAIT)
    r_call, r_obj = _pairs(trace, obj_ptr, obj_ids, KIND_RELEASE)
    w, r, o, dropped = kc.correspondences(w_call, w_obj, r_call, r_obj, trace.start, trace.end, trace.thread,
                                          int(max_per_wait))
    # one row per (wait, release): the lowest shared object
    key = w.astype(np.int64) * max(n, 1) + r
    order = np.lexsort((o, key))
    key, w, r, o = key[order], w[order], r[order], o[order]
    first = np.r_[True, key[1:] != key[:-1]] if key.size else np.zeros(0, bool)
    w, r, o = w[first], r[first], o[first]
    order = np.lexsort((trace.start[r], w))
    w, r, o = (np.ascontiguousarray(a[order]) for a in (w, r, o))
    up_w = kc.nearest_strict_of_kind(trace.kind, trace.parent, KIND_WAIT)
    up_r = kc.nearest_strict_of_kind(trace.kind, trace.parent, KIND_RELEASE)
    primary = kc.outermost_pairs(w, r, up_w, up_r, max(n, 1), MAX_CHAIN)
    top_w = kc.outermost_of_kind(trace.kind, trace.parent, KIND_WAIT)
    top = top_w[w] if w.size else np.zeros(0, np.int32)
    best = kc.latest_release_per_wait(top, r, trace.start, n)
    ends_wait = np.zeros(w.size, bool)
    ends_wait[best[best >= 0]] = True
    nt = trace.n_threads
    rows = np.flatnonzero(ends_wait)
    tw, tr_ = trace.thread[top[rows]], trace.thread[r[rows]]
    dur = trace.end[top[rows]] - trace.start[top[rows]]
    pair_us = np.bincount(tw * nt + tr_, weights=dur, minlength=nt * nt).reshape(nt, nt) if nt else np.zeros((0, 0))
    pair_n = np.bincount(tw * nt + tr_, minlength=nt * nt).reshape(nt, nt) if nt else np.zeros((0, 0), np.int64)
    return Synchronisation(
        trace=trace, wait_call=w, release_call=r, object=o, primary=primary, ends_wait=ends_wait,
        dur_w=kind_durations(trace.kind, trace.start, trace.end, trace.parent, KIND_WAIT),
        dur_r=kind_durations(trace.kind, trace.start, trace.end, trace.parent, KIND_RELEASE),
        dur_o=kind_durations(trace.kind, trace.start, trace.end, trace.parent, KIND_IO),
        obj_ptr=obj_ptr, obj_ids=obj_ids, obj_source=source, object_names=names,
        pair_wait_us=pair_us, pair_waits=pair_n.astype(np.int64), dropped=int(dropped),
        meta={"top_wait": top,
              "top_release": kc.outermost_of_kind(trace.kind, trace.parent, KIND_RELEASE)[r] if r.size
              else np.zeros(0, np.int32), "max_per_wait": int(max_per_wait), "source_names": SOURCE_NAMES},
    )
