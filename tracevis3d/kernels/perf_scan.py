"""The ``perf script`` scanner in numba (`tracevis3d.io.perf_script`): event lines (comm,
pid/tid, cpu, time, period, event) and their indented frames (address, symbol+offset, dso) read
once over the bytes; threads, frames and frame paths interned as `textscan` interns collapsed
stacks (its hashing, arena and trie are shared), samples as (thread, leaf node) per event.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .textscan import (FLOODED, OK, _FNV_BASIS, _K1, _K2, _grow_i64, _grow_u64, _mix64, _rehash,  # noqa: F401
                       _same_bytes, _same_in_arena, _to_arena, either_mask32, span_hash)


@njit(cache=True, nogil=True)
def _line_end(buf, j, hi):
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
def _is_ws(c):
    return c == 32 or c == 9 or c == 13


@njit(cache=True, nogil=True, inline="always")
def _is_hex(c):
    return (48 <= c <= 57) or (97 <= c <= 102) or (65 <= c <= 70)


@njit(cache=True, nogil=True)
def perf_frame(buf, a, e):
    """Parse a ``perf script`` frame line ``buf[a:e]`` (without its line end): white space, a
    hex address, white space, the symbol (``+0x..`` offset dropped), white space, ``(dso)``.
    Returns (symbol start, symbol end, dso start, dso end), or (-1, -1, -1, -1) when it is
    not one.  The dso is the last parenthesised group preceded by white space (its
    parentheses balanced: ``(/tmp/x (deleted))``); a line without one has dso ``(a, a)``."""
    while a < e and _is_ws(buf[a]):
        a += 1
    while e > a and _is_ws(buf[e - 1]):
        e -= 1
    x = a
    while x < e and _is_hex(buf[x]):
        x += 1
    if x == a or x == e or not _is_ws(buf[x]):
        return -1, -1, -1, -1
    while x < e and _is_ws(buf[x]):
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
        if y >= s0 and depth == 0 and (y == s0 or _is_ws(buf[y - 1])):
            d0 = y + 1
            d1 = e - 1
            s1 = y
            while s1 > s0 and _is_ws(buf[s1 - 1]):
                s1 -= 1
    # a trailing +0x<hex> offset
    y = s1
    while y > s0 and _is_hex(buf[y - 1]):
        y -= 1
    if y < s1 and y - 3 >= s0 and buf[y - 1] == 120 and buf[y - 2] == 48 and buf[y - 3] == 43:  # +0x
        s1 = y - 3
    return s0, s1, d0, d1


@njit(cache=True, nogil=True)
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
        while x < e and _is_ws(buf[x]):
            x += 1
        if x >= e:
            break
        y = x
        while y < e and not _is_ws(buf[y]):
            y += 1
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
        while comm_end > p and _is_ws(buf[comm_end - 1]):
            comm_end -= 1
    # the event: the first token after the time ending with ':'
    x = t1
    while x < e:
        while x < e and _is_ws(buf[x]):
            x += 1
        y = x
        while y < e and not _is_ws(buf[y]):
            y += 1
        if y > x and buf[y - 1] == 58:
            return comm_end, pid, tid, True, x, y - 1, y
        x = y
    return comm_end, pid, tid, True, e, e, e


@njit(cache=True, nogil=True)
def _find_frame(table, hashes, a_off, k0, k1, k2, k3, arena, buf, h, s0, s1, d0, d1):
    """Probe ``table`` for the frame (``buf[s0:s1]``, ``buf[d0:d1]``) among frames whose symbol
    and dso bytes are kept one after the other in ``arena`` (`_to_arena`) from ``a_off``; a
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
                and _same_in_arena(arena, a_off[g], buf, s0, sl) \
                and _same_in_arena(arena, a_off[g] + sl, buf, d0, d1 - d0):
            return slot, g, probes
        probes += 1
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True, inline="always")
def _intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used,
                  nf, f_table):
    """The id of frame (symbol ``buf[s0:s1]``, dso ``buf[d0:d1]``), added (first seen on line
    ``lineno``) when new.  Returns (id, probes, then the frame table's arrays, arena, its bytes
    used, count and hash table: grown ones are new arrays)."""
    h = _mix64(span_hash(buf, s0, s1, basis) ^ (span_hash(buf, d0, d1, basis) * _K2))
    slot, fid, pr = _find_frame(f_table, f_hash, f_aoff, f_s0, f_s1, f_d0, f_d1, arena, buf, h, s0, s1, d0, d1)
    if fid < 0:
        if nf == f_s0.shape[0]:
            f_s0 = _grow_i64(f_s0, nf + 1)
            f_s1 = _grow_i64(f_s1, nf + 1)
            f_d0 = _grow_i64(f_d0, nf + 1)
            f_d1 = _grow_i64(f_d1, nf + 1)
            f_line = _grow_i64(f_line, nf + 1)
            f_hash = _grow_u64(f_hash, nf + 1)
            f_aoff = _grow_i64(f_aoff, nf + 1)
        arena = _to_arena(arena, a_used, buf, s0, s1, d0, d1)
        f_aoff[nf] = a_used
        a_used += (s1 - s0) + (d1 - d0)
        f_s0[nf] = s0
        f_s1[nf] = s1
        f_d0[nf] = d0
        f_d1[nf] = d1
        f_line[nf] = lineno
        f_hash[nf] = h
        f_table[slot] = nf
        fid = nf
        nf += 1
        if 2 * nf > f_table.shape[0]:
            f_table = _rehash(f_hash, nf)
    return fid, pr, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used, nf, f_table


