"""Growing one thread's call tree from ENTER/EXIT events (the live feed's subscriber).

Calls are appended in the order they are entered, which is depth-first pre-order: the
per-thread layout of the Trace model (DESIGN.md, "The Trace model"); the open calls form a
stack.  No paper formula: this is the classic stack construction of a call tree from a
balanced parenthesis sequence (SyncTrace Sec. III builds its trees from the same events).
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: how far down the open-call stack an EXIT may look for its call (bounds hostile input)
MAX_EXIT_SEARCH = 256


@njit(cache=True)
def apply_thread_events(etype, efunc, ets, func, start, end, depth, parent, endi, n, stack, sp,
                        last_ts, max_search):
    """Append the calls of one thread's events; close calls on EXIT.

    ENTER (1) at time t: call n gets ``parent = stack[sp-1]`` (or -1), ``depth = depth[parent]+1``
    (or 0), ``start = end = t``, ``endi = -1`` (open), and is pushed.  EXIT (2) of function f
    at t: the innermost open call of f within ``max_search`` levels is popped together with the
    calls above it (``repaired``), each gets ``end = t`` and ``endi = n`` (its subtree is
    everything appended since it was entered); no such call: ``unbalanced``.
    A time below the thread's last time is raised to it (``backwards``).
    Buffers must have room for every ENTER.  Returns
    (n, sp, last_ts, unbalanced, repaired, backwards, closed).
    """
    unbalanced = 0
    repaired = 0
    backwards = 0
    closed = 0
    for k in range(etype.shape[0]):
        t = ets[k]
        if t < last_ts:
            t = last_ts
            backwards += 1
        last_ts = t
        if etype[k] == 1:
            func[n] = efunc[k]
            start[n] = t
            end[n] = t
            if sp > 0:
                p = stack[sp - 1]
                parent[n] = p
                depth[n] = depth[p] + 1
            else:
                parent[n] = -1
                depth[n] = 0
            endi[n] = -1
            stack[sp] = n
            sp += 1
            n += 1
        else:
            j = sp - 1
            lo = max(sp - max_search, 0)
            while j >= lo and func[stack[j]] != efunc[k]:
                j -= 1
            if j < lo:
                unbalanced += 1
                continue
            repaired += sp - 1 - j
            while sp > j:
                sp -= 1
                c = stack[sp]
                end[c] = t
                endi[c] = n
                closed += 1
    return n, sp, last_ts, unbalanced, repaired, backwards, closed


def apply_thread_events_py(etype, efunc, ets, func, start, end, depth, parent, endi, n, stack, sp,
                           last_ts, max_search):
    """Brute-force twin of `apply_thread_events` (plain Python lists of open calls)."""
    open_calls = [int(c) for c in stack[:sp]]
    unbalanced = repaired = backwards = closed = 0
    for k in range(len(etype)):
        t = float(ets[k])
        if t < last_ts:
            t, backwards = last_ts, backwards + 1
        last_ts = t
        if etype[k] == 1:
            p = open_calls[-1] if open_calls else -1
            func[n], start[n], end[n], endi[n] = efunc[k], t, t, -1
            parent[n], depth[n] = p, (depth[p] + 1 if p >= 0 else 0)
            open_calls.append(n)
            n += 1
            continue
        window = open_calls[-max_search:]
        hits = [i for i, c in enumerate(window) if func[c] == efunc[k]]
        if not hits:
            unbalanced += 1
            continue
        cut = len(open_calls) - len(window) + hits[-1]
        repaired += len(open_calls) - 1 - cut
        for c in open_calls[cut:]:
            end[c], endi[c] = t, n
            closed += 1
        del open_calls[cut:]
    stack[: len(open_calls)] = open_calls
    return n, len(open_calls), last_ts, unbalanced, repaired, backwards, closed


@njit(cache=True, nogil=True)
def stack_events(enter, fids, ts, stack, stack_t, depth, is_c, thread, origin, enter_type, exit_type):
    """One thread's raw profile events → packed protocol records, carrying its open calls.

    ``stack[:depth]`` holds the function ids of the calls open before the batch and
    ``stack_t[:depth]`` their record times.  An enter pushes its function and time; an exit
    pops, and an exit with nothing open (a call entered before tracing began) is dropped.
    Record k is the 16-byte EVENT_DTYPE (live protocol, little endian) as two int64:
    ``type | flags << 8 | thread << 16 | func << 32`` (flags: 1 for a C function) and
    ``max(t - origin, 0)``.  Returns (records (m, 2), stack, stack_t, depth); the stacks grow
    by doubling.
    """
    n = enter.shape[0]
    out = np.empty((n, 2), np.int64)
    m = 0
    for i in range(n):
        f = fids[i]
        t = ts[i] - origin
        if t < 0:
            t = 0
        if enter[i]:
            if depth == stack.shape[0]:
                bigger = np.empty(max(16, 2 * depth), np.int64)
                bigger[:depth] = stack[:depth]
                stack = bigger
                bigger_t = np.empty(max(16, 2 * depth), np.int64)
                bigger_t[:depth] = stack_t[:depth]
                stack_t = bigger_t
            stack[depth] = f
            stack_t[depth] = t
            depth += 1
            kind = enter_type
        elif depth == 0:
            continue
        else:
            depth -= 1
            kind = exit_type
        out[m, 0] = kind | (is_c[f] << 8) | (thread << 16) | (f << 32)
        out[m, 1] = t
        m += 1
    return out[:m], stack, stack_t, depth
