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
`tracevis3d.kernels.jsontokens.eq_mask32` does).  callgrind: `callgrind_costs` reads one
column of its cost lines, `callgraph_tree` expands its call graph into speedscope's call tree.
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

_FNV_BASIS = np.uint64(14695981039346656037)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_WORD_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)], np.uint64)


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
def _mix64(x):
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
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
            h = (h ^ load_u64(buf, k)) * _K1
            h = (h << np.uint64(31)) | (h >> np.uint64(33))
            k += 8
        if k < hi:
            h = (h ^ load_u64(buf, hi - 8)) * _K2
    elif ln > 0:
        if lo + 8 <= n:
            w = load_u64(buf, lo) & _WORD_MASK[ln]
        else:
            w = np.uint64(0)
            for x in range(ln):
                w |= np.uint64(buf[lo + x]) << np.uint64(8 * x)
        h = (h ^ w) * _K1
    return _mix64(h ^ np.uint64(ln))


@njit(cache=True, nogil=True)
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
            return (load_u64(buf, a) ^ load_u64(buf, b)) & _WORD_MASK[ln] == np.uint64(0)
        for x in range(k, ln):
            if buf[a + x] != buf[b + x]:
                return False
    return True


@njit(cache=True, nogil=True)
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
def _grow_i64(a, need):
    b = np.empty(max(2 * a.shape[0], need), np.int64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _grow_u64(a, need):
    b = np.empty(max(2 * a.shape[0], need), np.uint64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _grow_f64(a, need):
    b = np.empty(max(2 * a.shape[0], need), np.float64)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _rehash(hashes, n):
    """A table of twice the slots a table of ``n`` keys with ``hashes`` needs (power of two,
    load ≤ 1/4), the keys re-inserted."""
    cap = 64
    while cap < 4 * n:
        cap *= 2
    table = np.full(cap, -1, np.int64)
    mask = np.uint64(cap - 1)
    for j in range(n):
        s = hashes[j] & mask
        while table[s] >= 0:
            s = (s + np.uint64(1)) & mask
        table[s] = j
    return table


@njit(cache=True, nogil=True)
def _same_in_arena(arena, a, buf, b, ln):
    """``arena[a:a+ln] == buf[b:b+ln]``."""
    k = 0
    while k + 8 <= ln:
        if load_u64(arena, a + k) != load_u64(buf, b + k):
            return False
        k += 8
    for x in range(k, ln):
        if arena[a + x] != buf[b + x]:
            return False
    return True


@njit(cache=True, nogil=True)
def _to_arena(arena, used, buf, s0, s1, d0, d1):
    """``arena`` (grown when needed, 8 bytes of slack kept at its end) with ``buf[s0:s1]`` and
    ``buf[d0:d1]`` (a frame's symbol and dso; d0 == d1 for a frame of one span) appended at
    ``used``.  The scans compare a hit's bytes with these packed copies, which stay in cache,
    instead of with the frame's first appearance far back in the file."""
    need = used + (s1 - s0) + (d1 - d0) + 8
    if need > arena.shape[0]:
        a2 = np.zeros(max(2 * arena.shape[0], need), np.uint8)
        a2[:used] = arena[:used]
        arena = a2
    arena[used: used + s1 - s0] = buf[s0:s1]
    arena[used + s1 - s0: used + s1 - s0 + d1 - d0] = buf[d0:d1]
    return arena


@njit(cache=True, nogil=True, inline="always")
def _node_hash(parent, fid, basis):
    return _mix64((np.uint64(parent + 1) * _K1) ^ (np.uint64(fid) + basis))


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
    shared with the previous valid line's frames are compared, not hashed.
    """
    basis = _FNV_BASIS ^ np.uint64(seed)
    # distinct frames
    f_off = np.empty(1024, np.int64)
    f_len = np.empty(1024, np.int64)
    f_line = np.empty(1024, np.int64)
    f_aoff = np.empty(1024, np.int64)  # each distinct frame's bytes again, packed (compared in cache)
    arena = np.zeros(1 << 16, np.uint8)
    a_used = 0
    nf = 0
    f_table = np.full((4096, 3), -1, np.int64)
    # trie nodes
    n_parent = np.empty(1024, np.int64)
    n_frame = np.empty(1024, np.int64)
    nn = 0
    n_table = np.full((4096, 3), -1, np.int64)
    # lines
    l_node = np.empty(1024, np.int64)
    l_weight = np.empty(1024, np.float64)
    nl = 0
    rp = np.empty((16, 3), np.int64)
    nrp = 0
    # previous valid line: start, stack length, each frame's end (relative) and node
    prev_start = -1
    prev_slen = 0
    prev_depth = 0
    pf_end = np.empty(64, np.int64)
    pf_node = np.empty(64, np.int64)
    # this line's new frames
    cs = np.empty(64, np.int64)
    ce = np.empty(64, np.int64)
    counts = np.zeros(7, np.int64)
    counts[3] = -1
    counts[5] = -1
    probes = 0
    lookups = 0
    budget_slack = 1 << 20
    lineno = 0
    pos = lo
    while pos < hi:
        lineno += 1
        p = pos
        # the bytes in common with the previous valid line's stack
        q = 0
        if prev_start >= 0:
            q = common_prefix(buf, p, prev_start, min(prev_slen, hi - p))
        k = 0
        while k < prev_depth and pf_end[k] < q:
            k += 1
        if k == prev_depth - 1 and q == prev_slen and p + q < hi and buf[p + q] == 59:
            k = prev_depth
        s = p + (pf_end[k - 1] + 1 if k > 0 else 0)
        # the frames after them (split at ';'), up to the line's end
        m = 0
        fs = s
        j = s
        eol = -1
        while j + 32 <= hi and eol < 0:
            bits = either_mask32(buf, j, np.uint8(59), np.uint8(10))
            while bits != np.uint32(0):
                x = j + np.int64(trailing_zeros(bits))
                if buf[x] == 10:
                    eol = x
                    break
                if m == cs.shape[0]:
                    cs = _grow_i64(cs, m + 1)
                    ce = _grow_i64(ce, m + 1)
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
                    if m == cs.shape[0]:
                        cs = _grow_i64(cs, m + 1)
                        ce = _grow_i64(ce, m + 1)
                    cs[m] = fs
                    ce[m] = j
                    m += 1
                    fs = j + 1
                j += 1
            eol = j
        pos = eol + 1
        # the count: the last token, after white space
        te = eol
        while te > p and (buf[te - 1] == 13 or buf[te - 1] == 32 or buf[te - 1] == 9):
            te -= 1
        if te == p:
            counts[1] += 1
            continue
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
        if not ok:
            counts[2] += 1
            if counts[3] < 0:
                counts[3] = lineno
            continue
        send = t0
        while send > p and (buf[send - 1] == 32 or buf[send - 1] == 9):
            send -= 1
        if nl == l_node.shape[0]:
            l_node = _grow_i64(l_node, nl + 1)
            l_weight = _grow_f64(l_weight, nl + 1)
        if nd > 15 or scale > 1e22:
            if nrp == rp.shape[0]:
                r2 = np.empty((2 * nrp, 3), np.int64)
                r2[:nrp] = rp
                rp = r2
            rp[nrp, 0] = nl
            rp[nrp, 1] = t0
            rp[nrp, 2] = te
            nrp += 1
            l_weight[nl] = 0.0
        else:
            l_weight[nl] = ip / scale
        # the last frame ends at the stack's end
        if m == cs.shape[0]:
            cs = _grow_i64(cs, m + 1)
            ce = _grow_i64(ce, m + 1)
        cs[m] = fs
        ce[m] = max(send, fs)
        m += 1
        if send == p:  # no stack before the count
            l_node[nl] = -1
            nl += 1
            prev_start = -1
            prev_depth = 0
            continue
        if ce[m - 1] == cs[m - 1] and k + m > 1:
            m -= 1  # a last empty frame
        depth = k + m
        if depth > max_depth:
            counts[4] += 1
            if counts[5] < 0:
                counts[5] = lineno
            m = max(0, max_depth - k)
            depth = k + m
        if depth > pf_end.shape[0]:
            pf_end = _grow_i64(pf_end, depth)
            pf_node = _grow_i64(pf_node, depth)
        parent = pf_node[k - 1] if k > 0 else np.int64(-1)
        for a in range(m):
            fo = cs[a]
            fl = ce[a] - fo
            fh = span_hash(buf, fo, ce[a], basis)
            # the frame's id: table rows (hash, id, length), so a probe reads one row
            lookups += 1
            mask = np.uint64(f_table.shape[0] - 1)
            slot = fh & mask
            fid = np.int64(-1)
            fhi = np.int64(fh)
            while True:
                g = f_table[slot, 1]
                if g < 0:
                    break
                if f_table[slot, 0] == fhi and f_table[slot, 2] == fl and _same_in_arena(arena, f_aoff[g], buf, fo, fl):
                    fid = g
                    break
                probes += 1
                slot = (slot + np.uint64(1)) & mask
            if fid < 0:
                if nf == f_off.shape[0]:
                    f_off = _grow_i64(f_off, nf + 1)
                    f_len = _grow_i64(f_len, nf + 1)
                    f_line = _grow_i64(f_line, nf + 1)
                    f_aoff = _grow_i64(f_aoff, nf + 1)
                arena = _to_arena(arena, a_used, buf, fo, fo + fl, fo, fo)
                f_aoff[nf] = a_used
                a_used += fl
                f_off[nf] = fo
                f_len[nf] = fl
                f_line[nf] = lineno
                f_table[slot, 0] = fhi
                f_table[slot, 1] = nf
                f_table[slot, 2] = fl
                fid = nf
                nf += 1
                if 2 * nf > f_table.shape[0]:
                    f_table = _regrow_rows(f_table, basis, False)
            # the node (parent, frame): table rows (parent, frame, node)
            nh = _node_hash(parent, fid, basis)
            mask = np.uint64(n_table.shape[0] - 1)
            slot = nh & mask
            node = np.int64(-1)
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
                if nn == n_parent.shape[0]:
                    n_parent = _grow_i64(n_parent, nn + 1)
                    n_frame = _grow_i64(n_frame, nn + 1)
                n_parent[nn] = parent
                n_frame[nn] = fid
                n_table[slot, 0] = parent
                n_table[slot, 1] = fid
                n_table[slot, 2] = nn
                node = nn
                nn += 1
                if 2 * nn > n_table.shape[0]:
                    n_table = _regrow_rows(n_table, basis, True)
            pf_end[k + a] = ce[a] - p
            pf_node[k + a] = node
            parent = node
        if probes > 8 * (lookups + nn) + budget_slack:
            counts[6] = probes
            return (FLOODED, f_off[:0], f_len[:0], f_line[:0], n_parent[:0], n_frame[:0], l_node[:0],
                    l_weight[:0], rp[:0], counts)
        l_node[nl] = parent
        nl += 1
        prev_start = p
        prev_depth = depth
        prev_slen = pf_end[depth - 1] if depth > 0 else 0
    counts[0] = lineno
    counts[6] = probes
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


# ----------------------------------------------------------------------------- perf script
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
                    counts[4] += 1
                    if counts[5] < 0:
                        counts[5] = lineno
                    continue
                if not keep:
                    continue
                s0, s1, d0, d1 = perf_frame(buf, p, e)
                if s0 < 0:
                    counts[4] += 1
                    if counts[5] < 0:
                        counts[5] = lineno
                    continue
        else:
            blank = True
            frame_line = False
            p = hi
            e = hi
        if frame_line:
            # intern the frame (symbol, dso)
            lookups += 1
            h = _mix64(span_hash(buf, s0, s1, basis) ^ (span_hash(buf, d0, d1, basis) * _K2))
            slot, fid, pr = _find_frame(f_table, f_hash, f_aoff, f_s0, f_s1, f_d0, f_d1, arena, buf, h, s0, s1, d0, d1)
            probes += pr
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
                    h = _mix64(span_hash(buf, s0, s1, basis) ^ (span_hash(buf, d0, d1, basis) * _K2))
                    slot, fid, pr = _find_frame(f_table, f_hash, f_aoff, f_s0, f_s1, f_d0, f_d1, arena, buf, h,
                                                s0, s1, d0, d1)
                    probes += pr
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
                    chain[0] = fid
                    nc = 1
            if nc > max_depth:
                counts[6] += 1
                if counts[7] < 0:
                    counts[7] = lineno
            top = max(0, nc - max_depth)
            # the root side shared with the previous event, when of the same thread: its nodes
            reuse = 0
            if cur_thread == prev_thread:
                while reuse < nc - top and reuse < prev_n and chain[nc - 1 - reuse] == prev_ids[reuse]:
                    reuse += 1
            if nc - top > prev_ids.shape[0]:
                prev_ids = _grow_i64(prev_ids, nc - top)
                prev_nodes = _grow_i64(prev_nodes, nc - top)
            parent = prev_nodes[reuse - 1] if reuse > 0 else np.int64(-1)
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
            prev_thread = cur_thread
            prev_n = nc - top
            if ns == s_thread.shape[0]:
                s_thread = _grow_i64(s_thread, ns + 1)
                s_node = _grow_i64(s_node, ns + 1)
            s_thread[ns] = cur_thread
            s_node[ns] = parent
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
            counts[2] += 1
            if counts[3] < 0:
                counts[3] = lineno
            continue
        # the event name's id
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
        if chosen < 0:
            if want.shape[0] == 0:
                chosen = eid
            elif want.shape[0] == ev1 - ev0:
                same = True
                for x in range(want.shape[0]):
                    if want[x] != buf[ev0 + x]:
                        same = False
                        break
                if same:
                    chosen = eid
        if eid != chosen or eid < 0:
            continue
        keep = True
        rest0 = r0 if r0 < e else -1
        rest1 = e
        # the thread's id: (comm, pid, tid)
        th = _mix64(span_hash(buf, p, comm_end, basis) ^ (np.uint64(pid + 1) * _K1) ^ (np.uint64(tid + 1) * _K2))
        mask = np.uint64(t_table.shape[0] - 1)
        slot = th & mask
        cur_thread = -1
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
    counts[0] = lineno
    counts[8] = probes
    counts[9] = chosen
    return (OK, (t_c0[:nt].copy(), t_c1[:nt] - t_c0[:nt], t_pid[:nt].copy(), t_tid[:nt].copy()),
            (f_s0[:nf].copy(), f_s1[:nf] - f_s0[:nf], f_d0[:nf].copy(), f_d1[:nf] - f_d0[:nf], f_line[:nf].copy()),
            (e_0[:ne].copy(), e_1[:ne] - e_0[:ne], e_cnt[:ne].copy()),
            (n_parent[:nn].copy(), n_frame[:nn].copy(), n_thread[:nn].copy()),
            (s_thread[:ns].copy(), s_node[:ns].copy()), counts)


# ----------------------------------------------------------------------------- callgrind
@njit(cache=True, nogil=True)
def callgrind_costs(buf, starts, ends, column):
    """The value in column ``column`` (0-based, positions first) of each callgrind cost line
    ``buf[starts[k]:ends[k]]``, with speedscope's reading of subposition compression
    (``callgrind.ts`` ``parseCostLine``) applied to every column: ``*`` is the previous cost
    line's value in that column, ``+n``/``-n`` that value plus or minus n; numbers are
    decimal or ``0x`` hex; a missing column is 0.  Returns (values, ok): ok[k] is False for
    a line with a token that is none of these."""
    n = starts.shape[0]
    out = np.zeros(n, np.float64)
    ok = np.ones(n, np.bool_)
    prev = 0.0
    for k in range(n):
        a = starts[k]
        e = ends[k]
        col = 0
        val = 0.0
        good = True
        x = a
        while x < e:
            while x < e and _is_ws(buf[x]):
                x += 1
            if x >= e:
                break
            y = x
            while y < e and not _is_ws(buf[y]):
                y += 1
            # every token is checked; only the wanted column's value is kept
            c = buf[x]
            rel = 0
            z = x
            if c == 42:  # '*'
                if y != x + 1:
                    good = False
                v = 0.0
                rel = 2
            else:
                if c == 43 or c == 45:
                    rel = 1 if c == 43 else -1
                    z += 1
                v = 0.0
                if z + 1 < y and buf[z] == 48 and (buf[z + 1] == 120 or buf[z + 1] == 88):
                    z += 2
                    if z == y:
                        good = False
                    while z < y:
                        d = buf[z]
                        if 48 <= d <= 57:
                            v = v * 16.0 + (d - 48)
                        elif 97 <= d <= 102:
                            v = v * 16.0 + (d - 87)
                        elif 65 <= d <= 70:
                            v = v * 16.0 + (d - 55)
                        else:
                            good = False
                            break
                        z += 1
                else:
                    if z == y:
                        good = False
                    while z < y:
                        d = buf[z]
                        if 48 <= d <= 57:
                            v = v * 10.0 + (d - 48)
                        else:
                            good = False
                            break
                        z += 1
            if col == column:
                if rel == 2:
                    val = prev
                elif rel == 1:
                    val = prev + v
                elif rel == -1:
                    val = prev - v
                else:
                    val = v
            col += 1
            x = y
        if not good:
            ok[k] = False
            continue
        out[k] = val if col > column else 0.0
        prev = out[k]
    return out, ok


@njit(cache=True, nogil=True)
def callgraph_tree(total, child_ptr, child, child_weight, roots, root_weight, threshold, max_nodes):
    """speedscope's call tree of a weighted call graph (``callgrind.ts``, ``CallGraph.toProfile``):
    from each root in order, with its weight ``root_weight``, a depth-first walk that gives
    each call-graph child of a node the share of the node's weight that the child's edge has
    of the function's total, ``w(child) = w(node) × edge(f → child) / total(f)``, children in
    ``child_ptr`` order; a function already on the walk's stack (recursion) or a share below
    ``threshold`` (speedscope: 1e-4 of the heaviest function's total) or a function whose
    total is 0 is not entered; what the children did not take is the node's self weight.

    Returns (node_parent, node_frame, node_self, n_cut): the tree's nodes in pre-order (parent
    -1 for a root's node) and each one's self weight; past ``max_nodes`` nodes no node is made
    (their weight stays with their parent) and n_cut counts the shares so dropped.  An explicit
    stack, so deep call graphs cannot overflow anything."""
    nf = total.shape[0]
    on_stack = np.zeros(nf, np.bool_)
    cap = 1024
    n_parent = np.empty(cap, np.int64)
    n_frame = np.empty(cap, np.int64)
    n_self = np.empty(cap, np.float64)
    nn = 0
    # the walk's stack: frame, weight, self left, next child edge, node, cumulative before the pending child
    st_f = np.empty(64, np.int64)
    st_w = np.empty(64, np.float64)
    st_self = np.empty(64, np.float64)
    st_next = np.empty(64, np.int64)
    st_node = np.empty(64, np.int64)
    st_mark = np.empty(64, np.float64)
    cum = 0.0
    n_cut = 0
    for r in range(roots.shape[0]):
        f0 = roots[r]
        w0 = root_weight[r]
        if on_stack[f0] or w0 < threshold or total[f0] == 0.0:
            continue
        if nn >= max_nodes:
            n_cut += 1
            continue
        sp = 0
        # enter the root
        if nn == n_parent.shape[0]:
            n_parent = _grow_i64(n_parent, nn + 1)
            n_frame = _grow_i64(n_frame, nn + 1)
            n_self = _grow_f64(n_self, nn + 1)
        n_parent[nn] = -1
        n_frame[nn] = f0
        st_f[0] = f0
        st_w[0] = w0
        st_self[0] = w0
        st_next[0] = child_ptr[f0]
        st_node[0] = nn
        st_mark[0] = cum
        nn += 1
        on_stack[f0] = True
        sp = 1
        while sp > 0:
            t = sp - 1
            f = st_f[t]
            e = st_next[t]
            if e < child_ptr[f + 1]:
                st_next[t] = e + 1
                c = child[e]
                cw = st_w[t] * (child_weight[e] / total[f])
                if on_stack[c] or cw < threshold or total[c] == 0.0:
                    continue
                if nn >= max_nodes:
                    n_cut += 1
                    continue
                if nn == n_parent.shape[0]:
                    n_parent = _grow_i64(n_parent, nn + 1)
                    n_frame = _grow_i64(n_frame, nn + 1)
                    n_self = _grow_f64(n_self, nn + 1)
                if sp == st_f.shape[0]:
                    st_f = _grow_i64(st_f, sp + 1)
                    st_w = _grow_f64(st_w, sp + 1)
                    st_self = _grow_f64(st_self, sp + 1)
                    st_next = _grow_i64(st_next, sp + 1)
                    st_node = _grow_i64(st_node, sp + 1)
                    st_mark = _grow_f64(st_mark, sp + 1)
                n_parent[nn] = st_node[t]
                n_frame[nn] = c
                st_f[sp] = c
                st_w[sp] = cw
                st_self[sp] = cw
                st_next[sp] = child_ptr[c]
                st_node[sp] = nn
                st_mark[sp] = cum
                nn += 1
                on_stack[c] = True
                sp += 1
                continue
            # leave f: its self weight is what its children did not take
            cum += st_self[t]
            n_self[st_node[t]] = st_self[t]
            on_stack[f] = False
            sp -= 1
            if sp > 0:
                st_self[sp - 1] -= cum - st_mark[t]
    return n_parent[:nn].copy(), n_frame[:nn].copy(), n_self[:nn].copy(), n_cut