@njit(cache=True, nogil=True, inline="always")
def _stack_leaf(chain, nc, top, cur_thread, basis, prev_ids, prev_nodes, prev_n, prev_thread, n_parent, n_frame,
                n_thread, n_hash, nn, n_table):
    """The trie node of the stack ``chain[top:nc]`` (leaf first) of thread ``cur_thread``, its
    nodes added where new; the root side it shares with the previous stack of the same thread
    (``prev_*``: its frames and nodes, root first) is not looked up again.  Returns (leaf node,
    lookups, probes, prev_ids, prev_nodes, then the trie's arrays, count and hash table)."""
    reuse = 0
    if cur_thread == prev_thread:
        while reuse < nc - top and reuse < prev_n and chain[nc - 1 - reuse] == prev_ids[reuse]:
            reuse += 1
    if nc - top > prev_ids.shape[0]:
        prev_ids = _grow_i64(prev_ids, nc - top)
        prev_nodes = _grow_i64(prev_nodes, nc - top)
    parent = prev_nodes[reuse - 1] if reuse > 0 else np.int64(-1)
    lookups = 0
    probes = 0
    for a in range(nc - 1 - reuse, top - 1, -1):
        fid = chain[a]
        lookups += 1
        nh = _mix64((np.uint64(parent + 2) * _K1) ^ (np.uint64(fid) + basis) ^ (np.uint64(cur_thread) * _K2))
        mask = np.uint64(n_table.shape[0] - 1)
        slot = nh & mask
        node = np.int64(-1)
        while True:
            g = n_table[slot]
            if g < 0:
                break
            if n_parent[g] == parent and n_frame[g] == fid and n_thread[g] == cur_thread:
                node = g
                break
            probes += 1
            slot = (slot + np.uint64(1)) & mask
        if node < 0:
            if nn == n_parent.shape[0]:
                n_parent = _grow_i64(n_parent, nn + 1)
                n_frame = _grow_i64(n_frame, nn + 1)
                n_thread = _grow_i64(n_thread, nn + 1)
                n_hash = _grow_u64(n_hash, nn + 1)
            n_parent[nn] = parent
            n_frame[nn] = fid
            n_thread[nn] = cur_thread
            n_hash[nn] = nh
            n_table[slot] = nn
            node = nn
            nn += 1
            if 2 * nn > n_table.shape[0]:
                n_table = _rehash(n_hash, nn)
        parent = node
        prev_ids[nc - 1 - a] = fid
        prev_nodes[nc - 1 - a] = node
    return parent, lookups, probes, prev_ids, prev_nodes, n_parent, n_frame, n_thread, n_hash, nn, n_table


