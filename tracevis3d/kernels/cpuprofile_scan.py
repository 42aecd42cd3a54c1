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
byte (with a copy in an arena, `textscan._to_arena`), so ids never depend on the hash.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .jsonstrict import (_after_item, _int_list, _is, _key, _literal, _number, _skip_value, _string, _ws,
                         control_bytes, utf8_ok)
from .textscan import _FNV_BASIS, _K1, _K2, _grow_i64, _grow_u64, _mix64, _same_in_arena, _to_arena, span_hash

__all__ = ["scan_cpuprofile", "utf8_ok", "control_bytes", "OK", "FALLBACK"]

OK = 0
FALLBACK = 1
#: the deepest nesting of a skipped value (a profile's own fields nest 4 deep)
MAX_DEPTH = 64



@njit(cache=True, nogil=True)
def _intern(buf, a, b, esc, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, table):
    """The id of the string ``buf[a:b]`` among the distinct strings (their spans, escape flags,
    hashes, arena copies), added when new.  Returns (id, the tables, bytes used, count)."""
    h = span_hash(buf, a, b, basis)
    mask = np.uint64(table.shape[0] - 1)
    slot = h & mask
    while True:
        g = table[slot]
        if g < 0:
            break
        if s_hash[g] == h and s_len[g] == b - a and _same_in_arena(arena, s_aoff[g], buf, a, b - a):
            return g, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, table
        slot = (slot + np.uint64(1)) & mask
    if ns == s_off.shape[0]:
        s_off = _grow_i64(s_off, ns + 1)
        s_len = _grow_i64(s_len, ns + 1)
        s_esc = _grow_i64(s_esc, ns + 1)
        s_hash = _grow_u64(s_hash, ns + 1)
        s_aoff = _grow_i64(s_aoff, ns + 1)
    arena = _to_arena(arena, used, buf, a, b, b, b)
    s_off[ns] = a
    s_len[ns] = b - a
    s_esc[ns] = 1 if esc else 0
    s_hash[ns] = h
    s_aoff[ns] = used
    used += b - a
    table[slot] = ns
    g = ns
    ns += 1
    if 2 * ns > table.shape[0]:
        table = _regrow(s_hash, ns, table.shape[0])
    return g, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, table


@njit(cache=True, nogil=True)
def _regrow(hashes, n, cap):
    cap = 4 * cap
    table = np.full(cap, -1, np.int64)
    mask = np.uint64(cap - 1)
    for j in range(n):
        q = hashes[j] & mask
        while table[q] >= 0:
            q = (q + np.uint64(1)) & mask
        table[q] = j
    return table


@njit(cache=True, nogil=True, inline="always")
def _line_of(kind, v):
    """A 0-based line or column as `io.chrome_profile` keeps it: 1-based, -1 when it is no
    integer in [0, 2^31 - 1)."""
    if kind == 1 and 0 <= v < 2 ** 31 - 1:
        return v + 1
    return np.int64(-1)


_W_FN = np.frombuffer(b"functionName", np.uint8)
_W_URL = np.frombuffer(b"url", np.uint8)
_W_LINE = np.frombuffer(b"lineNumber", np.uint8)
_W_COL = np.frombuffer(b"columnNumber", np.uint8)
_W_ID = np.frombuffer(b"id", np.uint8)
_W_CF = np.frombuffer(b"callFrame", np.uint8)
_W_PARENT = np.frombuffer(b"parent", np.uint8)
_W_KIDS = np.frombuffer(b"children", np.uint8)
_W_NODES = np.frombuffer(b"nodes", np.uint8)
_W_SAMPLES = np.frombuffer(b"samples", np.uint8)
_W_DELTAS = np.frombuffer(b"timeDeltas", np.uint8)
_W_START = np.frombuffer(b"startTime", np.uint8)


@njit(cache=True, nogil=True)
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
    i = _ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        return i + 1, na, nb_, ne, ua, ub, ue, line, col
    while True:
        a, b, i = _key(buf, i, n, strict)
        if a < 0 or i >= n:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        bit = 0
        if _is(buf, a, b, _W_FN) or _is(buf, a, b, _W_URL):
            bit = 1 if b - a == 12 else 2
            if buf[i] != 34:
                return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
            j, esc = _string(buf, i, n, strict)
            if j < 0:
                return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
            if bit == 1:
                na, nb_, ne = i + 1, j - 1, esc
            else:
                ua, ub, ue = i + 1, j - 1, esc
        elif _is(buf, a, b, _W_LINE) or _is(buf, a, b, _W_COL):
            bit = 4 if b - a == 10 else 8
            c = buf[i]
            v = np.int64(-1)
            if c == 45 or 48 <= c <= 57:
                j, kind, x = _number(buf, i, n)
                if kind != 1:
                    return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
                v = _line_of(kind, x)
            else:  # (null, a bool, a string...: no line)
                j = _skip_value(buf, i, n, strict, stack)
            if bit == 4:
                line = v
            else:
                col = v
        else:
            j = _skip_value(buf, i, n, strict, stack)
        if j < 0 or seen & bit:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        seen |= bit
        i, more = _after_item(buf, j, n, 125)
        if more < 0:
            return np.int64(-1), na, nb_, ne, ua, ub, ue, line, col
        if more == 0:
            return i, na, nb_, ne, ua, ub, ue, line, col


