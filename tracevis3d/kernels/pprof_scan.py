"""pprof's ``Profile`` message read in two walks of its bytes (`tracevis3d.io.pprof`): the fields
of the top level except the samples (`pprof_fields.profile_fields`), then every ``Sample`` decoded straight
into the trie of frame paths (`sample_stacks`).

The wire format is protobuf's (https://protobuf.dev/programming-guides/encoding/), checked as
`tracevis3d.kernels.protowire` checks it (the same error codes; on any error the caller reads the
file again the slower way, which names it).  What is fused here: a sample's packed
``location_id`` list is decoded, each id mapped to its location's frames (one location holds
several frames when it records inlined calls), and the frames walked into the trie in the same
loop; the ``value`` list is decoded for the one value shown.  No list of every sample's ids is
ever made.

Two caches keep repeated stacks cheap (profilers that do not aggregate write the same stack many
times; Go aggregates, and its stacks share long root sides):

- a sample whose message bytes equal an earlier sample's takes that one's leaf and value
  without reading its fields (keyed hash of the bytes, every hit compared byte by byte in its
  table row or with a copy kept in an arena: `inline_bytes.to_arena`);
- a frame list equal to an earlier one takes its leaf (`protowire.list_find`: keyed hash, every
  hit compared entry by entry), and a new list is walked only from where it leaves the
  previous walked list's root side.

Node numbering is by first appearance in the samples' order, whatever the caches hit: a cache
hit is always a list whose walk would add no node.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .pprof_fields import sample_fields, sample_frames, skip_checked
from .protowire import OK, list_find, list_hash, read_varint_i as read_varint, trie_find
from .inline_bytes import hash_bytes, to_arena
from .textscan import (FNV_BASIS, WORD_MASK, grow_i64, grow_u64, grow_u8, load_u64, new_table, regrow_rows,
                       same_as_arena, table_of, table_size_for)

__all__ = ["sample_stacks"]


#: the message table's row (`sample_stacks`): 16 int64 (two cache lines): hash, arena offset (-1:
#: an empty slot), length, leaf, value, misses | short << 32, then the first `_INLINE` bytes of the
#: message (a longer one is compared with its copy in the arena)
_ROW = 16
_KEY = 6
_INLINE = 8 * (_ROW - _KEY)


@njit(cache=True, nogil=True, inline="always")
def _word(buf, p, end):
    """The bytes ``buf[p:min(p + 8, end)]`` as a little-endian word (zero past ``end``)."""
    n = end - p
    if n >= 8:
        return load_u64(buf, p)
    if p + 8 <= buf.shape[0]:
        return load_u64(buf, p) & WORD_MASK[n]
    w = np.uint64(0)
    for x in range(n):
        w |= np.uint64(buf[p + x]) << np.uint64(8 * x)
    return w


@njit(cache=True, nogil=True, inline="always")
def _same_key(rows, slot, arena, buf, a, b):
    """Whether the key of row ``slot`` (`sample_stacks`' messages) is ``buf[a:b]`` (its length
    already equal): compared in the row when it is short, else with its copy in ``arena``."""
    if b - a > _INLINE:
        return same_as_arena(arena, rows[slot, 1], buf, a, b - a)
    for k in range(0, b - a, 8):
        if rows[slot, _KEY + k // 8] != np.int64(_word(buf, a + k, b)):
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _walk_list(fl, nf, max_depth, seed, rf, prev_f, prev_node, prev_d, n_parent, n_frame, n_hash, nn, table):
    """The trie leaf of the frame list ``fl[:nf]`` (leaf first; entries -1 left out; its root
    side kept past ``max_depth``), its nodes added where new, the root side it shares with the
    previous walked list (``prev_f``, ``prev_node``: its frames and nodes, root first) not looked
    up again.  Every array and the table have room for ``nf`` more (`_stacks_run` checks before
    the sample).  Returns (leaf, 1 when cut at ``max_depth`` else 0, the list's depth, nn)."""
    d = 0
    for k in range(nf - 1, -1, -1):
        if fl[k] >= 0:
            rf[d] = fl[k]
            d += 1
    deep = 0
    if d > max_depth:
        deep = 1
        d = max_depth
    r = 0
    while r < d and r < prev_d and rf[r] == prev_f[r]:
        r += 1
    parent = prev_node[r - 1] if r > 0 else np.int64(-1)
    for k in range(r, d):
        fr = rf[k]
        h, slot, node = trie_find(table, n_parent, n_frame, parent, fr, seed)
        if node < 0:
            n_parent[nn] = parent
            n_frame[nn] = fr
            n_hash[nn] = h
            table[slot] = nn
            node = nn
            nn += 1
        parent = node
        prev_f[k] = fr
        prev_node[k] = node
    return parent, deep, d, nn


#: `_stacks_run`'s state (`sample_stacks`): next byte, samples, nodes, lists, list arena used,
#: messages, message arena used, the previous list's depth, lists cut, ids of no location,
#: short samples, the first short one, an error's code and offset, and what the sample that
#: stopped it needs (frames, message bytes)
(_S_POS, _S_NS, _S_NN, _S_NL, _S_LUSED, _S_NB, _S_BUSED, _S_PREVD, _S_DEEP, _S_MISS, _S_SHORT, _S_FIRST_SHORT,
 _S_CODE, _S_WHERE, _S_NEED_F, _S_NEED_BYTES) = range(16)
#: why `_stacks_run` stopped: every sample read, a sample needs room, a malformed sample
_S_DONE, _S_ROOM, _S_ERROR = 0, 1, 2


@njit(cache=True, nogil=True, _nrt=False)
def _stacks_run(buf, end, id_table, u_ids, u_loc, loc_ptr, loc_frames, value_index, seed, max_depth, basis,
                n_parent, n_frame, n_hash, table, s_node, s_value, b_arena, b_rows, l_arena, l_start, l_len, l_leaf,
                l_hash, l_table, fl, rf, prev_f, prev_node, st):
    """`sample_stacks`' messages from ``st[_S_POS]`` on (its docstring), its state in ``st``,
    until every sample is read, one is malformed, or one needs more room in an array or table
    (checked before anything of it is kept: the sample is left unread, its needs in ``st``).
    No array is rebound or made here, and it runs without reference counting (``_nrt=False``,
    as `_walk_list` and `pprof_fields.sample_frames`): a loop that may rebind an array raises
    and drops every such array's count on every pass (twice this walk's own time before), and
    each inlined helper (`read_varint`, `_same_key`, `sample_fields` ...) raised and dropped its
    array arguments' counts at every call (28 % of a 10^6-sample load before).  Its copies go
    through `inline_bytes.to_arena`: a slice assignment may allocate.  Returns why it stopped
    (`_S_DONE`, `_S_ROOM`, `_S_ERROR`)."""
    i, ns, nn, nl, l_used, nb, b_used = (st[_S_POS], st[_S_NS], st[_S_NN], st[_S_NL], st[_S_LUSED], st[_S_NB],
                                         st[_S_BUSED])
    prev_d, n_deep, n_miss, n_short, first_short = (st[_S_PREVD], st[_S_DEEP], st[_S_MISS], st[_S_SHORT],
                                                    st[_S_FIRST_SHORT])
    why = _S_DONE
    while i < end:
        i0 = i
        tag, i = read_varint(buf, i, end)
        f = tag >> np.uint64(3)
        w = tag & np.uint64(7)
        if not (f == 2 and w == 2):
            i = skip_checked(buf, i, end, w)
            continue
        lv, i = read_varint(buf, i, end)
        a = i
        b = i + np.int64(lv)
        i = b
        if ns + 1 > s_node.shape[0] or 2 * (nb + 1) > b_rows.shape[0] or b_used + (b - a) + 8 > b_arena.shape[0]:
            st[_S_NEED_F] = 0
            st[_S_NEED_BYTES] = b - a + 8
            why = _S_ROOM
            i = i0
            break
        # 1. the same bytes as an earlier sample's message: its leaf, value and counts
        bh = hash_bytes(buf, a, b, basis)
        bmask = np.uint64(b_rows.shape[0] - 1)
        bslot = bh & bmask
        hit = False
        while True:
            if b_rows[bslot, 1] < 0:
                break
            if b_rows[bslot, 0] == np.int64(bh) and b_rows[bslot, 2] == b - a \
                    and _same_key(b_rows, bslot, b_arena, buf, a, b):
                hit = True
                break
            bslot = (bslot + np.uint64(1)) & bmask
        if hit:
            s_node[ns] = b_rows[bslot, 3]
            s_value[ns] = np.uint64(b_rows[bslot, 4])
            n_miss += b_rows[bslot, 5] & 0xFFFFFFFF
            n_short += b_rows[bslot, 5] >> 32  # (the first such sample was an earlier one)
            ns += 1
            continue
        code, where, n_loc, la, lb, n_val, value = sample_fields(buf, a, b, value_index)
        if code != OK:
            st[_S_CODE] = code
            st[_S_WHERE] = where
            why = _S_ERROR
            break
        # 2. decode: the frames, and the same frames as an earlier list
        nf, miss = sample_frames(buf, a, b, id_table, u_ids, u_loc, loc_ptr, loc_frames, fl)
        if (nf > fl.shape[0] or nf > rf.shape[0] or min(nf, max_depth) > prev_f.shape[0]
                or nn + nf > n_parent.shape[0] or 2 * (nn + nf) > table.shape[0]
                or nl + 1 > l_start.shape[0] or 2 * (nl + 1) > l_table.shape[0] or l_used + nf > l_arena.shape[0]):
            st[_S_NEED_F] = nf
            st[_S_NEED_BYTES] = b - a + 8
            why = _S_ROOM
            i = i0
            break
        short = 1 if n_val <= value_index else 0
        if short:
            n_short += 1
            if first_short < 0:
                first_short = ns
        s_value[ns] = value
        n_miss += miss
        lh = list_hash(fl, 0, nf, seed)
        lslot, g = list_find(l_table, l_hash, l_start, l_len, l_arena, lh, fl, 0, nf)
        leaf = l_leaf[g] if g >= 0 else np.int64(-2)
        if leaf == -2:
            # 3. a new list: walked from where it leaves the previous walked list
            leaf, deep, prev_d, nn = _walk_list(fl, nf, max_depth, seed, rf, prev_f, prev_node, prev_d, n_parent,
                                                n_frame, n_hash, nn, table)
            n_deep += deep
            # remember the frame list
            l_start[nl] = l_used
            l_len[nl] = nf
            l_leaf[nl] = leaf
            l_hash[nl] = lh
            l_used = to_arena(l_arena, l_used, fl, 0, nf)
            l_table[lslot] = nl
            nl += 1
        s_node[ns] = leaf
        ns += 1
        # remember the message (the probe of step 1 stopped at a free slot: bslot)
        to_arena(b_arena, b_used, buf, a, b)
        b_rows[bslot, 0] = np.int64(bh)
        b_rows[bslot, 1] = b_used
        b_rows[bslot, 2] = b - a
        b_rows[bslot, 3] = leaf
        b_rows[bslot, 4] = np.int64(value)
        b_rows[bslot, 5] = miss | (short << 32)
        for k in range(0, min(b - a, _INLINE), 8):
            b_rows[bslot, _KEY + k // 8] = np.int64(_word(buf, a + k, b))
        b_used += b - a
        nb += 1
    st[_S_POS], st[_S_NS], st[_S_NN], st[_S_NL], st[_S_LUSED], st[_S_NB], st[_S_BUSED] = (i, ns, nn, nl, l_used, nb,
                                                                                        b_used)
    st[_S_PREVD], st[_S_DEEP], st[_S_MISS], st[_S_SHORT], st[_S_FIRST_SHORT] = (prev_d, n_deep, n_miss, n_short,
                                                                               first_short)
    return why


@njit(cache=True, nogil=True)
def sample_stacks(buf, id_table, u_ids, u_loc, loc_ptr, loc_frames, value_index, seed, max_depth):
    """Every ``Sample`` (field 2) of the ``Profile`` message ``buf`` (whose top level
    `profile_fields` checked) into the trie of frame paths, in one walk of their bytes.

    A sample's stack is its ``location_id`` list (leaf first) with each location expanded to
    its frames ``loc_frames[loc_ptr[k]:loc_ptr[k+1]]`` (innermost first: a location that holds
    inlined calls is several frames), read from the root: ``id_table``/``u_ids``/``u_loc`` map
    an id to its location (`_location_of`); an id of no location is left out of the stack (and
    counted).  Lists of more than ``max_depth`` frames keep their root side (counted once per
    distinct list).  The trie of the lists' frame paths (`protowire.trie_find`, `_walk_list`): its nodes
    numbered by first appearance, parents first.

    Returns (code, error offset, node_parent, node_frame, sample_node, value, n_deep, n_miss,
    n_short, first_short): the value at ``value_index`` per sample (0 where it has fewer
    values: counted in n_short, the first such sample's index in first_short), the ids of no
    location in n_miss (every occurrence).  On a malformed sample: its error code and offset,
    the arrays empty."""
    end = buf.shape[0]
    basis = FNV_BASIS ^ np.uint64(seed)
    e0 = np.zeros(0, np.int64)
    # the trie
    n_parent, n_frame, _, _, n_hash, table = new_table(1024, 4096)
    # samples
    s_node = np.empty(1024, np.int64)
    s_value = np.empty(1024, np.uint64)
    # byte-equal messages: open addressing, a row a slot (`_ROW`); their bytes copied into the arena,
    # which stays in cache where the file's far bytes do not
    b_arena = np.zeros(1 << 16, np.uint8)
    b_rows = np.full((4096, _ROW), -1, np.int64)
    # frame-equal lists: their frames in an arena, (start, length, leaf)
    l_arena = np.empty(4096, np.int64)
    l_start, l_len, l_leaf, _, l_hash, l_table = new_table(1024, 4096)
    # the current list (leaf first), its frames root first (the -1 entries left out), the
    # previous walked list's root-first frames and nodes
    fl, rf, prev_f, prev_node, _, _ = new_table(256, 1)
    st = np.zeros(16, np.int64)
    st[_S_FIRST_SHORT] = -1
    while True:
        why = _stacks_run(buf, end, id_table, u_ids, u_loc, loc_ptr, loc_frames, value_index, seed, max_depth, basis,
                          n_parent, n_frame, n_hash, table, s_node, s_value, b_arena, b_rows, l_arena, l_start, l_len,
                          l_leaf, l_hash, l_table, fl, rf, prev_f, prev_node, st)
        if why == _S_DONE:
            break
        if why == _S_ERROR:
            return st[_S_CODE], st[_S_WHERE], e0, e0, e0, np.zeros(0, np.uint64), 0, 0, 0, -1
        # room for the sample that stopped the run, doubled where short
        ns, nn, nl, nb = st[_S_NS], st[_S_NN], st[_S_NL], st[_S_NB]
        nf, l_used, b_used = st[_S_NEED_F], st[_S_LUSED], st[_S_BUSED]
        if ns + 1 > s_node.shape[0]:
            s_node = grow_i64(s_node, ns + 1)
            s_value = grow_u64(s_value, ns + 1)
        while 2 * (nb + 1) > b_rows.shape[0]:
            b_rows = regrow_rows(b_rows)
        if b_used + st[_S_NEED_BYTES] > b_arena.shape[0]:
            b_arena = grow_u8(b_arena, b_used + st[_S_NEED_BYTES], b_used)
        if nf > fl.shape[0]:
            fl = grow_i64(fl, nf)
        if nf > rf.shape[0]:
            rf = grow_i64(rf, nf)
        if min(nf, max_depth) > prev_f.shape[0]:
            prev_f = grow_i64(prev_f, min(nf, max_depth))
            prev_node = grow_i64(prev_node, min(nf, max_depth))
        if nn + nf > n_parent.shape[0]:
            n_parent = grow_i64(n_parent, nn + nf)
            n_frame = grow_i64(n_frame, nn + nf)
            n_hash = grow_u64(n_hash, nn + nf)
        if 2 * (nn + nf) > table.shape[0]:
            table = table_of(n_hash, nn, table_size_for(nn + nf, table.shape[0]))
        if nl + 1 > l_start.shape[0]:
            l_start = grow_i64(l_start, nl + 1)
            l_len = grow_i64(l_len, nl + 1)
            l_leaf = grow_i64(l_leaf, nl + 1)
            l_hash = grow_u64(l_hash, nl + 1)
        if 2 * (nl + 1) > l_table.shape[0]:
            l_table = table_of(l_hash, nl, table_size_for(nl + 1, l_table.shape[0]))
        if l_used + nf > l_arena.shape[0]:
            l_arena = grow_i64(l_arena, l_used + nf)
    ns, nn = st[_S_NS], st[_S_NN]
    return (OK, -1, n_parent[:nn].copy(), n_frame[:nn].copy(), s_node[:ns].copy(), s_value[:ns].copy(), st[_S_DEEP],
            st[_S_MISS], st[_S_SHORT], st[_S_FIRST_SHORT])
