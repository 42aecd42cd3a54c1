"""Scanners of text profiles in numba: collapsed stacks, ``perf script`` output, callgrind's
cost lines and call graph.

The first two read a file's bytes once and hand back what `tracevis3d.io.stacks` builds on: the
distinct frames (byte spans of their first appearance, interned), a trie of frame paths
(node = (parent node, frame), numbered by first appearance, so a parent's id is below its
children's) and the samples (a leaf node and a weight each).  Python then touches each
distinct frame once (decoding its name), never each line.

Interning: open addressing on a keyed hash (FNV-1a from a seeded basis, then the
splitmix64 finaliser; Steele, Lea, Flood, OOPSLA 2014) with every hit verified byte by byte,
so ids never depend on the hash; a per-load random seed keeps crafted collisions from
costing more than random ones.  Probing is still counted: past a linear budget the scan
stops with status `FLOODED` and the caller interns in Python instead.

Collapsed stacks (Brendan Gregg's ``stackcollapse`` output, ``a;b;c 12``): each line is a
stack, root first, frames split at ``;``, then white space and a count.  A line is read the
way speedscope's ``bg-flamegraph.ts`` reads it (``^(.*) (\\d+)$``), widened as FlameGraph's
``flamegraph.pl`` is (``\\d+(\\.\\d*)?``: counts may have a fraction; a tab or several spaces
before the count): the count is the last white-space separated token, the stack is all
before the white space that precedes it.  A last empty frame (``a;b; 3``, as old py-spy
versions wrote every stack) is dropped, as Perl's ``split`` drops it.  Consecutive lines of
stackcollapse output share their first frames (it sorts its stacks): each line is compared
byte by byte with the last valid one first, and only the frames after the common frames
are hashed.

Byte work goes 8 or 32 bytes at a time through three small intrinsics (`load_u64`,
`diff_mask32`, `either_mask32`: unaligned loads and vector compares, as
`tracevis3d.kernels.jsontokens.eq_mask32` does).  The perf script scanner (`perf_scan`) and
callgrind's (`callgrind_scan`) build on these helpers in modules of their own.

Over 600 lines: the collapsed and callgrind scanners share the interning table, the trie and
the byte readers; each scanner is a loop over stages numba inlines, kept beside its helpers.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

#: scan statuses
OK = 0
FLOODED = 1

#: FNV-1a's 64-bit offset basis (the hashes' start)
FNV_BASIS = np.uint64(14695981039346656037)
#: the hashes' odd multipliers (the golden ratio's and xxHash's PRIME64_2)
K1 = np.uint64(0x9E3779B97F4A7C15)
K2 = np.uint64(0xC2B2AE3D27D4EB4F)
#: WORD_MASK[k]: the low k bytes of a little-endian word
WORD_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)], np.uint64)


def _buffer_ok(buf) -> bool:
    return isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C" and buf.dtype == types.uint8


@intrinsic
def load_u64(typingctx, buf, pos):
    """The 8 bytes ``buf[pos:pos+8]`` as one little-endian uint64 (one unaligned load; the
    caller keeps ``pos + 8 <= len(buf)``)."""
    if not _buffer_ok(buf):
        return None
    sig = types.uint64(buf, pos)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return sig, codegen


@intrinsic
def diff_mask32(typingctx, buf, a, b):
    """Bit k (k < 32): ``buf[a + k] != buf[b + k]``: two unaligned 32-byte vector loads and
    one vector compare.  The caller keeps ``a + 32`` and ``b + 32 <= len(buf)``."""
    if not _buffer_ok(buf):
        return None
    sig = types.uint32(buf, a, b)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        vec = ir.VectorType(ir.IntType(8), 32)
        va = builder.load(builder.bitcast(builder.gep(ary.data, [args[1]]), vec.as_pointer()), align=1)
        vb = builder.load(builder.bitcast(builder.gep(ary.data, [args[2]]), vec.as_pointer()), align=1)
        return builder.bitcast(builder.icmp_unsigned("!=", va, vb), ir.IntType(32))

    return sig, codegen


@intrinsic
def either_mask32(typingctx, buf, pos, b1, b2):
    """Bit k (k < 32): ``buf[pos + k]`` is ``b1`` or ``b2``: one unaligned 32-byte vector load,
    two compares (the byte classification of simdjson's stage 1, Langdale and Lemire, VLDB J.
    2019).  The caller keeps ``pos + 32 <= len(buf)``."""
    if not _buffer_ok(buf):
        return None
    sig = types.uint32(buf, pos, b1, b2)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        vec = ir.VectorType(ir.IntType(8), 32)
        v = builder.load(builder.bitcast(builder.gep(ary.data, [args[1]]), vec.as_pointer()), align=1)
        out = None
        for arg in (args[2], args[3]):
            b = builder.trunc(arg, ir.IntType(8))
            splat = ir.Constant(vec, ir.Undefined)
            for k in range(32):
                splat = builder.insert_element(splat, b, ir.Constant(ir.IntType(32), k))
            eq = builder.icmp_unsigned("==", v, splat)
            out = eq if out is None else builder.or_(out, eq)
        return builder.bitcast(out, ir.IntType(32))

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, _nrt=False)
def span_hash(buf, lo, hi, basis):
    """Keyed hash of the bytes ``buf[lo:hi]``, 8 at a time: h = (h XOR word) × K, rotated,
    over the span's words (the last one overlapping the one before when the length is not a
    multiple of 8; a span shorter than 8 bytes as one masked word), from ``basis`` (which
    carries the seed), then the splitmix64 finaliser of h and the length."""
    n = buf.shape[0]
    ln = hi - lo
    h = basis
    if ln >= 8:
        k = lo
        while k + 8 <= hi:
            h = (h ^ load_u64(buf, k)) * K1
            h = (h << np.uint64(31)) | (h >> np.uint64(33))
            k += 8
        if k < hi:
            h = (h ^ load_u64(buf, hi - 8)) * K2
    elif ln > 0:
        if lo + 8 <= n:
            w = load_u64(buf, lo) & WORD_MASK[ln]
        else:
            w = np.uint64(0)
            for x in range(ln):
                w |= np.uint64(buf[lo + x]) << np.uint64(8 * x)
        h = (h ^ w) * K1
    return mix64(h ^ np.uint64(ln))


@njit(cache=True, nogil=True, _nrt=False)
def _same_bytes(buf, a, b, ln):
    """``buf[a:a+ln] == buf[b:b+ln]``, 8 bytes at a time."""
    n = buf.shape[0]
    k = 0
    while k + 8 <= ln:
        if load_u64(buf, a + k) != load_u64(buf, b + k):
            return False
        k += 8
    if k < ln:
        if ln >= 8:
            return load_u64(buf, a + ln - 8) == load_u64(buf, b + ln - 8)
        if a + 8 <= n and b + 8 <= n:
            return (load_u64(buf, a) ^ load_u64(buf, b)) & WORD_MASK[ln] == np.uint64(0)
        for x in range(k, ln):
            if buf[a + x] != buf[b + x]:
                return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def common_prefix(buf, a, b, limit):
    """How many bytes ``buf[a:]`` and ``buf[b:]`` have in common from their start, at most
    ``limit`` (both stay inside ``buf``), 32 at a time."""
    n = buf.shape[0]
    q = 0
    while q + 32 <= limit and a + q + 32 <= n and b + q + 32 <= n:
        d = diff_mask32(buf, a + q, b + q)
        if d != np.uint32(0):
            return q + np.int64(trailing_zeros(d))
        q += 32
    while q < limit and buf[a + q] == buf[b + q]:
        q += 1
    return q


@njit(cache=True, nogil=True)
def grow_i64(a, need):
    """A new int64 array of max(2 len(a), need) elements holding ``a`` in front (capacity doubling; the rest unset)."""
    b = np.empty(max(2 * a.shape[0], need), np.int64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def grow_u64(a, need):
    """A new uint64 array of max(2 len(a), need) elements holding ``a`` in front (capacity doubling; the rest unset)."""
    b = np.empty(max(2 * a.shape[0], need), np.uint64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def grow_f64(a, need):
    """A new float64 array of max(2 len(a), need) elements holding ``a`` in front (capacity doubling; the rest
    unset)."""
    b = np.empty(max(2 * a.shape[0], need), np.float64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def grow_u8(a, need, used):
    """A new zeroed uint8 array of max(2 len(a), need) bytes holding ``a[:used]`` in front (an arena's growth)."""
    b = np.zeros(max(2 * a.shape[0], need), np.uint8)
    b[:used] = a[:used]
    return b


@njit(cache=True, nogil=True)
def table_size_for(n, slots):
    """The slots of an open-addressing table for ``n`` keys at most half full: ``slots`` times
    4 until they fit (as `table_put` grows one)."""
    while 2 * n > slots:
        slots *= 4
    return slots


@njit(cache=True, nogil=True, inline="always")
def new_table(cap, slots):
    """Four empty int64 columns and a hash column of ``cap`` rows, and an empty open-addressing
    table of ``slots`` slots (-1: free)."""
    return (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.uint64), np.full(slots, -1, np.int64))


