"""Kernels that turn the stacks of the JSON profile formats into a stack table
(`tracevis3d.io.stacks.StackProfile`: a parent and a frame per stack, a stack per sample).

The formats write stacks three ways, and each has one kernel here:

- as a list of frame indices per sample, root first (speedscope's sampled profiles,
  stackprof's ``raw``, Safari's ``stackFrames`` once numbered): `stack_paths`;
- as open/close events (speedscope's evented profiles): `evented_stacks`;
- as a prefix table already (Firefox), from which some frames are hidden (the profiler's
  "JavaScript only"): `nearest_kept`.

`stackprof_raw` cuts stackprof's flat ``raw`` array into its samples, `on_previous_stack` puts
its lone garbage-collection samples on the stack they interrupted.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: `evented_stacks` / `stackprof_raw` status codes
OK = 0
CLOSE_EMPTY = 1  # a close event with no frame open
CLOSE_MISMATCH = 2  # a close event whose frame is not the one on top
RAW_CUT = 3  # stackprof raw: a sample runs past the end of the array
RAW_BAD_HEIGHT = 4  # stackprof raw: a stack height or sample count below 0


@njit(cache=True, nogil=True)
def mix_pair(a, b):
    """A 64-bit hash of the pair (a, b) (splitmix64's finaliser over a multiplicative mix)."""
    h = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15) ^ (np.uint64(b) + np.uint64(0x632BE59BD9B4E019))
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


@njit(cache=True, nogil=True)
def stack_paths(flat, offsets):
    """The prefix tree of the stacks ``flat[offsets[k]:offsets[k+1]]`` (frame ids ≥ 0, root
    first), one per sample k.

    Node N(p, f) is the child with frame f of node p (p = -1 at the root); the stack of sample k
    is the node reached from the root by its frames, N(...N(N(-1, s0), s1)..., s_last); an
    empty stack is -1.  This is the grouping speedscope's ``StackListProfileBuilder`` makes of
    the same lists (``profile.ts``: one call-tree node per distinct frame path).

    Returns (parent, frame, sample_stack): the nodes numbered by first appearance.  O(total
    expected): the part a sample shares with the previous sample's list is not looked up again
    (consecutive samples share most of their stacks), the rest goes through an open-addressing
    table on (parent, frame) that doubles when half full.
    """
    n = offsets.shape[0] - 1
    maxlen = 0
    for k in range(n):
        ln = offsets[k + 1] - offsets[k]
        if ln > maxlen:
            maxlen = ln
    sample_stack = np.full(max(n, 0), -1, np.int64)
    path = np.empty(max(maxlen, 1), np.int64)  # the previous sample's nodes, by depth
    cap_n = 1024
    parent = np.empty(cap_n, np.int64)
    frame = np.empty(cap_n, np.int64)
    m = 0
    cap = 2048
    slots = np.full(cap, -1, np.int64)
    prev_a = 0
    prev_len = 0
    for k in range(n):
        a = offsets[k]
        ln = offsets[k + 1] - a
        c = 0
        lim = ln if ln < prev_len else prev_len
        while c < lim and flat[a + c] == flat[prev_a + c]:
            c += 1
        node = path[c - 1] if c > 0 else np.int64(-1)
        for d in range(c, ln):
            f = flat[a + d]
            mask = np.uint64(cap - 1)
            h = mix_pair(node + 1, f) & mask
            while True:
                x = slots[h]
                if x < 0:
                    if m == cap_n:
                        cap_n *= 2
                        p2 = np.empty(cap_n, np.int64)
                        f2 = np.empty(cap_n, np.int64)
                        p2[:m] = parent[:m]
                        f2[:m] = frame[:m]
                        parent, frame = p2, f2
                    parent[m] = node
                    frame[m] = f
                    slots[h] = m
                    x = m
                    m += 1
                    if 2 * m > cap:  # rehash into a table twice as large
                        cap *= 2
                        slots = np.full(cap, -1, np.int64)
                        mask2 = np.uint64(cap - 1)
                        for y in range(m):
                            g = mix_pair(parent[y] + 1, frame[y]) & mask2
                            while slots[g] >= 0:
                                g = (g + np.uint64(1)) & mask2
                            slots[g] = y
                    break
                if parent[x] == node and frame[x] == f:
                    break
                h = (h + np.uint64(1)) & mask
            node = x
            path[d] = node
        sample_stack[k] = node
        prev_a = a
        prev_len = ln
    return parent[:m].copy(), frame[:m].copy(), sample_stack


@njit(cache=True, nogil=True)
def evented_stacks(is_open, frame):
    """The stack after each of a profile's open/close events (speedscope's evented profiles,
    ``CallTreeProfileBuilder.enterFrame``/``leaveFrame`` in its ``profile.ts``).

    An open event pushes a new node (its frame, on top of the node open before it); a close
    event pops the top node, whose frame must be the event's.  Returns (parent, node_frame,
    after, status, where, open_left): one node per open event (numbered in event order),
    ``after[k]`` the node on top after event k (-1: nothing open), ``status`` `OK`,
    `CLOSE_EMPTY` or `CLOSE_MISMATCH` for the first bad close event, ``where`` its index, and
    ``open_left`` the frames still open at the end.  O(events).
    """
    n = is_open.shape[0]
    n_open = 0
    for k in range(n):
        if is_open[k]:
            n_open += 1
    parent = np.empty(n_open, np.int64)
    node_frame = np.empty(n_open, np.int64)
    after = np.full(n, -1, np.int64)
    stack = np.empty(max(n_open, 1), np.int64)
    sp = 0
    m = 0
    for k in range(n):
        if is_open[k]:
            parent[m] = stack[sp - 1] if sp > 0 else -1
            node_frame[m] = frame[k]
            stack[sp] = m
            sp += 1
            m += 1
        else:
            if sp == 0:
                return parent, node_frame, after, CLOSE_EMPTY, k, sp
            if node_frame[stack[sp - 1]] != frame[k]:
                return parent, node_frame, after, CLOSE_MISMATCH, k, sp
            sp -= 1
        after[k] = stack[sp - 1] if sp > 0 else -1
    return parent, node_frame, after, OK, -1, sp


