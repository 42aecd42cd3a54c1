"""The live viewer's shares (issue 20), over real ZeroMQ sockets on loopback with frames
written by hand from docs/live-protocol.md: session slots given back on BYE and when idle,
per-session quotas checked before a table is decoded (a flooding peer cannot keep a real
program out), big tables registered in slices across polls, events after BYE and absurd
sequence jumps refused."""
import time

import pytest
import zmq

from live_helpers import bye, events, functions, hdr, hello, threads
from tracevis3d.live import LiveSession


class Peer:
    """One publishing peer (its own XPUB socket) speaking for any session ids."""

    def __init__(self, ctx, sess):
        self.session = sess
        self.sock = ctx.socket(zmq.XPUB)
        self.sock.connect(sess.endpoint)
        t0 = time.monotonic()
        while not self.sock.poll(10) and time.monotonic() - t0 < 5:
            sess.poll_once()
        self.sock.recv()
        self.seq = {}

    def send(self, sid, mtype, payload):
        s = self.seq.get(sid, 0)
        self.seq[sid] = s + 1
        sent(self.session)
        self.sock.send_multipart([hdr(mtype, s, sid=sid), payload])

    def program(self, sid, n_funcs=2, name=b"prog"):
        """A small real program: hello, functions, a thread, two calls, bye."""
        self.send(sid, 1, hello(name))
        self.send(sid, 2, functions(0, [b"main%d (a.py:1)" % k for k in range(n_funcs)]))
        self.send(sid, 3, threads(0, [b"MainThread"]))
        self.send(sid, 4, events([(1, 0, 0, 0, 1000), (1, 0, 0, 1, 2000), (2, 0, 0, 1, 3000), (2, 0, 0, 0, 4000)]))
        self.send(sid, 6, bye(4))


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


def sent(sess, n=1):
    """Count ``n`` more messages sent to ``sess`` by the tests' peers (`settle` waits for them)."""
    sess.tests_sent = getattr(sess, "tests_sent", 0) + n


def settle(sess, seconds=120.0):
    """Poll until the session has received every message the peers sent it and has nothing
    pending (the synchronisation is the count, not a quiet spell: a loaded machine delivers
    late); a test fails after ``seconds`` instead of hanging."""
    deadline = time.monotonic() + seconds
    while True:
        sess.poll_once(max_messages=1000, max_seconds=0.05, wait=0.05)
        if sess.messages >= getattr(sess, 'tests_sent', 0) and not any(
                s.pending is not None or s.backlog for s in sess.sessions.values()):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the session received {sess.messages} of {getattr(sess, 'tests_sent', 0)} messages "
                        f"in {seconds:.0f} s")


def test_ended_and_idle_sessions_give_their_slots_back(ctx):
    with LiveSession("tcp://127.0.0.1:*", max_sessions=2, idle_seconds=0.5) as sess:
        p = Peer(ctx, sess)
        for sid in range(1, 70):  # 69 ordinary runs one after another: more than the slots
            p.program(sid)
            settle(sess)
        assert "too_many_sessions" not in sess.bad and sess.n_calls == 69 * 2
        p.send(100, 1, hello())
        p.send(101, 1, hello())  # two silent programs hold both slots
        settle(sess)
        p.send(102, 1, hello())
        settle(sess)
        assert sess.bad.get("too_many_sessions") == 1
        time.sleep(0.6)  # idle: their slots come back
        p.program(103)
        settle(sess)
        assert sess.bad.get("too_many_sessions") == 1 and sess.sessions[103].ended
        p.sock.close(0)


def test_a_flooding_peer_cannot_keep_a_real_program_out(ctx):
    with LiveSession("tcp://127.0.0.1:*", max_functions=100, session_functions=80, max_threads=8,
                     session_threads=6, session_table_bytes=1 << 20, max_table_bytes=4 << 20) as sess:
        flood, real = Peer(ctx, sess), Peer(ctx, sess)
        flood.send(7, 1, hello(b"flood"))
        flood.send(7, 2, functions(0, [b"f%d" % k for k in range(80)]))      # its whole quota
        flood.send(7, 2, functions(80, [b"g%d" % k for k in range(10)]))     # beyond it
        flood.send(7, 3, threads(0, [b"t%d" % k for k in range(7)]))         # beyond its 6
        flood.send(7, 3, threads(0, [b"t%d" % k for k in range(6)]))
        flood.send(7, 2, functions(80, [b"x" * 4000] * 0))                  # empty: fine
        settle(sess)
        assert sess.bad == {"too_many_functions": 1, "too_many_threads": 1}, sess.bad
        other = Peer(ctx, sess)
        other.send(8, 1, hello(b"flood2"))
        other.send(8, 2, functions(0, [b"h%d" % k for k in range(30)]))  # over the total of 100, under its floor
        other.send(8, 3, threads(0, [b"u%d" % k for k in range(4)]))     # over the total of 8, under its floor
        real.program(9, n_funcs=3)
        settle(sess)
        assert sess.sessions[9].ended and len(sess.sessions[9].func_keys) == 3
        t = sess.trace.check()
        assert [t.function_names[f] for f in t.func[t.thread == sess.sessions[9].thread_map[0]]] == [
            "main0 (a.py:1)", "main1 (a.py:1)"]
        for p in (flood, real, other):
            p.sock.close(0)


