"""Hostile frames written by hand from docs/live-protocol.md (struct.pack, not the project's
encoder), sent over a real ZeroMQ socket: each is counted under its reason and skipped, and
the session keeps working.  Plus the stack kernel against its brute-force twin."""
import struct
import time

import numpy as np
import pytest
import zmq

from tracevis3d.kernels.live import apply_thread_events, apply_thread_events_py
from live_helpers import SID, events, functions, hdr, hello, threads  # noqa: F401 (SID: the tests' session)
from tracevis3d.live import LiveSession

@pytest.fixture
def feed():
    sess = LiveSession("tcp://127.0.0.1:*")
    ctx = zmq.Context()
    pub = ctx.socket(zmq.XPUB)
    pub.connect(sess.endpoint)
    t0 = time.monotonic()
    while not pub.poll(10) and time.monotonic() - t0 < 5:
        sess.poll_once()  # the bound SUB sends its subscription when its owner calls into it
    pub.recv()

    def send(*frames):
        pub.send_multipart(list(frames))

    def settle():
        """Poll until nothing more arrives for 0.2 s; the summed counts."""
        total = {"messages": 0, "bad": {}}
        while True:
            ch = sess.poll_once(max_messages=1000, max_seconds=1.0, wait=0.2)
            if not ch.messages:
                return type("Summed", (), {"messages": total["messages"], "bad": total["bad"]})
            total["messages"] += ch.messages
            for k, v in ch.bad.items():
                total["bad"][k] = total["bad"].get(k, 0) + v

    yield sess, send, settle
    pub.close(0)
    ctx.destroy(linger=0)
    sess.close()


def test_hand_written_hostile_frames_are_counted_and_skipped(feed):
    sess, send, settle = feed
    seq = iter(range(1000))
    send(hdr(2, 0), functions(0, [b"f"]))                            # before hello
    send(hdr(1, next(seq)), hello())
    send(hdr(2, next(seq)), functions(0, [b"main (a.py:1)", b"leaf (a.py:5)"]))
    send(hdr(3, next(seq)), threads(0, [b"MainThread"]))
    ok = [(1, 0, 0, 0, 1000), (1, 0, 0, 1, 2000), (2, 0, 0, 1, 3000)]
    send(hdr(4, next(seq)), events(ok))
    cases = {
        "header_size": (hdr(4, 90)[:20], events(ok)),
        "version": (hdr(4, next(seq), version=2), events(ok)),
        "message_type": (hdr(9, next(seq)), b""),
        "session": (hdr(4, 0, sid=0), events(ok)),
        "truncated": (hdr(4, next(seq)), b"\x01\x00"),
        "payload_size": (hdr(4, next(seq)), events(ok)[:-3]),
        "event_type": (hdr(4, next(seq)), events([(7, 0, 0, 0, 5000)])),
        "thread_id": (hdr(4, next(seq)), events([(1, 0, 3, 0, 5000)])),
        "func_id": (hdr(4, next(seq)), events([(1, 0, 0, 99, 5000)])),
        "timestamp": (hdr(4, next(seq)), events([(1, 0, 0, 0, 6000), (2, 0, 0, 0, 5500)])),
        "reserved": (hdr(4, next(seq)), events(ok, reserved=1)),
        "utf8": (hdr(2, next(seq)), functions(2, [b"\xff\xfe"])),
        "function_id": (hdr(2, next(seq)), functions(10, [b"hole"])),
        "function_conflict": (hdr(2, next(seq)), functions(0, [b"other (a.py:1)"])),
        "ticks_per_second": (hdr(1, 0, sid=77), struct.pack("<IqII", 1, 0, 0, 0)),
        "open_type": (hdr(7, next(seq)), events([(2, 0, 0, 0, 5000)])),
    }
    for h, p in cases.values():
        send(h, p)
    send(hdr(4, next(seq)), b"garbage", b"third frame")                 # frames
    send(hdr(4, 3), events(ok))                                         # old_seq (replayed)
    for _ in range(3):
        next(seq)                                                       # 3 messages lost
    send(hdr(4, next(seq)), events([(2, 0, 0, 0, 9000), (2, 0, 0, 1, 9100)]))  # unbalanced exit
    send(hdr(4, next(seq)), events([(1, 0, 0, 1, 9200), (1, 0, 0, 0, 9300), (2, 0, 0, 1, 9400)]))  # repaired
    settle()
    bad = sess.bad
    for reason in cases:
        assert bad.get(reason) == 1, (reason, bad)
    assert bad["no_hello"] == 1 and bad["frames"] == 1 and bad["old_seq"] == 1
    assert bad["unbalanced_exit"] == 1 and bad["repaired_exit"] == 1
    # 3 skipped on purpose + 3 whose header was refused (version, type, frames): never seen
    assert sess.gaps == 6
    t = sess.trace.check()
    # main(1000..9000) > leaf(2000..3000); leaf(9200..9400) > main(9300..9400, closed by repair)
    assert [t.function_names[f] for f in t.func] == ["main (a.py:1)", "leaf (a.py:5)", "leaf (a.py:5)",
                                                      "main (a.py:1)"]
    assert t.parent.tolist() == [-1, 0, -1, 2]
    assert t.start.tolist()[:3] == [1000 / 1000, 2000 / 1000, 9200 / 1000]
    assert t.end.tolist() == [9.0, 3.0, 9.4, 9.4]


