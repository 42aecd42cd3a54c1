"""Counters and async slices of a Chrome trace, in numba: the ``key: value``
pairs of counter events' ``args`` objects (`counter_pairs`), the ids of async events
(`event_ids`: ``id``, ``id2.global``/``id2.local`` and ``scope`` as byte spans, so the
tracks keep the ids' text), and the matching of async begin/end events into nested slices
per track (`match_async`), and the order of samples by series then time (`key_time_order`).

Each is one pass over data the scanner already holds (byte spans of ``args`` and of the
events, the kept rows' phases and times): O(bytes read) and O(rows), with outputs bounded
by their inputs.  Brute-force twins in tests/test_chrome_side.py.
"""
import numpy as np
from numba import njit

from .jsontokens import bytes_are, parse_number, scan_string, skip_value, skip_ws
from .repairs import note
from .tree import group_by_key

# counter_pairs: status of one pair
PAIR_OK = 0
PAIR_NONFINITE = 1  # NaN, Infinity, or a number out of the float64 range
PAIR_NOT_NUMBER = 2  # a string, object, array, literal
PAIR_INEXACT = 3  # a number outside the exact fast path: the caller re-parses it with float()

# match_async: kinds of rows
A_BEGIN = 0
A_END = 1
A_INSTANT = 2
# match_async: repairs counted (index into its counts / firsts)
M_UNCLOSED = 0  # a begin never ended: closed at its track's last timestamp
M_ORPHAN = 1  # an end with nothing open on its track: dropped
M_MISNESTED = 2  # an open slice above the one an end names: closed with it
M_NAME_MISMATCH = 3  # an end whose name no open slice has: closed the innermost one
N_MATCH_REPAIRS = 4

# event_ids: which id an async event has (the spec's precedence: id, id2.global, id2.local)
ID_NONE = 0
ID_PLAIN = 1  # "id": a global id (matches across processes)
ID2_GLOBAL = 2  # "id2": {"global": ...}
ID2_LOCAL = 3  # "id2": {"local": ...}: scoped to its process


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
def _value_span(buf, i, stack):
    """The text of the JSON value at ``buf[i]``: a string's inside (without the quotes), any
    other value's own text.  Returns (start, length, end) with end < 0 on bad JSON."""
    if buf[i] == 34:
        j, _ = scan_string(buf, i)
        return i + 1, j - i - 2, j
    j = skip_value(buf, i, stack)
    return i, j - i, j


_ID = np.frombuffer(b"id", np.uint8)
_ID2 = np.frombuffer(b"id2", np.uint8)
_SCOPE = np.frombuffer(b"scope", np.uint8)
_LOCAL = np.frombuffer(b"local", np.uint8)
_GLOBAL = np.frombuffer(b"global", np.uint8)


