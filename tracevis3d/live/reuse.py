"""Threads past a live session's thread quota take finished threads' records:
`apply_reusing` (`session.LiveSession`'s EVENTS naming refused threads).

A server's thread per request outgrows any quota, and its live view froze at its 1,024th
request.  A refused thread takes, when its events come, the record of a finished thread of the
session of its kind (the same process and `names.thread_kind`), and the record holds its
threads one after another, as a packed lane does (``members``).
"""
from __future__ import annotations

import numpy as np

#: the work of `apply_reusing` per EVENTS message, whatever a peer sends: a record looked at
#: costs 1 (a server's requests take one of the first they look at), the events applied up to
#: a refused thread's first `REUSE_SLICE_WORK` (a traced program's message holds one thread's
#: batch; a replay's, thousands of threads)
MAX_REUSE_WORK = 1 << 17
REUSE_SLICE_WORK = 16


def apply_reusing(s, ev: np.ndarray, threads: list, apply) -> int:
    """Apply the EVENTS ``ev`` of session ``s`` (``apply(part)``: the session's application of
    events) where some name threads refused by the quota (``s.refused``: id → (process, kind)).
    The events are applied in time order up to each refused thread's first (a message may hold
    the end of one request and the start of the next; each thread's events keep their order,
    times that go back included), and the thread then takes the record (of ``threads``) of its
    kind taken (or made) last that has no open call, whose last event came before its first
    and which has no event left in the message: a few records carry the stream of requests one
    after another, as a packed lane does, and the others keep their own threads (taken
    round-robin, every record spanned the whole run and the lanes could not pack them).  The
    record's former thread lets it go: its later events are dropped and counted
    (``thread_quota``, by ``apply``), as a refused thread's are.  The work per message is
    bounded (`MAX_REUSE_WORK`): the threads past it lose this message's events and try again
    in the next.  Returns how many threads took a record."""
    ts = s.to_us(ev["ts"])
    thread = np.asarray(ev["thread"], np.int64)
    by_thread = np.argsort(thread, kind="stable")
    cuts = np.flatnonzero(np.diff(thread[by_thread])) + 1
    key = np.empty_like(ts)  # each thread's running maximum: its events keep their order when sorted
    for seg in np.split(by_thread, cuts):
        key[seg] = np.maximum.accumulate(ts[seg])
    order = np.argsort(key, kind="stable")
    ev, ts = ev[order], key[order]
    local = np.asarray(ev["thread"], np.int64)
    u, at = np.unique(local, return_index=True)
    first = {int(t): int(i) for t, i in zip(u, at) if int(t) in s.refused}  # its first event's position
    last = np.full(len(s.thread_map), -1, np.int64)
    last[local] = np.arange(local.size)  # the last event of each thread (later writes win)
    done = taken = 0
    budget = MAX_REUSE_WORK
    for t in sorted(first, key=first.get):
        if budget <= 0:
            break
        p = first[t]
        apply(ev[done:p])
        done = p
        budget -= REUSE_SLICE_WORK
        queue = s.by_kind.get(s.refused[t])  # the kind's records, the last taken last
        best, looked = -1, 0
        for ti in reversed(queue or ()):
            if looked >= budget:
                break
            looked += 1
            T = threads[ti]
            if T.sp == 0 and T.n and T.last_ts <= ts[p] and last[s.owner[ti]] < p:
                best = ti
                break
        budget -= max(looked, 1)
        if best < 0:
            continue
        queue.remove(best)  # to the back: taken again first
        queue.append(best)
        s.thread_map[s.owner[best]] = -1
        s.thread_map[t] = best
        s.owner[best] = t
        del s.refused[t]
        threads[best].members += 1
        taken += 1
    apply(ev[done:])
    return taken
