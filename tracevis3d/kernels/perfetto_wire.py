"""Protocol buffers wire format primitives and the small tables the Perfetto scanner keeps
(`protoscan`): varints, field skipping with bounds checks, a keyed hash map of int64 pairs,
tables that grow by doubling.

The wire format (https://protobuf.dev/programming-guides/encoding/): a message is a sequence
of fields, each a varint tag ``field_number << 3 | wire_type`` followed by its value: wire type
0 a varint (7 bits a byte, least significant group first, at most 10 bytes), 1 eight bytes,
2 a varint length and that many bytes (a nested message, a string, a packed repeated scalar),
5 four bytes; 3 and 4 (groups) are deprecated and never written by Perfetto.  Every read here
is bounded by the end of the enclosing message, so a length that runs past it is an error at a
known byte, never a read outside the buffer.
"""
import math

import numpy as np
from numba import njit

from .jsonspans import _mix64

WT_VARINT = 0
WT_I64 = 1
WT_LEN = 2
WT_I32 = 5

# errors (negative positions returned by the readers)
E_VARINT_CUT = -1  # a varint runs past the end of its message
E_VARINT_LONG = -2  # a varint of more than 10 bytes
E_PAST_END = -3  # a length (or an 8/4-byte value) runs past the end of its message
E_WIRE_TYPE = -4  # wire type 3, 4, 6 or 7
E_FIELD_ZERO = -5  # field number 0
E_WRONG_TYPE = -6  # a field the reader knows, with another wire type
E_TOO_MANY = -7  # more events than max_events
ERROR_TEXT = {
    E_VARINT_CUT: "a varint runs past the end of its message",
    E_VARINT_LONG: "a varint longer than 10 bytes (it never ends)",
    E_PAST_END: "a length runs past the end of its enclosing message",
    E_WIRE_TYPE: "an invalid wire type (3, 4, 6 or 7)",
    E_FIELD_ZERO: "a field numbered 0",
    E_WRONG_TYPE: "a known field with the wrong wire type",
}


# Each reader is written once, inlined at numba's IR level (``_i``: for the scanner's per-packet
# and per-event loops, where a call per field cost as much as the field's read; those loops run
# without reference counting, so inlining adds none); the plain name is the same reader as a
# function of its own.
@njit(cache=True, nogil=True, inline="always")
def varint_i(buf, p, end):
    """(value, position after it) of the varint at ``p`` (bits 64+ dropped, as protobuf does);
    the position is `E_VARINT_CUT` when ``end`` comes first, `E_VARINT_LONG` past 10 bytes."""
    if p < end:
        c = np.int64(buf[p])
        if c < 0x80:
            return c, p + 1
    v = np.int64(0)
    shift = 0
    while True:
        if p >= end:
            return v, E_VARINT_CUT
        c = np.int64(buf[p])
        p += 1
        if shift < 64:
            v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, p
        shift += 7
        if shift >= 70:
            return v, E_VARINT_LONG


@njit(cache=True, nogil=True, _nrt=False)
def varint(buf, p, end):
    """`varint_i` as a function of its own (what the per-packet readers call)."""
    return varint_i(buf, p, end)


@njit(cache=True, nogil=True, _nrt=False)
def fixed64(buf, p):
    """The little-endian 8 bytes at ``p`` as int64 (the caller checked they are there)."""
    v = np.int64(0)
    for k in range(7, -1, -1):
        v = (v << 8) | np.int64(buf[p + k])
    return v


@njit(cache=True, nogil=True, _nrt=False)
def as_double(bits):
    """The IEEE 754 binary64 double whose bits are ``bits`` (int64), from its sign, exponent and
    significand (``ldexp`` is exact), without a buffer to reinterpret."""
    neg = (bits >> 63) & 1
    ex = (bits >> 52) & 0x7FF
    man = bits & 0xFFFFFFFFFFFFF
    if ex == 0x7FF:
        v = math.inf if man == 0 else math.nan
    elif ex == 0:
        v = math.ldexp(np.float64(man), -1074)
    else:
        v = math.ldexp(np.float64(man | 0x10000000000000), ex - 1075)
    return -v if neg else v