def test_garbage_and_oversized_frames_leave_the_session_working(feed):
    sess, send, settle = feed
    rng = np.random.default_rng(0)
    for k in range(200):  # random garbage behind a valid-looking magic
        send(b"TV3L" + rng.bytes(int(rng.integers(0, 40))), rng.bytes(int(rng.integers(0, 64))))
    ch = settle()
    assert ch.messages == 200 and sum(ch.bad.values()) == 200 and len(sess.trace) == 0
    send(hdr(1, 0), hello())
    send(hdr(4, 1), b"\x00" * (5 * 1024 * 1024))  # over ZMQ_MAXMSGSIZE: refused by ZeroMQ
    settle()
    assert sess.n_calls == 0  # the oversized frame never reached the decoder (nor memory)


def _random_events(rng, n, n_funcs):
    et = rng.choice(np.array([1, 2], np.uint8), n, p=[0.55, 0.45])
    ef = rng.integers(0, n_funcs, n).astype(np.int32)
    ts = np.cumsum(rng.integers(-1, 5, n)).astype(np.float64)  # a few go backwards
    return et, ef, ts


@pytest.mark.parametrize("seed", range(6))
def test_stack_kernel_matches_its_brute_force_twin(seed):
    rng = np.random.default_rng(seed)
    et, ef, ts = _random_events(rng, 3000, 3 + seed)
    outs = []
    for fn in (apply_thread_events, apply_thread_events_py):
        n = et.shape[0]
        bufs = [np.zeros(n, np.int32), np.zeros(n), np.zeros(n), np.zeros(n, np.int32),
                np.zeros(n, np.int32), np.zeros(n, np.int32)]
        stack = np.zeros(n, np.int32)
        state = (0, 0, -np.inf)
        for a, b in ((0, 1000), (1000, 2200), (2200, 3000)):  # in three batches
            r = fn(et[a:b], ef[a:b], ts[a:b], *bufs, state[0], stack, state[1], state[2], 8)
            state = r[:3]
        outs.append((r, [x[: r[0]].copy() for x in bufs], stack[: r[1]].copy()))
    (r1, b1, s1), (r2, b2, s2) = outs
    assert tuple(r1) == tuple(r2)
    for x, y in zip(b1, b2):
        assert np.array_equal(x, y)
    assert np.array_equal(s1, s2)


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_converter_matches_its_python_twin(seed):
    """Exits of calls entered before tracing began are dropped, the open stack carries over
    batches, calls open at the end are closed innermost first."""
    from tracevis3d.live import protocol as P
    from tracevis3d.live.convert import Converter, FunctionTable, convert_py

    rng = np.random.default_rng(seed)
    codes = [compile(f"def f{k}(): pass", f"m{k}.py", "exec").co_consts[0] for k in range(5)]
    objs = codes + [len, [].append, {}.get]
    names = ("call", "return", "c_call", "c_return", "c_exception")
    batches = []
    t = 0
    for b in range(8):
        batch = []
        for _ in range(int(rng.integers(0, 60))):
            t += int(rng.integers(0, 3))
            batch.append((names[int(rng.integers(0, 5))], objs[int(rng.integers(0, len(objs)))], t))
        batches.append((int(rng.integers(0, 2)), batch))
    conv = Converter(origin_ns=0)
    got = [(th, conv.convert(th, batch)) for th, batch in batches]
    want, stacks = convert_py(batches, FunctionTable())
    for (th, rec), (th2, exp) in zip(got, want):
        assert th == th2
        assert [(int(r["type"]), int(r["func"]), int(r["ts"])) for r in rec] == exp
    closing = dict(conv.close_all(10 ** 6))
    for th, st in stacks.items():
        if st:
            assert closing[th]["func"].tolist() == st[::-1] and (closing[th]["type"] == P.EXIT).all()