@njit(cache=True, nogil=True)
def table_of(hashes, n, cap):
    """An open-addressing table of ``cap`` slots (a power of two, -1 empty) holding keys 0..n-1,
    key j at the first free slot from ``hashes[j] & (cap - 1)`` on (linear probing)."""
    table = np.full(cap, -1, np.int64)
    mask = np.uint64(cap - 1)
    for j in range(n):
        s = hashes[j] & mask
        while table[s] >= 0:
            s = (s + np.uint64(1)) & mask
        table[s] = j
    return table


@njit(cache=True, nogil=True)
def rehash(hashes, n):
    """A table of twice the slots a table of ``n`` keys with ``hashes`` needs (power of two,
    load ≤ 1/4), the keys re-inserted (`table_of`)."""
    cap = 64
    while cap < 4 * n:
        cap *= 2
    return table_of(hashes, n, cap)


@njit(cache=True, nogil=True, inline="always")
def table_put(table, slot, hashes, n):
    """Key ``n`` (its hash already at ``hashes[n]``) put in the free ``slot`` of an open-addressing
    table, the table rehashed to 4 × its slots (`rehash`: its keys re-inserted) once more than half
    full.  Returns (table, n + 1)."""
    table[slot] = n
    n += 1
    if 2 * n > table.shape[0]:
        table = rehash(hashes, n)
    return table, n