@njit(cache=True, nogil=True)
def event_ids(buf, off, ln, stack):
    """The id of each event object ``buf[off[r]:off[r]+ln[r]]`` (the spec: ``id``, else
    ``id2.global``, else ``id2.local``) and its ``scope`` string.

    Returns (kind, id_off, id_len, scope_off, scope_len), one entry per event: ``kind`` an
    ID_* code, the id's text as a byte span (a string's inside, a number's digits;
    length -1 when none), likewise the scope (length -1 when none).  Only the event's
    top-level keys and the keys of its ``id2`` object are read."""
    n = off.shape[0]
    kind = np.zeros(n, np.int8)
    id_off = np.zeros(n, np.int64)
    id_len = np.full(n, -1, np.int64)
    sc_off = np.zeros(n, np.int64)
    sc_len = np.full(n, -1, np.int64)
    for r in range(n):
        i = off[r]
        end = off[r] + ln[r]
        if ln[r] < 2 or buf[i] != 123:
            continue
        g0, gl, l0, ll = 0, -1, 0, -1
        i = skip_ws(buf, i + 1)
        while i < end and buf[i] == 34:
            j, _ = scan_string(buf, i)
            if j < 0 or j > end:
                break
            k0, kl = i + 1, j - i - 2
            i = skip_ws(buf, j)
            if i >= end or buf[i] != 58:
                break
            i = skip_ws(buf, i + 1)
            if bytes_are(buf, k0, kl, _ID2) and buf[i] == 123:
                i = skip_ws(buf, i + 1)
                while i < end and buf[i] == 34:
                    j, _ = scan_string(buf, i)
                    if j < 0 or j > end:
                        break
                    q0, ql = i + 1, j - i - 2
                    i = skip_ws(buf, j)
                    if i >= end or buf[i] != 58:
                        break
                    i = skip_ws(buf, i + 1)
                    v0, vl, j = _value_span(buf, i, stack)
                    if j < 0:
                        break
                    if bytes_are(buf, q0, ql, _GLOBAL):
                        g0, gl = v0, vl
                    elif bytes_are(buf, q0, ql, _LOCAL):
                        l0, ll = v0, vl
                    i = skip_ws(buf, j)
                    if i < end and buf[i] == 44:
                        i = skip_ws(buf, i + 1)
                i = skip_ws(buf, i)
                if i >= end or buf[i] != 125:
                    break
                j = i + 1
            else:
                v0, vl, j = _value_span(buf, i, stack)
                if j < 0:
                    break
                if bytes_are(buf, k0, kl, _ID):
                    id_off[r], id_len[r] = v0, vl
                    kind[r] = ID_PLAIN
                elif bytes_are(buf, k0, kl, _SCOPE):
                    sc_off[r], sc_len[r] = v0, vl
            i = skip_ws(buf, j)
            if i < end and buf[i] == 44:
                i = skip_ws(buf, i + 1)
            else:
                break
        if kind[r] == ID_NONE and gl >= 0:
            id_off[r], id_len[r] = g0, gl
            kind[r] = ID2_GLOBAL
        elif kind[r] == ID_NONE and ll >= 0:
            id_off[r], id_len[r] = l0, ll
            kind[r] = ID2_LOCAL
    return kind, id_off, id_len, sc_off, sc_len


@njit(cache=True, nogil=True)
def match_async(track, kind, ts, name):
    """Nested async slices from rows sorted by (track, ts, file order).

    A begin opens a slice on its track.  An end closes the innermost open slice when it
    has no name (the spec lets an end omit it) or the innermost one has its name (or none);
    else the innermost open slice of that name, closing the ones above it at the same time
    (M_MISNESTED); when no open slice has that name, the innermost one (M_NAME_MISMATCH).
    An instant is a zero-length slice inside the open ones.  ``name``: an id per row, -1
    for none.  Returns (start_row, end_ts, depth) per slice in the order they close, and
    per repair M_* its count and first row (-1 when none): begins left open (closed at
    their track's last timestamp), ends with nothing open (dropped), slices closed by an
    enclosing end, ends whose name matched no open slice.

    The innermost open slice of a name is found in O(1), not by a walk down the stack (a
    hostile file of 60,000 nested begins whose ends name slices deep in the stack took minutes):
    ``top_of_name[nm]`` is the highest stack position holding name nm, ``below_same[p]`` the
    next lower position with the name at position p (-1: none), kept as slices open and close."""
    n = track.shape[0]
    srow = np.empty(n, np.int64)
    send = np.empty(n, np.float64)
    sdep = np.empty(n, np.int32)
    stack = np.empty(n, np.int64)
    counts = np.zeros(N_MATCH_REPAIRS, np.int64)
    firsts = np.full(N_MATCH_REPAIRS, -1, np.int64)
    n_names = 0
    for k in range(n):
        if name[k] + 1 > n_names:
            n_names = name[k] + 1
    top_of_name = np.full(max(n_names, 1), -1, np.int64)
    below_same = np.empty(max(n, 1), np.int64)
    top = 0
    m = 0
    for k in range(n + 1):
        if top > 0 and (k == n or track[k] != track[k - 1]):
            last = ts[k - 1]
            while top > 0:  # begins never ended: closed at the track's last timestamp
                top -= 1
                j = stack[top]
                if name[j] >= 0:
                    top_of_name[name[j]] = below_same[top]
                srow[m] = j
                send[m] = max(last, ts[j])
                sdep[m] = top
                m += 1
                counts[M_UNCLOSED] += 1
                if firsts[M_UNCLOSED] < 0 or j < firsts[M_UNCLOSED]:
                    firsts[M_UNCLOSED] = j
        if k == n:
            break
        if k > 0 and track[k] != track[k - 1]:
            top = 0
        c = kind[k]
        if c == A_BEGIN:
            stack[top] = k
            nb = name[k]
            if nb >= 0:
                below_same[top] = top_of_name[nb]
                top_of_name[nb] = top
            top += 1
        elif c == A_END:
            if top == 0:
                note(counts, firsts, M_ORPHAN, k)
                continue
            d = top - 1
            nm = name[k]
            if nm >= 0 and name[stack[d]] >= 0 and name[stack[d]] != nm:
                d = top_of_name[nm] if nm < n_names else -1
                if d < 0:  # no open slice has that name: the innermost one
                    d = top - 1
                    note(counts, firsts, M_NAME_MISMATCH, k)
            while top > d:
                top -= 1
                j = stack[top]
                if name[j] >= 0:
                    top_of_name[name[j]] = below_same[top]
                srow[m] = j
                send[m] = ts[k]
                sdep[m] = top
                m += 1
                if top > d:
                    note(counts, firsts, M_MISNESTED, j)
        else:
            srow[m] = k
            send[m] = ts[k]
            sdep[m] = top
            m += 1
    return srow[:m], send[:m], sdep[:m], counts, firsts