@njit(cache=True, nogil=True, inline="always")
def field_end_i(buf, p, end, wt):
    """The position after the value of a field of wire type ``wt`` starting at ``p`` (after its
    tag), or a negative error; for wire type 2 also the start of its bytes (else ``p``)."""
    if wt == WT_VARINT:
        _, q = varint_i(buf, p, end)
        return q, p
    if wt == WT_I64:
        return (p + 8, p) if p + 8 <= end else (E_PAST_END, p)
    if wt == WT_I32:
        return (p + 4, p) if p + 4 <= end else (E_PAST_END, p)
    if wt == WT_LEN:
        ln, q = varint_i(buf, p, end)
        if q < 0:
            return q, p
        if ln < 0 or ln > end - q:
            return E_PAST_END, q
        return q + ln, q
    return E_WIRE_TYPE, p


@njit(cache=True, nogil=True, _nrt=False)
def field_end(buf, p, end, wt):
    """`field_end_i` as a function of its own (what the per-packet readers call)."""
    return field_end_i(buf, p, end, wt)


@njit(cache=True, nogil=True, inline="always")
def read_tag_i(buf, p, end):
    """(field number, wire type, position after the tag); the position is a negative error for a
    bad tag (cut, too long, field 0, wire type 3/4/6/7)."""
    tag, q = varint_i(buf, p, end)
    if q < 0:
        return 0, 0, q
    fno = tag >> 3
    wt = tag & 7
    if fno <= 0:
        return fno, wt, E_FIELD_ZERO
    if wt != 0 and wt != 1 and wt != 2 and wt != 5:
        return fno, wt, E_WIRE_TYPE
    return fno, wt, q


@njit(cache=True, nogil=True, _nrt=False)
def read_tag(buf, p, end):
    """`read_tag_i` as a function of its own (what the per-packet readers call)."""
    return read_tag_i(buf, p, end)


@njit(cache=True, nogil=True, inline="always")
def next_field(buf, p, end):
    """The field whose tag is at ``p`` in a message ending at ``end`` (`read_tag`, then
    `field_end`): (status, field number, wire type, position of its value, position after it,
    start of its bytes).  Status 0, or the negative error of the tag (the field number then 0)
    or of the value."""
    f, wt, q = read_tag(buf, p, end)
    if q < 0:
        return q, np.int64(0), wt, q, q, q
    e, s = field_end(buf, q, end, wt)
    if e < 0:
        return e, f, wt, q, e, s
    return np.int64(0), f, wt, q, e, s


@njit(cache=True, nogil=True, inline="always")
def scalar_run(q, e, s, wt, want):
    """Where the values of one occurrence of a repeated scalar field of element wire type ``want``
    (its value at ``q``, end ``e``, bytes from ``s`` when packed) lie: ``[q, e)`` holds its one
    value when it has wire type ``want``, ``[s, e)`` a packed run when it is length-delimited.
    Returns (status, start, end): status `E_WRONG_TYPE` (and an empty run) for another wire type."""
    if wt == want:
        return np.int64(0), q, e
    if wt != WT_LEN:
        return np.int64(E_WRONG_TYPE), e, e
    return np.int64(0), s, e


@njit(cache=True, nogil=True, inline="always")
def scalar_next(buf, p, e, want):
    """The value at ``p`` of a run of scalars of wire type ``want`` (a varint, or 8 bytes) ending at
    ``e`` (`scalar_run`): (value, position after it, or a negative error)."""
    if want == WT_VARINT:
        return varint(buf, p, e)
    if p + 8 > e:
        return np.int64(0), E_PAST_END
    return fixed64(buf, p), p + 8