@njit(cache=True, nogil=True)
def regrow(hashes, n, cap):
    """A table of 4 × ``cap`` slots (``cap`` a full table's) holding keys 0..n-1 by ``hashes``
    (`table_of`)."""
    return table_of(hashes, n, 4 * cap)


@njit(cache=True, nogil=True)
def regrow_rows(rows):
    """A table of rows keyed by their hash (column 0; column 1 is -1 in an empty slot) at 4 times
    the slots, its rows re-inserted by linear probing from hash & (slots - 1)."""
    cap = 4 * rows.shape[0]
    out = np.full((cap, rows.shape[1]), -1, np.int64)
    mask = np.uint64(cap - 1)
    for r in range(rows.shape[0]):
        if rows[r, 1] < 0:
            continue
        q = np.uint64(rows[r, 0]) & mask
        while out[q, 1] >= 0:
            q = (q + np.uint64(1)) & mask
        out[q] = rows[r]
    return out


@njit(cache=True, nogil=True, inline="always")
def same_as_arena(arena, a, buf, b, ln):
    """``arena[a:a+ln] == buf[b:b+ln]``, 8 bytes at a time (inlined: the hot loops' callers run
    without reference counting, `inline_bytes`)."""
    k = 0
    while k + 8 <= ln:
        if load_u64(arena, a + k) != load_u64(buf, b + k):
            return False
        k += 8
    for x in range(k, ln):
        if arena[a + x] != buf[b + x]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _node_hash(parent, fid, basis):
    return mix64((np.uint64(parent + 1) * K1) ^ (np.uint64(fid) + basis))


@njit(cache=True, nogil=True)
def _regrow_rows(table, basis, nodes):
    """An open-addressing table of rows at 4 times the slots, its rows re-inserted: frame rows
    (hash, id, length) by their hash, node rows (parent, frame, node) by `_node_hash`; the
    column that holds the id is -1 in an empty slot."""
    cap = table.shape[0] * 4
    out = np.full((cap, 3), -1, np.int64)
    mask = np.uint64(cap - 1)
    idc = 2 if nodes else 1
    for r in range(table.shape[0]):
        if table[r, idc] < 0:
            continue
        h = _node_hash(table[r, 0], table[r, 1], basis) if nodes else np.uint64(table[r, 0])
        q = h & mask
        while out[q, idc] >= 0:
            q = (q + np.uint64(1)) & mask
        out[q, 0] = table[r, 0]
        out[q, 1] = table[r, 1]
        out[q, 2] = table[r, 2]
    return out


