"""pprof's wire format read for `tracevis3d.kernels.pprof_scan`, in numba: varints (inlined, the
short ones first), a packed list checked (`_packed_ok`), the top level of a ``Profile`` but its
samples (`profile_fields`), one ``Sample``'s fields (`sample_fields`) and its frame list
(`sample_frames`: each location id to its location's frames, `_location_of`).  Checked as
`tracevis3d.kernels.protowire` checks a message (its error codes).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .protowire import BAD_WIRE_TYPE, CUT_FIELD, CUT_VARINT, FIELD_ZERO, OK
from .textscan import grow_i64, grow_u64


@njit(cache=True, nogil=True, inline="always")
def read_varint(buf, i, end):
    """`protowire.read_varint`, inlined (one and two byte varints first: most ids and tags):
    (value, next offset), next offset -1 when the varint runs past ``end`` or past 10 bytes."""
    if i < end:
        c = buf[i]
        if c < 0x80:
            return np.uint64(c), i + 1
        if i + 1 < end:
            d = buf[i + 1]
            if d < 0x80:
                return np.uint64(c & 0x7F) | (np.uint64(d) << np.uint64(7)), i + 2
    v = np.uint64(0)
    shift = np.uint64(0)
    for k in range(10):
        if i + k >= end:
            return v, -1
        c = buf[i + k]
        v |= np.uint64(c & 0x7F) << shift
        if c < 0x80:
            return v, i + k + 1
        shift += np.uint64(7)
    return v, -1


@njit(cache=True, nogil=True, inline="always")
def _packed_ok(buf, a, b):
    """Whether ``buf[a:b]`` is whole varints back to back (what `read_varint` reads to its end):
    its last byte ends a varint and no varint runs past 10 bytes (10 bytes in a row with their
    high bit set).  The offset of the first bad varint, or -1.  Branch-free over the bytes (the
    high bits are data: a branch on each would be mispredicted half the time)."""
    run = 0
    worst = 0
    for x in range(a, b):
        run = (run + 1) * (buf[x] >> 7)
        worst = max(worst, run)
    if worst < 10 and run == 0:
        return -1
    run = 0
    for x in range(a, b):
        if buf[x] >= 0x80:
            run += 1
            if run == 10:
                return x - 9
        else:
            run = 0
    return b - run


@njit(cache=True, nogil=True, inline="always")
def _skip_field(buf, i, end, w, at):
    """Past the value of a field of wire type ``w`` whose value starts at ``i`` (its tag at
    ``at``): (next offset, error code, error offset), checked as `protowire._walk` checks it."""
    if w == 0:
        _, j = read_varint(buf, i, end)
        if j < 0:
            return i, CUT_VARINT, i
        return j, OK, -1
    if w == 1 or w == 5:
        size = 8 if w == 1 else 4
        if i + size > end:
            return i, CUT_FIELD, at
        return i + size, OK, -1
    if w == 2:
        lv, j = read_varint(buf, i, end)
        if j < 0:
            return i, CUT_VARINT, i
        if lv > np.uint64(end - j):
            return i, CUT_FIELD, at
        return j + np.int64(lv), OK, -1
    return i, BAD_WIRE_TYPE, at


@njit(cache=True, nogil=True)
def profile_fields(buf):
    """The top-level fields of the ``Profile`` message ``buf`` as `protowire.scan_fields` gives
    them (rows of owner 0: field number, wire type, value, length), except the samples (field 2,
    length-delimited), which are only counted.  One walk.  Returns (code, offset, owner, num,
    wt, val, ln, samples): code `protowire.OK`, or the first error (`protowire.MESSAGES`) and
    its byte offset, as scan_fields would report it."""
    cap = 256
    num = np.empty(cap, np.int64)
    wt = np.empty(cap, np.int64)
    val = np.empty(cap, np.uint64)
    ln = np.empty(cap, np.int64)
    n = 0
    n_samples = 0
    end = buf.shape[0]
    i = 0
    while i < end:
        at = i
        tag, i = read_varint(buf, i, end)
        if i < 0:
            return CUT_VARINT, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
        f = tag >> np.uint64(3)
        w = tag & np.uint64(7)
        if f == 0:
            return FIELD_ZERO, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
        v = np.uint64(0)
        length = np.int64(0)
        if w == 0:
            v, j = read_varint(buf, i, end)
            if j < 0:
                return CUT_VARINT, i, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
            i = j
        elif w == 1 or w == 5:
            size = 8 if w == 1 else 4
            if i + size > end:
                return CUT_FIELD, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
            for k in range(size):
                v |= np.uint64(buf[i + k]) << np.uint64(8 * k)
            i += size
        elif w == 2:
            lv, j = read_varint(buf, i, end)
            if j < 0:
                return CUT_VARINT, i, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
            if lv > np.uint64(end - j):
                return CUT_FIELD, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
            v = np.uint64(j)
            length = np.int64(lv)
            i = j + length
            if f == 2:
                n_samples += 1
                continue
        else:
            return BAD_WIRE_TYPE, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
        if n == num.shape[0]:
            num = grow_i64(num, n + 1)
            wt = grow_i64(wt, n + 1)
            val = grow_u64(val, n + 1)
            ln = grow_i64(ln, n + 1)
        num[n] = np.int64(f) if f < np.uint64(1 << 62) else np.int64(-1)
        wt[n] = np.int64(w)
        val[n] = v
        ln[n] = length
        n += 1
    return OK, -1, np.zeros(n, np.int64), num[:n].copy(), wt[:n].copy(), val[:n].copy(), ln[:n].copy(), n_samples


@njit(cache=True, nogil=True, inline="always")
def _location_of(v, id_table, u_ids, u_loc):
    """The location (index) of location id ``v``: ``id_table[v]`` when the table is given (ids
    dense: its last slot stands for every id past the others), else a binary search of the
    sorted ids ``u_ids`` (``u_loc``: the location of each); -1 when no location has it."""
    if id_table.shape[0] > 0:
        top = np.uint64(id_table.shape[0] - 1)
        return id_table[np.int64(v if v < top else top)]
    lo = 0
    hi = u_ids.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if u_ids[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < u_ids.shape[0] and u_ids[lo] == v:
        return u_loc[lo]
    return np.int64(-1)


@njit(cache=True, nogil=True)
def locations_of(wanted, id_table, u_ids, u_loc):
    """`_location_of` of each id of ``wanted`` (what the tests check against a dictionary)."""
    out = np.empty(wanted.shape[0], np.int64)
    for k in range(wanted.shape[0]):
        out[k] = _location_of(wanted[k], id_table, u_ids, u_loc)
    return out


@njit(cache=True, nogil=True, inline="always")
def sample_fields(buf, a, b, value_index):
    """One walk of the ``Sample`` message ``buf[a:b]``: (code, error offset, location rows,
    start and end of its first packed ``location_id`` field, values, the value at
    ``value_index`` (0 when there are not that many)).  Every field checked (`_skip_field`);
    the packed lists' varints too."""
    i = a
    n_loc = 0
    la = np.int64(-1)
    lb = np.int64(-1)
    n_val = 0
    value = np.uint64(0)
    while i < b:
        at = i
        tag, i = read_varint(buf, i, b)
        if i < 0:
            return CUT_VARINT, at, n_loc, la, lb, n_val, value
        f = tag >> np.uint64(3)
        w = tag & np.uint64(7)
        if f == 0:
            return FIELD_ZERO, at, n_loc, la, lb, n_val, value
        if (f == 1 or f == 2) and (w == 0 or w == 2):
            if w == 0:
                v, j = read_varint(buf, i, b)
                if j < 0:
                    return CUT_VARINT, i, n_loc, la, lb, n_val, value
                i = j
                if f == 1:
                    n_loc += 1
                else:
                    if n_val == value_index:
                        value = v
                    n_val += 1
                continue
            lv, j = read_varint(buf, i, b)
            if j < 0:
                return CUT_VARINT, i, n_loc, la, lb, n_val, value
            if lv > np.uint64(b - j):
                return CUT_FIELD, at, n_loc, la, lb, n_val, value
            e = j + np.int64(lv)
            if f == 1:
                if n_loc == 0:
                    la = j
                    lb = e
                n_loc += 1
                bad = _packed_ok(buf, j, e)  # (checked here; decoded only when the list is new)
                if bad >= 0:
                    return CUT_VARINT, bad, n_loc, la, lb, n_val, value
            else:
                x = j
                while x < e:
                    v, y = read_varint(buf, x, e)
                    if y < 0:
                        return CUT_VARINT, x, n_loc, la, lb, n_val, value
                    if n_val == value_index:
                        value = v
                    n_val += 1
                    x = y
            i = e
            continue
        i, code, where = _skip_field(buf, i, b, w, at)
        if code != OK:
            return code, where, n_loc, la, lb, n_val, value
    return OK, -1, n_loc, la, lb, n_val, value