@njit(cache=True, nogil=True)
def _mix(x):
    """splitmix64's finaliser (Steele, Lea, Flood, OOPSLA 2014): spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def _same_pair(buf, pid, nid, cid, koff, klen, a, b, with_key):
    """Pairs a and b have the same process, name and id (and, ``with_key``, key bytes)."""
    if pid[a] != pid[b] or nid[a] != nid[b] or cid[a] != cid[b]:
        return False
    if not with_key:
        return True
    if klen[a] != klen[b]:
        return False
    for q in range(klen[a]):
        if buf[koff[a] + q] != buf[koff[b] + q]:
            return False
    return True


@njit(cache=True, nogil=True)
def _find(table, hashes, h, buf, pid, nid, cid, koff, klen, reps, k, with_key):
    """Probe ``table`` (slots of ids, -1 empty) for pair k's key; returns (slot, id or -1, probes)."""
    mask = table.shape[0] - 1
    slot = np.int64(h & np.uint64(mask))
    probes = 0
    while True:
        j = table[slot]
        if j < 0:
            return slot, -1, probes
        if hashes[j] == h and _same_pair(buf, pid, nid, cid, koff, klen, reps[j], k, with_key):
            return slot, j, probes
        probes += 1
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def _grown(table, hashes, n_ids):
    """``table`` at twice its size, its ids re-inserted by their hashes."""
    t2 = np.full(table.shape[0] * 2, -1, np.int64)
    mask = t2.shape[0] - 1
    for j in range(n_ids):
        slot = np.int64(hashes[j] & np.uint64(mask))
        while t2[slot] >= 0:
            slot = (slot + 1) & mask
        t2[slot] = j
    return t2


