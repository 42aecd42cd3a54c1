"""A V8 ``.cpuprofile`` (its current form: ``nodes``, ``samples``, ``timeDeltas``, ``startTime``)
read at the byte level in one walk, in numba (`tracevis3d.io.cpuprofile`): no Python object
per node.

What it gives back: per node (in file order) its id, its parent link and the number of its
frame key; the (owner id, child id) pairs of the nodes' ``children`` lists; the distinct
strings of the call frames (byte spans, interned: Python decodes each once) and the distinct
frame keys (function name, url, line + 1, column + 1), numbered by first appearance; the
samples and time deltas as int64; where ``startTime``'s number is.

It is a strict, validating JSON reader of the whole document (RFC 8259: strings and their
escapes, numbers, literals, brackets, commas; skipped values are walked and checked with an
explicit bracket stack of `MAX_DEPTH`; the tokens are `jsonstrict`'s), and it reads only the plain form of a profile: any
document it does not take exactly as the field-by-field reader would (`io.chrome_profile`'s
``_add_nodes``, ``_add_samples``) is handed back with status `FALLBACK`, and that reader
reads it.  Handed back: the old ``head`` form, a duplicate key among the ones read, a node
that is no object or has no integer id, a node sent twice (the caller checks: `scan_cpuprofile`),
numbers that are not integers of at most 18 digits where ids, samples, deltas, parents,
children and lines are read, call frame names that are not strings, keys with escapes, a
``\\u`` escape of a surrogate, nesting deeper than `MAX_DEPTH`, a control byte in a string
(`control_bytes` tells the caller first whether the file has any), bytes that are not
UTF-8 (`utf8_ok`).  What is taken is exactly what those readers read.

Interning: keyed hashes (`textscan.span_hash`) in open addressing, every hit compared byte by
byte (with a copy in an arena, `inline_bytes.to_arena`), so ids never depend on the hash.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .jsonstrict import (after_item, int_list, span_is, scan_key, scan_literal, scan_number, skip_value, scan_string, skip_ws,
                         control_bytes, utf8_ok)
from .inline_bytes import hash_bytes, to_arena
from .textscan import FNV_BASIS, K1, K2, grow_i64, grow_u64, grow_u8, mix64, new_table, regrow, same_as_arena

__all__ = ["scan_cpuprofile", "utf8_ok", "control_bytes", "OK", "FALLBACK"]

OK = 0
FALLBACK = 1
#: the deepest nesting of a skipped value (a profile's own fields nest 4 deep)
MAX_DEPTH = 64



@njit(cache=True, nogil=True, inline="always")
def _intern(buf, a, b, esc, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, table):
    """The id of the string ``buf[a:b]`` among the distinct strings (their spans, escape flags,
    hashes, arena copies), added when new, in place: the caller keeps room (`_string_room`;
    no array is handed back, each would cost two atomic reference counts).  Returns (id, bytes
    used, count)."""
    h = hash_bytes(buf, a, b, basis)
    mask = np.uint64(table.shape[0] - 1)
    slot = h & mask
    while True:
        g = table[slot]
        if g < 0:
            break
        if s_hash[g] == h and s_len[g] == b - a and same_as_arena(arena, s_aoff[g], buf, a, b - a):
            return g, used, ns
        slot = (slot + np.uint64(1)) & mask
    s_off[ns] = a
    s_len[ns] = b - a
    s_esc[ns] = 1 if esc else 0
    s_hash[ns] = h
    s_aoff[ns] = used
    table[slot] = ns
    return ns, to_arena(arena, used, buf, a, b), ns + 1


@njit(cache=True, nogil=True, inline="always")
def _string_room(ns, n_more, used, n_bytes, s_off, arena, table):
    """Whether the strings' tables have room for ``n_more`` strings of ``n_bytes`` bytes."""
    return ns + n_more <= s_off.shape[0] and 2 * (ns + n_more) <= table.shape[0] and \
        used + n_bytes + 8 <= arena.shape[0]


@njit(cache=True, nogil=True)
def _grow_strings(ns, n_more, used, n_bytes, s_off, s_len, s_esc, s_hash, s_aoff, arena, table):
    """The strings' tables with room for ``n_more`` strings of ``n_bytes`` bytes (`_string_room`)."""
    need = ns + n_more
    if need > s_off.shape[0]:
        s_off = grow_i64(s_off, need)
        s_len = grow_i64(s_len, need)
        s_esc = grow_i64(s_esc, need)
        s_hash = grow_u64(s_hash, need)
        s_aoff = grow_i64(s_aoff, need)
    if used + n_bytes + 8 > arena.shape[0]:
        arena = grow_u8(arena, used + n_bytes + 8, used)
    while 2 * need > table.shape[0]:
        table = regrow(s_hash, ns, table.shape[0])
    return s_off, s_len, s_esc, s_hash, s_aoff, arena, table