@njit(cache=True, nogil=True, inline="always")
def sample_frames(buf, a, b, id_table, u_ids, u_loc, loc_ptr, loc_frames, fl):
    """The frames of the ``Sample`` ``buf[a:b]`` (already checked), leaf first, into ``fl``
    (grown when needed): each ``location_id`` (packed or not, in order) expanded to its
    location's frames, innermost first; an id of no location is one entry -1.  Returns (fl,
    entries, entries -1)."""
    n = 0
    miss = 0
    i = a
    while i < b:
        tag, i = read_varint(buf, i, b)
        f = tag >> np.uint64(3)
        w = tag & np.uint64(7)
        if f == 1 and (w == 0 or w == 2):
            e = i
            if w == 2:
                lv, i = read_varint(buf, i, b)
                e = i + np.int64(lv)
            while True:
                if w == 0:
                    v, i = read_varint(buf, i, b)
                elif i < e:
                    v, i = read_varint(buf, i, e)
                else:
                    break
                k = _location_of(v, id_table, u_ids, u_loc)
                if k < 0:
                    if n == fl.shape[0]:
                        fl = grow_i64(fl, n + 1)
                    fl[n] = -1
                    n += 1
                    miss += 1
                else:
                    c0 = loc_ptr[k]
                    c1 = loc_ptr[k + 1]
                    if n + c1 - c0 > fl.shape[0]:
                        fl = grow_i64(fl, n + c1 - c0)
                    for c in range(c0, c1):
                        fl[n] = loc_frames[c]
                        n += 1
                if w == 0:
                    break
            continue
        if w == 0:
            _, i = read_varint(buf, i, b)
        elif w == 1:
            i += 8
        elif w == 5:
            i += 4
        else:
            lv, i = read_varint(buf, i, b)
            i += np.int64(lv)
    return fl, n, miss
