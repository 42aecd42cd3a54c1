"""Benchmark (issue 26, item 3): the live view's append path at 10^7 calls.

A 4-thread synthetic trace of ``--calls`` calls is replayed at full speed by another process
(``python -m tracevis3d replay``, loopback TCP) into a `LiveSession`; after every poll (what
the Blender timer does: at most 20 ms of messages) the `LiveView` appends the new calls
(``--no-view``: the session only).  Prints one table, one row per stretch of the run
(up to 10^5 calls, 10^6, ...): calls appended, the update's cost per 10^4 calls appended
(poll + update; the peer: the first stretch's; a ratio near 1 is amortised O(1) per call), the longest
main-thread pause (poll + update), the process's own memory (RssAnon) at the end of the
stretch and per call, and the scene's size: call boxes (instances in use), calls drawn by
their cluster alone, calls let go of by the trail (ended a window before the view), clusters, chunk objects (of 32768 instances), and how often every box
was written again (a lane grew taller: relayouts; the module colours changed: recolours).

Usage:  PYTHONPATH=. .venv/bin/python bench/bench_live_scale.py [--calls 10000000] [--no-view]
        (10^7 calls: about 3 GB; hold the machine's heavy-run lock, flock /tmp/tv3d-heavy.lock)
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time



def rss_anon() -> int:
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("RssAnon:"):
                return int(ln.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10_000_000)
    ap.add_argument("--no-view", action="store_true", help="the session alone (no Blender)")
    ap.add_argument("--materialise", action="store_true",
                    help="also read session.trace after every poll (the Trace view of the calls so far)")
    ap.add_argument("--window-s", type=float, default=1.0, help="the live view's window (s)")
    ap.add_argument("--trace", default=None, help="a native file to replay instead (default: save_synthetic)")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="bench-live-scale-")
    try:
        run(a, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)  # the trace (10^7 calls: 450 MB), even when stopped


def run(a, d):
    import tracevis3d
    from tracevis3d.live import LiveSession

    path = a.trace or os.path.join(d, "live.tv3d.npz")
    if not a.trace:
        tracevis3d.save_synthetic(path, a.calls, threads=4, seed=12)
    view = None
    base = rss_anon()
    marks = [m for m in (10**5, 10**6, 3 * 10**6, 10**7, 3 * 10**7, 10**8) if m < a.calls] + [a.calls]
    rows, k = [], 0
    with LiveSession("tcp://127.0.0.1:*") as sess:
        if not a.no_view:
            from tracevis3d.blender.live_view import LiveView
            from tracevis3d.layout.live import LiveParams

            view = LiveView(LiveParams(window_us=a.window_s * 1e6, resolution=(1920, 1080)))
        env = {**os.environ}
        p = subprocess.Popen([sys.executable, "-m", "tracevis3d", "replay", path, sess.endpoint, "--speed", "0",
                              "--wait", "60"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        import zmq

        t_start = time.perf_counter()
        upd = pause = 0.0
        last_n, quiet = -1, time.perf_counter()
        appended0 = 0
        while True:
            ended = any(s.ended for s in sess.sessions.values())
            sess.sock.poll(20, zmq.POLLIN)
            t = time.perf_counter()
            sess.poll_once(max_messages=200, max_seconds=0.02)
            if view is not None:
                view.update(sess)
            if a.materialise:
                sess.trace
            t2 = time.perf_counter()
            upd += t2 - t  # poll + update: the main thread's cost of the append
            pause = max(pause, t2 - t)
            n = sess.n_calls
            last_n, quiet = (n, time.perf_counter()) if n != last_n else (last_n, quiet)
            # said BYE (or the replayer is gone) and nothing more came for 3 s: calls were lost
            lost = (ended or p.poll() is not None) and time.perf_counter() - quiet > 3.0
            if (k < len(marks) and n >= marks[k]) or (lost and n > appended0):
                st = view.stats if view is not None else {}
                rows.append(dict(calls=n, new=n - appended0, upd=upd, pause=pause, anon=rss_anon() - base,
                                 inst=st.get("instances", 0), merged=st.get("clustered_calls", 0),
                                 retired=st.get("retired_calls", 0),
                                 clusters=st.get("clusters", 0),
                                 chunks=len(view.chunks) if view is not None else 0,
                                 relayouts=st.get("relayouts", 0), recolours=st.get("recolours", 0),
                                 wall=time.perf_counter() - t_start))
                appended0, upd, pause = n, 0.0, 0.0
                while k < len(marks) and n >= marks[k]:
                    k += 1
            if ended and n >= a.calls or lost:
                break
            if p.poll() is not None and p.returncode:
                raise RuntimeError(p.stderr.read().decode()[-2000:])
        p.wait()
    if n < a.calls:
        print(f"# {a.calls - n:,} calls did not arrive: {sess.gaps} messages lost, {sess.dropped:,} dropped")
    print(f"# live append, {a.calls:,} calls replayed at full speed, 4 threads, "
          f"{'session only' if view is None else f'LiveView {a.window_s:g} s window, 1920x1080'}"
          f"{', session.trace after every poll' if a.materialise else ''}")
    print(f"{'calls so far':>13} {'appended':>10} {'ms/1e4':>8} {'× first':>8} {'pause ms':>9} {'own MB':>8} "
          f"{'B/call':>7} {'boxes':>8} {'merged':>10} {'let go':>10} {'clusters':>9} {'chunks':>7} {'relayouts':>9} {'recolours':>9} {'wall s':>7}")
    first = None
    for r in rows:
        per = r["upd"] / max(r["new"], 1) * 1e4 * 1e3
        first = per if first is None else first
        print(f"{r['calls']:13,} {r['new']:10,} {per:8.2f} {per / max(first, 1e-9):8.2f} {r['pause'] * 1e3:9.1f} "
              f"{r['anon'] / 1e6:8.0f} {r['anon'] / max(r['calls'], 1):7.0f} {r['inst']:8,} {r['merged']:10,} {r['retired']:10,} {r['clusters']:9,} "
              f"{r['chunks']:7} {r['relayouts']:9} {r['recolours']:9} {r['wall']:7.1f}")


if __name__ == "__main__":
    main()