@njit(cache=True, nogil=True)
def _node(buf, i, n, strict, stack, kids, nk):
    """The node object at ``i``: (index after it, -1 when it is not one this reader takes; its id,
    parent kind (0 none, 1 an id) and parent id, name span and escapes, url span and escapes (a
    missing name or url: the empty span at 0), line, column (`_call_frame`), the children ids
    appended to ``kids`` from ``nk``, their new count)."""
    z = np.int64(0)
    nid = pid = z
    pk = 0
    na = nb_ = ua = ub = np.int64(-1)
    ne = ue = False
    line = col = np.int64(-1)
    seen = 0
    if i >= n or buf[i] != 123:
        return np.int64(-1), nid, pk, pid, z, z, ne, z, z, ue, line, col, kids, nk
    i = _ws(buf, i + 1, n)
    more = 1 if i < n and buf[i] != 125 else -1  # (an empty node has no id)
    while more == 1:
        a, b, i = _key(buf, i, n, strict)
        if a < 0 or i >= n:
            more = -1
            break
        bit = 0
        if _is(buf, a, b, _W_ID):
            bit = 1
            j, kind, nid = _number(buf, i, n)
            j = j if kind == 1 else -1
        elif _is(buf, a, b, _W_CF):
            bit = 2
            j, na, nb_, ne, ua, ub, ue, line, col = _call_frame(buf, i, n, strict, stack)
        elif _is(buf, a, b, _W_PARENT):
            bit = 4
            if buf[i] == 110:
                j = _literal(buf, i, n)
                j = j if j == i + 4 else -1
            else:
                j, kind, pid = _number(buf, i, n)
                j = j if kind == 1 else -1
                pk = 1
        elif _is(buf, a, b, _W_KIDS):
            bit = 8
            j, kids, nk = _int_list(buf, i, n, kids, nk)
        else:
            j = _skip_value(buf, i, n, strict, stack)
        if j < 0 or seen & bit:
            more = -1
            break
        seen |= bit
        i, more = _after_item(buf, j, n, 125)
    if more < 0 or not (seen & 1):
        return np.int64(-1), nid, pk, pid, z, z, ne, z, z, ue, line, col, kids, nk
    if na < 0:
        na = nb_ = z
    if ua < 0:
        ua = ub = z
    return i, nid, pk, pid, na, nb_, ne, ua, ub, ue, line, col, kids, nk


