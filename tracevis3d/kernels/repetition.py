"""Contiguous repeated sibling sequences (TraceDiff Sec. IV-B red outlines,
after Bohnet [2]; SEAT Sec. 2.9.1 pattern filters reuse them).

The children of a call (or the roots of a thread) form a sequence of keys
(normally the exact-subtree class of `gamma_sweep.shape_classes_grown`, so a
repetition means identical subtrees; Γ-set classes give a looser notion).
Scanning left to right, at position s the smallest period P ≤ max_period for
which key[s+i] = key[s+i+P] holds for i = 0..P−1 starts a repetition; it extends
while the equality holds, giving count = 1 + L // P copies where L is the length
of the run of equalities; the scan resumes after the last full copy.  Otherwise
the scan moves one position on.  Greedy, deterministic, O(m · max_period · run).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def _scan_sequence(seq, m, key, par, max_period, out, n_out):
    """The repetitions of the sequence ``seq[:m]`` (children of ``par``) as rows of ``out`` from
    ``n_out`` (the module docstring's scan); ``out`` has room for m // 2 more (a row covers at
    least two siblings).  Returns the new row count."""
    s = 0
    while s + 1 < m:
        hit = False
        pmax = min(max_period, (m - s) // 2)
        for p in range(1, pmax + 1):
            run = 0
            while s + run + p < m and key[seq[s + run]] == key[seq[s + run + p]]:
                run += 1
            if run >= p:
                count = 1 + run // p
                out[n_out, 0] = par
                out[n_out, 1] = seq[s]
                out[n_out, 2] = p
                out[n_out, 3] = count
                n_out += 1
                s += p * count
                hit = True
                break
        if not hit:
            s += 1
    return n_out


#: `_repetitions_run`'s state: the first call of the thread being read, the end of its calls,
#: the next parent (-1: the thread's roots not read yet), the rows, the rows the stopping
#: sequence needs room for
_R_FIRST, _R_END, _R_PARENT, _R_ROWS, _R_NEED = range(5)


@njit(cache=True, nogil=True, _nrt=False)
def _repetitions_run(key, end_index, thread, max_period, seq, out, st):
    """`sibling_repetitions`' sequences from the state ``st`` on, each scanned by
    `_scan_sequence`, until all are read (returns 0) or one may need more rows than ``out``
    holds (returns 1; the sequence is left unread, its need in ``st``).  No array is made or
    rebound here, so nothing is reference-counted per sequence (a loop that may rebind an
    array, or a called kernel that counts references, pays two atomic operations per array
    per pass)."""
    n = key.shape[0]
    i, t_end, p, n_out = st[_R_FIRST], st[_R_END], st[_R_PARENT], st[_R_ROWS]
    why = 0
    while i < n:
        if p < 0:
            # roots of the thread starting at call i
            th = thread[i]
            m = 0
            r = i
            while r < n and thread[r] == th:
                seq[m] = r
                m += 1
                r = end_index[r]
            if n_out + m // 2 > out.shape[0]:
                st[_R_NEED] = n_out + m // 2
                why = 1
                break
            n_out = _scan_sequence(seq, m, key, -1, max_period, out, n_out)
            t_end = r
            p = i
        while p < t_end:
            if p + 1 < end_index[p]:
                m = 0
                c = p + 1
                while c < end_index[p]:
                    seq[m] = c
                    m += 1
                    c = end_index[c]
                if m >= 2:
                    if n_out + m // 2 > out.shape[0]:
                        st[_R_NEED] = n_out + m // 2
                        why = 1
                        break
                    n_out = _scan_sequence(seq, m, key, p, max_period, out, n_out)
            p += 1
        if why:
            break
        i = t_end
        p = -1
    st[_R_FIRST], st[_R_END], st[_R_PARENT], st[_R_ROWS] = i, t_end, p, n_out
    return why


@njit(cache=True, nogil=True)
def sibling_repetitions(key, parent, end_index, thread, max_period):
    """Rows (parent, first call, period, count) of repeated sibling runs.

    ``parent`` is -1 for the roots of a thread (each thread's roots form one
    sequence).  ``first call`` is the call index where the run starts; the run
    covers ``period * count`` consecutive siblings.  Rows come in pre-order of
    the parent, roots of a thread before its inner calls.  The sequences are read by
    `_repetitions_run`, which grows nothing; here, between its runs, the rows grow.
    """
    n = key.shape[0]
    out = np.empty((1024, 4), np.int32)
    seq = np.empty(max(n, 1), np.int64)
    st = np.zeros(5, np.int64)
    st[_R_PARENT] = -1
    while _repetitions_run(key, end_index, thread, max_period, seq, out, st):
        bigger = np.empty((max(2 * out.shape[0], st[_R_NEED]), 4), np.int32)
        bigger[:st[_R_ROWS]] = out[:st[_R_ROWS]]
        out = bigger
    return out[:st[_R_ROWS]].copy()
