"""The scanner's rows turned into columns, chunk by chunk, in numba (`io.chrome_rows`).

The scanner (`jsonscan`) writes one row of each event across its columns (`jsonevent`: int64
×8, int32 ×15, float64 ×3); the importer keeps columns.  Read from the rows one column at a
time, each column of a chunk of 2^16 rows walks the whole chunk (9.7 MB, past the L2 cache) for
its 4 or 8 bytes a row: 26 passes.  `rows_to_columns` walks the rows once and writes every
column, each into a contiguous row of ``out``.  `intern_spans_block` and `intern_pairs_block`
intern a column's names or (pid, tid) pairs a block of rows at a time (no int64 copy of the whole
column), with the tables and hashes of `jsonspans`.
"""
import numpy as np
from numba import njit

from .jsonspans import _mix64, span_full_hash, span_word_hash
from .sidetables import same_bytes


#: rows a transposition takes at a time (`rows_to_columns`): 32 rows of 15 int32 are 1.9 KB
TRANSPOSE_BLOCK = 32


@njit(cache=True, nogil=True)
def rows_to_columns(rows, k, out):
    """``out[c, r] = rows[r, c]`` for the first ``k`` rows (``out``: one row per column, at least
    ``k`` long): a transposition, `TRANSPOSE_BLOCK` rows at a time (read from the first level
    cache column after column; each column's part written in one run), by unsigned positions
    (numba wraps a signed index, which keeps the loop from vectorising).  A chunk of 2^16 rows of
    15 int32, hot: 2.1 ms row after row, 0.34 ms so; the 10^6-call sympy trace's scan spent
    68 of its 390 ms (one thread) in the rows' transposition row after row."""
    w = np.uint64(rows.shape[1])
    kk = np.uint64(k)
    block = np.uint64(TRANSPOSE_BLOCK)
    r0 = np.uint64(0)
    while r0 < kk:
        r1 = min(r0 + block, kk)
        for c in range(w):
            for r in range(r0, r1):
                out[c, r] = rows[r, c]
        r0 += block



# ------------------------------------------------------------------ interning, block by block
# `jsonspans.intern_spans` and `intern_pairs` take whole columns as int64 arrays: 10^7 rows are
# 80 MB an array, made only to be read once.  These take a block of rows at a time, the table
# kept between blocks (its state: ids by slot ``slot_id``, the slot's hash ``slot_hash``, per id
# its span or pair and first row, counters ``cnt``: ids so far, work so far): the same ids in the
# same order (first appearance), the same first rows.

#: ``cnt`` entries of a block interning's state
CNT_IDS, CNT_WORK = 0, 1


