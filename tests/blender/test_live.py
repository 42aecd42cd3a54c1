"""The live feed over real ZeroMQ sockets on loopback and real subprocesses
(docs/live-protocol.md): replay of real traces, a traced program against the same program
recorded in one piece, drops with no/stalled viewer, the amortised growth of the view."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tracevis3d
from live_helpers import assert_same_calls, follow, free_endpoint
from tracevis3d.live import EndpointError, LiveSession, replay

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(REPO, "tests", "live_programs")
ENV = {**os.environ, "PYTHONPATH": REPO}
ANY = "tcp://127.0.0.1:*"


def _py(*args, **kw):
    return subprocess.run([sys.executable, *args], env=ENV, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("name", ["viztracer-examples/multithread.json", "catapult/big_trace.json",
                                  "hta-trace-diff/control.json.gz"])
def test_replay_of_a_real_trace_is_reconstructed_exactly(realdata, name):
    want = tracevis3d.load(str(realdata / name))
    with LiveSession(ANY) as sess:
        p = subprocess.Popen([sys.executable, "-m", "tracevis3d", "replay", str(realdata / name),
                              sess.endpoint, "--speed", "0"], env=ENV, stderr=subprocess.PIPE, text=True)
        follow(sess, timeout=60)
        assert p.wait(60) == 0, p.stderr.read()
        got = sess.trace.check()
        assert sess.bad == {} and sess.gaps == 0 and sess.dropped == 0
        assert sum(s.events_sent for s in sess.sessions.values()) == sess.events == 2 * len(want)
    # times travel as integer ns: equal to the ns (plus float rounding of µs values)
    assert_same_calls(got, want, time_tol=5e-4 + 1e-9 * np.abs(want.end).max())
    assert got.function_files == want.function_files
    assert np.array_equal(got.function_lines, want.function_lines)


def test_paced_replay_grows_and_every_poll_is_a_valid_trace():
    want = tracevis3d.synthetic(6000, threads=3, seed=4)
    with LiveSession(ANY) as sess:
        speed = want.span / 0.6e6  # about 0.6 s of replay
        th = threading.Thread(target=replay, args=(want, sess.endpoint), kwargs=dict(speed=speed))
        th.start()
        sizes = []
        while not any(s.ended for s in sess.sessions.values()):
            ch = sess.poll_once(max_messages=1, wait=0.05)
            if ch.changed:
                t = sess.trace.check()
                sizes.append(len(t))
        th.join()
        sess.poll_once()
        assert len(sizes) >= 5 and sizes == sorted(sizes)  # grew over several polls
        assert_same_calls(sess.trace.check(), want, time_tol=1e-3, kinds=False)
        # appends, not rebuilds: all calls copied about once (threads after a grown one are recopied)
        assert sess.view.copied_calls <= len(want) * len(sizes)


def test_single_thread_view_copies_each_call_once():
    want = tracevis3d.synthetic(5000, seed=2)
    with LiveSession(ANY) as sess:
        th = threading.Thread(target=replay, args=(want, sess.endpoint), kwargs=dict(speed=want.span / 0.4e6))
        th.start()
        polls = follow(sess, timeout=30)
        th.join()
        assert polls >= 3
        assert sess.view.copied_calls == len(want)  # O(new) per poll: never recopied


def _deterministic_run(kind, out=None, endpoint=None):
    script = os.path.join(PROGRAMS, "deterministic.py")
    if kind == "record":
        return _py("-m", "tracevis3d.live", "record", "-o", out, script)
    return subprocess.Popen([sys.executable, "-m", "tracevis3d.live", "run", "--endpoint", endpoint, script],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _script_calls(t, script):
    """Per thread: (name, depth, parent's name) of the calls under the script's <module>,
    or all calls of the threads it started."""
    out = {}
    for ti, name in enumerate(t.thread_names):
        lo, hi = t.thread_ranges()[ti]
        if name == "MainThread":
            mods = [i for i in range(lo, hi) if t.function_names[t.func[i]].startswith(f"<module> ({script}")]
            lo, hi = mods[0], t.end_index[mods[0]]
        base = t.depth[lo]
        rows = [(t.function_names[t.func[i]], int(t.depth[i] - base),
                 t.function_names[t.func[t.parent[i]]] if i > lo else "") for i in range(lo, hi)]
        # inside threading's own start/join the calls depend on timing (join waits on the
        # thread's lock only if the thread still runs): compared up to threading's functions
        out[name] = [r for r in rows if "threading.py:" not in r[2]]
    return out


def test_traced_program_equals_the_same_program_recorded_in_one_piece(tmp_path):
    script = os.path.join(PROGRAMS, "deterministic.py")
    r = _deterministic_run("record", out=str(tmp_path / "whole.json"))
    assert r.returncode == 0, r.stderr
    whole = tracevis3d.load(str(tmp_path / "whole.json"))
    with LiveSession(ANY) as sess:
        p = _deterministic_run("run", endpoint=sess.endpoint)
        follow(sess, timeout=60)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        live = sess.trace.check()
        assert sess.bad == {} and sess.gaps == 0 and sess.dropped == 0
        assert sess.sessions[next(iter(sess.sessions))].events_sent == sess.events
    assert out.strip() == r.stdout.strip()
    assert live.thread_names == ["MainThread", "worker-0", "worker-1", "worker-2"]
    a, b = _script_calls(live, script), _script_calls(whole, script)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name
    names = set(live.function_names)
    assert any(n.startswith("fib (") for n in names)          # Python functions, with file:line
    assert "builtins.sum" in names and "str.split" in names   # C calls
    open_left = live.end_index == live.thread_ranges()[live.thread, 1]
    assert live.meta["live"]["open_calls"] == 0 and open_left.any()  # all closed at exit


def test_publish_context_manager_in_process():
    with LiveSession(ANY) as sess:
        from tracevis3d.live import publish

        def leaf(i):
            return i * 2

        def branch():
            return [leaf(i) for i in range(10)]

        # the viewer polls in another thread (a bound SUB hands its subscription to a new
        # publisher only when its owner calls into it: libzmq processes commands there)
        viewer = threading.Thread(target=follow, args=(sess,), kwargs=dict(timeout=20))
        viewer.start()
        with publish(sess.endpoint, wait_subscriber=5.0) as pub:
            branch()
        viewer.join()
        assert pub.stats["dropped_events"] == 0 and pub.stats["events_sent"] == sess.events
        t = sess.trace.check()
        names = [t.function_names[f].split(" (")[0] for f in t.func]
        b = names.index("test_publish_context_manager_in_process.<locals>.branch")
        assert names[b + 1: b + 12].count("test_publish_context_manager_in_process.<locals>.leaf") == 10
        assert t.depth[b + 2] == t.depth[b] + 2  # leaf under the list comprehension under branch


def test_no_viewer_drops_and_counts_and_the_program_finishes():
    r = _py("-m", "tracevis3d.live", "run", "--endpoint", "tcp://127.0.0.1:1", "--wait-subscriber", "0.2",
            "--linger", "0.2", os.path.join(PROGRAMS, "busy.py"), "100000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "100000"
    sent, dropped = [int(w) for w in r.stderr.split() if w.isdigit()][:2]
    assert dropped >= 200000 and sent == 0


def test_stalled_viewer_drops_and_counts(tmp_path):
    import zmq

    ctx = zmq.Context()
    stalled = ctx.socket(zmq.SUB)
    stalled.setsockopt(zmq.RCVHWM, 1)
    stalled.setsockopt(zmq.RCVBUF, 4096)
    stalled.setsockopt(zmq.SUBSCRIBE, b"TV3L")
    port = stalled.bind_to_random_port("tcp://127.0.0.1")
    try:  # never reads
        r = _py("-m", "tracevis3d.live", "run", "--endpoint", f"tcp://127.0.0.1:{port}", "--linger", "0.5",
                os.path.join(PROGRAMS, "busy.py"), "300000")
    finally:
        stalled.close(0)
        ctx.destroy(linger=0)
    assert r.returncode == 0, r.stderr
    sent, dropped = [int(w) for w in r.stderr.split() if w.isdigit()][:2]
    assert dropped > 0 and sent + dropped >= 600000


def test_flood_with_small_queue_drops_in_the_program_and_viewer_stays_valid():
    with LiveSession(ANY) as sess:
        p = subprocess.Popen([sys.executable, "-m", "tracevis3d.live", "run", "--endpoint", sess.endpoint,
                              "--max-pending", "4096", os.path.join(PROGRAMS, "busy.py"), "300000"],
                             env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        follow(sess, timeout=60)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "300000", err
        t = sess.trace.check()
        assert sess.dropped > 0
        assert sess.events + sess.dropped >= 600000
        assert len(t) > 0


def test_non_loopback_without_keys_is_refused():
    with pytest.raises(EndpointError, match="CURVE"):
        LiveSession("tcp://0.0.0.0:5999")
    with pytest.raises(EndpointError, match="CURVE"):
        replay(tracevis3d.synthetic(10), "tcp://10.1.2.3:5999")
    with pytest.raises(EndpointError):
        LiveSession("udp://127.0.0.1:5")


def test_curve_keyed_viewer_receives_and_unkeyed_gets_nothing(tmp_path):
    import zmq
    import zmq.auth

    from tracevis3d.live import Curve

    server_pub, server_sec = zmq.curve_keypair()
    zmq.auth.create_certificates(str(tmp_path), "viewer")  # the allow-list: viewer.key
    viewer_pub, viewer_sec = zmq.auth.load_certificate(str(tmp_path / "viewer.key_secret"))
    want = tracevis3d.synthetic(300, seed=3)
    ep = free_endpoint()
    keyed = LiveSession(ep, bind=False, curve=Curve(public=viewer_pub, secret=viewer_sec, server_public=server_pub))
    unkeyed = LiveSession(ep, bind=False)
    wrong = LiveSession(ep, bind=False, curve=Curve(server_public=zmq.curve_keypair()[0]))
    try:
        th = threading.Thread(target=replay, args=(want, ep), kwargs=dict(
            bind=True, curve=Curve(public=server_pub, secret=server_sec, clients=str(tmp_path)),
            wait_subscriber=5.0, linger=1.0))
        th.start()
        follow(keyed, timeout=20)
        th.join()
        assert_same_calls(keyed.trace.check(), want, time_tol=1e-3, kinds=False)
        for other in (unkeyed, wrong):
            ch = other.poll_once(max_messages=10 ** 6, wait=0.3)
            assert ch.messages == 0 and len(other.trace) == 0
    finally:
        for x in (keyed, unkeyed, wrong):
            x.close()


def test_viewer_started_after_the_program_names_what_it_gets():
    """Either side may start first: a late viewer gets HELLO and the tables re-sent."""
    ep = free_endpoint()
    want = tracevis3d.synthetic(3000, seed=5)
    th = threading.Thread(target=replay, args=(want, ep), kwargs=dict(bind=True, speed=want.span / 1.0e6,
                                                                      wait_subscriber=0.0))
    th.start()
    import time

    time.sleep(0.4)  # the program has been sending for a while
    with LiveSession(ep, bind=False) as sess:
        follow(sess, timeout=20)
        th.join()
        t = sess.trace.check()
        assert 0 < len(t) < len(want)
        assert t.function_names[: 5] == want.function_names[:5]
        assert sess.dropped > 0 or sess.gaps > 0  # it knows it missed the start


def test_replay_and_render_live_refuse_bad_arguments_on_one_line(capsys, tmp_path):
    from tracevis3d.cli import main

    assert main(["replay", str(tmp_path / "missing.json"), "tcp://127.0.0.1:5999"]) == 1
    assert main(["replay", str(tmp_path / "missing.json"), "tcp://10.0.0.1:5999"]) == 2
    assert main(["replay", str(tmp_path / "x.json"), "tcp://127.0.0.1:5999", "--speed", "-1"]) == 2
    assert main(["render-live", "tcp://0.0.0.0:5999", "-o", str(tmp_path / "f")]) == 2
    assert main(["render-live", "tcp://127.0.0.1:5999", "-o", str(tmp_path / "nope" / "x.mp4")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("tracevis3d: error: ") for line in err), err
    assert "trace file not found" in err[0] and "CURVE" in err[1] and "speed" in err[2] and "CURVE" in err[3]
    assert "no folder" in err[4]
    assert not (tmp_path / "f").exists()  # nothing made before the arguments are checked


def test_a_late_viewer_sees_the_calls_open_when_it_joined():
    """The program binds and runs on without a viewer; a viewer joining later gets the calls
    open at that moment (OPEN: their functions and real start times) and everything after
    nested under them."""
    import time

    ep = free_endpoint()
    p = subprocess.Popen([sys.executable, "-m", "tracevis3d.live", "run", "--bind", "--endpoint", ep,
                          "--wait-subscriber", "0", os.path.join(PROGRAMS, "long_running.py"), "2.5"],
                         env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # main() and work() began a while ago: join 0.8 s after the program says it works (a
        # fixed wait from the start raced the start-up of a loaded machine)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = p.stderr.readline()
            if not line or line.strip() == "working":
                break
        time.sleep(0.8)
        with LiveSession(ep, bind=False) as sess:
            follow(sess, timeout=30)
            out, err = p.communicate(timeout=30)
            assert p.returncode == 0, err
            t = sess.trace.check()
            assert sess.open_applied >= 2 and sess.bad == {}
    finally:
        if p.poll() is None:
            p.kill()
    names = [t.function_names[f].split(" (")[0] for f in t.func]
    main = names.index("main")
    work = names.index("work")
    assert t.parent[work] == main and t.depth[work] == t.depth[main] + 1
    # they began before the viewer joined: long before the first tick it saw
    first_tick = min(i for i, n in enumerate(names) if n == "tick")
    assert t.start[first_tick] - t.start[work] > 0.5e6
    ticks = [i for i, n in enumerate(names) if n == "tick"]
    assert len(ticks) > 50 and all(t.parent[i] == work for i in ticks)
    assert t.end[main] >= t.end[work] >= max(t.end[i] for i in ticks)  # closed by the program's exits