@njit(cache=True, nogil=True, inline="always")
def _event_id(buf, ev0, ev1, e_0, e_1, e_cnt, ne):
    """The id of event name ``buf[ev0:ev1]`` (-1 past 256 names), counted.  Returns (id, the
    names' arrays and count)."""
    eid = np.int64(-1)
    for g in range(ne):
        if e_1[g] - e_0[g] == ev1 - ev0 and _same_bytes(buf, e_0[g], ev0, ev1 - ev0):
            eid = g
            break
    if eid < 0:
        if ne == e_0.shape[0]:
            e_0 = _grow_i64(e_0, ne + 1)
            e_1 = _grow_i64(e_1, ne + 1)
            c2 = np.zeros(2 * ne, np.int64)
            c2[:ne] = e_cnt
            e_cnt = c2
        if ne < 256:
            e_0[ne] = ev0
            e_1[ne] = ev1
            e_cnt[ne] = 0
            eid = ne
            ne += 1
    if eid >= 0:
        e_cnt[eid] += 1
    return eid, e_0, e_1, e_cnt, ne


@njit(cache=True, nogil=True, inline="always")
def _is_wanted(buf, ev0, ev1, want):
    """Whether the event name ``buf[ev0:ev1]`` is ``want`` (empty: any)."""
    if want.shape[0] == 0:
        return True
    if want.shape[0] != ev1 - ev0:
        return False
    for x in range(want.shape[0]):
        if want[x] != buf[ev0 + x]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _thread_id(buf, p, comm_end, pid, tid, basis, t_c0, t_c1, t_pid, t_tid, t_hash, nt, t_table):
    """The id of thread (comm ``buf[p:comm_end]``, pid, tid), added when new.  Returns (id,
    probes, then the threads' arrays, count and hash table)."""
    th = _mix64(span_hash(buf, p, comm_end, basis) ^ (np.uint64(pid + 1) * _K1) ^ (np.uint64(tid + 1) * _K2))
    mask = np.uint64(t_table.shape[0] - 1)
    slot = th & mask
    cur_thread = np.int64(-1)
    probes = 0
    while True:
        g = t_table[slot]
        if g < 0:
            break
        if t_hash[g] == th and t_pid[g] == pid and t_tid[g] == tid and t_c1[g] - t_c0[g] == comm_end - p \
                and _same_bytes(buf, t_c0[g], p, comm_end - p):
            cur_thread = g
            break
        probes += 1
        slot = (slot + np.uint64(1)) & mask
    if cur_thread < 0:
        if nt == t_c0.shape[0]:
            t_c0 = _grow_i64(t_c0, nt + 1)
            t_c1 = _grow_i64(t_c1, nt + 1)
            t_pid = _grow_i64(t_pid, nt + 1)
            t_tid = _grow_i64(t_tid, nt + 1)
            t_hash = _grow_u64(t_hash, nt + 1)
        t_c0[nt] = p
        t_c1[nt] = comm_end
        t_pid[nt] = pid
        t_tid[nt] = tid
        t_hash[nt] = th
        t_table[slot] = nt
        cur_thread = nt
        nt += 1
        if 2 * nt > t_table.shape[0]:
            t_table = _rehash(t_hash, nt)
    return cur_thread, probes, t_c0, t_c1, t_pid, t_tid, t_hash, nt, t_table


@njit(cache=True, nogil=True, inline="always")
def _note_line(counts, k, lineno):
    """Count a line in ``counts[k]``, its first line number in ``counts[k + 1]``."""
    counts[k] += 1
    if counts[k + 1] < 0:
        counts[k + 1] = lineno