@njit(cache=True, nogil=True)
def series_ids(buf, pid, nid, cid, koff, klen, seed):
    """Counter series of counter pairs: one id per distinct (process, name, id, key bytes)
    ``(pid[k], nid[k], cid[k], buf[koff[k]:koff[k]+klen[k]])``, and one counter per distinct
    (process, name, id), both numbered in order of first appearance.

    One pass with two hash tables of the distinct keys (open addressing, keyed by ``seed``,
    every hit verified byte by byte, grown by doubling: memory O(distinct keys)).  Returns
    (series of each pair, counter of each series, first pair of each series, first pair of
    each counter, ok); ``ok`` is False when probing passed a linear budget (keys built to
    collide): the caller then interns with `jsonspans` instead."""
    n = pid.shape[0]
    sid = np.empty(n, np.int32)
    s_table = np.full(64, -1, np.int64)
    c_table = np.full(64, -1, np.int64)
    s_hash = np.empty(32, np.uint64)
    c_hash = np.empty(32, np.uint64)
    s_rep = np.empty(32, np.int64)
    c_rep = np.empty(32, np.int64)
    s_counter = np.empty(32, np.int64)
    ns = 0
    nc = 0
    budget = 1024 + 4 * n
    s0 = _mix(np.uint64(seed) ^ np.uint64(0x9E3779B97F4A7C15))
    for k in range(n):
        hc = _mix(_mix(_mix(np.uint64(pid[k]) ^ s0) + np.uint64(nid[k])) + np.uint64(cid[k]))
        hk = hc
        for q in range(klen[k]):
            hk = (hk ^ np.uint64(buf[koff[k] + q])) * np.uint64(0x100000001B3)
        hk = _mix(hk)
        mask = np.uint64(s_table.shape[0] - 1)
        slot = hk & mask
        while True:  # the probe, written out: a helper call here costs 3x the whole loop
            j = s_table[slot]
            if j < 0:
                break
            if s_hash[j] == hk:
                r = s_rep[j]
                same = pid[r] == pid[k] and nid[r] == nid[k] and cid[r] == cid[k] and klen[r] == klen[k]
                if same:
                    for q in range(klen[k]):
                        if buf[koff[r] + q] != buf[koff[k] + q]:
                            same = False
                            break
                if same:
                    break
            budget -= 1
            slot = (slot + np.uint64(1)) & mask
        if budget < 0:
            return sid, s_counter[:0], s_rep[:0], c_rep[:0], False
        if j < 0:  # a new series (and maybe a new counter): rare, the helpers are fine here
            cslot, c, probes = _find(c_table, c_hash, hc, buf, pid, nid, cid, koff, klen, c_rep, k, False)
            budget -= probes
            if c < 0:
                if nc == c_rep.shape[0]:
                    c_rep = np.concatenate((c_rep, np.empty(nc, np.int64)))
                    c_hash = np.concatenate((c_hash, np.empty(nc, np.uint64)))
                c = nc
                c_rep[c], c_hash[c] = k, hc
                c_table[cslot] = c
                nc += 1
                if 2 * nc > c_table.shape[0]:
                    c_table = _grown(c_table, c_hash, nc)
            if ns == s_rep.shape[0]:
                s_rep = np.concatenate((s_rep, np.empty(ns, np.int64)))
                s_hash = np.concatenate((s_hash, np.empty(ns, np.uint64)))
                s_counter = np.concatenate((s_counter, np.empty(ns, np.int64)))
            j = ns
            s_rep[j], s_hash[j], s_counter[j] = k, hk, c
            s_table[np.int64(slot)] = j
            ns += 1
            if 2 * ns > s_table.shape[0]:
                s_table = _grown(s_table, s_hash, ns)
        sid[k] = j
    return sid, s_counter[:ns].copy(), s_rep[:ns].copy(), c_rep[:nc].copy(), True


@njit(cache=True, nogil=True)
def key_time_order(key, t):
    """The order of ``np.lexsort((t, key))`` (by key, then time, then position) when it is a
    stable counting sort by key alone: keys in [0, 2n + 1024) and the times of each key
    non-decreasing in input order (a file written as it was recorded).  O(n + keys).
    Returns (order, ok); ok False when not (a negative or large key, a time that decreases
    or is NaN): the caller sorts."""
    n = key.shape[0]
    empty = np.zeros(0, np.int64)
    kmax = -1
    for i in range(n):
        k = key[i]
        if k < 0 or k >= 2 * n + 1024:
            return empty, False
        if k > kmax:
            kmax = k
    last = np.full(kmax + 1, -np.inf)
    for i in range(n):
        k = key[i]
        if not (t[i] >= last[k]):
            return empty, False
        last[k] = t[i]
    order, _ = group_by_key(key, kmax + 1)
    return order, True