@njit(cache=True, nogil=True, inline="always")
def _line_of(kind, v):
    """A 0-based line or column as `io.chrome_profile` keeps it: 1-based, -1 when it is no
    integer in [0, 2^31 - 1)."""
    if kind == 1 and 0 <= v < 2 ** 31 - 1:
        return v + 1
    return np.int64(-1)


# the keys the scan compares, as bytes
(_W_FN, _W_URL, _W_LINE, _W_COL, _W_ID, _W_CF, _W_PARENT, _W_KIDS, _W_NODES, _W_SAMPLES, _W_DELTAS, _W_START) = (
    np.frombuffer(w, np.uint8) for w in (b"functionName", b"url", b"lineNumber", b"columnNumber", b"id", b"callFrame",
                                         b"parent", b"children", b"nodes", b"samples", b"timeDeltas", b"startTime"))


@njit(cache=True, nogil=True, _nrt=False)
def _call_frame(buf, i, n, strict, stack):
    """The ``callFrame`` object at ``i``: (index after it or -1, name start, name end, name has
    escapes, url start, url end, url has escapes, line, column); a missing name or url is the
    empty span at -1, a missing or non-number line or column -1 (`_line_of`)."""
    na = nb_ = ua = ub = np.int64(-1)
    ne = ue = False
    line = col = np.int64(-1)
    seen = 0
    if i >= n or buf[i] != 123:
        return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        return i + 1, na, nb_, ne, ua, ub, ue, line, col
    while True:
        a, b, i = scan_key(buf, i, n, strict)
        if a < 0 or i >= n:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        bit = 0
        if span_is(buf, a, b, _W_FN) or span_is(buf, a, b, _W_URL):
            bit = 1 if b - a == 12 else 2
            if buf[i] != 34:
                return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
            j, esc = scan_string(buf, i, n, strict)
            if j < 0:
                return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
            if bit == 1:
                na, nb_, ne = i + 1, j - 1, esc
            else:
                ua, ub, ue = i + 1, j - 1, esc
        elif span_is(buf, a, b, _W_LINE) or span_is(buf, a, b, _W_COL):
            bit = 4 if b - a == 10 else 8
            c = buf[i]
            v = np.int64(-1)
            if c == 45 or 48 <= c <= 57:
                j, kind, x = scan_number(buf, i, n)
                if kind != 1:
                    return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
                v = _line_of(kind, x)
            else:  # (null, a bool, a string...: no line)
                j = skip_value(buf, i, n, strict, stack)
            if bit == 4:
                line = v
            else:
                col = v
        else:
            j = skip_value(buf, i, n, strict, stack)
        if j < 0 or seen & bit:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        seen |= bit
        i, more = after_item(buf, j, n, 125)
        if more < 0:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        if more == 0:
            return i, na, nb_, ne, ua, ub, ue, line, col


@njit(cache=True, nogil=True, _nrt=False)
def _node(buf, i, n, strict, stack, kids, nk):
    """The node object at ``i``: (index after it, -1 when it is not one this reader takes, -2 when
    ``kids`` has no room for its children (the caller grows it and reads the node again); its
    id, parent kind (0 none, 1 an id) and parent id, name span and escapes, url span and escapes
    (a missing name or url: the empty span at 0), line, column (`_call_frame`), the children ids
    appended to ``kids`` from ``nk``, their new count).  Without reference counting (no array
    made or handed back)."""
    z = np.int64(0)
    nid = pid = z
    pk = 0
    na = nb_ = ua = ub = np.int64(-1)
    ne = ue = False
    line = col = np.int64(-1)
    seen = 0
    if i >= n or buf[i] != 123:
        return np.int64(-1), nid, pk, pid, z, z, ne, z, z, ue, line, col, nk
    i = skip_ws(buf, i + 1, n)
    more = 1 if i < n and buf[i] != 125 else -1  # (an empty node has no id)
    while more == 1:
        a, b, i = scan_key(buf, i, n, strict)
        if a < 0 or i >= n:
            more = -1
            break
        bit = 0
        if span_is(buf, a, b, _W_ID):
            bit = 1
            j, kind, nid = scan_number(buf, i, n)
            j = j if kind == 1 else -1
        elif span_is(buf, a, b, _W_CF):
            bit = 2
            j, na, nb_, ne, ua, ub, ue, line, col = _call_frame(buf, i, n, strict, stack)
        elif span_is(buf, a, b, _W_PARENT):
            bit = 4
            if buf[i] == 110:
                j = scan_literal(buf, i, n)
                j = j if j == i + 4 else -1
            else:
                j, kind, pid = scan_number(buf, i, n)
                j = j if kind == 1 else -1
                pk = 1
        elif span_is(buf, a, b, _W_KIDS):
            bit = 8
            j, nk = int_list(buf, i, n, kids, nk)
            if j == -2:
                return np.int64(-2), nid, pk, pid, z, z, ne, z, z, ue, line, col, nk
        else:
            j = skip_value(buf, i, n, strict, stack)
        if j < 0 or seen & bit:
            more = -1
            break
        seen |= bit
        i, more = after_item(buf, j, n, 125)
    if more < 0 or not (seen & 1):
        return np.int64(-1), nid, pk, pid, z, z, ne, z, z, ue, line, col, nk
    if na < 0:
        na = nb_ = z
    if ua < 0:
        ua = ub = z
    return i, nid, pk, pid, na, nb_, ne, ua, ub, ue, line, col, nk


