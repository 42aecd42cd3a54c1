"""The ``perf script`` scanner in numba (`tracevis3d.io.perf_script`): event lines (comm,
pid/tid, cpu, time, period, event) and their indented frames (address, symbol+offset, dso) read
once over the bytes; threads, frames and frame paths interned as `textscan` interns collapsed
stacks (its hashing, arena and trie are shared), samples as (thread, leaf node) per event.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .perf_lines import (parse_address, block, intern_frame, is_hex, is_inlined, is_ws, line_end,  # noqa: F401
                         perf_frame, perf_header)
from .inline_bytes import hash_bytes
from .textscan import (FLOODED, OK, FNV_BASIS, K1, K2, common_prefix, grow_i64, grow_u64, grow_u8, mix64, new_table,  # noqa: F401
                       regrow_rows, same_as_arena, table_of, table_size_for)


@njit(cache=True, nogil=True, _nrt=False)
def _trie_step(parent, fid, cur_thread, basis, n_parent, n_frame, n_thread, n_hash, nn, n_table):
    """The trie node (``parent``, frame ``fid``) of thread ``cur_thread``, added when new (the
    step of `_stack_leaf`'s walk): its hash mix64((parent + 2) K1 ^ (fid + basis) ^ thread K2),
    probed linearly.  The arrays and table have room (`_perf_run` checks before each event).
    Returns (node, probes, the nodes' count)."""
    nh = mix64((np.uint64(parent + 2) * K1) ^ (np.uint64(fid) + basis) ^ (np.uint64(cur_thread) * K2))
    mask = np.uint64(n_table.shape[0] - 1)
    slot = nh & mask
    probes = 0
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
        n_parent[nn] = parent
        n_frame[nn] = fid
        n_thread[nn] = cur_thread
        n_hash[nn] = nh
        n_table[slot] = nn
        node = nn
        nn += 1
    return node, probes, nn


@njit(cache=True, nogil=True, _nrt=False)
def _stack_leaf(chain, nc, top, cur_thread, basis, prev_ids, prev_nodes, prev_n, prev_thread, n_parent, n_frame,
                n_thread, n_hash, nn, n_table):
    """The trie node of the stack ``chain[top:nc]`` (leaf first) of thread ``cur_thread``, its
    nodes added where new; the root side it shares with the previous stack of the same thread
    (``prev_*``: its frames and nodes, root first) is not looked up again.  Returns (leaf node,
    lookups, probes, the nodes' count); ``prev_*`` then hold this stack's."""
    reuse = 0
    if cur_thread == prev_thread:
        while reuse < nc - top and reuse < prev_n and chain[nc - 1 - reuse] == prev_ids[reuse]:
            reuse += 1
    parent = prev_nodes[reuse - 1] if reuse > 0 else np.int64(-1)
    lookups = 0
    probes = 0
    for a in range(nc - 1 - reuse, top - 1, -1):
        fid = chain[a]
        lookups += 1
        node, pr, nn = _trie_step(parent, fid, cur_thread, basis, n_parent, n_frame, n_thread, n_hash, nn, n_table)
        probes += pr
        parent = node
        prev_ids[nc - 1 - a] = fid
        prev_nodes[nc - 1 - a] = node
    return parent, lookups, probes, nn


@njit(cache=True, nogil=True, _nrt=False)
def _event_id(buf, ev0, ev1, e_0, e_1, e_cnt, ne):
    """The id of event name ``buf[ev0:ev1]`` among the ``ne`` names met (the arrays hold
    `_MAX_EVENT_NAMES`; -1 past them), counted.  Returns (id, the names' count)."""
    eid = np.int64(-1)
    for g in range(ne):
        if e_1[g] - e_0[g] == ev1 - ev0 and same_as_arena(buf, e_0[g], buf, ev0, ev1 - ev0):
            eid = g
            break
    if eid < 0 and ne < e_0.shape[0]:
        e_0[ne] = ev0
        e_1[ne] = ev1
        e_cnt[ne] = 0
        eid = ne
        ne += 1
    if eid >= 0:
        e_cnt[eid] += 1
    return eid, ne


@njit(cache=True, nogil=True, _nrt=False)
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


@njit(cache=True, nogil=True, _nrt=False)
def _thread_id(buf, p, comm_end, pid, tid, basis, t_c0, t_c1, t_pid, t_tid, t_hash, nt, t_table):
    """The id of thread (comm ``buf[p:comm_end]``, pid, tid), added when new (the arrays and
    table have room: `_perf_run`).  Returns (id, probes, the threads' count)."""
    th = mix64(hash_bytes(buf, p, comm_end, basis) ^ (np.uint64(pid + 1) * K1) ^ (np.uint64(tid + 1) * K2))
    mask = np.uint64(t_table.shape[0] - 1)
    slot = th & mask
    cur_thread = np.int64(-1)
    probes = 0
    while True:
        g = t_table[slot]
        if g < 0:
            break
        if t_hash[g] == th and t_pid[g] == pid and t_tid[g] == tid and t_c1[g] - t_c0[g] == comm_end - p \
                and same_as_arena(buf, t_c0[g], buf, p, comm_end - p):
            cur_thread = g
            break
        probes += 1
        slot = (slot + np.uint64(1)) & mask
    if cur_thread < 0:
        t_c0[nt] = p
        t_c1[nt] = comm_end
        t_pid[nt] = pid
        t_tid[nt] = tid
        t_hash[nt] = th
        t_table[slot] = nt
        cur_thread = nt
        nt += 1
    return cur_thread, probes, nt


@njit(cache=True, nogil=True, inline="always")
def _note_line(counts, k, lineno):
    """Count a line in ``counts[k]``, its first line number in ``counts[k + 1]``."""
    counts[k] += 1
    if counts[k + 1] < 0:
        counts[k + 1] = lineno


@njit(cache=True, nogil=True, _nrt=False)
def _suffix_probe(buf, a, b, thread, lines_hash, rows):
    """The slot of the callers' lines ``buf[a:b]`` (their hash from `block`) of thread
    ``thread`` in ``rows`` (rows: hash, offset of the first such lines (-1: an empty slot),
    length, thread, trie node, frames | bad lines << 32), and whether it is there (each hit
    compared byte by byte).  Returns (slot, found, hash)."""
    h = mix64(lines_hash ^ (np.uint64(thread + 1) * K2))
    mask = np.uint64(rows.shape[0] - 1)
    slot = h & mask
    found = False
    while rows[slot, 1] >= 0:
        if rows[slot, 0] == np.int64(h) and rows[slot, 2] == b - a and rows[slot, 3] == thread \
                and common_prefix(buf, rows[slot, 1], a, b - a) == b - a:
            found = True
            break
        slot = (slot + np.uint64(1)) & mask
    return slot, found, h


@njit(cache=True, nogil=True, _nrt=False)
def _pending_frames(buf, a0, a1, d0, d1, pend, npend, chain, basis, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff,
                    arena, a_used, nf, f_table):
    """Intern the inlined frames waiting in ``pend`` (rows: symbol start, end, address start, end,
    line, place in ``chain``): each takes the dso ``buf[d0:d1]`` of the frame it was inlined into
    when that frame's address (``buf[a0:a1]``; a0 < 0: none, the chain ended) is its own, else
    none.  Returns (probes, the arena's bytes used, the frames' count)."""
    probes = 0
    for q in range(npend):
        same = a0 >= 0 and pend[q, 3] - pend[q, 2] == a1 - a0 and same_as_arena(buf, pend[q, 2], buf, a0, a1 - a0)
        e0 = d0 if same else pend[q, 1]
        e1 = d1 if same else pend[q, 1]
        fid, pr, a_used, nf = intern_frame(buf, pend[q, 0], pend[q, 1], e0, e1, pend[q, 4], basis, f_s0, f_s1, f_d0,
                                           f_d1, f_line, f_hash, f_aoff, arena, a_used, nf, f_table)
        probes += pr
        chain[pend[q, 5]] = fid
    return probes, a_used, nf


@njit(cache=True, nogil=True, _nrt=False)
def _frame_to_chain(buf, p, e, s0, s1, d0, d1, lineno, basis, chain, nc, pend, npend, f_s0, f_s1, f_d0, f_d1, f_line,
                    f_hash, f_aoff, arena, a_used, nf, f_table):
    """The frame of line ``buf[p:e]`` (symbol ``buf[s0:s1]``, dso ``buf[d0:d1]``) appended to the
    event's ``chain``: interned (`intern_frame`), or, marked ``(inlined)``, kept in ``pend``
    until the frame it was inlined into comes (`_pending_frames`).  Returns (probes, the
    chain's length, pend's, the arena's bytes used, the frames' count)."""
    probes = 0
    if is_inlined(buf, d0, d1):  # its dso: the next frame's, at the same address
        a0, a1 = parse_address(buf, p, e)
        pend[npend, 0] = s0
        pend[npend, 1] = s1
        pend[npend, 2] = a0
        pend[npend, 3] = a1
        pend[npend, 4] = lineno
        pend[npend, 5] = nc
        npend += 1
    else:
        if npend:
            a0, a1 = parse_address(buf, p, e)
            pr, a_used, nf = _pending_frames(buf, a0, a1, d0, d1, pend, npend, chain, basis, f_s0, f_s1, f_d0, f_d1,
                                             f_line, f_hash, f_aoff, arena, a_used, nf, f_table)
            probes += pr
            npend = 0
        fid, pr, a_used, nf = intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line,
                                           f_hash, f_aoff, arena, a_used, nf, f_table)
        probes += pr
        chain[nc] = fid
    return probes, nc + 1, npend, a_used, nf


@njit(cache=True, nogil=True, _nrt=False)
def _event_extent(buf, q, hi, n, n_inlined, basis):
    """An event's frame lines interrupted by a comment line at ``q`` (`block` stopped there):
    ``n`` (those before it) plus those after, past every comment, the same of those that end
    in ``(inlined)`` (``n_inlined`` before it), and where its lines end."""
    while True:
        q = line_end(buf, q, hi) + 1  # past the comment
        m, _, q, ends, _, m_inlined = block(buf, q, hi, basis)
        n += m
        n_inlined += m_inlined
        if ends:
            return n, n_inlined, min(q, hi)


#: `_perf_run`'s state (`perf_scan`): next byte, line number, threads, event names, frames, the
#: arena's bytes used, trie nodes, samples, callers' rows, the previous stack (its length, its
#: thread), the chosen event, probes, lookups; what the event that stopped it needs (frames, bytes,
#: frames marked inlined); its length
(_P_POS, _P_LINENO, _P_NT, _P_NE, _P_NF, _P_AUSED, _P_NN, _P_NS, _P_NX, _P_PREV_N, _P_PREV_THREAD, _P_CHOSEN,
 _P_PROBES, _P_LOOKUPS, _P_NEED_FRAMES, _P_NEED_BYTES, _P_NEED_INLINED, _P_LEN) = range(18)
#: why `_perf_run` stopped: every line read, an event needs room, the probes past their budget
_P_DONE, _P_ROOM, _P_FLOOD = 0, 1, 2
#: the event names told apart (the rest counted as none)
_MAX_EVENT_NAMES = 256


@njit(cache=True, nogil=True)
def _perf_run(buf, hi, basis, max_depth, want, t_c0, t_c1, t_pid, t_tid, t_hash, t_table, e_0, e_1, e_cnt, f_s0,
              f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, f_table, n_parent, n_frame, n_thread, n_hash, n_table,
              s_thread, s_node, chain, prev_ids, prev_nodes, pend, x_rows, counts, st):
    """`perf_scan`'s lines from ``st[_P_POS]`` on (its docstring), its state in ``st`` (`_P_POS`
    ...), until every line is read or an event needs more room than an array or table has: at
    each kept event line, before anything of the event is kept, its frame lines are counted
    (`block`, `_event_extent`) and every array it may fill is checked for them; when one is
    short the event is left unread (its line number and event count given back), its needs in
    ``st``, for the caller to grow.  No array is rebound here, so numba counts no references
    per line (a loop that may rebind an array raises and drops every such array's count on
    every pass).  Returns why it stopped (`_P_DONE`, `_P_ROOM`, `_P_FLOOD`)."""
    pos, lineno = st[_P_POS], st[_P_LINENO]
    nt, ne, nf, a_used, nn, ns, nx = (st[_P_NT], st[_P_NE], st[_P_NF], st[_P_AUSED], st[_P_NN], st[_P_NS],
                                      st[_P_NX])
    prev_n, prev_thread, chosen = st[_P_PREV_N], st[_P_PREV_THREAD], st[_P_CHOSEN]
    probes, lookups = st[_P_PROBES], st[_P_LOOKUPS]
    why = _P_DONE
    nc = npend = 0
    x_slot = np.uint64(0)  # this event's callers: where they go once read (x_a < 0: not kept)
    x_hash = np.uint64(0)
    x_a = x_b = np.int64(-1)
    ev_lines = ev_bad = 0  # this event's frame lines read, the bad ones, whether the first is a frame
    ev_first = False
    in_event = keep = False
    cur_thread = np.int64(-1)
    rest0 = rest1 = np.int64(-1)
    s0 = s1 = d0 = d1 = np.int64(-1)
    while True:
        at_end = pos >= hi
        frame_line = False
        blank = True
        p = e = hi
        if not at_end:
            lineno += 1
            e = line_end(buf, pos, hi)
            p = pos
            pos = e + 1
            c = buf[p] if p < e else np.uint8(10)
            if c == 35:  # '#': a comment
                continue
            for x in range(p, e):
                if not is_ws(buf[x]):
                    blank = False
                    break
            frame_line = (not blank) and is_ws(c)
            if frame_line:
                if not in_event:
                    _note_line(counts, 4, lineno)
                    continue
                if not keep:
                    continue
                ev_lines += 1
                s0, s1, d0, d1 = perf_frame(buf, p, e)
                if s0 < 0:
                    _note_line(counts, 4, lineno)
                    ev_bad += 1
                    continue
                ev_first = ev_first or ev_lines == 1
        if frame_line:
            lookups += 1
            pr, nc, npend, a_used, nf = _frame_to_chain(buf, p, e, s0, s1, d0, d1, lineno, basis, chain, nc, pend,
                                                        npend, f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena,
                                                        a_used, nf, f_table)
            probes += pr
            continue
        # a blank line, an event line or the end: the event before ends
        if in_event and keep:
            if npend:
                pr, a_used, nf = _pending_frames(buf, -1, -1, 0, 0, pend, npend, chain, basis, f_s0, f_s1, f_d0,
                                                 f_d1, f_line, f_hash, f_aoff, arena, a_used, nf, f_table)
                probes += pr
                npend = 0
            from_lines = nc
            if nc == 0 and rest0 >= 0:  # no call chain: the frame on the event line
                s0, s1, d0, d1 = perf_frame(buf, rest0, rest1)
                if s0 >= 0:
                    fid, pr, a_used, nf = intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1,
                                                       f_line, f_hash, f_aoff, arena, a_used, nf, f_table)
                    probes += pr
                    chain[0] = fid
                    nc = 1
            if nc > max_depth:
                _note_line(counts, 6, lineno)
            top = max(0, nc - max_depth)
            leaf, lk, pr, nn = _stack_leaf(chain, nc, top, cur_thread, basis, prev_ids, prev_nodes, prev_n,
                                           prev_thread, n_parent, n_frame, n_thread, n_hash, nn, n_table)
            lookups += lk
            probes += pr
            prev_thread = cur_thread
            prev_n = nc - top
            first = 1 if ev_first else 0
            if x_a >= 0 and from_lines - first > 0:  # its callers' node, for the next event with the same callers
                x_rows[x_slot, 0] = np.int64(x_hash)
                x_rows[x_slot, 1] = x_a
                x_rows[x_slot, 2] = x_b - x_a
                x_rows[x_slot, 3] = cur_thread
                x_rows[x_slot, 4] = n_parent[leaf] if first else leaf
                x_rows[x_slot, 5] = (from_lines - first) | ((ev_bad - 1 + first) << 32)
                nx += 1
            s_thread[ns] = cur_thread
            s_node[ns] = leaf
            ns += 1
        in_event = keep = False
        nc = 0
        rest0 = -1
        if probes > 8 * (lookups + nn + nf) + (1 << 20):
            why = _P_FLOOD
            break
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
        eid, ne = _event_id(buf, ev0, ev1, e_0, e_1, e_cnt, ne)
        if chosen < 0 and _is_wanted(buf, ev0, ev1, want):
            chosen = eid
        if eid != chosen or eid < 0:
            continue
        # a kept event: its frame lines (a comment among them: `_event_extent`), then room for all it may add
        n_lines, first_end, after, ends, lines_hash, n_inlined = block(buf, pos, hi, basis)
        n_frames, ev_end = n_lines, min(after, hi)
        if not ends:
            n_frames, n_inlined, ev_end = _event_extent(buf, after, hi, n_lines, n_inlined, basis)
        need_f = n_frames + 1  # (and the frame on its event line)
        need_bytes = (ev_end - pos) + (e - p) + 8
        if (nt + 1 > t_c0.shape[0] or 2 * (nt + 1) > t_table.shape[0] or nf + need_f > f_s0.shape[0]
                or 2 * (nf + need_f) > f_table.shape[0] or a_used + need_bytes > arena.shape[0]
                or nn + need_f + 1 > n_parent.shape[0] or 2 * (nn + need_f + 1) > n_table.shape[0]
                or need_f > chain.shape[0] or need_f > prev_ids.shape[0] or n_inlined > pend.shape[0]
                or ns + 1 > s_thread.shape[0] or 2 * (nx + 1) > x_rows.shape[0]):
            counts[1] -= 1  # (read again once grown)
            e_cnt[eid] -= 1
            st[_P_NEED_FRAMES] = need_f
            st[_P_NEED_BYTES] = need_bytes
            st[_P_NEED_INLINED] = n_inlined
            lineno -= 1
            pos = p
            in_event = False
            why = _P_ROOM
            break
        keep = True
        rest0 = r0 if r0 < e else -1
        rest1 = e
        cur_thread, pr, nt = _thread_id(buf, p, comm_end, pid, tid, basis, t_c0, t_c1, t_pid, t_tid, t_hash, nt,
                                        t_table)
        probes += pr
        ev_lines = ev_bad = 0
        ev_first = False
        x_a = -1
        # its frame lines: callers seen before with this thread take their node (the first line read)
        if not (ends and 2 <= n_lines <= max_depth):
            continue
        s0, s1, d0, d1 = perf_frame(buf, pos, first_end)
        if s0 >= 0 and is_inlined(buf, d0, d1):
            continue
        x_slot, found, x_hash = _suffix_probe(buf, first_end + 1, min(after, hi), cur_thread, lines_hash, x_rows)
        if not found:
            x_a, x_b = first_end + 1, min(after, hi)
            continue
        lineno += 1
        leaf = x_rows[x_slot, 4]
        if s0 < 0:
            _note_line(counts, 4, lineno)
        else:  # its first frame line, one step from its callers' node
            fid, pr, a_used, nf = intern_frame(buf, s0, s1, d0, d1, lineno, basis, f_s0, f_s1, f_d0, f_d1, f_line,
                                               f_hash, f_aoff, arena, a_used, nf, f_table)
            probes += pr
            leaf, pr, nn = _trie_step(leaf, fid, cur_thread, basis, n_parent, n_frame, n_thread, n_hash, nn, n_table)
            probes += pr
        counts[4] += x_rows[x_slot, 5] >> 32  # (their first bad line was noted at the first such event)
        lineno += n_lines - 1
        pos = after
        prev_thread = -2  # (the walk of the next event starts at its root)
        s_thread[ns] = cur_thread
        s_node[ns] = leaf
        ns += 1
        in_event = keep = False
    st[_P_POS], st[_P_LINENO] = pos, lineno
    st[_P_NT], st[_P_NE], st[_P_NF], st[_P_AUSED], st[_P_NN], st[_P_NS], st[_P_NX] = nt, ne, nf, a_used, nn, ns, nx
    st[_P_PREV_N], st[_P_PREV_THREAD], st[_P_CHOSEN] = prev_n, prev_thread, chosen
    st[_P_PROBES], st[_P_LOOKUPS] = probes, lookups
    return why


