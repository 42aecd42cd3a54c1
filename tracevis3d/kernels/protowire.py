"""A protobuf wire-format walker in numba, for pprof's ``profile.proto``.

The wire format (https://protobuf.dev/programming-guides/encoding/): a message is a sequence
of fields, each a varint tag ``(field number << 3) | wire type`` and a value: a varint
(type 0), 8 bytes (1), a varint length and that many bytes (2: strings, sub-messages, packed
repeated scalars) or 4 bytes (5); types 3 and 4 (groups) are not used by proto3 files and
are refused here, as 6 and 7, which do not exist.

`scan_fields` walks many messages at once (every ``Sample`` of a profile, say) and returns
one row per field; readers then select rows by field number with numpy.  `repeated_varints`
gathers a repeated integer field (packed or not, as parsers must accept both) into lists.
`trie_find`, `list_hash` and `list_find` are the trie of frame paths and the
table of frame lists seen that `pprof_scan.sample_stacks` keeps.  All are linear in their input;
errors come back as (code, byte offset), never as exceptions.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .textscan import mix64

#: error codes of `scan_fields` / `repeated_varints`
OK = 0
CUT_VARINT = 1  # a varint that runs past its message's end or past 10 bytes
BAD_WIRE_TYPE = 2  # wire type 3, 4, 6 or 7
CUT_FIELD = 3  # a length or fixed-size value that runs past its message's end
FIELD_ZERO = 4  # field number 0

MESSAGES = {CUT_VARINT: "a varint that does not end (cut, or more than 10 bytes)",
            BAD_WIRE_TYPE: "a field of wire type 3, 4, 6 or 7 (groups or no type at all)",
            CUT_FIELD: "a field that runs past the end of its message",
            FIELD_ZERO: "a field numbered 0"}


@njit(cache=True, nogil=True, inline="always")
def read_varint_i(buf, i, end):
    """(value as uint64, next offset) of the varint at ``i``; next offset -1 when it runs past
    ``end`` or is longer than 10 bytes.  Inlined into its caller (the pprof scan's per-sample
    loops), one and two byte varints first (most ids and tags)."""
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


@njit(cache=True, nogil=True)
def read_varint(buf, i, end):
    """`read_varint_i` as a function of its own."""
    return read_varint_i(buf, i, end)


@njit(cache=True, nogil=True, inline="always")
def read_field(buf, i, end):
    """The field whose tag is at ``i`` in a message ending at ``end``: (code, error offset, field
    number, wire type, value, length, next offset).  For wire type 0 the value is the varint, for
    1 and 5 the little-endian bytes, for 2 the offset of the bytes (their count in length).  Code
    `OK` (error offset -1), or the error and its offset: the tag's for a cut tag, field 0, a bad
    wire type or a cut length-delimited/fixed value, the value's for a cut varint value."""
    at = i
    z = np.uint64(0)
    tag, i = read_varint_i(buf, i, end)
    if i < 0:
        return CUT_VARINT, at, z, z, z, np.int64(0), at
    f = tag >> np.uint64(3)
    w = tag & np.uint64(7)
    if f == 0:
        return FIELD_ZERO, at, f, w, z, np.int64(0), at
    v = np.uint64(0)
    length = np.int64(0)
    if w == 0:
        v, j = read_varint_i(buf, i, end)
        if j < 0:
            return CUT_VARINT, i, f, w, z, length, at
        i = j
    elif w == 1 or w == 5:
        size = 8 if w == 1 else 4
        if i + size > end:
            return CUT_FIELD, at, f, w, z, length, at
        for k in range(size):
            v |= np.uint64(buf[i + k]) << np.uint64(8 * k)
        i += size
    elif w == 2:
        lv, j = read_varint_i(buf, i, end)
        if j < 0:
            return CUT_VARINT, i, f, w, z, length, at
        if lv > np.uint64(end - j):
            return CUT_FIELD, at, f, w, z, length, at
        v = np.uint64(j)
        length = np.int64(lv)
        i = j + length
    else:
        return BAD_WIRE_TYPE, at, f, w, z, length, at
    return OK, -1, f, w, v, length, i


@njit(cache=True, nogil=True, inline="always")
def field_number(f):
    """A field number as the rows keep it: int64, -1 for one of 2^62 or more."""
    return np.int64(f) if f < np.uint64(1 << 62) else np.int64(-1)


@njit(cache=True, nogil=True)
def _walk(buf, starts, ends, fill, owner, num, wt, val, ln):
    """One pass over the messages ``buf[starts[m]:ends[m]]`` (`read_field`): counts their fields,
    and when ``fill`` writes them.  Returns (count, error code, error offset)."""
    n = 0
    for m in range(starts.shape[0]):
        i = starts[m]
        end = ends[m]
        while i < end:
            code, at, f, w, v, length, i = read_field(buf, i, end)
            if code != OK:
                return n, code, at
            if fill:
                owner[n] = m
                num[n] = field_number(f)
                wt[n] = np.int64(w)
                val[n] = v
                ln[n] = length
            n += 1
    return n, OK, -1