@njit(cache=True, nogil=True, _nrt=False)
def _shared_frames(buf, p, hi, prev_start, prev_slen, prev_depth, pf_end):
    """How many frames the line at ``p`` shares with the previous valid line's stack (its bytes
    compared, not hashed: its start, stack length, frame ends), where the next frame starts,
    and how many bytes the two have in common (`_sorts_after`)."""
    q = 0
    if prev_start >= 0:
        q = common_prefix(buf, p, prev_start, min(prev_slen, hi - p))
    k = 0
    while k < prev_depth and pf_end[k] < q:
        k += 1
    if k == prev_depth - 1 and q == prev_slen and p + q < hi and buf[p + q] == 59:
        k = prev_depth
    return k, p + (pf_end[k - 1] + 1 if k > 0 else 0), q


@njit(cache=True, nogil=True, inline="always")
def _sorts_after(buf, p, slen, prev_start, prev_slen, q):
    """Does the stack ``buf[p:p+slen]`` come after the previous valid line's (``q`` bytes in
    common) as a sequence of frames, frame by frame, each frame's bytes in order and a frame
    that ends before the other's first?  An equal stack, or none before, does not."""
    if prev_start < 0 or q >= slen:
        return False
    if q >= prev_slen:
        return True
    cp = buf[prev_start + q]
    c = buf[p + q]
    return cp == 59 or (c != 59 and c > cp)


@njit(cache=True, nogil=True)
def _node_table(n_parent, n_frame, nn, basis):
    """The open-addressing table of trie nodes (rows (parent, frame, node), `_collapsed_node`)
    holding nodes 0..nn-1, at load ≤ 1/4."""
    cap = 4096
    while cap < 4 * nn:
        cap *= 2
    table = np.full((cap, 3), -1, np.int64)
    mask = np.uint64(cap - 1)
    for v in range(nn):
        q = _node_hash(n_parent[v], n_frame[v], basis) & mask
        while table[q, 2] >= 0:
            q = (q + np.uint64(1)) & mask
        table[q, 0] = n_parent[v]
        table[q, 1] = n_frame[v]
        table[q, 2] = v
    return table


@njit(cache=True, nogil=True, _nrt=False)
def _line_count(buf, p, te, s):
    """The count token of the line ``buf[p:te]`` (trailing white space cut): its start, whether it
    is ``\\d+(\\.\\d*)?`` after white space and not inside the frames (from ``s``), its first 18
    digits as an integer, the number of digits and the divisor of its decimals."""
    t0 = te
    while t0 > p and buf[t0 - 1] != 32 and buf[t0 - 1] != 9 and buf[t0 - 1] != 13:
        t0 -= 1
    ok = t0 > p and t0 >= s
    ip = np.int64(0)
    nd = 0
    scale = 1.0
    dot = -1
    if ok:
        for x in range(t0, te):
            c = buf[x]
            if 48 <= c <= 57:
                if nd < 18:
                    ip = ip * 10 + (c - 48)
                nd += 1
                if dot >= 0:
                    scale *= 10.0
            elif c == 46 and dot < 0 and x > t0:
                dot = x
            else:
                ok = False
                break
    return t0, ok, ip, nd, scale


@njit(cache=True, nogil=True, _nrt=False)
def _find_frame(buf, fo, fl, fh, f_table, f_aoff, arena):
    """The id of frame ``buf[fo:fo + fl]`` (hash ``fh``) in the frames' table (rows (hash, id,
    length), so a probe reads one row; its bytes compared with the frame's packed copy), or -1;
    the slot where it is or goes; the probes made.  Scalars only: the arrays stay the caller's
    (returning them from every lookup cost a reference count each)."""
    mask = np.uint64(f_table.shape[0] - 1)
    slot = fh & mask
    fhi = np.int64(fh)
    probes = 0
    while True:
        g = f_table[slot, 1]
        if g < 0:
            return np.int64(-1), slot, probes
        if f_table[slot, 0] == fhi and f_table[slot, 2] == fl and same_as_arena(arena, f_aoff[g], buf, fo, fl):
            return g, slot, probes
        probes += 1
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True, _nrt=False)
def _add_frame(buf, fo, fl, fh, slot, lineno, f_off, f_len, f_line, f_aoff, arena, a_used, nf, f_table):
    """Frame ``buf[fo:fo + fl]`` (hash ``fh``, first seen on line ``lineno``) added as frame
    ``nf`` at ``slot`` of the table (`_find_frame` found it free), its bytes packed in the arena;
    the arrays, arena and table have room (`_collapsed_run` checks before the line).  Returns
    the arena's bytes used."""
    for x in range(fl):
        arena[a_used + x] = buf[fo + x]
    f_aoff[nf] = a_used
    f_off[nf] = fo
    f_len[nf] = fl
    f_line[nf] = lineno
    f_table[slot, 0] = np.int64(fh)
    f_table[slot, 1] = nf
    f_table[slot, 2] = fl
    return a_used + fl