@njit(cache=True, nogil=True)
def perf_scan(buf, lo, hi, seed, max_depth, want):
    """Read ``perf script`` text in ``buf[lo:hi]`` (the format of speedscope's
    ``linux-tools-perf.ts`` and FlameGraph's ``stackcollapse-perf.pl``): events separated by
    blank lines, each an event line (`perf_header`) and its call chain, one frame line
    (`perf_frame`) each, leaf first; ``#`` lines are comments.  An event line followed by no
    frame line but carrying ``addr sym (dso)`` after its event name (perf record without
    ``-g``) is a one-frame stack.  A frame marked ``(inlined)`` (``perf script --inline``) is a
    frame of its own in the dso of the frame it was inlined into (the next one of the same
    address; none when there is none): `_pending_frames`.

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

    Inlined stages intern frames (`intern_frame`, `_frame_to_chain`), a stack's trie path
    (`_stack_leaf`), event names (`_event_id`), threads (`_thread_id`).  An event's callers
    (frame lines after the first) whose bytes equal an earlier event's of the same thread
    (`block`, `_suffix_probe`) take that one's trie node: only its first line is read, as the
    samples of one loop differ in their leaf address only.  The lines are read by `_perf_run`,
    which grows nothing; here, between its runs, the arrays and tables are grown (an event that
    needs more room is read again after).
    """
    basis = FNV_BASIS ^ np.uint64(seed)
    t_c0, t_c1, t_pid, t_tid, t_hash, t_table = new_table(64, 256)  # threads
    e_0, e_1, e_cnt, _, _, _ = new_table(_MAX_EVENT_NAMES, 1)  # event names
    e_cnt[:] = 0
    f_s0, f_s1, f_d0, f_d1, f_hash, f_table = new_table(1024, 4096)  # frames
    f_line, f_aoff, s_thread, s_node, _, _ = new_table(1024, 1)  # (and the samples)
    arena = np.zeros(1 << 16, np.uint8)
    n_parent, n_frame, n_thread, _, n_hash, n_table = new_table(1024, 4096)  # nodes
    # the current event's frames (leaf first); the previous kept event's, root first, and nodes
    chain, prev_ids, prev_nodes, _, _, _ = new_table(256, 1)
    pend = np.empty((256, 6), np.int64)  # inlined frames waiting for the frame they were inlined into
    x_rows = np.full((1024, 6), -1, np.int64)  # events' callers (`_suffix_probe`)
    counts = np.zeros(10, np.int64)
    counts[3:8:2] = -1  # (the first lines of what counts[2], [4], [6] count)
    st = np.zeros(_P_LEN, np.int64)
    st[_P_POS] = lo
    st[_P_PREV_THREAD] = -2
    st[_P_CHOSEN] = -1
    while True:
        why = _perf_run(buf, hi, basis, max_depth, want, t_c0, t_c1, t_pid, t_tid, t_hash, t_table, e_0, e_1, e_cnt,
                        f_s0, f_s1, f_d0, f_d1, f_line, f_hash, f_aoff, arena, f_table, n_parent, n_frame, n_thread,
                        n_hash, n_table, s_thread, s_node, chain, prev_ids, prev_nodes, pend, x_rows, counts, st)
        if why == _P_DONE:
            break
        if why == _P_FLOOD:
            counts[8] = st[_P_PROBES]
            return (FLOODED, (t_c0[:0], t_c1[:0], t_pid[:0], t_tid[:0]),
                    (f_s0[:0], f_s1[:0], f_d0[:0], f_d1[:0], f_line[:0]), (e_0[:0], e_1[:0], e_cnt[:0]),
                    (n_parent[:0], n_frame[:0], n_thread[:0]), (s_thread[:0], s_node[:0]), counts)
        # room for the event that stopped the run: every array it may fill, doubled when short
        nt, nf, a_used, nn, ns, nx = st[_P_NT], st[_P_NF], st[_P_AUSED], st[_P_NN], st[_P_NS], st[_P_NX]
        need_f, need_bytes = st[_P_NEED_FRAMES], st[_P_NEED_BYTES]
        if nt + 1 > t_c0.shape[0]:
            t_c0 = grow_i64(t_c0, nt + 1)
            t_c1 = grow_i64(t_c1, nt + 1)
            t_pid = grow_i64(t_pid, nt + 1)
            t_tid = grow_i64(t_tid, nt + 1)
            t_hash = grow_u64(t_hash, nt + 1)
        if 2 * (nt + 1) > t_table.shape[0]:
            t_table = table_of(t_hash, nt, table_size_for(nt + 1, t_table.shape[0]))
        if nf + need_f > f_s0.shape[0]:
            f_s0 = grow_i64(f_s0, nf + need_f)
            f_s1 = grow_i64(f_s1, nf + need_f)
            f_d0 = grow_i64(f_d0, nf + need_f)
            f_d1 = grow_i64(f_d1, nf + need_f)
            f_line = grow_i64(f_line, nf + need_f)
            f_hash = grow_u64(f_hash, nf + need_f)
            f_aoff = grow_i64(f_aoff, nf + need_f)
        if 2 * (nf + need_f) > f_table.shape[0]:
            f_table = table_of(f_hash, nf, table_size_for(nf + need_f, f_table.shape[0]))
        if a_used + need_bytes > arena.shape[0]:
            arena = grow_u8(arena, a_used + need_bytes, a_used)
        if nn + need_f + 1 > n_parent.shape[0]:
            n_parent = grow_i64(n_parent, nn + need_f + 1)
            n_frame = grow_i64(n_frame, nn + need_f + 1)
            n_thread = grow_i64(n_thread, nn + need_f + 1)
            n_hash = grow_u64(n_hash, nn + need_f + 1)
        if 2 * (nn + need_f + 1) > n_table.shape[0]:
            n_table = table_of(n_hash, nn, table_size_for(nn + need_f + 1, n_table.shape[0]))
        if need_f > chain.shape[0]:
            chain = grow_i64(chain, need_f)
        if need_f > prev_ids.shape[0]:
            prev_ids = grow_i64(prev_ids, need_f)
            prev_nodes = grow_i64(prev_nodes, need_f)
        if st[_P_NEED_INLINED] > pend.shape[0]:  # (empty between events)
            pend = np.empty((max(2 * pend.shape[0], st[_P_NEED_INLINED]), 6), np.int64)
        if ns + 1 > s_thread.shape[0]:
            s_thread = grow_i64(s_thread, ns + 1)
            s_node = grow_i64(s_node, ns + 1)
        while 2 * (nx + 1) > x_rows.shape[0]:
            x_rows = regrow_rows(x_rows)
    nt, ne, nf, nn, ns = st[_P_NT], st[_P_NE], st[_P_NF], st[_P_NN], st[_P_NS]
    counts[0] = st[_P_LINENO]
    counts[8] = st[_P_PROBES]
    counts[9] = st[_P_CHOSEN]
    return (OK, (t_c0[:nt].copy(), t_c1[:nt] - t_c0[:nt], t_pid[:nt].copy(), t_tid[:nt].copy()),
            (f_s0[:nf].copy(), f_s1[:nf] - f_s0[:nf], f_d0[:nf].copy(), f_d1[:nf] - f_d0[:nf], f_line[:nf].copy()),
            (e_0[:ne].copy(), e_1[:ne] - e_0[:ne], e_cnt[:ne].copy()),
            (n_parent[:nn].copy(), n_frame[:nn].copy(), n_thread[:nn].copy()),
            (s_thread[:ns].copy(), s_node[:ns].copy()), counts)