@njit(cache=True, nogil=True, _nrt=False)
def next_message(buf, p, end, fno):
    """The next field numbered ``fno`` of wire type 2 in ``buf[p:end]``: (its start, its end,
    position after it); start -1 when there is none; a negative end is an error at position
    ``start`` (the field's tag).  Other fields are skipped (checked)."""
    while p < end:
        err, f, wt, q, e, a = next_field(buf, p, end)
        if err < 0:
            return p, err, p
        if f == fno:
            if wt != WT_LEN:
                return p, E_WRONG_TYPE, p
            return a, e, e
        p = e
    return -1, 0, end


# ----------------------------------------------------------------------------- tables
@njit(cache=True, nogil=True)
def grown2(t, need):
    """``t`` (2-D, rows x capacity) with room for ``need`` columns (at least twice as many)."""
    if need <= t.shape[1]:
        return t
    cap = max(2 * t.shape[1], need + 16)
    t2 = np.empty((t.shape[0], cap), t.dtype)
    t2[:, :t.shape[1]] = t
    return t2


@njit(cache=True, nogil=True)
def grown1(t, need):
    """``t`` (1-D) with room for ``need`` entries (at least twice as many)."""
    if need <= t.shape[0]:
        return t
    cap = max(2 * t.shape[0], need + 16)
    t2 = np.empty(cap, t.dtype)
    t2[:t.shape[0]] = t
    return t2


@njit(cache=True, nogil=True, _nrt=False)
def pair_hash(a, b, seed):
    """A keyed hash of the int64 pair (a, b) (splitmix64's finaliser over both): keys a file
    chose cannot pile up in one probe chain without knowing ``seed``."""
    h = _mix64(np.uint64(a) ^ np.uint64(seed))
    return np.int64(_mix64(h + np.uint64(b)) >> np.uint64(1))


@njit(cache=True, nogil=True)
def new_map(cap):
    """An empty map of int64 pairs (a >= 0) to int64 values: (keys 2 x cap, values, count)."""
    mk = np.full((2, cap), -1, np.int64)
    mv = np.full(cap, -1, np.int64)
    cnt = np.zeros(1, np.int64)
    return mk, mv, cnt


@njit(cache=True, nogil=True, _nrt=False)
def map_get(mk, mv, a, b, seed):
    """The value of key (a, b), or -1."""
    mask = mk.shape[1] - 1
    s = pair_hash(a, b, seed) & mask
    while True:
        k = mk[0, s]
        if k == -1:
            return np.int64(-1)
        if k == a and mk[1, s] == b:
            return mv[s]
        s = (s + 1) & mask


@njit(cache=True, nogil=True, _nrt=False)
def map_set(mk, mv, cnt, a, b, v, seed):
    """Set key (a, b) (a >= 0) to ``v`` in a map with room for it (`map_room`): no allocation."""
    mask = mk.shape[1] - 1
    s = pair_hash(a, b, seed) & mask
    while True:
        k = mk[0, s]
        if k == -1:
            mk[0, s] = a
            mk[1, s] = b
            mv[s] = v
            cnt[0] += 1
            return
        if k == a and mk[1, s] == b:
            mv[s] = v
            return
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def map_room(mk, mv, cnt, need, seed):
    """The map's arrays with room for ``need`` more keys at most half full (new ones when it grew,
    every key re-inserted)."""
    if 2 * (cnt[0] + need) <= mk.shape[1]:
        return mk, mv
    cap = mk.shape[1]
    while 2 * (cnt[0] + need) > cap:
        cap *= 2
    nk = np.full((2, cap), -1, np.int64)
    nv = np.full(cap, -1, np.int64)
    mask = cap - 1
    for s0 in range(mk.shape[1]):
        if mk[0, s0] != -1:
            s = pair_hash(mk[0, s0], mk[1, s0], seed) & mask
            while nk[0, s] != -1:
                s = (s + 1) & mask
            nk[0, s] = mk[0, s0]
            nk[1, s] = mk[1, s0]
            nv[s] = mv[s0]
    return nk, nv