@njit(cache=True, nogil=True, _nrt=False)
def _collapsed_node(parent, fid, basis, n_parent, n_frame, nn, n_table):
    """The trie node (``parent``, frame ``fid``), added when new (table rows (parent, frame,
    node)); the arrays and table have room (`_collapsed_run` checks before the line).
    Returns (node, probes, nn)."""
    nh = _node_hash(parent, fid, basis)
    mask = np.uint64(n_table.shape[0] - 1)
    slot = nh & mask
    node = np.int64(-1)
    probes = 0
    while True:
        g = n_table[slot, 2]
        if g < 0:
            break
        if n_table[slot, 0] == parent and n_table[slot, 1] == fid:
            node = g
            break
        probes += 1
        slot = (slot + np.uint64(1)) & mask
    if node < 0:
        n_parent[nn] = parent
        n_frame[nn] = fid
        n_table[slot, 0] = parent
        n_table[slot, 1] = fid
        n_table[slot, 2] = nn
        node = nn
        nn += 1
    return node, probes, nn


#: `_collapsed_run`'s state (`collapsed_scan`): next byte, line number, frames, arena bytes used,
#: nodes, lines, reparse rows, the previous valid line (start, stack length, depth), hashing
#: (1/0), probes, lookups, and what the line that stopped it needs (frames, depth, bytes)
(_C_POS, _C_LINENO, _C_NF, _C_AUSED, _C_NN, _C_NL, _C_NRP, _C_PSTART, _C_PSLEN, _C_PDEPTH, _C_HASHING, _C_PROBES,
 _C_LOOKUPS, _C_NEED_M, _C_NEED_DEPTH, _C_NEED_BYTES) = range(16)
#: why `_collapsed_run` stopped: every line read, a line needs room, the nodes' table is to be
#: made (the first line out of order), the probes past their budget
_C_DONE, _C_ROOM, _C_TABLE, _C_FLOOD = 0, 1, 2, 3


@njit(cache=True, nogil=True, _nrt=False)
def _split_frames(buf, s, hi, cs, ce):
    """The frames from ``s`` split at ';' up to the line's end (32 bytes at a time where they
    are there), their starts and ends in ``cs`` / ``ce`` as far as those have room (the rest
    counted, not stored).  Returns (count, start of the last one, the line's end)."""
    m = 0
    fs = s
    j = s
    eol = -1
    cap = cs.shape[0]
    while j + 32 <= hi and eol < 0:
        bits = either_mask32(buf, j, np.uint8(59), np.uint8(10))
        while bits != np.uint32(0):
            x = j + np.int64(trailing_zeros(bits))
            if buf[x] == 10:
                eol = x
                break
            if m < cap:
                cs[m] = fs
                ce[m] = x
            m += 1
            fs = x + 1
            bits &= bits - np.uint32(1)
        j += 32
    if eol < 0:
        while j < hi:
            c = buf[j]
            if c == 10:
                break
            if c == 59:
                if m < cap:
                    cs[m] = fs
                    ce[m] = j
                m += 1
                fs = j + 1
            j += 1
        eol = j
    return m, fs, eol