@njit(cache=True, nogil=True)
def scan_fields(buf, starts, ends):
    """Every field of the messages ``buf[starts[m]:ends[m]]``, in order: (owner message m,
    field number, wire type, value, length) per field.  For wire type 0 the value is the
    varint, for 1 and 5 the little-endian bytes, for 2 the offset of the bytes (their count
    in ``length``).  Returns (code, offset, owner, num, wt, val, ln): code `OK`, or an error
    code and the byte offset where the error is (the arrays then empty).  Two passes (count,
    fill): memory is the rows, not a bound from the bytes."""
    e0 = np.zeros(0, np.int64)
    n, code, at = _walk(buf, starts, ends, False, e0, e0, e0, np.zeros(0, np.uint64), e0)
    if code != OK:
        return code, at, e0, e0, e0, np.zeros(0, np.uint64), e0
    owner = np.empty(n, np.int64)
    num = np.empty(n, np.int64)
    wt = np.empty(n, np.int64)
    val = np.empty(n, np.uint64)
    ln = np.empty(n, np.int64)
    _walk(buf, starts, ends, True, owner, num, wt, val, ln)
    return OK, -1, owner, num, wt, val, ln


@njit(cache=True, nogil=True)
def repeated_varints(buf, owner, num, wt, val, ln, n_owners, field):
    """The values of the repeated integer field ``field`` of each of ``n_owners`` messages
    (rows from `scan_fields`), in order, packed (wire type 2: varints back to back) or not
    (wire type 0) alike.  Returns (code, offset, ptr, values): message m's values are
    ``values[ptr[m]:ptr[m+1]]`` (uint64); rows of the field with another wire type are
    skipped."""
    rows = owner.shape[0]
    count = np.zeros(n_owners + 1, np.int64)
    for r in range(rows):
        if num[r] != field:
            continue
        if wt[r] == 0:
            count[owner[r] + 1] += 1
        elif wt[r] == 2:
            i = np.int64(val[r])
            end = i + ln[r]
            while i < end:
                _, j = read_varint(buf, i, end)
                if j < 0:
                    return CUT_VARINT, i, count, np.zeros(0, np.uint64)
                i = j
                count[owner[r] + 1] += 1
    for m in range(n_owners):
        count[m + 1] += count[m]
    out = np.empty(count[n_owners], np.uint64)
    pos = count[:n_owners].copy()
    for r in range(rows):
        if num[r] != field:
            continue
        m = owner[r]
        if wt[r] == 0:
            out[pos[m]] = val[r]
            pos[m] += 1
        elif wt[r] == 2:
            i = np.int64(val[r])
            end = i + ln[r]
            while i < end:
                v, i = read_varint(buf, i, end)
                out[pos[m]] = v
                pos[m] += 1
    return OK, -1, count, out


@njit(cache=True, nogil=True, inline="always")
def trie_find(table, n_parent, n_frame, parent, frame, seed):
    """The stack trie's node (``parent``, ``frame``): its hash h = mix64((parent + 1) * K ^
    (frame + seed)) (K the golden ratio's 0x9E3779B97F4A7C15), probed linearly in ``table``
    (a power of two of slots, -1 empty).  Returns (h, the slot where the probe stopped, the
    node or -1 when it is not there yet: the slot is then where it goes)."""
    h = mix64((np.uint64(parent + 1) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(frame) + np.uint64(seed)))
    mask = np.uint64(table.shape[0] - 1)
    slot = h & mask
    node = np.int64(-1)
    while True:
        g = table[slot]
        if g < 0:
            break
        if n_parent[g] == parent and n_frame[g] == frame:
            node = g
            break
        slot = (slot + np.uint64(1)) & mask
    return h, slot, node


@njit(cache=True, nogil=True, inline="always")
def list_hash(frames, a, b, seed):
    """A keyed hash of the list ``frames[a:b]``: h = seed ^ length, then h = mix64(h ^ (frame + 2))
    over its entries in order (entries ≥ -1)."""
    h = np.uint64(seed) ^ np.uint64(b - a)
    for k in range(a, b):
        h = mix64(h ^ np.uint64(frames[k] + 2))
    return h


@njit(cache=True, nogil=True, inline="always")
def list_find(l_table, l_hash, l_start, l_len, arena, lh, lst, a, b):
    """The list ``lst[a:b]`` (its `list_hash` ``lh``) among the lists kept so far (list g:
    ``arena[l_start[g]:l_start[g] + l_len[g]]``, hash ``l_hash[g]``), probed linearly in
    ``l_table`` (a power of two of slots, -1 empty), each hash hit compared entry by entry.
    Returns (the slot where the probe stopped, the list or -1: the slot is then where it goes)."""
    mask = np.uint64(l_table.shape[0] - 1)
    slot = lh & mask
    while True:
        g = l_table[slot]
        if g < 0:
            return slot, np.int64(-1)
        if l_hash[g] == lh and l_len[g] == b - a:
            s0 = l_start[g]
            same = True
            for k in range(b - a):
                if arena[s0 + k] != lst[a + k]:
                    same = False
                    break
            if same:
                return slot, g
        slot = (slot + np.uint64(1)) & mask