def test_table_bytes_are_bounded_before_decoding(ctx):
    with LiveSession("tcp://127.0.0.1:*", session_table_bytes=200_000, max_table_bytes=300_000) as sess:
        p = Peer(ctx, sess)
        p.send(5, 1, hello())
        for k in range(40):  # 40 tables of long names, 160 KB each
            p.send(5, 2, functions(40 * k, [b"%05d" % (40 * k + j) + b"n" * 4000 for j in range(40)]))
        settle(sess)
        assert sess.sessions[5].table_bytes <= 200_000 and sess.table_bytes <= 300_000
        assert sess.bad.get("table_bytes", 0) >= 1 and len(sess.fnames) == 40
        p.sock.close(0)


def test_a_big_table_is_registered_across_polls_in_order(ctx):
    with LiveSession("tcp://127.0.0.1:*") as sess:
        p = Peer(ctx, sess)
        n = 6000
        p.send(3, 1, hello())
        p.send(3, 2, functions(0, [b"pkg.mod%d.Klass.method_%d (/src/pkg/mod.py:%d)" % (k, k, k) for k in range(n)]))
        p.send(3, 3, threads(0, [b"MainThread"]))
        p.send(3, 4, events([(1, 0, 0, n - 1, 1000), (2, 0, 0, n - 1, 2000)]))
        p.send(3, 6, bye(2))
        polls = 0
        while not (3 in sess.sessions and sess.sessions[3].ended):
            sess.poll_once(max_messages=1000, max_seconds=0.01, wait=0.05)
            polls += 1
            assert polls < 10_000
        assert polls >= 3  # a 10 ms budget cannot register 6000 names in one poll
        assert len(sess.fnames) == n and sess.bad == {}
        t = sess.trace.check()
        assert len(t) == 1 and t.function_names[t.func[0]].startswith("pkg.mod5999.")
        p.sock.close(0)


def test_events_after_bye_and_absurd_sequence_jumps_are_bad(ctx):
    with LiveSession("tcp://127.0.0.1:*") as sess:
        p = Peer(ctx, sess)
        p.program(11)
        p.send(11, 4, events([(1, 0, 0, 0, 9000)]))
        p.send(12, 1, hello())
        p.sock.send_multipart([hdr(2, 1 << 40, sid=12), functions(0, [b"f"])])
        sent(sess)
        settle(sess)
        assert sess.bad == {"after_bye": 1, "seq_jump": 1}, sess.bad
        assert sess.n_calls == 2 and sess.gaps == 0
        p.sock.close(0)


def test_connected_peers_are_capped_and_slots_come_back(ctx):
    """A bound viewer admits ``max_peers`` connections at a time: the next peer is refused
    at the handshake (none of its messages is kept); our sender connects again until a
    slot is free (`WireSender`), and gets in once a peer has left."""
    from tracevis3d.live.wire import WireSender

    with LiveSession("tcp://127.0.0.1:*", max_peers=2) as sess:
        a, b = Peer(ctx, sess), Peer(ctx, sess)
        w = WireSender(sess.endpoint, bind=False, context=ctx, program="third")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:
            sess.poll_once(wait=0.02)
            w.poll_subscriptions()
            assert not w.subscribed, "a third peer got the viewer's subscription"
        assert sess.peers_refused >= 1
        a.program(1)
        settle(sess)
        assert sess.sessions[1].ended and len(sess.sessions) == 1
        a.sock.close(0)  # a slot comes back
        t0 = time.monotonic()
        while not w.subscribed and time.monotonic() - t0 < 15:
            sess.poll_once(wait=0.02)
            w.poll_subscriptions(10)
        assert w.subscribed, f"the third peer was not admitted after a peer left ({sess.peers_refused} refusals)"
        b.sock.close(0)
        w.close()


def test_threads_past_the_quota_lose_their_events_not_the_others(ctx):
    """A program with more threads than its quota, all of them at work at once: the threads
    past it are refused (``too_many_threads``, once per table), their events dropped and
    counted (``thread_quota``, per event), and the events of its other threads, in the same
    messages, kept.  Before, every EVENTS message that named a refused thread was dropped
    whole: 3,000 threads replayed gave a live view of 0 calls."""
    with LiveSession("tcp://127.0.0.1:*", session_threads=4, max_threads=8) as sess:
        p = Peer(ctx, sess)
        p.send(5, 1, hello(b"server"))
        p.send(5, 2, functions(0, [b"handle (s.py:1)"]))
        p.send(5, 3, threads(0, [b"t%d" % k for k in range(6)]))
        recs = []
        for k in range(6):  # one call on each thread, all open at once, in one message
            recs += [(1, 0, k, 0, 10 + k)]
        for k in range(6):
            recs += [(2, 0, k, 0, 5000 + k)]
        p.send(5, 4, events(recs))
        p.send(5, 3, threads(0, [b"t%d" % k for k in range(6)]))  # a re-send: nothing new refused
        p.send(5, 6, bye(len(recs)))
        settle(sess)
        assert sess.bad == {"too_many_threads": 1, "thread_quota": 4}, sess.bad
        t = sess.trace.check()
        assert len(t) == 4 and sorted(t.thread_names) == ["t0", "t1", "t2", "t3"]
        assert "2 of 6 threads past the quota" in sess.last_bad
        p.sock.close(0)


