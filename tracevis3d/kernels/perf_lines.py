"""The lines of ``perf script`` text, for `tracevis3d.kernels.perf_scan`: where a line ends
(`line_end`), an event line's fields (`perf_header`), a frame line's symbol and dso
(`perf_frame`; ``(inlined)`` frames: `is_inlined`, `parse_address`), the frame lines of an event and
a hash of its callers' lines (`block`), a frame interned (`intern_frame`: keyed hash, every hit
compared byte by byte with a packed copy, `inline_bytes.to_arena`).  The line readers neither make
arrays nor count references (``_nrt=False``; their hashing and comparing inlined:
`inline_bytes`): a call that counts them costs two atomic operations per array.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .inline_bytes import hash_bytes, to_arena
from .textscan import K1, K2, mix64, same_as_arena, either_mask32, load_u64


@njit(cache=True, nogil=True, _nrt=False)
def line_end(buf, j, hi):
    """The index of the first ``\\n`` at or after ``j`` (``hi`` when there is none)."""
    while j + 32 <= hi:
        bits = either_mask32(buf, j, np.uint8(10), np.uint8(10))
        if bits != np.uint32(0):
            return j + np.int64(trailing_zeros(bits))
        j += 32
    while j < hi and buf[j] != 10:
        j += 1
    return j


@njit(cache=True, nogil=True, inline="always")
def is_ws(c):
    """Whether byte ``c`` is a space, a tab or a CR (white space within a perf script line)."""
    return c == 32 or c == 9 or c == 13


@njit(cache=True, nogil=True, inline="always")
def next_token(buf, x, e):
    """The next token of ``buf[x:e]`` (bytes up to white space, `is_ws`, after any white space):
    (its start, its end); the start is ``e`` when there is none."""
    while x < e and is_ws(buf[x]):
        x += 1
    y = x
    while y < e and not is_ws(buf[y]):
        y += 1
    return x, y


@njit(cache=True, nogil=True, inline="always")
def is_hex(c):
    """Whether byte ``c`` is an ASCII hex digit (0-9, a-f, A-F)."""
    return (48 <= c <= 57) or (97 <= c <= 102) or (65 <= c <= 70)


@njit(cache=True, nogil=True, _nrt=False)
def perf_frame(buf, a, e):
    """Parse a ``perf script`` frame line ``buf[a:e]`` (without its line end): white space, a
    hex address, white space, the symbol (``+0x..`` offset dropped), white space, ``(dso)``.
    Returns (symbol start, symbol end, dso start, dso end), or (-1, -1, -1, -1) when it is
    not one.  The dso is the last parenthesised group preceded by white space (its
    parentheses balanced: ``(/tmp/x (deleted))``); a line without one has dso ``(a, a)``."""
    while a < e and is_ws(buf[a]):
        a += 1
    while e > a and is_ws(buf[e - 1]):
        e -= 1
    x = a
    while x < e and is_hex(buf[x]):
        x += 1
    if x == a or x == e or not is_ws(buf[x]):
        return -1, -1, -1, -1
    while x < e and is_ws(buf[x]):
        x += 1
    s0 = x
    s1 = e
    d0 = s0
    d1 = s0
    if e > s0 and buf[e - 1] == 41:  # ')'
        depth = 0
        y = e - 1
        while y >= s0:
            c = buf[y]
            if c == 41:
                depth += 1
            elif c == 40:
                depth -= 1
                if depth == 0:
                    break
            y -= 1
        if y >= s0 and depth == 0 and (y == s0 or is_ws(buf[y - 1])):
            d0 = y + 1
            d1 = e - 1
            s1 = y
            while s1 > s0 and is_ws(buf[s1 - 1]):
                s1 -= 1
    # a trailing +0x<hex> offset
    y = s1
    while y > s0 and is_hex(buf[y - 1]):
        y -= 1
    if y < s1 and y - 3 >= s0 and buf[y - 1] == 120 and buf[y - 2] == 48 and buf[y - 3] == 43:  # +0x
        s1 = y - 3
    return s0, s1, d0, d1


@njit(cache=True, nogil=True, _nrt=False)
def perf_header(buf, p, e):
    """Parse a ``perf script`` event line ``buf[p:e]``: ``comm pid[/tid] [cpu] time: [period]
    event: ...`` (comm may hold spaces; fields left out by ``-F`` may be missing).  Returns
    (comm end, pid, tid, time found, event start, event end, rest start): pid is -1 when only
    the thread id is written; the event name is the first token after the time that ends
    with ``:`` (the colon left out); rest start is where the text after it begins.  Without
    a time token: (…, False, …)."""
    # tokens: find the time token, digits '.' digits ':'
    x = p
    t0 = -1
    t1 = -1
    prev0 = -1
    prev1 = -1
    pprev0 = -1
    pprev1 = -1
    first = True
    while x < e:
        x, y = next_token(buf, x, e)
        if x >= e:
            break
        if not first:
            # time?
            z = x
            while z < y and 48 <= buf[z] <= 57:
                z += 1
            if z > x and z < y and buf[z] == 46:
                z2 = z + 1
                while z2 < y and 48 <= buf[z2] <= 57:
                    z2 += 1
                if z2 > z + 1 and z2 == y - 1 and buf[z2] == 58:
                    t0 = x
                    t1 = y
                    break
        first = False
        pprev0 = prev0
        pprev1 = prev1
        prev0 = x
        prev1 = y
        x = y
    if t0 < 0:
        return p, -1, -1, False, e, e, e
    # the token before the time: [cpu] or pid[/tid]
    i0 = prev0
    i1 = prev1
    if i0 >= 0 and buf[i0] == 91 and buf[i1 - 1] == 93:  # [cpu]
        i0 = pprev0
        i1 = pprev1
    pid = np.int64(-1)
    tid = np.int64(-1)
    comm_end = p
    if i0 > p:
        a = np.int64(0)
        b = np.int64(-1)
        z = i0
        while z < i1 and 48 <= buf[z] <= 57 and z - i0 < 18:
            a = a * 10 + (buf[z] - 48)
            z += 1
        ok = z > i0
        if ok and z < i1:
            if buf[z] == 47:  # '/'
                z += 1
                b = 0
                z0 = z
                while z < i1 and 48 <= buf[z] <= 57 and z - z0 < 18:
                    b = b * 10 + (buf[z] - 48)
                    z += 1
                ok = z == i1 and z > z0
            else:
                ok = False
        if ok:
            if b >= 0:
                pid = a
                tid = b
            else:
                tid = a
            comm_end = i0
        else:
            comm_end = i1
        while comm_end > p and is_ws(buf[comm_end - 1]):
            comm_end -= 1
    # the event: the first token after the time ending with ':'
    x = t1
    while x < e:
        x, y = next_token(buf, x, e)
        if y > x and buf[y - 1] == 58:
            return comm_end, pid, tid, True, x, y - 1, y
        x = y
    return comm_end, pid, tid, True, e, e, e


@njit(cache=True, nogil=True, _nrt=False)
def _find_frame(table, hashes, a_off, k0, k1, k2, k3, arena, buf, h, s0, s1, d0, d1):
    """Probe ``table`` for the frame (``buf[s0:s1]``, ``buf[d0:d1]``) among frames whose symbol
    and dso bytes are kept one after the other in ``arena`` (`intern_frame`) from ``a_off``; a
    frame's spans in the file are (k0, k1) and (k2, k3).  Returns (slot, id or -1, probes)."""
    mask = np.uint64(table.shape[0] - 1)
    slot = h & mask
    probes = 0
    while True:
        g = table[slot]
        if g < 0:
            return slot, np.int64(-1), probes
        sl = k1[g] - k0[g]
        if hashes[g] == h and sl == s1 - s0 and k3[g] - k2[g] == d1 - d0 \
                and same_as_arena(arena, a_off[g], buf, s0, sl) \
                and same_as_arena(arena, a_off[g] + sl, buf, d0, d1 - d0):
            return slot, g, probes
        probes += 1
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True, _nrt=False)
def intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used,
                  nf, f_table):
    """The id of frame (symbol ``buf[s0:s1]``, dso ``buf[d0:d1]``), added (first seen on line
    ``lineno``, its bytes packed in ``arena`` at ``a_used``) when new.  The frame table's arrays,
    the arena and the hash table have room for it (`perf_scan._perf_run` checks before each
    event): nothing is grown here, so the scan's loop rebinds no array.  Returns (id, probes,
    the arena's bytes used, the frames' count)."""
    h = mix64(hash_bytes(buf, s0, s1, basis) ^ (hash_bytes(buf, d0, d1, basis) * K2))
    slot, fid, pr = _find_frame(f_table, f_hash, f_aoff, f_s0, f_s1, f_d0, f_d1, arena, buf, h, s0, s1, d0, d1)
    if fid < 0:
        f_aoff[nf] = a_used
        a_used = to_arena(arena, to_arena(arena, a_used, buf, s0, s1), buf, d0, d1)
        f_s0[nf] = s0
        f_s1[nf] = s1
        f_d0[nf] = d0
        f_d1[nf] = d1
        f_line[nf] = lineno
        f_hash[nf] = h
        f_table[slot] = nf
        fid = nf
        nf += 1
    return fid, pr, a_used, nf


