"""Counters and async slices of a Chrome trace, in numba (issue 25): the ``key: value``
pairs of counter events' ``args`` objects (`counter_pairs`), and the matching of async
begin/end events into nested slices per track (`match_async`).

Both are one pass over data the scanner already holds (byte spans of ``args``, the kept
rows' phases and times): O(bytes of the args) and O(rows), with outputs bounded by their
inputs.  Brute-force twins in tests/test_chrome_side.py.
"""
import numpy as np
from numba import njit

from .jsontokens import parse_number, scan_string, skip_value, skip_ws

# counter_pairs: status of one pair
PAIR_OK = 0
PAIR_NONFINITE = 1  # NaN, Infinity, or a number out of the float64 range
PAIR_NOT_NUMBER = 2  # a string, object, array, literal
PAIR_INEXACT = 3  # a number outside the exact fast path: the caller re-parses it with float()

# match_async: kinds of rows
A_BEGIN = 0
A_END = 1
A_INSTANT = 2


@njit(cache=True, nogil=True)
def counter_pairs(buf, off, ln, stack):
    """The pairs of the ``args`` objects ``buf[off[r]:off[r]+ln[r]]`` (one per row r).

    Returns (row, key_off, key_len, val_off, val_len, value, status) arrays, one entry per
    pair, in row then key order; keys are the byte spans inside their quotes.  A span that
    is not an object yields no pair.  At most one pair per 4 bytes of args."""
    cap = 0
    for r in range(off.shape[0]):
        cap += (ln[r] + 1) // 4
    row = np.empty(cap, np.int64)
    koff = np.empty(cap, np.int64)
    klen = np.empty(cap, np.int64)
    voff = np.empty(cap, np.int64)
    vlen = np.empty(cap, np.int64)
    val = np.empty(cap, np.float64)
    st = np.empty(cap, np.int8)
    m = 0
    for r in range(off.shape[0]):
        i = off[r]
        end = off[r] + ln[r]
        if ln[r] < 2 or buf[i] != 123:  # {
            continue
        i = skip_ws(buf, i + 1)
        while i < end and buf[i] == 34 and m < cap:
            j, _ = scan_string(buf, i)
            if j < 0 or j > end:
                break
            k0, k1 = i + 1, j - 1
            i = skip_ws(buf, j)
            if i >= end or buf[i] != 58:  # :
                break
            i = skip_ws(buf, i + 1)
            c = buf[i]
            v = np.nan
            s = PAIR_NOT_NUMBER
            if c == 45 or 48 <= c <= 57:
                v, j, exact = parse_number(buf, i)
                if j >= 0 and exact:
                    s = PAIR_OK if np.isfinite(v) else PAIR_NONFINITE
                elif j >= 0:
                    s = PAIR_INEXACT
            if s == PAIR_NOT_NUMBER or j < 0:
                if c == 78 or c == 73 or (c == 45 and i + 1 < end and buf[i + 1] == 73):  # NaN, ±Infinity
                    s = PAIR_NONFINITE
                else:
                    s = PAIR_NOT_NUMBER
                j = skip_value(buf, i, stack)
                if j < 0:
                    break
            row[m] = r
            koff[m] = k0
            klen[m] = k1 - k0
            voff[m] = i
            vlen[m] = j - i
            val[m] = v
            st[m] = s
            m += 1
            i = skip_ws(buf, j)
            if i < end and buf[i] == 44:  # ,
                i = skip_ws(buf, i + 1)
            else:
                break
    return row[:m], koff[:m], klen[:m], voff[:m], vlen[:m], val[:m], st[:m]


@njit(cache=True, nogil=True)
def match_async(track, kind, ts):
    """Nested async slices from rows sorted by (track, ts, file order).

    A begin opens a slice on its track; an end closes the innermost open one; an instant is
    a zero-length slice inside the open ones.  Returns (start_row, end_ts, depth) per slice
    in the order they close, the number of begins left open (closed at their track's last
    timestamp), the first of them, the number of ends with nothing open (dropped) and the
    first of them (row indices; -1 when none)."""
    n = track.shape[0]
    srow = np.empty(n, np.int64)
    send = np.empty(n, np.float64)
    sdep = np.empty(n, np.int32)
    stack = np.empty(n, np.int64)
    top = 0
    m = 0
    n_open, first_open, n_orphan, first_orphan = 0, -1, 0, -1
    for k in range(n + 1):
        if top > 0 and (k == n or track[k] != track[k - 1]):
            last = ts[k - 1]
            while top > 0:  # begins never ended: closed at the track's last timestamp
                top -= 1
                j = stack[top]
                srow[m] = j
                send[m] = max(last, ts[j])
                sdep[m] = top
                m += 1
                n_open += 1
                if first_open < 0 or j < first_open:
                    first_open = j
        if k == n:
            break
        if k > 0 and track[k] != track[k - 1]:
            top = 0
        c = kind[k]
        if c == A_BEGIN:
            stack[top] = k
            top += 1
        elif c == A_END:
            if top == 0:
                n_orphan += 1
                if first_orphan < 0:
                    first_orphan = k
            else:
                top -= 1
                j = stack[top]
                srow[m] = j
                send[m] = ts[k]
                sdep[m] = top
                m += 1
        else:
            srow[m] = k
            send[m] = ts[k]
            sdep[m] = top
            m += 1
    return srow[:m], send[:m], sdep[:m], n_open, first_open, n_orphan, first_orphan