@njit(cache=True, nogil=True, inline="always")
def _frame_key(sn, su, line, col, basis, k_name, k_url, k_line, k_col, k_hash, nkey, k_table):
    """The number of the frame key (name string ``sn``, url string ``su``, line, column),
    added when new, in place (the caller keeps room for one more).  Returns (number, count)."""
    kh = mix64((np.uint64(sn) * K1) ^ (np.uint64(su) * K2) ^ (np.uint64(line + 7) * np.uint64(31))
                ^ (np.uint64(col + 3) << np.uint64(32)) ^ basis)
    mask = np.uint64(k_table.shape[0] - 1)
    slot = kh & mask
    while True:
        g = k_table[slot]
        if g < 0:
            break
        if k_name[g] == sn and k_url[g] == su and k_line[g] == line and k_col[g] == col:
            return g, nkey
        slot = (slot + np.uint64(1)) & mask
    k_name[nkey] = sn
    k_url[nkey] = su
    k_line[nkey] = line
    k_col[nkey] = col
    k_hash[nkey] = kh
    k_table[slot] = nkey
    return nkey, nkey + 1


@njit(cache=True, nogil=True)
def _grow_keys(nkey, k_name, k_url, k_line, k_col, k_hash, k_table):
    """The frame keys' tables with room for one more (the hash table at most half full)."""
    if nkey + 1 > k_name.shape[0]:
        k_name = grow_i64(k_name, nkey + 1)
        k_url = grow_i64(k_url, nkey + 1)
        k_line = grow_i64(k_line, nkey + 1)
        k_col = grow_i64(k_col, nkey + 1)
        k_hash = grow_u64(k_hash, nkey + 1)
    while 2 * (nkey + 1) > k_table.shape[0]:
        k_table = regrow(k_hash, nkey, k_table.shape[0])
    return k_name, k_url, k_line, k_col, k_hash, k_table


@njit(cache=True, nogil=True)
def _grow_nodes(nn, n_id, n_pk, n_pid, n_key):
    """The node arrays with room for one more."""
    return grow_i64(n_id, nn + 1), grow_i64(n_pk, nn + 1), grow_i64(n_pid, nn + 1), grow_i64(n_key, nn + 1)


#: `_nodes_run`'s state (an int64 array): nodes, children, strings, arena bytes used, frame keys,
#: the last node id, whether the ids increase (1), the string bytes and the children's room the
#: node it stopped at needs
_S_NN, _S_NK, _S_NS, _S_USED, _S_NKEY, _S_LAST, _S_INC, _S_BYTES, _S_NEEDK, _S_LEN = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
#: `_nodes_run`'s statuses
_RUN_DONE, _RUN_BAD, _RUN_ROOM = 0, 1, 2