_INLINED = np.frombuffer(b"inlined", np.uint8)
#: the 8 bytes "(inlined" as one little-endian word (`block`)
_INLINED_WORD = np.uint64(int.from_bytes(b"(inlined", "little"))


@njit(cache=True, nogil=True, inline="always")
def is_inlined(buf, d0, d1):
    """Whether the dso span ``buf[d0:d1]`` is perf's ``inlined`` mark: ``perf script --inline``
    writes a frame inlined into the next one as ``addr sym+off (inlined)``, with no dso."""
    same = d1 - d0 == 7
    q = 0
    while same and q < 7:
        same = buf[d0 + q] == _INLINED[q]
        q += 1
    return same


@njit(cache=True, nogil=True, inline="always")
def parse_address(buf, p, e):
    """The span of a frame line's address (its first token, after white space)."""
    while p < e and is_ws(buf[p]):
        p += 1
    a = p
    while p < e and is_hex(buf[p]):
        p += 1
    return a, p


@njit(cache=True, nogil=True, _nrt=False)
def block(buf, pos, hi, basis):
    """The frame lines from ``pos`` on (lines opening with white space and not blank): (how
    many, the end of the first, where the line after them starts, whether that line ends the
    event: a blank line, an event line or the end, not a comment, which the scan reads past;
    a keyed hash of the lines after the first: each one's length and first 16 bytes, where
    its address is, folded in; equal lines have equal hashes, the bytes are compared after;
    how many end in ``(inlined)``, at most the frames an event keeps waiting: `is_inlined`)."""
    q = pos
    n = 0
    n_inlined = 0
    first_end = np.int64(-1)
    h = basis
    while q < hi:
        e = line_end(buf, q, hi)
        if q >= e or not is_ws(buf[q]):
            break
        blank = True
        for x in range(q, e):
            if not is_ws(buf[x]):
                blank = False
                break
        if blank:
            break
        n += 1
        z = e
        while z > q and is_ws(buf[z - 1]):
            z -= 1
        if z - q >= 9 and buf[z - 1] == 41 and load_u64(buf, z - 9) == _INLINED_WORD:  # "(inlined" ")"
            n_inlined += 1
        if n == 1:
            first_end = e
        elif q + 16 <= buf.shape[0] and e - q >= 16:
            h = mix64(h ^ load_u64(buf, q) ^ (load_u64(buf, q + 8) * K1) ^ np.uint64(e - q))
        else:
            h = mix64(h ^ hash_bytes(buf, q, e, basis))
        q = e + 1
    return n, first_end, q, q >= hi or buf[q] != 35, h, n_inlined
