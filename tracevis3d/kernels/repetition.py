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


@njit(cache=True, nogil=True)
def _scan_sequence(seq, m, key, par, max_period, out, n_out):
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
                if n_out == out.shape[0]:
                    bigger = np.empty((out.shape[0] * 2 + 16, 4), np.int32)
                    bigger[:n_out] = out[:n_out]
                    out = bigger
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
    return out, n_out


@njit(cache=True, nogil=True)
def sibling_repetitions(key, parent, end_index, thread, max_period):
    """Rows (parent, first call, period, count) of repeated sibling runs.

    ``parent`` is -1 for the roots of a thread (each thread's roots form one
    sequence).  ``first call`` is the call index where the run starts; the run
    covers ``period * count`` consecutive siblings.  Rows come in pre-order of
    the parent, roots of a thread before its inner calls.
    """
    n = key.shape[0]
    out = np.empty((16, 4), np.int32)
    n_out = 0
    seq = np.empty(max(n, 1), np.int64)
    i = 0
    while i < n:
        # roots of the thread starting at call i
        th = thread[i]
        m = 0
        r = i
        while r < n and thread[r] == th:
            seq[m] = r
            m += 1
            r = end_index[r]
        out, n_out = _scan_sequence(seq, m, key, -1, max_period, out, n_out)
        t_end = r
        for p in range(i, t_end):
            if p + 1 < end_index[p]:
                m = 0
                c = p + 1
                while c < end_index[p]:
                    seq[m] = c
                    m += 1
                    c = end_index[c]
                if m >= 2:
                    out, n_out = _scan_sequence(seq, m, key, p, max_period, out, n_out)
        i = t_end
    return out[:n_out].copy()
