"""`kernels.fold.squeezed_levels` with each call's height as a code into its lane's height
table instead of an array of float64 (1 byte a call, not 8: a 10^8-call overview), and no
per-call class or base-height arrays.

The heights a call can take are those of its lane's row of the squeeze's table ``heights``
(lanes × 5: a band of class 0, 1 or 2, `kernels.fold.H_SQUEEZED`, `H_FIRST_NARROW`) and 1.0
(a call that is not narrow): ``code[i]`` indexes the row of ``table = [heights | 1.0]``
(lanes × 6, `HEIGHT_TABLE_COLUMNS`), so ``table[lane[i], code[i]]`` is the height
`kernels.fold.place_folded_levels` gives, bit for bit, and every bottom the same sums.
"""
import numpy as np
from numba import njit

from .fold import H_FIRST_NARROW, H_SQUEEZED, join_run

#: the code of a full level (1.0): the table's last column
H_FULL = 5
HEIGHT_TABLE_COLUMNS = 6


@njit(cache=True, nogil=True)
def height_table(heights):
    """``[heights | 1.0]``: the squeeze's table (lanes × 5) and a column of full levels."""
    nl = heights.shape[0]
    out = np.empty((nl, HEIGHT_TABLE_COLUMNS), np.float64)
    for lane in range(nl):
        for c in range(HEIGHT_TABLE_COLUMNS - 1):
            out[lane, c] = heights[lane, c]
        out[lane, H_FULL] = 1.0
    return out


@njit(cache=True, nogil=True)
def squeezed_codes(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, heights):
    """`kernels.fold.squeezed_levels` (its `squeeze_classes` rules and `place_folded_levels`
    placement) with heights as codes (module doc).  Returns ``(bottom, code, eff_folded,
    run_start, run_levels, top, table)``: float64 bottom in levels, uint8 height code, the
    effective fold flag, int32 run start (-1 when unfolded), int32 levels of a run at its
    start (0 elsewhere), the top of every lane (max of bottom + height) and the table."""
    n = parent.shape[0]
    table = height_table(heights)
    folded = np.empty(n, np.bool_)
    for i in range(n):
        folded[i] = infra[i] or (passing[i] and width_px[i] < unfold[lane[i]])
    # `fold_chain_length`, in the array that keeps the run starts' levels (the rest zeroed below)
    run_levels = np.zeros(n, np.int32)
    for i in range(n - 1, -1, -1):
        if folded[i]:
            run_levels[i] += 1
            p = parent[i]
            if p >= 0 and folded[p] and run_levels[i] > run_levels[p]:
                run_levels[p] = run_levels[i]
    bottom = np.zeros(n, np.float64)
    code = np.full(n, H_FULL, np.uint8)
    eff = np.zeros(n, np.bool_)
    run_start = np.full(n, -1, np.int32)
    for i in range(n):
        ln = lane[i]
        p = parent[i]
        if p >= 0:
            if eff[p]:
                r = run_start[p]
                bottom[i] = bottom[r] + table[lane[r], code[r]]
            else:
                bottom[i] = bottom[p] + table[lane[p], code[p]]
        narrow_i = name_px[i] < threshold[ln]
        if not narrow_i:
            base = H_FULL
        elif p >= 0 and name_px[p] < threshold[lane[p]]:
            base = H_SQUEEZED
        else:
            base = H_FIRST_NARROW
        k = run_levels[i]
        run_levels[i] = 0
        if not folded[i]:
            code[i] = base
            continue
        if p >= 0 and eff[p]:  # inside a run: takes the slab's place
            code[i] = code[join_run(i, p, eff, run_start, bottom)]
            continue
        if not wide[i]:
            band = 0
        elif infra[i] or narrow_i:
            band = 1
        else:
            band = 2
        if k == 1 and band >= 1:
            code[i] = base
            continue
        eff[i] = True
        code[i] = band
        run_start[i] = i
        run_levels[i] = k
    top = np.zeros(threshold.shape[0], np.float64)
    for i in range(n):
        t = bottom[i] + table[lane[i], code[i]]
        if t > top[lane[i]]:
            top[lane[i]] = t
    return bottom, code, eff, run_start, run_levels, top, table