@njit(cache=True, nogil=True)
def _collapsed_run(buf, hi, basis, max_depth, f_off, f_len, f_line, f_aoff, arena, f_table, n_parent, n_frame,
                   n_table, l_node, l_weight, rp, pf_end, pf_node, cs, ce, counts, st):
    """`collapsed_scan`'s lines from ``st[_C_POS]`` on (its docstring), its state in ``st``
    (`_C_POS` ...), until every line is read or a line needs what only the caller makes: more
    room in an array or table (checked before anything of the line is kept: the line is left
    unread, its needs in ``st``) or the nodes' table.  No array is rebound here, so numba counts
    no references per line (a loop that may rebind an array raises and drops every such
    array's count on every pass: most of this scan's time before).  Returns why it stopped
    (`_C_DONE`, `_C_ROOM`, `_C_TABLE`, `_C_FLOOD`)."""
    pos, lineno, nf, a_used, nn, nl, nrp = (st[_C_POS], st[_C_LINENO], st[_C_NF], st[_C_AUSED], st[_C_NN], st[_C_NL],
                                            st[_C_NRP])
    prev_start, prev_slen, prev_depth = st[_C_PSTART], st[_C_PSLEN], st[_C_PDEPTH]
    hashing = st[_C_HASHING] != 0
    probes, lookups = st[_C_PROBES], st[_C_LOOKUPS]
    budget_slack = 1 << 20
    why = _C_DONE
    while pos < hi:
        lineno += 1
        p = pos
        # the frames shared with the previous valid line's stack, then the others up to the line's end
        k, s, q = _shared_frames(buf, p, hi, prev_start, prev_slen, prev_depth, pf_end)
        m, fs, eol = _split_frames(buf, s, hi, cs, ce)
        pos = eol + 1
        # the count: the last token, after white space
        te = eol
        while te > p and (buf[te - 1] == 13 or buf[te - 1] == 32 or buf[te - 1] == 9):
            te -= 1
        if te == p:
            counts[1] += 1
            continue
        t0, ok, ip, nd, scale = _line_count(buf, p, te, s)
        if not ok:
            counts[2] += 1
            if counts[3] < 0:
                counts[3] = lineno
            continue
        send = t0
        while send > p and (buf[send - 1] == 32 or buf[send - 1] == 9):
            send -= 1
        reparsed = nd > 15 or scale > 1e22
        # the line's frames (the last one ends at the stack's end), depth and way, then its
        # needs checked before anything of it is kept
        ce_last = max(send, fs)
        mm = m + 1
        if ce_last == fs and k + mm > 1:
            mm -= 1  # a last empty frame
        depth = k + mm
        fresh = nn == 0 or _sorts_after(buf, p, send - p, prev_start, prev_slen, q)
        cut = depth > max_depth
        if cut:
            mm = max(0, max_depth - k)
            depth = k + mm
            fresh = False
        if send != p and not (fresh or hashing):
            why = _C_TABLE
        elif (nl + 1 > l_node.shape[0] or (reparsed and nrp + 1 > rp.shape[0]) or m + 1 > cs.shape[0]
              or (send != p and (depth > pf_end.shape[0] or nf + mm > f_off.shape[0]
                                 or a_used + (send - p) + 8 > arena.shape[0] or 2 * (nf + mm) > f_table.shape[0]
                                 or nn + mm > n_parent.shape[0]
                                 or (hashing and 2 * (nn + mm) > n_table.shape[0])))):
            why = _C_ROOM
        if why != _C_DONE:
            st[_C_NEED_M] = max(m + 1, mm)
            st[_C_NEED_DEPTH] = depth
            st[_C_NEED_BYTES] = send - p + 8
            lineno -= 1
            pos = p
            break
        if reparsed:
            rp[nrp, 0] = nl
            rp[nrp, 1] = t0
            rp[nrp, 2] = te
            nrp += 1
            l_weight[nl] = 0.0
        else:
            l_weight[nl] = ip / scale
        cs[m] = fs
        ce[m] = ce_last
        if send == p:  # no stack before the count
            l_node[nl] = -1
            nl += 1
            prev_start = -1
            prev_depth = 0
            continue
        if cut:
            counts[4] += 1
            if counts[5] < 0:
                counts[5] = lineno
        parent = pf_node[k - 1] if k > 0 else np.int64(-1)
        for a in range(mm):
            lookups += 1
            fo = cs[a]
            fl = ce[a] - fo
            fh = span_hash(buf, fo, fo + fl, basis)
            fid, slot, pr = _find_frame(buf, fo, fl, fh, f_table, f_aoff, arena)
            probes += pr
            if fid < 0:
                a_used = _add_frame(buf, fo, fl, fh, slot, lineno, f_off, f_len, f_line, f_aoff, arena, a_used, nf,
                                       f_table)
                fid = nf
                nf += 1
            if hashing:
                node, pr, nn = _collapsed_node(parent, fid, basis, n_parent, n_frame, nn, n_table)
                probes += pr
            else:
                n_parent[nn] = parent
                n_frame[nn] = fid
                node = nn
                nn += 1
            pf_end[k + a] = ce[a] - p
            pf_node[k + a] = node
            parent = node
        if probes > 8 * (lookups + nn) + budget_slack:
            why = _C_FLOOD
            break
        l_node[nl] = parent
        nl += 1
        prev_start = p
        prev_depth = depth
        prev_slen = pf_end[depth - 1] if depth > 0 else 0
    st[_C_POS], st[_C_LINENO], st[_C_NF], st[_C_AUSED], st[_C_NN], st[_C_NL], st[_C_NRP] = (pos, lineno, nf, a_used,
                                                                                          nn, nl, nrp)
    st[_C_PSTART], st[_C_PSLEN], st[_C_PDEPTH] = prev_start, prev_slen, prev_depth
    st[_C_HASHING] = 1 if hashing else 0
    st[_C_PROBES], st[_C_LOOKUPS] = probes, lookups
    return why


