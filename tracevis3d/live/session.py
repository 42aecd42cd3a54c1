"""The subscriber: ``LiveSession(endpoint).poll_once()`` grows ``session.trace``.

Every message is validated (protocol.py); a bad one is dropped and counted under its reason
in ``session.bad``, never raised.  Several publishers (sessions) may feed one viewer: each
gets its own threads, its functions are merged by (name, file, line) into one table.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..names import thread_kind
from . import protocol as P
from .reuse import apply_reusing
from .store import ThreadCalls, TraceView
from .transport import Curve, subscriber_socket


@dataclass
class Changes:
    """What one `LiveSession.poll_once` did."""

    messages: int = 0
    events: int = 0
    new_calls: int = 0
    closed_calls: int = 0
    new_threads: int = 0
    new_functions: int = 0
    gaps: int = 0          # messages lost (sequence numbers skipped)
    dropped: int = 0       # events the publishers reported dropped since the last poll
    bad: dict = field(default_factory=dict)
    ended: int = 0         # sessions that said BYE
    new_by_thread: dict = field(default_factory=dict)  # thread -> (first local index, end)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.new_calls or self.closed_calls or self.new_threads or self.new_functions)


def _quota_room(s_used: int, s_quota: int, all_used: int, all_cap: int, floor: int) -> int:
    """How many more entries a session holding ``s_used`` may add: within its quota, and
    within the total ``all_cap`` unless it stays within its ``floor`` (a flood of other
    peers cannot keep a program out)."""
    return max(min(s_quota - s_used, max(all_cap - all_used, floor - s_used)), 0)


def warm_stack_kernel() -> None:
    """The subscriber's stack kernel (`kernels.live.apply_thread_events`) run on four events,
    so that it is loaded (or compiled) when a session starts, not in its first poll; the
    warm-up process (`tracevis3d.warmup`) runs it too."""
    from ..kernels.live import apply_thread_events

    z = lambda dt: np.zeros(4, dt)  # noqa: E731
    apply_thread_events(np.array([1, 1, 2, 2], np.uint8), np.array([0, 1, 1, 0], np.int32),
                        np.arange(4, dtype=np.float64), z(np.int32), z(np.float64), z(np.float64),
                        z(np.int32), z(np.int32), z(np.int32), 0, z(np.int32), 0, -np.inf, 8)


class _Session:
    def __init__(self, sid: int, pid: int, origin_ns: int, tps: int, program: str, offset_us: float):
        self.sid, self.pid, self.origin_ns, self.tps, self.program = sid, pid, origin_ns, tps, program
        self.offset_us = offset_us
        self.expected = 0
        self.func_map = np.zeros(0, np.int32)
        self.func_keys: list = []
        self.thread_map: list[int] = []  # the program's thread id → the viewer's; -1: refused (quota)
        self.threads_kept = 0  # entries of thread_map that are not -1
        #: threads refused by the quota: id → (process, kind of its name), to take a finished
        #: record of that kind when their events come (`reuse.apply_reusing`)
        self.refused: dict = {}
        self.owner: dict = {}  # viewer's thread → the program's thread id it holds now
        #: (process, kind of its first name) → this session's viewer's threads, the last taken last
        self.by_kind: dict = {}
        self.now = 0.0
        self.dropped = 0
        self.ended = False
        self.events_sent = None
        self.last_seen = time.monotonic()
        self.idle = False  # silent for idle_seconds: its slot given back (it may come back)
        self.table_bytes = 0  # bytes of the names and files this session added
        self.pending = None  # a FUNCTIONS table being registered across polls: [entries, first, k]
        self.backlog: deque = deque()  # (type, seq, payload) arrived behind ``pending``

    @property
    def active(self) -> bool:
        """Holds a session slot (not ended, not idle)."""
        return not (self.ended or self.idle)

    def to_us(self, ticks: np.ndarray) -> np.ndarray:
        if self.tps % 1_000_000 == 0:  # exact for ns (÷1000 rounds once)
            us = ticks / (self.tps // 1_000_000)
        else:
            us = ticks * (1e6 / self.tps)
        return us + self.offset_us if self.offset_us else us




class LiveSession:
    """Receive the live feed at ``endpoint`` (binds by default: programs connect to it).

    Memory is bounded, and shared so that no peer locks the others out:

    - ``max_sessions`` publishers at once: a session that said BYE, or was silent for
      ``idle_seconds``, gives its slot back (``too_many_sessions`` beyond);
    - per session, quotas checked *before* a table is decoded: ``session_threads``,
      ``session_functions`` and ``session_table_bytes`` (bytes of names and files);
      in all, ``max_threads``, ``max_functions`` and ``max_table_bytes``, past which a
      session still gets its floor (the smaller of 64 threads / 4096 functions / 1 MB and
      the totals), so a flood of other peers cannot keep a real program out; beyond:
      the message is dropped (``too_many_threads``, ``too_many_functions``, ``table_bytes``);
    - ``max_calls`` in all (events beyond: dropped, reason ``max_calls``);
    - ZeroMQ holds at most ``rcvhwm`` unread messages of at most 4 MB per peer, and a bound
      session admits at most ``max_peers`` connections at a time (the others are refused
      at the handshake and counted, `peers_refused`): at most max_peers x rcvhwm x 4 MB.

    A big FUNCTIONS table is registered in slices across polls, so a poll keeps to its
    ``max_seconds``; the session's later messages wait behind it (at most
    ``session_backlog``; beyond: dropped, ``backlog``, and seen as lost).  Events after a
    session's BYE (``after_bye``) and sequence jumps over ``MAX_SEQ_JUMP`` (``seq_jump``)
    are bad messages."""

    #: a sequence number this far past the expected one is not a loss but a bad stream
    MAX_SEQ_JUMP = 1 << 32

    def __init__(self, endpoint: str, bind: bool = True, curve: Curve | None = None,
                 max_calls: int = 50_000_000, max_sessions: int = 64, max_threads: int = 4096,
                 max_functions: int = 1_000_000, context=None, *, idle_seconds: float = 60.0,
                 session_threads: int = 1024, session_functions: int = 250_000,
                 session_table_bytes: int = 16 << 20, max_table_bytes: int = 96 << 20,
                 session_backlog: int = 64, rcvhwm: int = 16, max_peers: int = 8):
        import zmq

        from .. import kinds

        self._zmq = zmq
        self._kinds = kinds
        self._own_ctx = context is None
        self.ctx = context or zmq.Context()
        self.sock = subscriber_socket(self.ctx, endpoint, bind=bind, curve=curve, rcvhwm=rcvhwm, max_peers=max_peers)
        #: with ``tcp://127.0.0.1:*`` the port ZeroMQ chose
        self.endpoint = self.sock.getsockopt(zmq.LAST_ENDPOINT).decode() if bind else endpoint
        self.max_calls, self.max_sessions = max_calls, max_sessions
        self.max_threads, self.max_functions = max_threads, max_functions
        self.idle_seconds, self.session_backlog = idle_seconds, session_backlog
        self.session_threads, self.session_functions = session_threads, session_functions
        self.session_table_bytes, self.max_table_bytes = session_table_bytes, max_table_bytes
        self.floor_threads, self.floor_functions = min(64, max_threads), min(4096, max_functions)
        self.floor_table_bytes = min(1 << 20, max_table_bytes)
        self.table_bytes = 0
        self.sessions: dict[int, _Session] = {}
        self.threads: list[ThreadCalls] = []
        self.fnames: list = []
        self.ffiles: list = []
        self.flines: list = []
        self.fpaths: list = []
        self.fparsed: list = []  # ParsedName per function (the live view's module colours)
        self.fkind = np.zeros(16, np.uint8)
        self._fkey: dict = {}
        self.view = TraceView()
        self.origin_ns: int | None = None
        self.bad: dict[str, int] = {}
        self.last_bad = ""
        self.gaps = 0
        self.dropped = 0
        self.messages = 0
        self.events = 0
        self.open_applied = 0  # calls of OPEN messages applied (open before this viewer joined)
        self.unbalanced_exits = self.repaired_exits = self.backwards = 0
        self._trace = None
        self._dirty = True
        warm_stack_kernel()  # load the stack kernel and the kind rules now (connect), not in a poll
        kinds.classify_functions(["Lock.acquire (threading.py:1)", "builtins.len"])

    # ------------------------------------------------------------------ API
    @property
    def n_calls(self) -> int:
        return sum(t.n for t in self.threads)

    @property
    def trace(self):
        """The calls so far as a `Trace` (a view: valid until the next poll; `snapshot()` copies)."""
        if self._dirty or self._trace is None:
            self._materialise()
        return self._trace

    def snapshot(self):
        from ..model import Trace

        t = self.trace
        kw = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(t).items()}
        return Trace(**kw)

    def global_index(self, thread: int, local):
        """Index in `trace` of thread ``thread``'s call number ``local``."""
        self.trace
        return self.view.offset[thread] + local

    def poll_once(self, max_messages: int = 1000, max_seconds: float = 0.05, wait: float = 0.0) -> Changes:
        """Read at most ``max_messages`` messages for at most ``max_seconds`` (after waiting up to
        ``wait`` seconds for the first); update the trace; return what changed."""
        t0 = time.perf_counter()
        ch = Changes()
        if wait > 0:
            self.sock.poll(int(wait * 1000), self._zmq.POLLIN)
        deadline = t0 + max_seconds
        self._expire_idle()
        for s in list(self.sessions.values()):  # tables registered in slices, and what waits behind them
            if time.perf_counter() >= deadline:
                break
            self._catch_up(s, ch, deadline)
        recv = self.sock.recv_multipart
        while ch.messages < max_messages and time.perf_counter() < deadline:
            try:
                frames = recv(self._zmq.NOBLOCK, copy=False)
            except self._zmq.Again:
                break
            ch.messages += 1
            try:
                self._handle(frames, ch, deadline)
            except P.BadMessage as e:
                self._count_bad(e, ch)
        self.messages += ch.messages
        if ch.changed or ch.events:
            self._dirty = True
        ch.seconds = time.perf_counter() - t0
        return ch

    @property
    def clients(self) -> tuple[int, int]:
        """(admitted, refused) CURVE clients (binding with an allow-list; else (0, 0))."""
        from .transport import client_counts

        return client_counts(self.sock)

    @property
    def peers_refused(self) -> int:
        """Peers refused at the handshake because ``max_peers`` were connected."""
        from .transport import peer_counts

        return peer_counts(self.sock)[2]

    def close(self) -> None:
        from .transport import close_socket

        close_socket(self.sock, 0)
        if self._own_ctx:
            self.ctx.term()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def status(self) -> str:
        quota = self.bad.get("thread_quota", 0)  # events, not messages: said apart
        bad = sum(self.bad.values()) - quota - self.bad.get("too_many_threads", 0)  # a quota, not a bad feed
        reused = sum(t.members for t in self.threads) - len(self.threads)  # threads in others' records
        return (f"{self.n_calls} calls, {len(self.threads)} threads"
                + (f" (+{reused} in finished threads' places)" if reused else "")
                + f", {len(self.sessions)} programs, {self.dropped} dropped, {self.gaps} lost msgs, {bad} bad msgs"
                + (f", {quota} events of threads past the quota" if quota else ""))

    # ------------------------------------------------------------- handling
    def _count_bad(self, e: P.BadMessage, ch: Changes) -> None:
        ch.bad[e.reason] = ch.bad.get(e.reason, 0) + 1
        self.bad[e.reason] = self.bad.get(e.reason, 0) + 1
        self.last_bad = str(e)

    def _expire_idle(self) -> None:
        now = time.monotonic()
        for s in self.sessions.values():
            if s.active and now - s.last_seen > self.idle_seconds:
                s.idle = True

    def _n_active(self) -> int:
        return sum(1 for s in self.sessions.values() if s.active)

    def _catch_up(self, s: _Session, ch: Changes, deadline: float) -> None:
        """Go on registering ``s``'s table, then the messages that waited behind it."""
        while s.pending is not None or s.backlog:
            if s.pending is not None and not self._register(s, ch, deadline):
                return
            if s.backlog:
                mtype, seq, payload = s.backlog.popleft()
                try:
                    self._dispatch(s, mtype, seq, payload, ch, deadline)
                except P.BadMessage as e:
                    self._count_bad(e, ch)
            if time.perf_counter() >= deadline:
                return

    def _handle(self, frames, ch: Changes, deadline: float = float("inf")) -> None:
        if len(frames) != 2:
            raise P.BadMessage("frames", f"{len(frames)} frames, expected 2")
        mtype, sid, seq = P.decode_header(frames[0].buffer)
        payload = frames[1].buffer
        s = self.sessions.get(sid)
        if s is not None and mtype != P.HELLO and s.active is False and not s.ended:
            if self._n_active() >= self.max_sessions:  # came back from idle: needs a slot again
                raise P.BadMessage("too_many_sessions", f"{self.max_sessions} followed already")
            s.idle = False
        if s is not None:
            s.last_seen = time.monotonic()
        if s is not None and mtype != P.HELLO and (s.pending is not None or s.backlog):
            if len(s.backlog) >= self.session_backlog:
                raise P.BadMessage("backlog", f"session {sid:016x}: {len(s.backlog)} messages wait already")
            s.backlog.append((mtype, seq, bytes(payload)))
            return
        if mtype == P.HELLO:
            pid, origin, tps, program = P.decode_hello(payload)
            if s is None:
                if self._n_active() >= self.max_sessions:
                    raise P.BadMessage("too_many_sessions", f"{self.max_sessions} followed already")
                if self.origin_ns is None:
                    self.origin_ns = origin
                s = self.sessions[sid] = _Session(sid, pid, origin, tps, program,
                                                  (origin - self.origin_ns) / 1000.0)
                s.expected = 0  # a HELLO with seq > 0: joined late, that many messages missed
            elif (pid, origin, tps) != (s.pid, s.origin_ns, s.tps):
                raise P.BadMessage("hello_conflict", "a session id re-used with another clock or pid")
        elif s is None:
            raise P.BadMessage("no_hello", f"session {sid:016x} sent {P.TYPE_NAMES[mtype]} before hello")
        self._dispatch(s, mtype, seq, payload, ch, deadline)

    def _dispatch(self, s: _Session, mtype: int, seq: int, payload, ch: Changes, deadline: float) -> None:
        if s.ended and mtype != P.HELLO:
            raise P.BadMessage("after_bye", f"session {s.sid:016x} sent {P.TYPE_NAMES[mtype]} after bye")
        if seq < s.expected:
            raise P.BadMessage("old_seq", f"seq {seq}, expected {s.expected}")
        if seq - s.expected > self.MAX_SEQ_JUMP:
            raise P.BadMessage("seq_jump", f"seq {seq}, expected {s.expected}")
        if seq > s.expected:
            ch.gaps += seq - s.expected
            self.gaps += seq - s.expected
        s.expected = seq + 1
        if mtype == P.FUNCTIONS:
            self._functions(s, payload, ch, deadline)
        elif mtype == P.THREADS:
            self._threads(s, payload, ch)
        elif mtype == P.EVENTS:
            self._events(s, P.decode_events(payload, len(s.thread_map), len(s.func_keys)), ch)
        elif mtype == P.OPEN:
            self._open(s, P.decode_events(payload, len(s.thread_map), len(s.func_keys)), ch)
        elif mtype == P.DROPS:
            dropped, _ = P.decode_counts(payload, "drops")
            if dropped > s.dropped:
                ch.dropped += dropped - s.dropped
                self.dropped += dropped - s.dropped
                s.dropped = dropped
        elif mtype == P.BYE:
            sent, dropped = P.decode_counts(payload, "bye")
            s.events_sent, s.ended = sent, True
            ch.ended += 1
            if dropped > s.dropped:
                ch.dropped += dropped - s.dropped
                self.dropped += dropped - s.dropped
                s.dropped = dropped

    def _table_quota(self, s: _Session, reason: str, s_used: int, s_new: int, s_quota: int,
                     all_used: int, all_cap: int, floor: int, what: str) -> None:
        """Refuse ``s_new`` more ``what`` for session ``s`` beyond its quota, or beyond the
        total unless the session stays within its floor (`_quota_room`)."""
        if s_new <= _quota_room(s_used, s_quota, all_used, all_cap, floor):
            return
        if s_used + s_new > s_quota:
            raise P.BadMessage(reason, f"session {s.sid:016x}: {s_used} + {s_new} {what}, quota {s_quota}")
        raise P.BadMessage(reason, f"{all_used} + {s_new} {what} in all, limit {all_cap}")

    def _functions(self, s: _Session, payload, ch: Changes, deadline: float) -> None:
        first, count = P.table_head(payload, P.FUNC_ENTRY, P.MAX_FUNCTIONS, "function")
        known = len(s.func_keys)
        if first > known:
            raise P.BadMessage("function_id", f"first id {first} leaves a hole after {known}")
        n_new = max(first + count - known, 0)
        if n_new:  # a re-send of known entries (after every new subscriber) is only checked
            self._table_quota(s, "too_many_functions", known, n_new, self.session_functions, len(self.fnames),
                              self.max_functions, self.floor_functions, "functions")
            self._table_quota(s, "table_bytes", s.table_bytes, len(payload), self.session_table_bytes,
                              self.table_bytes, self.max_table_bytes, self.floor_table_bytes, "table bytes")
        payload = bytes(payload)  # the frame's buffer is not ours past this poll
        s.pending = [P.table_entries(payload, P.FUNC_ENTRY, 2, count, "function"), first, 0]
        self._register(s, ch, deadline)

    def _register(self, s: _Session, ch: Changes, deadline: float) -> bool:
        """Register the entries of ``s.pending`` 64 at a time until ``deadline``; True when
        the table is done (or turned out bad: counted, its remaining entries dropped)."""
        from ..names import parse_function_name

        entries, first, k = s.pending
        done = False
        while not done:
            added = []
            ids = []
            try:
                for _ in range(64):
                    line, name, file = next(entries)
                    idx = first + k
                    k += 1
                    if idx < len(s.func_keys):
                        if s.func_keys[idx] != (name, file, line):
                            raise P.BadMessage("function_conflict", f"function {idx} re-sent as {name!r}")
                        continue
                    key = (name, file, line)
                    g = self._fkey.get(key)
                    if g is None:
                        g = self._fkey[key] = len(self.fnames)
                        parsed = parse_function_name(name, file, line)
                        self.fnames.append(name)
                        self.ffiles.append(file or parsed.file)
                        self.flines.append(line if line >= 0 else parsed.line)
                        self.fpaths.append(parsed.path)
                        self.fparsed.append(parsed)
                        added.append(name)
                        nb = len(name) + len(file) + P.FUNC_ENTRY.size
                        s.table_bytes += nb
                        self.table_bytes += nb
                    s.func_keys.append(key)
                    ids.append(g)
            except StopIteration:
                done = True
            except P.BadMessage as e:
                self._count_bad(e, ch)
                done = True
            if ids:
                s.func_map = np.concatenate([s.func_map, np.asarray(ids, np.int32)])
            if added:
                kinds = self._kinds.classify_functions(added)
                n0 = len(self.fnames) - len(added)
                if len(self.fnames) > self.fkind.shape[0]:
                    self.fkind = np.concatenate([self.fkind, np.zeros(max(len(self.fnames), self.fkind.shape[0]),
                                                                      np.uint8)])
                self.fkind[n0: len(self.fnames)] = kinds
                ch.new_functions += len(added)
            if not done and time.perf_counter() >= deadline:
                s.pending[2] = k
                return False
        s.pending = None
        return True

    def _threads(self, s: _Session, payload, ch: Changes) -> None:
        """THREADS: new entries are registered up to the thread quotas; the entries past them
        are refused (``too_many_threads``, once per message) but keep their ids, so that the
        session's later events of them are dropped and counted (``thread_quota``) while those
        of its other threads are kept (a server with a thread per request outgrows any quota:
        its events went on arriving in messages that also named a refused thread, and every
        such message was dropped whole)."""
        first, count = P.table_head(payload, P.THREAD_ENTRY, P.MAX_THREADS, "thread")
        known = len(s.thread_map)
        if first > known:
            raise P.BadMessage("thread_id", f"first id {first} leaves a hole after {known}")
        n_new = max(first + count - known, 0)
        room = self._thread_room(s, n_new)
        if n_new and room:
            self._table_quota(s, "table_bytes", s.table_bytes, len(payload), self.session_table_bytes,
                              self.table_bytes, self.max_table_bytes, self.floor_table_bytes, "table bytes")
        _, entries = P.decode_threads(payload)
        refused = 0
        for k, (pid, tid, name, process) in enumerate(entries):
            if first + k < known:
                ti = s.thread_map[first + k]
                if ti >= 0 and self.threads[ti].name != name:
                    self.threads[ti].name = name
                    self._dirty = True
                continue
            kind = (process or s.program, thread_kind(name))  # what a refused thread's record must share
            if room <= 0:
                s.refused[len(s.thread_map)] = kind
                s.thread_map.append(-1)
                refused += 1
                continue
            room -= 1
            nb = len(name) + len(process) + P.THREAD_ENTRY.size
            s.table_bytes += nb
            self.table_bytes += nb
            s.owner[len(self.threads)] = len(s.thread_map)
            s.by_kind.setdefault(kind, deque()).append(len(self.threads))
            s.thread_map.append(len(self.threads))
            s.threads_kept += 1
            self.threads.append(ThreadCalls(pid, tid & 0x7FFFFFFFFFFFFFFF, name, process or s.program, s.sid))
            ch.new_threads += 1
        if refused:
            ch.bad["too_many_threads"] = ch.bad.get("too_many_threads", 0) + 1
            self.bad["too_many_threads"] = self.bad.get("too_many_threads", 0) + 1
            self.last_bad = (f"too_many_threads: session {s.sid:016x}: {refused} of {count} threads past the "
                             f"quota ({s.threads_kept} kept); their events are dropped unless a finished thread of "
                             f"their kind leaves them its record")

    def _thread_room(self, s: _Session, n_new: int) -> int:
        """How many of ``n_new`` threads session ``s`` may still add (`_quota_room`)."""
        return min(n_new, _quota_room(s.threads_kept, self.session_threads, len(self.threads), self.max_threads,
                                      self.floor_threads))

    def _open(self, s: _Session, ev: np.ndarray, ch: Changes) -> None:
        """OPEN: the calls open in the program when it was sent (ENTER records, outermost
        first).  Applied to the threads this viewer has no calls of (it joined after they
        began); a viewer that has followed a thread from its start has them already."""
        if ev.shape[0] == 0:
            return
        if (ev["type"] != P.ENTER).any():
            raise P.BadMessage("open_type", "an OPEN message holds only ENTER records")
        fresh = np.array([ti >= 0 and self.threads[ti].n == 0 for ti in s.thread_map], np.bool_)
        keep = fresh[ev["thread"]]
        k = int(keep.sum())
        if k:
            self._events(s, ev[keep], ch)
            self.events -= k  # `events` counts what the program sent as EVENTS
            self.open_applied += k

    def _events(self, s: _Session, ev: np.ndarray, ch: Changes) -> None:
        if ev.shape[0] and s.refused and any(int(t) in s.refused for t in np.unique(ev["thread"])):
            # threads refused by the quota take finished threads' records (`reuse.apply_reusing`)
            if apply_reusing(s, ev, self.threads, lambda part: self._apply_events(s, part, ch)):
                self._dirty = True
        else:
            self._apply_events(s, ev, ch)

    def _apply_events(self, s: _Session, ev: np.ndarray, ch: Changes) -> None:
        from ..kernels.live import MAX_EXIT_SEARCH, apply_thread_events

        n = ev.shape[0]
        if n == 0:
            return
        if s.threads_kept < len(s.thread_map):  # threads refused by the quota: their events dropped
            kept = np.asarray(s.thread_map, np.int64)[ev["thread"]] >= 0
            if not kept.all():
                lost = int(n - kept.sum())
                ch.bad["thread_quota"] = ch.bad.get("thread_quota", 0) + lost
                self.bad["thread_quota"] = self.bad.get("thread_quota", 0) + lost
                ev = ev[kept]
                n = ev.shape[0]
                if n == 0:
                    return
        if self.n_calls + n > self.max_calls:
            raise P.BadMessage("max_calls", f"the trace holds {self.n_calls} calls, limit {self.max_calls}")
        ch.events += n
        self.events += n
        etype = ev["type"]
        efunc = s.func_map[ev["func"]]
        ets = s.to_us(ev["ts"])
        th = ev["thread"]
        if th.min() == th.max():
            groups = [(int(th[0]), slice(None))]
        else:
            order = np.argsort(th, kind="stable")
            ths = th[order]
            cuts = np.flatnonzero(ths[1:] != ths[:-1]) + 1
            groups = [(int(ths[a]), order[a:b]) for a, b in zip(np.r_[0, cuts], np.r_[cuts, n])]
        for local, sel in groups:
            ti = s.thread_map[local]
            T = self.threads[ti]
            et, ef, es = np.ascontiguousarray(etype[sel]), efunc[sel], ets[sel]
            T.reserve(int(np.count_nonzero(et == P.ENTER)))
            n0 = T.n
            (T.n, T.sp, T.last_ts, unb, rep, back, closed) = apply_thread_events(
                et, ef, es, T.func, T.start, T.end, T.depth, T.parent, T.endi, T.n, T.stack, T.sp,
                T.last_ts, MAX_EXIT_SEARCH)
            if T.n > n0:
                lo, _ = ch.new_by_thread.get(ti, (n0, n0))
                ch.new_by_thread[ti] = (lo, T.n)
            ch.new_calls += T.n - n0
            ch.closed_calls += closed
            for reason, k in (("unbalanced_exit", unb), ("repaired_exit", rep), ("time_backwards", back)):
                if k:
                    ch.bad[reason] = ch.bad.get(reason, 0) + k
                    self.bad[reason] = self.bad.get(reason, 0) + k
            self.unbalanced_exits += unb
            self.repaired_exits += rep
            s.now = max(s.now, float(es[-1]) if es.shape[0] else s.now, T.last_ts)

    def _materialise(self) -> None:
        now = [self.sessions[t.session].now for t in self.threads]
        self.view.materialise(self.threads, now, self.fkind)
        meta = {"source": f"live:{self.endpoint}", "format": "tracevis3d-live",
                "clock_origin": (self.origin_ns or 0) / 1000.0, "time_unit": "us",
                "live": {"dropped": self.dropped, "gaps": self.gaps, "bad": dict(self.bad),
                         "open_calls": int(sum(t.sp for t in self.threads))}}
        self._trace = self.view.trace(self.threads, (self.fnames, self.ffiles, self.flines, self.fpaths), meta)
        self._dirty = False