@njit(cache=True, nogil=True, _nrt=False)
def _nodes_run(buf, i, n, strict, stack, basis, st, n_id, n_pk, n_pid, n_key, kids, k_own, s_off, s_len, s_esc,
               s_hash, s_aoff, arena, s_table, k_name, k_url, k_line, k_col, k_hash, k_table):
    """The nodes of the ``nodes`` array from ``i`` (a node's start) into the tables, counts in
    ``st`` (`_S_NN`...), until the array's end (`_RUN_DONE`, the index after it), a node this
    reader does not take (`_RUN_BAD`) or one the tables have no room for (`_RUN_ROOM`, the
    index of that node, read again once the caller made room: `_grow_node_tables`,
    `_grow_strings`, `_grow_keys`).  No array is made, none handed back, nothing reference
    counted (`_nrt=False`: each counted array costs two atomic operations a call)."""
    while True:
        i0 = i
        nk0 = st[_S_NK]
        i, nid, pk, pid, na, nb_, ne, ua, ub, ue, line, col, nk = _node(buf, i0, n, strict, stack, kids, nk0)
        if i == -2:  # (its children past the room left)
            st[_S_BYTES] = 0
            st[_S_NEEDK] = 2 * kids.shape[0]
            return _RUN_ROOM, i0
        if i < 0:
            return _RUN_BAD, i0
        nn, ns, used, nkey = st[_S_NN], st[_S_NS], st[_S_USED], st[_S_NKEY]
        n_bytes = (nb_ - na) + (ub - ua)
        if nn + 1 > n_id.shape[0] or nk > k_own.shape[0] or not _string_room(ns, 2, used, n_bytes, s_off, arena,
                                                                              s_table) \
                or nkey + 1 > k_name.shape[0] or 2 * (nkey + 1) > k_table.shape[0]:
            st[_S_BYTES] = n_bytes
            st[_S_NEEDK] = nk
            return _RUN_ROOM, i0
        if nid <= st[_S_LAST]:
            st[_S_INC] = 0
        st[_S_LAST] = nid
        for q in range(nk0, nk):
            k_own[q] = nid
        sn, used, ns = _intern(buf, na, nb_, ne, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table)
        su, used, ns = _intern(buf, ua, ub, ue, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table)
        key, nkey = _frame_key(sn, su, line, col, basis, k_name, k_url, k_line, k_col, k_hash, nkey, k_table)
        n_id[nn] = nid
        n_pk[nn] = pk
        n_pid[nn] = pid
        n_key[nn] = key
        st[_S_NN] = nn + 1
        st[_S_NK] = nk
        st[_S_NS] = ns
        st[_S_USED] = used
        st[_S_NKEY] = nkey
        i, more = after_item(buf, i, n, 93)
        if more < 0:
            return _RUN_BAD, i
        if more == 0:
            return _RUN_DONE, i


@njit(cache=True, nogil=True)
def _grow_node_tables(st, kids, k_own, n_id, n_pk, n_pid, n_key):
    """The children's and the nodes' arrays with room for the node a run stopped at
    (``st[_S_NEEDK]`` children in all: twice the room when their count is not known yet), and
    for one node more."""
    if st[_S_NEEDK] > kids.shape[0]:
        kids = grow_i64(kids, st[_S_NEEDK])
    if kids.shape[0] > k_own.shape[0]:
        k_own = grow_i64(k_own, kids.shape[0])
    if st[_S_NN] + 1 > n_id.shape[0]:
        n_id, n_pk, n_pid, n_key = _grow_nodes(st[_S_NN], n_id, n_pk, n_pid, n_key)
    return kids, k_own, n_id, n_pk, n_pid, n_key


@njit(cache=True, nogil=True)
def _ints(buf, i, n):
    """The JSON array of integers at ``i`` (`jsonstrict.int_list`, its room grown as needed):
    (the integers' array, index after it or -1, count)."""
    out = np.empty(1024, np.int64)
    j, m = int_list(buf, i, n, out, 0)
    while j == -2:
        out = np.empty(2 * out.shape[0], np.int64)
        j, m = int_list(buf, i, n, out, 0)
    return out, j, m