@njit(cache=True, nogil=True)
def collapsed_scan(buf, lo, hi, seed, max_depth):
    """Read collapsed stacks in ``buf[lo:hi]`` (module docstring).

    Returns ``(status, frame_off, frame_len, frame_line, node_parent, node_frame, line_node,
    line_weight, reparse, counts)``:

    - distinct frames (``frame_off/len``: the byte span of their first appearance,
      ``frame_line``: its line, 1-based), numbered by first appearance;
    - the trie of frame paths (``node_parent``: -1 for a root; ``node_frame``);
    - one entry per valid line: its leaf node (-1: an empty stack) and its count;
    - ``reparse``: rows (line index, token start, token end) of counts with more than 15
      significant digits, whose weight the caller converts exactly (``float(token)``);
    - ``counts``: [lines, blank lines, invalid lines, first invalid line, stacks cut at
      ``max_depth``, first such line, probes].

    A line is valid when its last token is ``\\d+(\\.\\d*)?`` preceded by a space or tab;
    other non-blank lines are counted as invalid and skipped.  Stacks deeper than
    ``max_depth`` frames keep their first ``max_depth``.  O(bytes) expected time; the bytes
    shared with the previous valid line's frames are compared, not hashed.  Per line, stages
    compiled without reference counting (``_nrt=False``: a called kernel that counts them raises
    and drops each array argument's count, 10-15 % of this scan before): the frames shared
    (`_shared_frames`), the rest split (`_split_frames`), the count (`_line_count`), each new
    frame and trie node interned (`_find_frame`/`_add_frame`, `_collapsed_node`).
    While the stacks come in order as sequences of frames (`_sorts_after`; stackcollapse sorts
    them), the frames past those shared with the previous line are new trie nodes (in sorted
    sequences, no earlier stack shares more frames with a line than the one before it): they
    are appended without a lookup.  The first line out of that order (or cut at ``max_depth``)
    puts the nodes into their table (`_node_table`) and every node is looked up from then on.
    The lines are read by `_collapsed_run`, which grows nothing; here, between its runs, the
    tables are grown (a line that needs more room is read again after).
    """
    basis = FNV_BASIS ^ np.uint64(seed)
    # distinct frames
    f_off = np.empty(1024, np.int64)
    f_len = np.empty(1024, np.int64)
    f_line = np.empty(1024, np.int64)
    f_aoff = np.empty(1024, np.int64)  # each distinct frame's bytes again, packed (compared in cache)
    arena = np.zeros(1 << 16, np.uint8)
    f_table = np.full((4096, 3), -1, np.int64)
    # trie nodes
    n_parent = np.empty(1024, np.int64)
    n_frame = np.empty(1024, np.int64)
    n_table = np.full((16, 3), -1, np.int64)  # made when a line is out of order (`_node_table`)
    # lines
    l_node = np.empty(1024, np.int64)
    l_weight = np.empty(1024, np.float64)
    rp = np.empty((16, 3), np.int64)
    # the previous valid line's frames: each one's end (relative to the line) and node
    pf_end = np.empty(64, np.int64)
    pf_node = np.empty(64, np.int64)
    # this line's new frames
    cs = np.empty(64, np.int64)
    ce = np.empty(64, np.int64)
    counts = np.zeros(7, np.int64)
    counts[3] = -1
    counts[5] = -1
    st = np.zeros(16, np.int64)
    st[_C_POS] = lo
    st[_C_PSTART] = -1
    while True:
        why = _collapsed_run(buf, hi, basis, max_depth, f_off, f_len, f_line, f_aoff, arena, f_table, n_parent,
                             n_frame, n_table, l_node, l_weight, rp, pf_end, pf_node, cs, ce, counts, st)
        if why == _C_DONE:
            break
        if why == _C_FLOOD:
            counts[6] = st[_C_PROBES]
            return (FLOODED, f_off[:0], f_len[:0], f_line[:0], n_parent[:0], n_frame[:0], l_node[:0],
                    l_weight[:0], rp[:0], counts)
        nf, nn, nl, nrp = st[_C_NF], st[_C_NN], st[_C_NL], st[_C_NRP]
        if why == _C_TABLE:
            n_table = _node_table(n_parent, n_frame, nn, basis)
            st[_C_HASHING] = 1
            continue
        # room for the line that stopped the run: every array it may fill, doubled when short
        need_m, need_depth, a_used = st[_C_NEED_M], st[_C_NEED_DEPTH], st[_C_AUSED]
        if nl + 1 > l_node.shape[0]:
            l_node = grow_i64(l_node, nl + 1)
            l_weight = grow_f64(l_weight, nl + 1)
        if nrp + 1 > rp.shape[0]:
            r2 = np.empty((2 * rp.shape[0], 3), np.int64)
            r2[:nrp] = rp[:nrp]
            rp = r2
        if need_m > cs.shape[0]:
            cs = grow_i64(cs, need_m)
            ce = grow_i64(ce, need_m)
        if need_depth > pf_end.shape[0]:
            pf_end = grow_i64(pf_end, need_depth)
            pf_node = grow_i64(pf_node, need_depth)
        if nf + need_m > f_off.shape[0]:
            f_off = grow_i64(f_off, nf + need_m)
            f_len = grow_i64(f_len, nf + need_m)
            f_line = grow_i64(f_line, nf + need_m)
            f_aoff = grow_i64(f_aoff, nf + need_m)
        if a_used + st[_C_NEED_BYTES] > arena.shape[0]:
            arena = grow_u8(arena, a_used + st[_C_NEED_BYTES], a_used)
        while 2 * (nf + need_m) > f_table.shape[0]:
            f_table = _regrow_rows(f_table, basis, False)
        if nn + need_m > n_parent.shape[0]:
            n_parent = grow_i64(n_parent, nn + need_m)
            n_frame = grow_i64(n_frame, nn + need_m)
        while st[_C_HASHING] != 0 and 2 * (nn + need_m) > n_table.shape[0]:
            n_table = _regrow_rows(n_table, basis, True)
    nf, nn, nl, nrp = st[_C_NF], st[_C_NN], st[_C_NL], st[_C_NRP]
    counts[0] = st[_C_LINENO]
    counts[6] = st[_C_PROBES]
    return (OK, f_off[:nf].copy(), f_len[:nf].copy(), f_line[:nf].copy(), n_parent[:nn].copy(),
            n_frame[:nn].copy(), l_node[:nl].copy(), l_weight[:nl].copy(), rp[:nrp].copy(), counts)


