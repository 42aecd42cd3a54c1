"""Kernels that turn Chrome begin/end events into call intervals.

The repair rules follow what careful peers do (speedscope's trace-event importer,
Perfetto's JSON importer, Catapult's trace model), written down here once:

* Events of a thread are taken in timestamp order (stable: file order breaks ties).
* ``E`` with no name, or whose name is the top of the stack: closes the top.
* ``E`` whose name is deeper in the stack: closes everything above it too
  (those calls were left open: counted as W_E_MISMATCH).
* ``E`` whose name is not on the stack (or an empty stack): held back until the
  timestamp changes, because a ``B`` of that name at the same timestamp may follow
  in the file (zero-length calls written end-first); if one comes, it becomes a
  zero-length call, otherwise the ``E`` is dropped (W_E_UNMATCHED).
* ``B`` never closed: closed at the thread's last timestamp (W_UNCLOSED).
"""
import numpy as np
from numba import njit

from .tree import enclosing_call

W_E_MISMATCH = 0
W_E_UNMATCHED = 1
W_UNCLOSED = 2
N_BE_WARN = 3


@njit(cache=True, nogil=True)
def match_begin_end(thread, ts, is_begin, name, thread_last_ts):
    """Pair B/E events sorted by (thread, ts, file order) into intervals.

    Returns (b_index, start, end, warn_count, warn_first) where ``b_index`` is
    the position (in the given arrays) of the B event of each interval, and
    ``warn_first[w]`` the position of the first event that triggered warning w.
    """
    n = ts.shape[0]
    out_b = np.empty(n, np.int64)
    out_s = np.empty(n, np.float64)
    out_e = np.empty(n, np.float64)
    m = 0
    stack = np.empty(max(n, 1), np.int64)
    sp = 0
    pend = np.empty(max(n, 1), np.int64)  # held-back unmatched E positions
    np_ = 0
    pend_ts = np.nan
    warn_count = np.zeros(N_BE_WARN, np.int64)
    warn_first = np.full(N_BE_WARN, -1, np.int64)
    cur = -1
    for k in range(n + 1):
        new_thread = k == n or thread[k] != cur
        # expire held-back E events when the timestamp (or thread) moves on
        if np_ > 0 and (new_thread or ts[k] != pend_ts):
            for q in range(np_):
                warn_count[W_E_UNMATCHED] += 1
                if warn_first[W_E_UNMATCHED] < 0:
                    warn_first[W_E_UNMATCHED] = pend[q]
            np_ = 0
        if new_thread:
            while sp > 0:
                sp -= 1
                b = stack[sp]
                out_b[m] = b
                out_s[m] = ts[b]
                out_e[m] = max(thread_last_ts[cur], ts[b])
                m += 1
                warn_count[W_UNCLOSED] += 1
                if warn_first[W_UNCLOSED] < 0:
                    warn_first[W_UNCLOSED] = b
            if k == n:
                break
            cur = thread[k]
        t = ts[k]
        if is_begin[k]:
            # a held-back E of this name at this timestamp closes it at once
            hit = -1
            for q in range(np_):
                if name[pend[q]] == name[k]:
                    hit = q
                    break
            if hit >= 0:
                out_b[m] = k
                out_s[m] = t
                out_e[m] = t
                m += 1
                for q in range(hit, np_ - 1):
                    pend[q] = pend[q + 1]
                np_ -= 1
            else:
                stack[sp] = k
                sp += 1
            continue
        # an E event
        target = -1
        if sp > 0:
            if name[k] < 0 or name[stack[sp - 1]] == name[k]:
                target = sp - 1
            else:
                for q in range(sp - 2, -1, -1):
                    if name[stack[q]] == name[k]:
                        target = q
                        break
        if target < 0:
            if np_ == 0:
                pend_ts = t
            pend[np_] = k
            np_ += 1
            continue
        if target < sp - 1:
            warn_count[W_E_MISMATCH] += 1
            if warn_first[W_E_MISMATCH] < 0:
                warn_first[W_E_MISMATCH] = k
        while sp > target:
            sp -= 1
            b = stack[sp]
            out_b[m] = b
            out_s[m] = ts[b]
            out_e[m] = max(t, ts[b])
            m += 1
    return out_b[:m].copy(), out_s[:m].copy(), out_e[:m].copy(), warn_count, warn_first


@njit(cache=True, nogil=True)
def bind_flow_points(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next):
    """Bind flow points to calls (Chrome flow semantics).

    ``f_next[k]`` True: the first call on the thread starting at or after ts
    (a flow end without ``bp: "e"``), falling back to the enclosing call;
    otherwise the deepest call enclosing ts.  -1 when none.
    """
    n = f_ts.shape[0]
    out = np.full(n, -1, np.int32)
    for k in range(n):
        t = f_thread[k]
        if t < 0:
            continue
        lo = thread_lo[t]
        hi = thread_hi[t]
        if hi <= lo:
            continue
        ts = f_ts[k]
        if f_next[k]:
            # first call starting at or after ts (lower bound on start)
            a2 = lo
            b2 = hi
            while a2 < b2:
                mid = (a2 + b2) // 2
                if call_start[mid] < ts:
                    a2 = mid + 1
                else:
                    b2 = mid
            if a2 < hi:
                out[k] = a2
                continue
        out[k] = enclosing_call(call_start, call_end, call_parent, lo, hi, ts, False)
    return out