@njit(cache=True, nogil=True)
def new_intern_state(slots):
    """An empty table of ``slots`` slots (a power of two) for `intern_spans_block` or
    `intern_pairs_block`: (slot_id, slot_hash, id_x, id_y, id_first, cnt)."""
    half = max(slots // 2, 1)
    return (np.full(slots, -1, np.int32), np.zeros(slots, np.int64), np.empty(half, np.int64),
            np.empty(half, np.int64), np.empty(half, np.int64), np.zeros(2, np.int64))


@njit(cache=True, nogil=True)
def _rehashed(slot_id, slot_hash):
    """The slots at twice the size, each id moved to its hash's slot there (linear probing)."""
    size = slot_id.shape[0] * 2
    mask = size - 1
    s2 = np.full(size, -1, np.int32)
    h2 = np.zeros(size, np.int64)
    for s in range(slot_id.shape[0]):
        if slot_id[s] >= 0:
            t = slot_hash[s] & mask
            while s2[t] >= 0:
                t = (t + 1) & mask
            s2[t] = slot_id[s]
            h2[t] = slot_hash[s]
    return s2, h2


@njit(cache=True, nogil=True)
def _grown_ids(x, y, first):
    """The per-id arrays with room for twice as many ids."""
    m = x.shape[0]
    x2 = np.empty(2 * m, np.int64)
    y2 = np.empty(2 * m, np.int64)
    f2 = np.empty(2 * m, np.int64)
    x2[:m] = x
    y2[:m] = y
    f2[:m] = first
    return x2, y2, f2


@njit(cache=True, nogil=True, inline="always")
def _new_id(slot_id, slot_hash, id_x, id_y, id_first, s, h, x, y, first_row, nid):
    """Id ``nid`` made for the value (x, y) first met at row ``first_row``, in the empty slot
    ``s`` its hash ``h`` probed to: the per-id arrays grown when full (`_grown_ids`), the slots
    rehashed at twice the size once half full (`_rehashed`).  Returns the tables and nid + 1."""
    if nid >= id_x.shape[0]:
        id_x, id_y, id_first = _grown_ids(id_x, id_y, id_first)
    slot_id[s] = nid
    slot_hash[s] = h
    id_x[nid] = x
    id_y[nid] = y
    id_first[nid] = first_row
    nid += 1
    if 2 * nid > slot_id.shape[0]:
        slot_id, slot_hash = _rehashed(slot_id, slot_hash)
    return slot_id, slot_hash, id_x, id_y, id_first, nid


@njit(cache=True, nogil=True)
def intern_spans_block(buf, off, ln, valid, seed, full, budget, row0, ids, state):
    """`jsonspans.intern_spans` of one block of rows (global rows ``row0`` on), its table in
    ``state`` (`new_intern_state`; the per-id arrays hold each id's offset and length): ids of
    the block's rows into ``ids`` (-1 where not ``valid``).  The cheap `jsonspans.span_word_hash`
    (``full`` False) gives up once the work of all blocks so far passes ``budget`` (2 × (bytes +
    rows) of them, + 1024): returns (False, state), and the caller starts again with the keyed
    `jsonspans.span_full_hash` (``full`` True), as `intern_spans` does.  Returns (True, state)."""
    slot_id, slot_hash, id_off, id_len, id_first, cnt = state
    mask = slot_id.shape[0] - 1
    nid = cnt[CNT_IDS]
    work = cnt[CNT_WORK]
    for k in range(off.shape[0]):
        if not valid[k]:
            ids[k] = -1
            continue
        o = off[k]
        m = ln[k]
        h = span_full_hash(buf, o, m, seed) if full else span_word_hash(buf, o, m)
        s = h & mask
        while True:
            e = slot_id[s]
            if e < 0:
                ids[k] = nid
                slot_id, slot_hash, id_off, id_len, id_first, nid = _new_id(slot_id, slot_hash, id_off, id_len,
                                                                             id_first, s, h, o, m, row0 + k, nid)
                mask = slot_id.shape[0] - 1
                break
            if slot_hash[s] == h and id_len[e] == m:
                if same_bytes(buf, id_off[e], o, m):
                    ids[k] = e
                    break
                work += m >> 3
            work += 1
            if not full and work > budget:
                cnt[CNT_IDS] = nid
                cnt[CNT_WORK] = work
                return False, (slot_id, slot_hash, id_off, id_len, id_first, cnt)
            s = (s + 1) & mask
    cnt[CNT_IDS] = nid
    cnt[CNT_WORK] = work
    return True, (slot_id, slot_hash, id_off, id_len, id_first, cnt)


@njit(cache=True, nogil=True)
def intern_row_names(buf, ii, ss, k, off_col, len_col, ph_col, skip_phase, seed, budget, row0, ids, state):
    """`intern_spans_block` (the cheap hash) of the names of the first ``k`` rows of the scanner's
    ``ii, ss`` (global rows ``row0`` on), read from the rows in one pass: row r's span is
    (``ii[r, off_col]``, ``ss[r, len_col]``), named where that length is >= 0 and its phase
    ``ss[r, ph_col] & 255`` is not marked in ``skip_phase``.  The ``budget`` grows first by the
    block's work, 2 × (bytes + count) of its named spans (`chrome_rows.intern_work`).  Returns
    (ok, the budget grown, state); ``ids``: -1 where not named."""
    off = np.empty(k, np.int64)
    ln = np.empty(k, np.int64)
    named = np.empty(k, np.bool_)
    work = 0
    for r in range(k):
        m = np.int64(ss[r, len_col])
        v = m >= 0 and not skip_phase[ss[r, ph_col] & 255]
        off[r] = ii[r, off_col]
        ln[r] = max(m, 0)
        named[r] = v
        if v:
            work += m + 1
    budget += 2 * work
    ok, state = intern_spans_block(buf, off, ln, named, seed, False, budget, row0, ids, state)
    return ok, budget, state


@njit(cache=True, nogil=True)
def intern_pairs_block(a, b, seed, row0, ids, state):
    """`jsonspans.intern_pairs` of one block of rows (global rows ``row0`` on), its table in
    ``state`` (`new_intern_state`; the per-id arrays hold each id's pair): ids of the block's
    rows into ``ids``; a row holding the same pair as the row before it takes its id without a
    probe (a file's events come in runs of one thread).  Returns the state."""
    slot_id, slot_hash, id_a, id_b, id_first, cnt = state
    mask = slot_id.shape[0] - 1
    nid = cnt[CNT_IDS]
    s0 = _mix64(np.uint64(seed) ^ np.uint64(0x632BE59BD9B4E019))
    last = -1
    for k in range(a.shape[0]):
        x = a[k]
        y = b[k]
        if last >= 0 and id_a[last] == x and id_b[last] == y:
            ids[k] = last
            continue
        h = np.int64(_mix64(_mix64(np.uint64(x) ^ s0) + np.uint64(y)) >> np.uint64(1))
        s = h & mask
        while True:
            e = slot_id[s]
            if e < 0:
                e = nid
                slot_id, slot_hash, id_a, id_b, id_first, nid = _new_id(slot_id, slot_hash, id_a, id_b, id_first, s,
                                                                         h, x, y, row0 + k, nid)
                mask = slot_id.shape[0] - 1
                break
            if slot_hash[s] == h and id_a[e] == x and id_b[e] == y:
                break
            s = (s + 1) & mask
        ids[k] = e
        last = e
    cnt[CNT_IDS] = nid
    return (slot_id, slot_hash, id_a, id_b, id_first, cnt)


# ------------------------------------------------------------------ each thread key's last time
@njit(cache=True, nogil=True)
def max_by_key(out, key, values, take):
    """``np.maximum.at(out, key[take], values[take])`` over the first ``take.shape[0]`` rows: for
    each row i in order with ``take[i]``, ``out[key[i]]`` = numpy's maximum of it and
    ``values[i]`` (a NaN held stays, a NaN met is taken), without the masked copies of both
    columns or numpy's indexed loop (`chrome._thread_last_ts`: 0.16 s of the 10^7-call load)."""
    for i in range(take.shape[0]):
        if take[i]:
            k = key[i]
            held = out[k]
            v = values[i]
            if not (held >= v or held != held):
                out[k] = v


@njit(cache=True, nogil=True)
def max_by_key_of_rows(out, key, rows, start, length):
    """``np.maximum.at(out, key[rows], start + length)``: for each j in order, ``out[key[rows[j]]]``
    = numpy's maximum of it and ``start[j] + length[j]`` (the end of an X call)."""
    for j in range(rows.shape[0]):
        k = key[rows[j]]
        held = out[k]
        v = start[j] + length[j]
        if not (held >= v or held != held):
            out[k] = v


# ------------------------------------------------------------------ a chunk's columns summed up
@njit(cache=True, nogil=True)
def relative_offsets(t, k, cols, base):
    """In place, ``t[c, r] -= t[base, r]`` where ``t[c, r] != 0``, for each c of ``cols`` and the
    first ``k`` rows of the columns ``t`` (`chrome_rows.REL_COLUMNS`: a name's or category's
    offset less its event's).  Returns False when such a value was at or before its event's
    offset (never from the scanner; the caller then refuses the chunk)."""
    ok = True
    for j in range(cols.shape[0]):
        c = cols[j]
        for r in range(k):
            v = t[c, r]
            if v != 0:
                d = v - t[base, r]
                if d <= 0:
                    ok = False
                t[c, r] = d
    return ok


@njit(cache=True, nogil=True)
def column_stats(bits, k):
    """For each column c of the first ``k`` rows of ``bits`` (a chunk's columns, read as integers:
    a float column's bits): how many rows differ from the last one, the lowest and the highest
    value (`chrome_rows._piece` decides from these whether a column is kept sparse, and in how
    many bytes), in one pass over the chunk instead of four numpy passes per column."""
    w = bits.shape[0]
    n_diff = np.zeros(w, np.int64)
    lo = np.zeros(w, np.int64)
    hi = np.zeros(w, np.int64)
    if k == 0:
        return n_diff, lo, hi
    for c in range(w):
        last = bits[c, k - 1]
        a = last
        b = last
        nd = 0
        for r in range(k):
            v = bits[c, r]
            nd += v != last
            a = min(a, v)
            b = max(b, v)
        n_diff[c] = nd
        lo[c] = a
        hi[c] = b
    return n_diff, lo, hi


@njit(cache=True, nogil=True)
def rows_differing(bits, k, n):
    """The ``n`` rows among the first ``k`` of the column ``bits`` whose value differs from the
    last one's, ascending (`column_stats` counted them)."""
    out = np.empty(n, np.int64)
    if k == 0:
        return out
    last = bits[k - 1]
    j = 0
    for r in range(k):
        if bits[r] != last:
            out[j] = r
            j += 1
    return out


# ------------------------------------------------------------------ the X calls' times checked
@njit(cache=True, nogil=True)
def x_call_times(xr, x_flags, xdur, ts, max_t, fl_dur, fl_tdur):
    """`chrome._x_calls`' checks of the X calls (rows ``xr``, their flags and durations ``xdur``,
    a missing dur already taken from tdur) in one pass instead of a dozen numpy passes: a call
    with neither dur nor tdur (flags ``fl_dur``, ``fl_tdur``) gets 0 (``no_dur``); one whose
    duration is not finite or whose end, |max(dur, 0) + ts|, passes ``max_t`` is bad
    (``bad_dur``: flagged in the returned mask); a negative duration becomes 0
    (``negative_dur``), ``xdur`` written in place.  Returns (each call's ts, the bad mask, the
    three counts, the index of the first call of each, -1 for none)."""
    n = xr.shape[0]
    x_ts = np.empty(n, np.float64)
    bad = np.zeros(n, np.bool_)
    counts = np.zeros(3, np.int64)
    firsts = np.full(3, -1, np.int64)
    for j in range(n):
        f = x_flags[j]
        no_dur = (f & fl_dur) == 0 and (f & fl_tdur) == 0
        if no_dur:
            xdur[j] = 0.0
            if counts[0] == 0:
                firsts[0] = j
            counts[0] += 1
        t = ts[xr[j]]
        x_ts[j] = t
        d = xdur[j]
        e = d if (d >= 0.0 or d != d) else 0.0  # numpy's maximum(d, 0.0): a NaN stays
        e = abs(e + t)
        if not no_dur and not (np.isfinite(d) and e <= max_t):
            bad[j] = True
            if counts[1] == 0:
                firsts[1] = j
            counts[1] += 1
        if d < 0.0:
            xdur[j] = 0.0
            if counts[2] == 0:
                firsts[2] = j
            counts[2] += 1
    return x_ts, bad, counts, firsts


# ------------------------------------------------------------------ the rows of each kind
#: `rows_by_phase`'s classes of a phase byte (its ``phase_class`` table, `chrome._PHASE_CLASS`)
PC_NONE, PC_BE, PC_X, PC_INSTANT, PC_FLOW, PC_META, PC_SIDE, PC_PROFILE = range(8)
#: its outputs, in order: instants, metadata, V8 profiles, async (side) rows, the same with a
#: finite time, B and E rows, X rows
(RK_INST, RK_META, RK_PROF, RK_SIDE_ALL, RK_SIDE, RK_BE, RK_X, RK_LEN) = range(8)
#: the output of each class (-1: none; a side row goes to `RK_SIDE` too when its time is finite)
_OUTPUT_OF_CLASS = np.array([-1, RK_BE, RK_X, RK_INST, -1, RK_META, RK_SIDE_ALL, RK_PROF], np.int64)
#: whether a class's rows are kept only with a finite time (and counted as bad without one)
_NEEDS_TIME = np.array([False, True, True, True, True, False, False, False])


@njit(cache=True, nogil=True)
def _row_output(ph, i, phase_class, kind_rows, event_rows):
    """Row i's class (`PC_NONE` past the rows its class counts for)."""
    c = phase_class[ph[i]]
    if i >= kind_rows or ((c == PC_SIDE or c == PC_PROFILE) and i >= event_rows):
        return PC_NONE
    return c


@njit(cache=True, nogil=True)
def rows_by_phase(ph, ts, phase_class, kind_rows, event_rows, max_t):
    """`chrome._rows_by_kind`'s rows of each kind in two passes (count, fill) instead of a dozen
    numpy passes and seven ``flatnonzero``: row i has class ``phase_class[ph[i]]`` (`PC_BE` ...);
    the calls', instants', flows' and metadata classes count for the rows before ``kind_rows``,
    the side rows' and V8 profiles' for those before ``event_rows``; a row's time is finite when
    |ts[i]| <= ``max_t`` (NaN and ±inf are not).  Kept: instants, B/E and X rows with a finite
    time; metadata, profiles and side rows whatever their time, and the side rows again with a
    finite one.  A call, instant or flow row without a finite time is counted as bad.

    Returns (the rows of each kind in `RK_INST` ... order, ascending: views of one array; the
    finite mask of every row; the bad rows' count; the first bad row, -1 for none)."""
    n = ph.shape[0]
    finite = np.empty(n, np.bool_)
    counts = np.zeros(RK_LEN, np.int64)
    n_bad = 0
    first_bad = np.int64(-1)
    for i in range(n):
        f = abs(ts[i]) <= max_t
        finite[i] = f
        c = _row_output(ph, i, phase_class, kind_rows, event_rows)
        if _NEEDS_TIME[c] and not f:
            if n_bad == 0:
                first_bad = i
            n_bad += 1
        elif _OUTPUT_OF_CLASS[c] >= 0:
            counts[_OUTPUT_OF_CLASS[c]] += 1
            if c == PC_SIDE and f:
                counts[RK_SIDE] += 1
    at = np.zeros(RK_LEN + 1, np.int64)  # each output's place in one array
    for r in range(RK_LEN):
        at[r + 1] = at[r] + counts[r]
    out = np.empty(at[RK_LEN], np.int64)
    fill = at[:RK_LEN].copy()
    for i in range(min(n, kind_rows)):
        c = _row_output(ph, i, phase_class, kind_rows, event_rows)
        r = _OUTPUT_OF_CLASS[c]
        if r < 0 or (_NEEDS_TIME[c] and not finite[i]):
            continue
        out[fill[r]] = i
        fill[r] += 1
        if c == PC_SIDE and finite[i]:
            out[fill[RK_SIDE]] = i
            fill[RK_SIDE] += 1
    return ((out[at[0]:at[1]], out[at[1]:at[2]], out[at[2]:at[3]], out[at[3]:at[4]], out[at[4]:at[5]],
             out[at[5]:at[6]], out[at[6]:at[7]]), finite, n_bad, first_bad)