@njit(cache=True, nogil=True)
def nearest_kept_cut(parent, keep):
    """up[s]: the nearest of stack s and its ancestors (following ``parent``: index, -1 none)
    whose ``keep`` is set, -1 when none is; and cut[s]: whether s's parent link closes a cycle
    (cut there: s is then a root).  A parent out of range is a root.  O(n): each stack is
    resolved once, on an explicit path (the walk stops at a stack already resolved)."""
    n = parent.shape[0]
    up = np.full(n, -1, np.int64)
    cut = np.zeros(n, np.bool_)
    state = np.zeros(n, np.int8)  # 0 new, 1 on the current path, 2 resolved
    path = np.empty(max(n, 1), np.int64)
    for s0 in range(n):
        if state[s0] != 0:
            continue
        m = 0
        x = s0
        below = np.int64(-1)
        while True:
            state[x] = 1
            path[m] = x
            m += 1
            p = parent[x]
            if p < 0 or p >= n:
                below = -1
                break
            if state[p] == 1:  # back on the path: x's link closes a cycle
                cut[x] = True
                below = -1
                break
            if state[p] == 2:
                below = up[p]
                break
            x = p
        for q in range(m - 1, -1, -1):
            x = path[q]
            if keep[x]:
                below = x
            up[x] = below
            state[x] = 2
    return up, cut


@njit(cache=True, nogil=True)
def nearest_kept(parent, keep):
    """up[s]: the nearest stack at or under stack s (following ``parent``) whose ``keep`` is
    set, -1 when none is: the stack s becomes once the frames not kept are hidden (the Firefox
    Profiler's "JavaScript only" call tree, speedscope's ``firefox.ts`` keeping only the frames
    with a script location).  A parent out of range is a root; a parent link that closes a
    cycle is cut there (that stack a root): `nearest_kept_cut`."""
    up, _ = nearest_kept_cut(parent, keep)
    return up


@njit(cache=True, nogil=True)
def stackprof_raw(raw):
    """stackprof's ``raw`` array cut into samples: ``[height, frame ids (root first)...,
    count]`` repeated (its ``stackprof.c``; read as speedscope's ``stackprof.ts`` reads it).

    Returns (frame_pos, offsets, counts, status, where): the positions in ``raw`` of the frame
    ids of sample k, ``frame_pos[offsets[k]:offsets[k+1]]``, its count, and `OK`, `RAW_CUT` or
    `RAW_BAD_HEIGHT` with the index into ``raw`` of the first bad entry (``where``).
    O(len(raw)).
    """
    n = raw.shape[0]
    k = 0
    n_samples = 0
    total = 0
    while k < n:
        h = raw[k]
        if h < 0 or h > n:
            return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), RAW_BAD_HEIGHT, k
        if k + 1 + h >= n:
            return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), RAW_CUT, k
        if raw[k + 1 + h] < 0:
            return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), RAW_BAD_HEIGHT, k + 1 + h
        total += h
        n_samples += 1
        k += h + 2
    frame_pos = np.empty(total, np.int64)
    offsets = np.zeros(n_samples + 1, np.int64)
    counts = np.empty(n_samples, np.int64)
    k = 0
    s = 0
    pos = 0
    while k < n:
        h = raw[k]
        for j in range(k + 1, k + 1 + h):
            frame_pos[pos] = j
            pos += 1
        counts[s] = raw[k + 1 + h]
        s += 1
        offsets[s] = pos
        k += h + 2
    return frame_pos, offsets, counts, OK, -1


@njit(cache=True, nogil=True)
def on_previous_stack(flat, offsets, lone):
    """The stacks ``flat[offsets[k]:offsets[k+1]]`` with each sample k marked ``lone`` (a
    single frame, stackprof's "(garbage collection)") put on top of the last stack before it
    that is not marked: stackprof records the GC without the Ruby stack it interrupted, and
    speedscope (``stackprof.ts``) prepends the previous sample's stack.  speedscope prepends
    the previous stack even when that was a GC sample too (a chain that grows a frame per
    sample); here each stands on the last stack that was not, which keeps every stack within
    the file's own depths.  Returns (flat, offsets).  O(output)."""
    n = offsets.shape[0] - 1
    total = 0
    last = 0
    for k in range(n):
        ln = offsets[k + 1] - offsets[k]
        if lone[k]:
            total += last + ln
        else:
            total += ln
            last = ln
    out = np.empty(total, np.int64)
    out_off = np.zeros(n + 1, np.int64)
    pos = 0
    last_a = 0
    last_len = 0
    for k in range(n):
        a = pos
        if lone[k]:
            for j in range(last_len):
                out[pos] = out[last_a + j]
                pos += 1
        else:
            last_a = a
            last_len = offsets[k + 1] - offsets[k]
        for j in range(offsets[k], offsets[k + 1]):
            out[pos] = flat[j]
            pos += 1
        out_off[k + 1] = pos
    return out, out_off