@njit(cache=True, nogil=True)
def peel_lanes(node_parent, node_frame, is_lane_frame):
    """Split a trie of frame paths into lanes by its leading lane frames (py-spy's
    ``process N:"cmd"`` and ``thread (tid)`` frames, which open each stack).

    A node is a *prefix* node when its frame is a lane frame and so are all its ancestors'.
    Every other node belongs to the lane of its deepest prefix ancestor (``lane``: that
    ancestor's id, -1 when it has none) and gets that ancestor cut from its path
    (``parent``: -1 where the parent was a prefix node).  Prefix nodes get lane -2.
    Nodes are numbered so that a parent's id is below its children's.  O(n)."""
    n = node_parent.shape[0]
    prefix = np.zeros(n, np.bool_)
    lane = np.empty(n, np.int64)
    parent = np.empty(n, np.int64)
    for v in range(n):
        p = node_parent[v]
        if is_lane_frame[node_frame[v]] and (p < 0 or prefix[p]):
            prefix[v] = True
            lane[v] = -2
            parent[v] = -1
        elif p < 0:
            lane[v] = -1
            parent[v] = -1
        elif prefix[p]:
            lane[v] = p
            parent[v] = -1
        else:
            lane[v] = lane[p]
            parent[v] = p
    return lane, parent


@njit(cache=True, nogil=True)
def join_spans(buf, off, ln, sep):
    """The byte spans ``buf[off[k]:off[k]+ln[k]]`` joined by the byte ``sep`` into one blob
    (so that one decode and one split give every span's text)."""
    n = off.shape[0]
    total = 0
    for k in range(n):
        total += ln[k]
    blob = np.empty(total + max(n - 1, 0), np.uint8)
    q = 0
    for k in range(n):
        if k:
            blob[q] = sep
            q += 1
        o = off[k]
        for x in range(ln[k]):
            blob[q + x] = buf[o + x]
        q += ln[k]
    return blob