@njit(cache=True, nogil=True)
def perf_scan(buf, lo, hi, seed, max_depth, want):
    """Read ``perf script`` text in ``buf[lo:hi]`` (the format of speedscope's
    ``linux-tools-perf.ts`` and FlameGraph's ``stackcollapse-perf.pl``): events separated by
    blank lines, each an event line (`perf_header`) and its call chain, one frame line
    (`perf_frame`) each, leaf first; ``#`` lines are comments.  An event line followed by no
    frame line but carrying ``addr sym (dso)`` after its event name (perf record without
    ``-g``) is a one-frame stack.

    Only the events named ``want`` (bytes; empty: the first event name met) are kept, as
    speedscope keeps the first event type; the others are counted per name.  Events without
    a time (speedscope skips them too) are counted as skipped.

    Returns ``(status, threads, frames, events, nodes, samples, counts)``:
    threads ``(comm_off, comm_len, pid, tid)`` interned by (comm, pid, tid) in order of first
    appearance; frames ``(sym_off, sym_len, dso_off, dso_len, line)`` interned by (symbol,
    dso); event names ``(off, len, count)``; the trie of each thread's stacks ``(parent,
    frame, thread)`` (roots: parent -1); the kept samples ``(thread, leaf node)`` (leaf -1:
    an empty call chain); counts [lines, events, events without time, first such line,
    lines not understood, first such line, stacks cut at ``max_depth``, first such line,
    probes, the chosen event's id].

    The tables are interned by inlined stages: frames (`_intern_frame`), a stack's trie path
    (`_stack_leaf`), event names (`_event_id`), threads (`_thread_id`).
    """
    basis = _FNV_BASIS ^ np.uint64(seed)
    # threads
    t_c0 = np.empty(64, np.int64)
    t_c1 = np.empty(64, np.int64)
    t_pid = np.empty(64, np.int64)
    t_tid = np.empty(64, np.int64)
    t_hash = np.empty(64, np.uint64)
    nt = 0
    t_table = np.full(256, -1, np.int64)
    # event names
    e_0 = np.empty(16, np.int64)
    e_1 = np.empty(16, np.int64)
    e_cnt = np.zeros(16, np.int64)
    ne = 0
    chosen = np.int64(-1)
    # frames
    f_s0 = np.empty(1024, np.int64)
    f_s1 = np.empty(1024, np.int64)
    f_d0 = np.empty(1024, np.int64)
    f_d1 = np.empty(1024, np.int64)
    f_line = np.empty(1024, np.int64)
    f_hash = np.empty(1024, np.uint64)
    f_aoff = np.empty(1024, np.int64)
    arena = np.zeros(1 << 16, np.uint8)
    a_used = 0
    nf = 0
    f_table = np.full(4096, -1, np.int64)
    # nodes
    n_parent = np.empty(1024, np.int64)
    n_frame = np.empty(1024, np.int64)
    n_thread = np.empty(1024, np.int64)
    n_hash = np.empty(1024, np.uint64)
    nn = 0
    n_table = np.full(4096, -1, np.int64)
    # samples
    s_thread = np.empty(1024, np.int64)
    s_node = np.empty(1024, np.int64)
    ns = 0
    # the current event's frames (leaf first); the previous kept event's, root first, and nodes
    chain = np.empty(256, np.int64)
    nc = 0
    prev_ids = np.empty(256, np.int64)
    prev_nodes = np.empty(256, np.int64)
    prev_n = 0
    prev_thread = np.int64(-2)
    counts = np.zeros(10, np.int64)
    counts[3] = -1
    counts[5] = -1
    counts[7] = -1
    probes = 0
    lookups = 0
    in_event = False
    keep = False
    cur_thread = np.int64(-1)
    rest0 = np.int64(-1)
    rest1 = np.int64(-1)
    lineno = 0
    pos = lo
    while True:
        at_end = pos >= hi
        if not at_end:
            lineno += 1
            e = _line_end(buf, pos, hi)
            p = pos
            pos = e + 1
            c = buf[p] if p < e else np.uint8(10)
            if c == 35:  # '#': a comment
                continue
            blank = True
            for x in range(p, e):
                if not _is_ws(buf[x]):
                    blank = False
                    break
            frame_line = (not blank) and _is_ws(c)
            if frame_line:
                if not in_event:
                    _note_line(counts, 4, lineno)
                    continue
                if not keep:
                    continue
                s0, s1, d0, d1 = perf_frame(buf, p, e)
                if s0 < 0:
                    _note_line(counts, 4, lineno)
                    continue
        else:
            blank = True
            frame_line = False
            p = hi
            e = hi
        if frame_line:
            lookups += 1
            fid, pr, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used, nf, f_table = _intern_frame(
                buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used,
                nf, f_table)
            probes += pr
            if nc == chain.shape[0]:
                chain = _grow_i64(chain, nc + 1)
            chain[nc] = fid
            nc += 1
            continue
        # a blank line, an event line or the end: the event before ends
        if in_event and keep:
            if nc == 0 and rest0 >= 0:  # no call chain: the frame on the event line
                s0, s1, d0, d1 = perf_frame(buf, rest0, rest1)
                if s0 >= 0:
                    fid, pr, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, a_used, nf, f_table = \
                        _intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line, f_hash,
                                      f_aoff, arena, a_used, nf, f_table)
                    probes += pr
                    chain[0] = fid
                    nc = 1
            if nc > max_depth:
                _note_line(counts, 6, lineno)
            top = max(0, nc - max_depth)
            leaf, lk, pr, prev_ids, prev_nodes, n_parent, n_frame, n_thread, n_hash, nn, n_table = _stack_leaf(
                chain, nc, top, cur_thread, basis, prev_ids, prev_nodes, prev_n, prev_thread, n_parent, n_frame,
                n_thread, n_hash, nn, n_table)
            lookups += lk
            probes += pr
            prev_thread = cur_thread
            prev_n = nc - top
            if ns == s_thread.shape[0]:
                s_thread = _grow_i64(s_thread, ns + 1)
                s_node = _grow_i64(s_node, ns + 1)
            s_thread[ns] = cur_thread
            s_node[ns] = leaf
            ns += 1
        in_event = False
        keep = False
        nc = 0
        rest0 = -1
        if probes > 8 * (lookups + nn + nf) + (1 << 20):
            counts[8] = probes
            return (FLOODED, (t_c0[:0], t_c1[:0], t_pid[:0], t_tid[:0]),
                    (f_s0[:0], f_s1[:0], f_d0[:0], f_d1[:0], f_line[:0]), (e_0[:0], e_1[:0], e_cnt[:0]),
                    (n_parent[:0], n_frame[:0], n_thread[:0]), (s_thread[:0], s_node[:0]), counts)
        if at_end:
            break
        if blank:
            continue
        # an event line
        counts[1] += 1
        comm_end, pid, tid, has_time, ev0, ev1, r0 = perf_header(buf, p, e)
        in_event = True
        if not has_time:
            _note_line(counts, 2, lineno)
            continue
        eid, e_0, e_1, e_cnt, ne = _event_id(buf, ev0, ev1, e_0, e_1, e_cnt, ne)
        if chosen < 0 and _is_wanted(buf, ev0, ev1, want):
            chosen = eid
        if eid != chosen or eid < 0:
            continue
        keep = True
        rest0 = r0 if r0 < e else -1
        rest1 = e
        cur_thread, pr, t_c0, t_c1, t_pid, t_tid, t_hash, nt, t_table = _thread_id(
            buf, p, comm_end, pid, tid, basis, t_c0, t_c1, t_pid, t_tid, t_hash, nt, t_table)
        probes += pr
    counts[0] = lineno
    counts[8] = probes
    counts[9] = chosen
    return (OK, (t_c0[:nt].copy(), t_c1[:nt] - t_c0[:nt], t_pid[:nt].copy(), t_tid[:nt].copy()),
            (f_s0[:nf].copy(), f_s1[:nf] - f_s0[:nf], f_d0[:nf].copy(), f_d1[:nf] - f_d0[:nf], f_line[:nf].copy()),
            (e_0[:ne].copy(), e_1[:ne] - e_0[:ne], e_cnt[:ne].copy()),
            (n_parent[:nn].copy(), n_frame[:nn].copy(), n_thread[:nn].copy()),
            (s_thread[:ns].copy(), s_node[:ns].copy()), counts)