@njit(cache=True, nogil=True, inline="always")
def _frame_key(sn, su, line, col, basis, k_name, k_url, k_line, k_col, k_hash, nkey, k_table):
    """The number of the frame key (name string ``sn``, url string ``su``, line, column),
    added when new.  Returns (number, the keys' arrays, count and table)."""
    kh = _mix64((np.uint64(sn) * _K1) ^ (np.uint64(su) * _K2) ^ (np.uint64(line + 7) * np.uint64(31))
                ^ (np.uint64(col + 3) << np.uint64(32)) ^ basis)
    mask = np.uint64(k_table.shape[0] - 1)
    slot = kh & mask
    while True:
        g = k_table[slot]
        if g < 0:
            break
        if k_name[g] == sn and k_url[g] == su and k_line[g] == line and k_col[g] == col:
            return g, k_name, k_url, k_line, k_col, k_hash, nkey, k_table
        slot = (slot + np.uint64(1)) & mask
    if nkey == k_name.shape[0]:
        k_name = _grow_i64(k_name, nkey + 1)
        k_url = _grow_i64(k_url, nkey + 1)
        k_line = _grow_i64(k_line, nkey + 1)
        k_col = _grow_i64(k_col, nkey + 1)
        k_hash = _grow_u64(k_hash, nkey + 1)
    k_name[nkey] = sn
    k_url[nkey] = su
    k_line[nkey] = line
    k_col[nkey] = col
    k_hash[nkey] = kh
    k_table[slot] = nkey
    key = nkey
    nkey += 1
    if 2 * nkey > k_table.shape[0]:
        k_table = _regrow(k_hash, nkey, k_table.shape[0])
    return key, k_name, k_url, k_line, k_col, k_hash, nkey, k_table


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
    basis = _FNV_BASIS ^ np.uint64(seed)
    stack = np.empty(MAX_DEPTH, np.uint8)
    e0 = np.zeros(0, np.int64)
    # nodes
    n_id = np.empty(1024, np.int64)
    n_pk = np.empty(1024, np.int64)
    n_pid = np.empty(1024, np.int64)
    n_key = np.empty(1024, np.int64)
    nn = 0
    kids = np.empty(1024, np.int64)  # child ids; their owners filled at each node's end
    k_own = np.empty(1024, np.int64)
    nk = nk0 = 0
    # strings
    s_off = np.empty(1024, np.int64)
    s_len = np.empty(1024, np.int64)
    s_esc = np.empty(1024, np.int64)
    s_hash = np.empty(1024, np.uint64)
    s_aoff = np.empty(1024, np.int64)
    arena = np.zeros(1 << 16, np.uint8)
    used = 0
    ns = 0
    s_table = np.full(4096, -1, np.int64)
    # frame keys
    k_name = np.empty(1024, np.int64)
    k_url = np.empty(1024, np.int64)
    k_line = np.empty(1024, np.int64)
    k_col = np.empty(1024, np.int64)
    k_hash = np.empty(1024, np.uint64)
    nkey = 0
    k_table = np.full(4096, -1, np.int64)
    samples = np.empty(0, np.int64)
    m_s = -1
    deltas = np.empty(0, np.int64)
    m_d = -1
    t0 = np.int64(-1)
    t1 = np.int64(-1)
    last_id = np.int64(-(2 ** 62))
    increasing = True
    seen_nodes = False
    fb = (FALLBACK, e0, e0, e0, e0, np.zeros((0, 2), np.int64), e0, e0, e0, e0, e0, e0, e0, e0, e0, t0, t1, False)

    i = _ws(buf, 0, n)
    if i >= n or buf[i] != 123:
        return fb
    i = _ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        return fb
    while True:
        a, b, i = _key(buf, i, n, strict)
        if a < 0 or i >= n:
            return fb
        if _is(buf, a, b, _W_NODES):
            if seen_nodes or buf[i] != 91:
                return fb
            seen_nodes = True
            i = _ws(buf, i + 1, n)
            more = 1
            if i < n and buf[i] == 93:
                i += 1
                more = 0
            while more == 1:
                # one node
                i, nid, pk, pid, na, nb_, ne, ua, ub, ue, line, col, kids, nk = _node(buf, i, n, strict, stack,
                                                                                        kids, nk)
                if i < 0:
                    return fb
                if nid <= last_id:
                    increasing = False
                last_id = nid
                if nk > k_own.shape[0]:
                    k_own = _grow_i64(k_own, nk)
                k_own[nk0:nk] = nid
                nk0 = nk
                # its frame key: (name, url, line, column), the strings interned
                sn, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table = _intern(
                    buf, na, nb_, ne, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table)
                su, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table = _intern(
                    buf, ua, ub, ue, basis, s_off, s_len, s_esc, s_hash, s_aoff, arena, used, ns, s_table)
                key, k_name, k_url, k_line, k_col, k_hash, nkey, k_table = _frame_key(
                    sn, su, line, col, basis, k_name, k_url, k_line, k_col, k_hash, nkey, k_table)
                if nn == n_id.shape[0]:
                    n_id = _grow_i64(n_id, nn + 1)
                    n_pk = _grow_i64(n_pk, nn + 1)
                    n_pid = _grow_i64(n_pid, nn + 1)
                    n_key = _grow_i64(n_key, nn + 1)
                n_id[nn] = nid
                n_pk[nn] = pk
                n_pid[nn] = pid
                n_key[nn] = key
                nn += 1
                i, more = _after_item(buf, i, n, 93)
                if more < 0:
                    return fb
            j = i
        elif _is(buf, a, b, _W_SAMPLES):
            if m_s >= 0:
                return fb
            j, samples, m_s = _int_list(buf, i, n, np.empty(1024, np.int64), 0)
        elif _is(buf, a, b, _W_DELTAS):
            if m_d >= 0:
                return fb
            j, deltas, m_d = _int_list(buf, i, n, np.empty(1024, np.int64), 0)
        elif _is(buf, a, b, _W_START):
            if t0 >= 0:
                return fb
            j, kind, _ = _number(buf, i, n)
            if kind == 0:
                return fb
            t0 = i
            t1 = j
        else:
            j = _skip_value(buf, i, n, strict, stack)
        if j < 0:
            return fb
        i, more = _after_item(buf, j, n, 125)
        if more < 0:
            return fb
        if more == 0:
            break
    if _ws(buf, i, n) != n or not seen_nodes or m_s <= 0 or m_d < 0:
        return fb
    pairs = np.empty((nk, 2), np.int64)
    pairs[:, 0] = k_own[:nk]
    pairs[:, 1] = kids[:nk]
    return (OK, n_id[:nn].copy(), n_pk[:nn].copy(), n_pid[:nn].copy(), n_key[:nn].copy(), pairs,
            s_off[:ns].copy(), s_len[:ns].copy(), s_esc[:ns].copy(), k_name[:nkey].copy(), k_url[:nkey].copy(),
            k_line[:nkey].copy(), k_col[:nkey].copy(), samples[:m_s].copy(), deltas[:m_d].copy(), t0, t1, increasing)