@njit(cache=True, nogil=True)
def scan_cpuprofile(buf, seed, strict):
    """Read the ``.cpuprofile`` ``buf`` (module docstring); ``strict``: the file has control
    bytes (`control_bytes`), every string's bytes are checked.

    Returns (status, node id, parent kind (0 none, 1 an id), parent id, frame key per node;
    children (owner id, child id) as an (k, 2) array; strings (offset, length, has escapes);
    keys (name string, url string, line, column); samples; deltas; startTime's number (start,
    end; -1 when absent); whether the node ids are strictly increasing (else the caller checks
    that no id is sent twice: a node sent again is left out by that reader, not by this one)).
    Status `FALLBACK`: the arrays empty, the field-by-field reader reads the file."""
    n = buf.shape[0]
    basis = FNV_BASIS ^ np.uint64(seed)
    stack = np.empty(MAX_DEPTH, np.uint8)
    e0 = np.zeros(0, np.int64)
    # nodes
    n_id, n_pk, n_pid, n_key, _, _ = new_table(1024, 1)
    kids = np.empty(1024, np.int64)  # child ids; their owners filled at each node's end
    k_own = np.empty(1024, np.int64)
    st = np.zeros(_S_LEN, np.int64)  # the runs' counts (`_nodes_run`)
    st[_S_LAST] = -(2 ** 62)
    st[_S_INC] = 1
    # strings
    s_off, s_len, s_esc, s_aoff, s_hash, s_table = new_table(1024, 4096)
    arena = np.zeros(1 << 16, np.uint8)
    # frame keys
    k_name, k_url, k_line, k_col, k_hash, k_table = new_table(1024, 4096)
    samples = np.empty(0, np.int64)
    m_s = -1
    deltas = np.empty(0, np.int64)
    m_d = -1
    t0 = np.int64(-1)
    t1 = np.int64(-1)
    seen_nodes = False
    fb = (FALLBACK, e0, e0, e0, e0, np.zeros((0, 2), np.int64), e0, e0, e0, e0, e0, e0, e0, e0, e0, t0, t1, False)

    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 123:
        return fb
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        return fb
    while True:
        a, b, i = scan_key(buf, i, n, strict)
        if a < 0 or i >= n:
            return fb
        if span_is(buf, a, b, _W_NODES):
            if seen_nodes or buf[i] != 91:
                return fb
            seen_nodes = True
            i = skip_ws(buf, i + 1, n)
            if i < n and buf[i] == 93:
                i += 1
            else:
                while True:  # the nodes, in runs without reference counting; room made between runs
                    status, i = _nodes_run(buf, i, n, strict, stack, basis, st, n_id, n_pk, n_pid, n_key, kids, k_own,
                                           s_off, s_len, s_esc, s_hash, s_aoff, arena, s_table, k_name, k_url,
                                           k_line, k_col, k_hash, k_table)
                    if status == _RUN_DONE:
                        break
                    if status == _RUN_BAD:
                        return fb
                    kids, k_own, n_id, n_pk, n_pid, n_key = _grow_node_tables(st, kids, k_own, n_id, n_pk, n_pid,
                                                                              n_key)
                    s_off, s_len, s_esc, s_hash, s_aoff, arena, s_table = _grow_strings(
                        st[_S_NS], 2, st[_S_USED], st[_S_BYTES], s_off, s_len, s_esc, s_hash, s_aoff, arena, s_table)
                    if st[_S_NKEY] + 1 > k_name.shape[0] or 2 * (st[_S_NKEY] + 1) > k_table.shape[0]:
                        k_name, k_url, k_line, k_col, k_hash, k_table = _grow_keys(st[_S_NKEY], k_name, k_url, k_line,
                                                                                   k_col, k_hash, k_table)
            j = i
        elif span_is(buf, a, b, _W_SAMPLES):
            if m_s >= 0:
                return fb
            samples, j, m_s = _ints(buf, i, n)
        elif span_is(buf, a, b, _W_DELTAS):
            if m_d >= 0:
                return fb
            deltas, j, m_d = _ints(buf, i, n)
        elif span_is(buf, a, b, _W_START):
            if t0 >= 0:
                return fb
            if i + 4 <= n and buf[i] == 110 and buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108:
                j = i + 4  # startTime null: read as absent (the field-by-field reader starts at 0 for both)
            else:
                j, kind, _ = scan_number(buf, i, n)
                if kind == 0:
                    return fb
                t0 = i
                t1 = j
        else:
            j = skip_value(buf, i, n, strict, stack)
        if j < 0:
            return fb
        i, more = after_item(buf, j, n, 125)
        if more < 0:
            return fb
        if more == 0:
            break
    if skip_ws(buf, i, n) != n or not seen_nodes or m_s <= 0 or m_d < 0:
        return fb
    nn, nk, ns, nkey = st[_S_NN], st[_S_NK], st[_S_NS], st[_S_NKEY]
    pairs = np.empty((nk, 2), np.int64)
    pairs[:, 0] = k_own[:nk]
    pairs[:, 1] = kids[:nk]
    return (OK, n_id[:nn].copy(), n_pk[:nn].copy(), n_pid[:nn].copy(), n_key[:nn].copy(), pairs,
            s_off[:ns].copy(), s_len[:ns].copy(), s_esc[:ns].copy(), k_name[:nkey].copy(), k_url[:nkey].copy(),
            k_line[:nkey].copy(), k_col[:nkey].copy(), samples[:m_s].copy(), deltas[:m_d].copy(), t0, t1,
            st[_S_INC] == 1)