def test_table_floods_are_capped():
    sess = LiveSession("tcp://127.0.0.1:*", max_threads=10, max_functions=50)
    ctx = zmq.Context()
    pub = ctx.socket(zmq.XPUB)
    pub.connect(sess.endpoint)
    try:
        t0 = time.monotonic()
        while not pub.poll(10) and time.monotonic() - t0 < 5:
            sess.poll_once()
        pub.recv()
        pub.send_multipart([hdr(1, 0), hello()])
        pub.send_multipart([hdr(3, 1), threads(0, [b"t%d" % k for k in range(11)])])
        pub.send_multipart([hdr(2, 2), functions(0, [b"f%d" % k for k in range(51)])])
        pub.send_multipart([hdr(3, 3), threads(0, [b"t%d" % k for k in range(10)])])
        deadline = time.monotonic() + 120
        while sess.messages < 4:  # all four tables in (counted, not waited for)
            assert time.monotonic() < deadline, f"{sess.messages} of 4 messages in"
            sess.poll_once(wait=0.05)
        assert sess.bad == {"too_many_threads": 1, "too_many_functions": 1}
        assert len(sess.threads) == 10 and len(sess.fnames) == 0
    finally:
        pub.close(0)
        ctx.destroy(linger=0)
        sess.close()


def test_open_calls_are_applied_only_to_threads_the_viewer_has_no_calls_of(feed):
    """OPEN (docs/live-protocol.md): the calls open in the program when a viewer joined, as
    ENTER records at their real times; a thread the viewer follows already ignores them."""
    sess, send, settle = feed
    send(hdr(1, 0), hello())
    send(hdr(2, 1), functions(0, [b"main (a.py:1)", b"leaf (a.py:5)"]))
    send(hdr(3, 2), threads(0, [b"MainThread", b"worker"]))
    send(hdr(4, 3), events([(1, 0, 0, 0, 1000)]))                      # the viewer has MainThread's main
    send(hdr(7, 4), events([(1, 0, 0, 0, 1000),                        # ... so this is ignored
                            (1, 0, 1, 0, 400), (1, 0, 1, 1, 600)]))    # worker: open before it joined
    send(hdr(4, 5), events([(2, 0, 1, 1, 900), (2, 0, 1, 0, 1000), (2, 0, 0, 0, 1200)]))
    ch = settle()
    assert ch.bad == {} and sess.open_applied == 2 and sess.events == 4
    t = sess.trace.check()
    assert [t.function_names[f] for f in t.func] == ["main (a.py:1)", "main (a.py:1)", "leaf (a.py:5)"]
    assert t.thread.tolist() == [0, 1, 1] and t.parent.tolist() == [-1, -1, 1]
    assert t.start.tolist() == [1.0, 0.4, 0.6] and t.end.tolist() == [1.2, 1.0, 0.9]
