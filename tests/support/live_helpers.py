"""Helpers of the live-feed tests: run a viewer until the publishers said BYE."""
import time

import numpy as np


def free_endpoint() -> str:
    """A loopback TCP endpoint on a port free right now (for a side that must bind later)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"tcp://127.0.0.1:{port}"


def follow(sess, timeout=30.0, check=True, until_bye=1, max_messages=50):
    """Poll until ``until_bye`` sessions ended (or timeout); check the trace at every poll
    that changed it; returns the number of polls that changed the trace."""
    changed = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        ch = sess.poll_once(max_messages=max_messages, max_seconds=0.05, wait=0.02)
        if ch.changed:
            changed += 1
            if check:
                sess.trace.check()
        if sum(s.ended for s in sess.sessions.values()) >= until_bye:
            ch = sess.poll_once(max_messages=10 ** 6, max_seconds=1.0)  # anything after BYE
            return changed
    raise AssertionError(f"no BYE within {timeout} s: {sess.status()}")


def drain(sess, timeout=60.0):
    """After a publisher returned: poll until every session said BYE, then take what is left.
    A publisher's return does not mean its messages arrived; on a loaded machine the last
    ones come late, and one bounded poll (``max_seconds``) does not take them all."""
    t0 = time.monotonic()
    while not (sess.sessions and all(s.ended for s in sess.sessions.values())):
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"no BYE within {timeout} s: {sess.status()}")
        sess.poll_once(max_messages=10 ** 6, max_seconds=0.5, wait=0.05)
    sess.poll_once(max_messages=10 ** 6, max_seconds=5.0)  # anything after BYE


def assert_same_calls(got, want, time_tol=None, kinds=True):
    """Same calls (structure, functions, threads), times within ``time_tol`` µs."""
    assert len(got) == len(want), (len(got), len(want))
    assert got.thread_names == want.thread_names
    for k in ("depth", "parent", "end_index", "thread") + (("kind",) if kinds else ()):
        assert np.array_equal(getattr(got, k), getattr(want, k)), k
    assert [got.function_names[f] for f in got.func] == [want.function_names[f] for f in want.func]
    if time_tol is not None:
        assert np.abs(got.start - want.start).max(initial=0) <= time_tol
        assert np.abs(got.end - want.end).max(initial=0) <= time_tol


# ------------------------------------------------ frames written by hand from docs/live-protocol.md
# (struct.pack, not the project's encoder: the tests of hostile and flooding peers)
import struct  # noqa: E402

SID = 0x1234567890ABCDEF


def hdr(mtype, seq, version=1, magic=b"TV3L", sid=SID):
    return struct.pack("<4sHHQQ", magic, version, mtype, sid, seq)


def hello(name=b"prog"):
    return struct.pack("<IqII", 42, 1_700_000_000_000_000_000, 1_000_000_000, len(name)) + name


def functions(first, names):
    body = b"".join(struct.pack("<iHH", 7, len(n), 0) + n for n in names)
    return struct.pack("<II", first, len(names)) + body


def threads(first, names):
    body = b"".join(struct.pack("<IQHH", 42, 100 + k, len(n), 0) + n for k, n in enumerate(names))
    return struct.pack("<II", first, len(names)) + body


def events(recs, count=None, reserved=0):
    body = b"".join(struct.pack("<BBHIq", *r) for r in recs)
    return struct.pack("<II", len(recs) if count is None else count, reserved) + body


def bye(sent=0):
    return struct.pack("<QQ", sent, 0)
