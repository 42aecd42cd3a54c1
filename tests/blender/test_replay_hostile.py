"""replay and the CLI against extreme inputs and a hostile machine (issue 20): valid traces
whose times do not fit int64 nanoseconds as they are (shifted, every call arrives) or whose
span does not (refused in one line), a port already in use (exit 2, one line), over real
ZeroMQ sockets on loopback."""
import socket
import threading

import numpy as np
import pytest
import zmq

import tracevis3d
from live_helpers import assert_same_calls, follow, free_endpoint
from tracevis3d.live import LiveSession, replay
from tracevis3d.live.replay import MAX_TICKS, clock_shift_us, trace_events

ANY = "tcp://127.0.0.1:*"


def shifted(offset_us: float, n: int = 300):
    t = tracevis3d.synthetic(n, threads=2, seed=1)
    t.start = t.start + offset_us
    t.end = t.end + offset_us
    return t.check()


@pytest.mark.parametrize("offset", [1e20, -1e20, 9.3e15])
def test_extreme_times_are_shifted_and_every_call_arrives(offset):
    want = shifted(offset)
    shift = clock_shift_us(want)
    assert shift == min(want.start.min(), want.end.min())
    rec = trace_events(want)
    assert rec["ts"].min() >= 0 and rec["ts"].max() < MAX_TICKS
    with LiveSession(ANY) as sess:
        th = threading.Thread(target=replay, args=(want, sess.endpoint), kwargs=dict(speed=0.0))
        th.start()
        follow(sess, timeout=60)
        th.join(60)
        got = sess.trace.check()
        assert sess.bad == {} and sess.dropped == 0
    assert_same_calls(got, want, kinds=False)
    span_got = got.end.max() - got.start.min()
    span_want = want.end.max() - want.start.min()
    assert abs(span_got - span_want) <= 1e-6 * abs(offset) + 1.0


def test_ordinary_times_are_not_moved():
    t = tracevis3d.synthetic(100, threads=1, seed=2)
    assert clock_shift_us(t) == 0.0


def test_a_span_beyond_the_clock_is_refused_in_one_line(tmp_path, capsys):
    from tree_factory import random_trace

    t = random_trace(n_roots=3, fanout=2, max_depth=2, threads=1, seed=3)
    roots = np.flatnonzero(t.parent < 0)
    assert roots.size == 3
    t.start = t.start.copy()
    t.end = t.end.copy()
    t.start[roots[0]:t.end_index[roots[0]]] -= 1e19  # the first root's subtree long before the rest
    t.end[roots[0]:t.end_index[roots[0]]] -= 1e19
    t.check()
    with pytest.raises(ValueError, match=r"^replay: the trace spans .* µs, more than the live protocol's"):
        trace_events(t)
    p = tmp_path / "wide.npz"
    tracevis3d.save(t, p)
    from tracevis3d.cli import main

    assert main(["replay", str(p), free_endpoint(), "--speed", "0", "--wait", "0"]) == 1
    err = [e for e in capsys.readouterr().err.strip().splitlines() if not e.startswith("[")]  # not progress
    assert len(err) == 1 and err[0].startswith("tracevis3d: error: replay: the trace spans"), err


def test_port_in_use_is_exit_2_on_one_line(tmp_path, capsys):
    t = tracevis3d.synthetic(20, threads=1, seed=4)
    p = tmp_path / "t.npz"
    tracevis3d.save(t, p)
    ctx = zmq.Context.instance()
    holder = ctx.socket(zmq.PUB)
    port = holder.bind_to_random_port("tcp://127.0.0.1")
    plain = socket.socket()
    try:
        from tracevis3d.cli import main

        assert main(["replay", str(p), f"tcp://127.0.0.1:{port}", "--bind", "--wait", "0"]) == 2
        plain.bind(("127.0.0.1", 0))
        plain.listen(1)
        busy = plain.getsockname()[1]
        assert main(["render-live", f"tcp://127.0.0.1:{busy}", "-o", str(tmp_path / "f"), "--seconds", "0.1"]) == 2
    finally:
        holder.close(0)
        plain.close()
    err = [e for e in capsys.readouterr().err.strip().splitlines() if not e.startswith("[")]  # not progress
    assert len(err) == 2 and all(e.startswith("tracevis3d: error: ") for e in err), err
    assert all("in use" in e for e in err), err
