"""A bound publisher under a subscription flood (issue 20), over real ZeroMQ sockets on
loopback: a local peer looping on subscriptions gets a bounded number of notices read per
call and the tables re-sent at most once per interval, and a real viewer still gets every
event."""
import time

import numpy as np
import zmq

from live_helpers import follow, free_endpoint
from tracevis3d.live import LiveSession
from tracevis3d.live import protocol as P
from tracevis3d.live.wire import WireSender


def test_subscription_flood_is_read_in_bounded_slices_and_coalesced():
    ep = free_endpoint()
    wire = WireSender(ep, bind=True, program="bound", linger_ms=1000)
    wire.resend_interval = 3600.0  # after the first re-send, every later notice is coalesced
    ctx = zmq.Context()
    flood = ctx.socket(zmq.XSUB)
    flood.connect(ep)
    try:
        with LiveSession(ep, bind=False) as viewer:
            wire.add_functions([("main", "a.py", 1), ("leaf", "a.py", 5)])
            wire.set_thread(0, (1, 2, "MainThread", "prog"))
            t0 = time.monotonic()
            while not wire.subscribed and time.monotonic() - t0 < 10:
                viewer.poll_once(wait=0.01)
                wire.poll_subscriptions(10)
            assert wire.subscribed and wire.table_resends == 1
            for _ in range(20_000):
                flood.send(b"\x01" + P.MAGIC)
            reads, first = [], wire.subscriptions
            deadline = time.monotonic() + 120
            while True:  # read every notice that gets through the pipes' high-water marks
                assert time.monotonic() < deadline, f"{wire.subscriptions - first} notices read"
                before = wire.subscriptions
                wire.poll_subscriptions(1000)
                reads.append(wire.subscriptions - before)
                if reads[-1] == 0 and wire.subscriptions - first > 2 * wire.max_notices:
                    break  # the flood is over (the count decides correctness; this only ends the loop)
            # more notices wait than one call reads: each reads its bounded slice
            assert max(reads) == wire.max_notices and all(r <= wire.max_notices for r in reads)
            assert wire.table_resends == 1  # thousands of notices, no re-send
            assert wire.flush_tables()
            n = 2000
            rec = np.zeros(2 * n, P.EVENT_DTYPE)
            rec["type"][0::2], rec["type"][1::2] = P.ENTER, P.EXIT
            rec["func"][0::2] = rec["func"][1::2] = 1
            rec["ts"] = np.arange(2 * n) * 1000
            wire.send_events(rec)
            wire.close()
            follow(viewer, timeout=20)
            assert viewer.n_calls == n and viewer.dropped == 0 and viewer.bad == {}
    finally:
        flood.close(0)
        ctx.destroy(linger=0)


def test_a_refused_table_resend_goes_on_where_it_stopped():
    """Pipes full in the middle of the tables: the next flush continues from there (one
    HELLO), so a busy viewer catches up instead of being sent the start again and again."""
    ep = free_endpoint()
    wire = WireSender(ep, bind=True, program="bound", sndhwm=4, linger_ms=1000)
    try:
        with LiveSession(ep, bind=False, rcvhwm=4) as viewer:
            wire.add_functions([(f"pkg.f{k}", "m.py", k) for k in range(4000)])  # 32 messages of 128
            wire.set_thread(0, (1, 2, "MainThread", "prog"))
            t0 = time.monotonic()
            while not wire.subscribed and time.monotonic() - t0 < 10:
                viewer.poll_once(max_messages=0, wait=0.01)
                wire.poll_subscriptions(10)
            assert not wire.flush_tables()  # the viewer reads nothing yet: refused part way
            sent = wire.sent_functions
            assert 0 < sent < 4000 and not wire.tables_dirty
            flushes = 0
            while not wire.flush_tables():
                assert wire.sent_functions >= sent and not wire.tables_dirty  # never back to the start
                sent = wire.sent_functions
                viewer.poll_once(max_messages=1000, max_seconds=0.05, wait=0.01)
                flushes += 1
                assert flushes < 10_000
            assert wire.seq == 1 + 32 + 1  # one HELLO, the 32 FUNCTIONS messages (128 each) and THREADS once
            wire.close()
            follow(viewer, timeout=20)
            assert len(viewer.fnames) == 4000 and viewer.bad == {}
    finally:
        wire.close(bye=False) if not wire.sock.closed else None
