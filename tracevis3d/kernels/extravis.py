"""EXTRAVIS kernels (Cornelissen et al., "Execution trace analysis through massive sequence
and circular bundle views"): the call-importance prepass (Sec. 5, Eq. 2) and the Massive
Sequence View's mural with importance-based anti-aliasing (Sec. 5, Eq. 3).

Small pure functions over arrays in *sequence order* (all calls ordered by start time,
ties by thread, then by the model's order; `analysis.hierarchy.sequence_order`).  The
brute-force twins live in the tests (tests/test_extravis.py).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def window_frequency(rel, n_rel, window):
    """f_i of EXTRAVIS Sec. 5: the share of the calls in a window of ``window`` calls centred on
    call i whose relation (``rel``, a compact id in [0, n_rel)) equals call i's.

        f_i = |{j in w_i : rel_j = rel_i}| / |w_i|,  w_i = [i - (window-1)//2, i + window//2] ∩ [0, n)

    The window is clipped at both ends of the sequence and |w_i| is the clipped size, so
    f_i is a share in [1/|w_i|, 1] (call i counts itself: f_i > 0, and f_i^p is finite for
    p < 0).  One pass with a count per relation (O(n + n_rel)).  Returns float64 (n,).
    """
    n = rel.shape[0]
    f = np.empty(n, np.float64)
    cnt = np.zeros(n_rel, np.int64)
    hl = (window - 1) // 2
    hr = window // 2
    lo_c = 0  # the counted range is [lo_c, hi_c]
    hi_c = -1
    for i in range(n):
        lo = i - hl
        if lo < 0:
            lo = 0
        hi = i + hr
        if hi > n - 1:
            hi = n - 1
        while hi_c < hi:
            hi_c += 1
            cnt[rel[hi_c]] += 1
        while lo_c < lo:
            cnt[rel[lo_c]] -= 1
            lo_c += 1
        f[i] = cnt[rel[i]] / (hi - lo + 1)
    return f


@njit(cache=True, nogil=True)
def _add_piece(acc, a, b, lo, hi, w, c0, slope):
    """Add w·(c0 + slope·x) (per channel) to pixels x in [max(a, lo), min(b, hi)) of the
    difference arrays ``acc`` (rows 0..2: constant terms, 3..5: slopes, 6: coverage)."""
    if a < lo:
        a = lo
    if b > hi:
        b = hi
    if b <= a:
        return
    for ch in range(3):
        acc[ch, a] += w * c0[ch]
        acc[ch, b] -= w * c0[ch]
        acc[3 + ch, a] += w * slope[ch]
        acc[3 + ch, b] -= w * slope[ch]
    acc[6, a] += w
    acc[6, b] -= w


@njit(cache=True, nogil=True)
def mural_ibaa(x0, x1, xc, xe, c0, c1, weight, height, width, background):
    """The Massive Sequence View as an image (EXTRAVIS Sec. 3.3, 5; Eq. 3).

    Calls (in sequence order) are rows: call k spans the call units [k, k+1) of the
    n-call sequence and pixel line l the units [l·n/H, (l+1)·n/H).  Its rectangle covers
    pixel columns [x0_k, x1_k) (caller's column to callee's column); its colour at column x
    is the gradient c(x) = c0_k + t·(c1_k − c0_k), t = clip((x − xc_k)/(xe_k − xc_k), 0, 1)
    from the caller's centre column xc_k (c0, green by default) to the callee's xe_k (c1,
    red); t = 1/2 when xc_k = xe_k.  Line l's pixel x is (Eq. 3, IBAA)

        l(x) = Σ_i F_i·W_i·c_i(x) / Σ_i F_i·W_i

    over the calls s..s+n−1 touching the line, F_i the fraction of call i inside the line
    (1 except for the first and last, which may be fractional), W_i = f_i^p (Eq. 2) its
    importance; c_i(x) is the background where call i's rectangle does not reach x (in
    the paper's Fig. 10 the outlier and the 15 other calls cover different columns, so
    each pixel blends the calls covering it with the background the others leave).
    W = 1 for every call is the linear anti-aliasing of Fig. 9.

    Per line each call adds O(1) entries to difference arrays of constant and linear terms
    (the gradient is linear between the centres, constant outside): O(n + H·width).
    Returns (rgb float32 (H, width, 3), coverage float32 (H, width): Σ covering F·W / Σ F·W).
    """
    n = x0.shape[0]
    img = np.empty((height, width, 3), np.float32)
    cov = np.zeros((height, width), np.float32)
    acc = np.zeros((7, width + 1), np.float64)
    cl = np.empty(3, np.float64)
    cr = np.empty(3, np.float64)
    slope = np.empty(3, np.float64)
    zero = np.zeros(3, np.float64)
    base = np.empty(3, np.float64)
    for ln in range(height):
        acc[:, :] = 0.0
        u0 = ln * n / height
        u1 = (ln + 1) * n / height
        s = int(np.floor(u0))
        e = int(np.ceil(u1))
        if e > n:
            e = n
        total = 0.0
        for k in range(s, e):
            a = max(float(k), u0)
            b = min(float(k + 1), u1)
            F = b - a
            if F <= 0.0:
                continue
            w = F * weight[k]
            total += w
            lo = x0[k]
            hi = x1[k]
            if xc[k] == xe[k]:
                for ch in range(3):
                    cl[ch] = 0.5 * (c0[k, ch] + c1[k, ch])
                _add_piece(acc, lo, hi, lo, hi, w, cl, zero)
                continue
            if xc[k] < xe[k]:
                L, R = xc[k], xe[k]
                for ch in range(3):
                    cl[ch] = c0[k, ch]
                    cr[ch] = c1[k, ch]
            else:
                L, R = xe[k], xc[k]
                for ch in range(3):
                    cl[ch] = c1[k, ch]
                    cr[ch] = c0[k, ch]
            for ch in range(3):
                slope[ch] = (cr[ch] - cl[ch]) / (R - L)
            pa = int(np.ceil(L))  # first column with x >= L
            pb = int(np.floor(R)) + 1  # first column with x > R
            _add_piece(acc, lo, pa, lo, hi, w, cl, zero)
            for ch in range(3):
                base[ch] = cl[ch] - slope[ch] * L
            _add_piece(acc, pa, pb, lo, hi, w, base, slope)
            _add_piece(acc, pb, hi, lo, hi, w, cr, zero)
        run = np.zeros(7, np.float64)
        for x in range(width):
            for q in range(7):
                run[q] += acc[q, x]
            if total > 0.0:
                covered = min(max(run[6], 0.0), total)  # prefix-sum rounding
                rest = total - covered
                for ch in range(3):
                    img[ln, x, ch] = (run[ch] + run[3 + ch] * x + rest * background[ch]) / total
                cov[ln, x] = covered / total
            else:
                for ch in range(3):
                    img[ln, x, ch] = background[ch]
    return img, cov
