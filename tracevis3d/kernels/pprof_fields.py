"""pprof's wire format read for `tracevis3d.kernels.pprof_scan`, in numba, with
`tracevis3d.kernels.protowire`'s field and varint readers (inlined): a packed list checked
(`_packed_ok`), a checked field skipped (`skip_checked`), the top level of a ``Profile`` but its
samples (`profile_fields`), one ``Sample``'s fields (`sample_fields`) and its frame list
(`sample_frames`: each location id to its location's frames, `_location_of`).  Checked as
`tracevis3d.kernels.protowire` checks a message (its error codes).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .protowire import CUT_VARINT, OK, field_number, read_field, read_varint_i as read_varint
from .textscan import grow_i64, grow_u64


@njit(cache=True, nogil=True, inline="always")
def _packed_ok(buf, a, b):
    """Whether ``buf[a:b]`` is whole varints back to back (what `protowire.read_varint_i` reads to its end):
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
def skip_checked(buf, i, end, w):
    """The offset past the value at ``i`` of a field of wire type ``w`` in a message already
    checked (`read_field`): a varint, 8 or 4 bytes, or a length and that many bytes."""
    if w == 0:
        _, i = read_varint(buf, i, end)
    elif w == 1:
        i += 8
    elif w == 5:
        i += 4
    else:
        lv, i = read_varint(buf, i, end)
        i += np.int64(lv)
    return i


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
        code, at, f, w, v, length, i = read_field(buf, i, end)
        if code != OK:
            return code, at, num[:0], num[:0], wt[:0], val[:0], ln[:0], n_samples
        if f == 2 and w == 2:
            n_samples += 1
            continue
        if n == num.shape[0]:
            num = grow_i64(num, n + 1)
            wt = grow_i64(wt, n + 1)
            val = grow_u64(val, n + 1)
            ln = grow_i64(ln, n + 1)
        num[n] = field_number(f)
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
    ``value_index`` (0 when there are not that many)).  Every field checked (`protowire.read_field`);
    the packed lists' varints too."""
    i = a
    n_loc = 0
    la = np.int64(-1)
    lb = np.int64(-1)
    n_val = 0
    value = np.uint64(0)
    while i < b:
        code, where, f, w, v, length, i = read_field(buf, i, b)
        if code != OK:
            return code, where, n_loc, la, lb, n_val, value
        if f == 1 and w == 0:
            n_loc += 1
        elif f == 2 and w == 0:
            if n_val == value_index:
                value = v
            n_val += 1
        elif f == 1 and w == 2:
            if n_loc == 0:
                la = np.int64(v)
                lb = i
            n_loc += 1
            bad = _packed_ok(buf, np.int64(v), i)  # (checked here; decoded only when the list is new)
            if bad >= 0:
                return CUT_VARINT, bad, n_loc, la, lb, n_val, value
        elif f == 2 and w == 2:
            x = np.int64(v)
            while x < i:
                u, y = read_varint(buf, x, i)
                if y < 0:
                    return CUT_VARINT, x, n_loc, la, lb, n_val, value
                if n_val == value_index:
                    value = u
                n_val += 1
                x = y
    return OK, -1, n_loc, la, lb, n_val, value


@njit(cache=True, nogil=True, _nrt=False)
def sample_frames(buf, a, b, id_table, u_ids, u_loc, loc_ptr, loc_frames, fl):
    """The frames of the ``Sample`` ``buf[a:b]`` (already checked), leaf first, into ``fl`` as
    far as it has room (the entries past it counted, not stored: the caller grows it and reads
    the sample again): each ``location_id`` (packed or not, in order) expanded to its location's
    frames, innermost first; an id of no location is one entry -1.  Returns (entries, entries
    -1).  Called, not inlined, and growing nothing: see `pprof_scan._stacks_run`."""
    n = 0
    miss = 0
    cap = fl.shape[0]
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
                    if n < cap:
                        fl[n] = -1
                    n += 1
                    miss += 1
                else:
                    for c in range(loc_ptr[k], loc_ptr[k + 1]):
                        if n < cap:
                            fl[n] = loc_frames[c]
                        n += 1
                if w == 0:
                    break
            continue
        i = skip_checked(buf, i, b, w)
    return n, miss