def test_threads_past_the_quota_take_finished_threads_records(ctx):
    """A server with a thread per request, one after another, past its quota of 4: each new
    thread takes the record of a finished thread of its kind (the live view went on showing
    requests; it froze at the quota's last), even where one message holds the end of a
    request and the start of the next; the records taken last take the next (so a few carry
    the stream, as a packed lane does); the lane says how many threads it holds.  A record
    whose thread still has events in the message is not taken."""
    with LiveSession("tcp://127.0.0.1:*", session_threads=4, max_threads=8) as sess:
        p = Peer(ctx, sess)
        try:
            _requests_past_the_quota(p, sess)
        finally:
            p.sock.close(0)


def _requests_past_the_quota(p, sess):
    """The body of `test_threads_past_the_quota_take_finished_threads_records` (its peer's
    socket closed whatever happens: a failure must not hang the context's term)."""
    from tracevis3d.layout.live_lanes import LiveLanes

    p.send(5, 1, hello(b"server"))
    p.send(5, 2, functions(0, [b"handle (s.py:1)"]))
    p.send(5, 3, threads(0, [b"Thread-%d (handle)" % (k + 1) for k in range(10)]))
    recs = []
    for k in range(10):  # two at once: k runs [1000k, 1000k + 1500]
        recs += [(1, 0, k, 0, 1000 * k + 10)]
        recs += [(2, 0, k, 0, 1000 * k + 1500)]
    recs.sort(key=lambda r: r[4])
    p.send(5, 4, events(recs[:7]))
    p.send(5, 4, events(recs[7:]))  # the rest in one message: ends and starts together
    p.send(5, 6, bye(len(recs)))
    settle(sess)
    t = sess.trace.check()
    assert len(t) == 10 and t.n_threads == 4, (len(t), t.n_threads, sess.bad)
    assert "thread_quota" not in sess.bad
    # the records taken last carry the stream (as a packed lane), the first two keep their thread
    assert [T.members for T in sess.threads] == [1, 1, 4, 4]
    assert "(+6 in finished threads' places)" in sess.status() and "0 bad msgs" in sess.status()
    # every record's calls one after another (its threads never overlap)
    for th in range(t.n_threads):
        s_, e_ = t.start[t.thread == th], t.end[t.thread == th]
        assert (s_[1:] >= e_[:-1]).all()
    # a lane of the two records that took the stream names the threads they hold: 4 + 4
    lanes = LiveLanes()
    lanes.lane_threads = [[2, 3]]
    lanes._last_of_proc = {}
    assert lanes.lane_name(0, sess.threads) == "8× handle"


def test_the_records_looked_at_per_message_are_bounded(ctx, monkeypatch):
    """However many refused threads a message names, the work of finding them records is
    bounded (`MAX_REUSE_WORK`; here 2 slices and 2 records looked at: two threads take records,
    the others' events in that message are dropped and counted, and they try again in the next)."""
    import tracevis3d.live.reuse as reuse

    monkeypatch.setattr(reuse, "MAX_REUSE_WORK", 2 * (reuse.REUSE_SLICE_WORK + 1))
    with LiveSession("tcp://127.0.0.1:*", session_threads=4, max_threads=8) as sess:
        p = Peer(ctx, sess)
        try:
            p.send(5, 1, hello(b"server"))
            p.send(5, 2, functions(0, [b"handle (s.py:1)"]))
            p.send(5, 3, threads(0, [b"Thread-%d (handle)" % (k + 1) for k in range(10)]))
            first = [(1, 0, k, 0, 10 * k + 1) for k in range(4)] + [(2, 0, k, 0, 10 * k + 5) for k in range(4)]
            p.send(5, 4, events(sorted(first, key=lambda r: r[4])))
            later = [r for k in range(4, 10) for r in ((1, 0, k, 0, 100 + 10 * k), (2, 0, k, 0, 105 + 10 * k))]
            p.send(5, 4, events(later))
            settle(sess)
            assert sum(T.members for T in sess.threads) == 6  # 4 + the 2 within the bound
            assert sess.bad.get("thread_quota") == 8  # the 4 others' ENTER and EXIT
        finally:
            p.sock.close(0)
