"""Benchmark: hostile inputs (issue 9), one table; ``--issue 20``: issue 20's goals, one table.

Each class of tests/support/hostile_cases.py is generated at three sizes and loaded in a
fresh process under an address-space limit and a time limit.  For each size the
table gives the outcome (ok: a checked Trace; error: a TraceFormatError), the
load time and the peak RSS of the process; the last column is the scaling
exponent of the load time over the three sizes (log t / log size, fitted;
1 is linear).  Goals: exponent <= 1.1, and for inputs under 10 MB <= 5 s and
<= 2 GB peak.

Usage:  .venv/bin/python bench/bench_hostile.py [--repo PATH] [--timeout 120] [--only NAME ...]
``--repo`` loads with another checkout's tracevis3d (e.g. the code before the fix).

``--issue 20 [--peer PATH]``: issue 20's classes against its goals, with the code in
``--peer`` (a checkout from before the fix: ``git archive 3f0f38d | tar -x -C DIR``) as the
peer where one applies: hostile compact files (a fresh process each, under the address-space
limit), user regexes (Python's re in a process killed after 20 s), a crafted cone-tree
flood (probes under the known seed 0 vs the process's random seed), expanding the deepest
call of a deep chain (the per-level closure vs one pass), and the live viewer (longest poll
under a big table, memory growth for 40 long-named tables and for 4 flooding peers).
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from hostile_cases import CASES, measure_case  # noqa: E402

#: (case, three sizes in bytes of the generator's size parameter)
SIZES = {
    "long_name": (5_000, 10_000, 20_000),
    "many_long_names": (125_000, 250_000, 500_000),
    "names_same_ends": (2_500_000, 5_000_000, 10_000_000),
    "colliding_tids": (2_500_000, 5_000_000, 10_000_000),
    "sync_calls_args": (2_500_000, 5_000_000, 10_000_000),
    "samples_deep_chain": (200_000, 400_000, 800_000),
    "samples_repeat": (250_000, 500_000, 1_000_000),
    "unmatched_e_deep": (1_750_000, 3_500_000, 7_000_000),
    "pending_e": (2_500_000, 5_000_000, 10_000_000),
    "pending_e_matched": (2_500_000, 5_000_000, 10_000_000),
    "flow_deep_chain": (3_250_000, 6_500_000, 13_000_000),
    "empty_events_gz": (75_000, 150_000, 300_000),
    "x_events_gz": (75_000, 150_000, 300_000),
    "newlines_error_gz": (130_000, 260_000, 520_000),
    "newlines_error": (50_000_000, 100_000_000, 200_000_000),
    "whitespace_events": (50_000_000, 100_000_000, 200_000_000),
    "tiny_events": (2_500_000, 5_000_000, 10_000_000),
    "profile_chunks_swing": (1_000_000, 2_000_000, 4_000_000),
    "profile_ids_flood": (2_000_000, 4_000_000, 8_000_000),
    "cpuprofile_chain": (1_500_000, 3_000_000, 6_000_000),
}


def exponent(sizes, times):
    pts = [(math.log(s), math.log(max(t, 1e-3))) for s, t in zip(sizes, times) if t is not None]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    num = sum((x - mx) * (y - my) for x, y in pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return num / den


def _rss_mb() -> float:
    with open("/proc/self/status") as st:
        return next(int(ln.split()[1]) for ln in st if ln.startswith("VmRSS:")) / 1024


def _re_seconds(pattern: str, names: list, timeout: float) -> str:
    """Python's re.search over ``names`` in a fresh process killed after ``timeout`` s."""
    import subprocess
    import time

    code = ("import re, sys, json; names = json.loads(sys.stdin.read()); rx = re.compile(sys.argv[1]); "
            "print(sum(1 for s in names if rx.search(s)))")
    t0 = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-c", code, pattern], input=__import__("json").dumps(names), text=True,
                       capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f">{timeout:.0f} (killed)"
    return f"{time.perf_counter() - t0:.2f}"


def issue20(args) -> None:
    import time

    import numpy as np

    from hostile_cases import COMPACT_CASES

    print(f"# issue 20; peer: {args.peer or '(none)'}; compact files: timeout {args.timeout:.0f} s, "
          f"address space {args.max_gb:g} GB per run")
    print("| class | input | outcome | seconds | peak / growth MB | goal | peer (before the fix) |")
    print("|---|---|---|---|---|---|---|")

    def row(*cells):
        print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)

    with tempfile.TemporaryDirectory(prefix="tv3d-hostile20-") as d:
        for name, n in (("compact_dag_bomb", 24), ("compact_deep_chain", 4_000_000), ("compact_raw0", 1024),
                        ("compact_meta", 15_000_000), ("compact_wrap", 300)):
            data, opts = COMPACT_CASES[name](n)
            res = []
            for repo in (str(ROOT), args.peer):
                if not repo:
                    res.append(None)
                    continue
                res.append(measure_case(data, opts, workdir=d, timeout=args.timeout,
                                        max_address_space=int(args.max_gb * (1 << 30)), repo=repo, name=name))
            new, old = res

            def fmt(r):
                if r is None:
                    return "—"
                sec = "—" if r["seconds"] is None else f"{r['seconds']:.2f} s"
                return f"{r['outcome']}, {sec}, {r['peak_mb']:.0f} MB"
            row(name, f"{n:,} ({len(data):,} bytes)", new["outcome"],
                "—" if new["seconds"] is None else f"{new['seconds']:.2f}", f"{new['peak_mb']:.0f}",
                "< 5 s, < 2048 MB", fmt(old))

    # user regexes over 100 K names
    from tracevis3d.userregex import user_regex

    names = ["a" * 30 + "b"] * 50_000 + [f"pkg.mod{k}.func_{k}" for k in range(50_000)]
    for pat in (r"(a+)+$", r"(.*a){20}$", r"(?i)MOD\d+\.FUNC"):
        t0 = time.perf_counter()
        try:
            up = user_regex(pat)
            hits = sum(1 for x in names if up.search(x))
            out = f"{hits} hits"
        except ValueError as e:
            out = "refused: " + str(e)[:60]
        sec = time.perf_counter() - t0
        row("user regex", f"{pat} over 100 K names", out, f"{sec:.2f}", "—", "< 20 s",
            "re: " + _re_seconds(pat, names, 20.0) + " s")

    # the cone tree's hash table: keys crafted to collide under a known seed
    from tracevis3d.kernels.cone import calling_context_tree, close_under_parents
    from tracevis3d.kernels.gamma import table_size, process_hash_seed

    def splitmix(x):
        with np.errstate(over="ignore"):
            z = x + np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            return z ^ (z >> np.uint64(31))
    N = 20_000
    tsize = table_size(N + 2)
    h0 = splitmix(np.array([np.uint64(1)]))[0]
    found, start = [], 0
    while len(found) < N:
        f = np.arange(start, start + (1 << 24), dtype=np.uint64)
        found.extend(f[(splitmix(f ^ h0) & np.uint64(tsize - 1)) < 64].tolist())
        start += 1 << 24
    func = np.concatenate([[0], np.array(found[:N], np.int64)]).astype(np.int32)
    parent = np.concatenate([[-1], np.zeros(N)]).astype(np.int32)
    thr, dur = np.zeros(N + 1, np.int32), np.ones(N + 1)
    out = {}
    for label, seed in (("known seed 0", np.uint64(0)), ("random seed", process_hash_seed())):
        calling_context_tree(func[:10], parent[:10], thr[:10], dur[:10], np.zeros(0, np.bool_), 1, False, False, seed)
        t0 = time.perf_counter()
        r = calling_context_tree(func, parent, thr, dur, np.zeros(0, np.bool_), 1, False, False, seed)
        out[label] = (time.perf_counter() - t0, int(r[-1]))
    (tk, pk), (tr, pr) = out["known seed 0"], out["random seed"]
    row("hash flood (cone)", f"{N:,} crafted children", f"{pr:,} probes", f"{tr:.4f}", "—",
        "as random keys", f"known hash: {pk:,} probes, {tk:.3f} s ({tk / max(tr, 1e-6):.0f}x)")

    # expanding the deepest call of a deep chain
    depth = 30_000
    par = np.arange(-1, depth - 1, dtype=np.int64)
    keep = np.zeros(depth, bool)
    keep[-1] = True
    t0 = time.perf_counter()
    close_under_parents(keep, par)
    t_new = time.perf_counter() - t0
    t0 = time.perf_counter()
    k2 = keep.copy()
    while True:
        up = par[np.flatnonzero(k2)]
        up = up[up >= 0]
        if k2[up].all():
            break
        k2[up] = True
    t_old = time.perf_counter() - t0
    row("cone expand", f"deepest call of a {depth:,}-deep chain", "whole chain kept", f"{t_new:.4f}", "—",
        "linear", f"per-level closure: {t_old:.2f} s")

    live_rows(row, args.peer)


_PEER = r"""
import struct, sys, time, zmq
ep, plan = sys.argv[1], sys.argv[2]
ctx = zmq.Context()
s = ctx.socket(zmq.XPUB)
s.setsockopt(zmq.SNDHWM, 100000)
s.connect(ep)
s.poll(10000)
s.recv()
hdr = lambda t, q, sid: struct.pack("<4sHHQQ", b"TV3L", 1, t, sid, q)
s.send_multipart([hdr(1, 0, 6), struct.pack("<IqII", 42, 0, 1000000000, 4) + b"prog"])
if plan == "long":
    for k in range(40):
        names = [b"%06d" % (1000 * k + j) + b"n" * 4000 for j in range(1000)]
        body = b"".join(struct.pack("<iHH", 7, len(x), 0) + x for x in names)
        s.send_multipart([hdr(2, 1 + k, 6), struct.pack("<II", 1000 * k, len(names)) + body])
else:
    for k in range(80):
        s.send_multipart([hdr(4, 1 + k, 6), b"\0" * (4 << 20)])
s.close(linger=60000)
ctx.term()
"""


_FLOOD_NOTICES = r"""
import sys, zmq
ctx = zmq.Context()
s = ctx.socket(zmq.XSUB)
s.connect(sys.argv[1])
while True:  # a peer that reads what it gets (not a stalled viewer) but keeps re-subscribing
    s.send(b"\x01TV3L")
    while True:
        try:
            s.recv(zmq.NOBLOCK)
        except zmq.Again:
            break
"""

_BOUND = r"""
import json, os, socket, subprocess, sys, time
sys.path.insert(0, os.environ["TV3D_REPO"])  # this checkout's tracevis3d or the peer's (a child process)
import numpy as np
from tracevis3d.live import LiveSession
from tracevis3d.live import protocol as P
from tracevis3d.live.wire import WireSender
s = socket.socket(); s.bind(("127.0.0.1", 0)); ep = "tcp://127.0.0.1:%d" % s.getsockname()[1]; s.close()
wire = WireSender(ep, bind=True, program="bound")
viewer = LiveSession(ep, bind=False)
wire.add_functions([("main", "a.py", 1)] + [("pkg.mod.f%d" % k, "/src/pkg/mod.py", k) for k in range(20000)]); wire.set_thread(0, (1, 2, "MainThread", "p"))
t0 = time.monotonic()
while not wire.subscribed and time.monotonic() - t0 < 10:
    viewer.poll_once(wait=0.01); wire.poll_subscriptions(10)
flood = subprocess.Popen([sys.executable, "-c", os.environ["TV3D_FLOOD"], ep]) if os.environ["TV3D_WITH_FLOOD"] == "1" else None
time.sleep(1.0)
n = 1000
rec = np.zeros(2 * n, P.EVENT_DTYPE)
rec["type"][0::2], rec["type"][1::2] = P.ENTER, P.EXIT
for k in range(300):
    rec["ts"] = (np.arange(2 * n) + 2 * n * k) * 1000
    wire.send_events(rec)
    viewer.poll_once(max_messages=100, max_seconds=0.01)
    time.sleep(0.002)
if flood is not None:
    flood.kill()
print("TV3D-BOUND " + json.dumps({"dropped": wire.dropped_events, "total": wire.events_sent + wire.dropped_events,
                                  "resends": getattr(wire, "table_resends", None)}))
"""


def _bound_drops(repo: str, flood: bool) -> str:
    """The share of events a bound program drops, with or without a subscription flood."""
    import json
    import os
    import subprocess

    env = dict(os.environ, TV3D_REPO=repo, TV3D_FLOOD=_FLOOD_NOTICES, TV3D_WITH_FLOOD="1" if flood else "0")
    try:
        p = subprocess.run([sys.executable, "-c", _BOUND], env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "not done in 120 s (killed)"
    for line in p.stdout.splitlines():
        if line.startswith("TV3D-BOUND "):
            r = json.loads(line[len("TV3D-BOUND "):])
            return f"{100 * r['dropped'] / max(r['total'], 1):.1f} % dropped"
    return "failed: " + p.stderr[-200:].replace("\n", " ")


def _peer_process(sess, plan: str):
    import subprocess

    p = subprocess.Popen([sys.executable, "-c", _PEER, sess.endpoint, plan])
    import time

    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.0:  # the viewer sends its subscription when polled
        sess.poll_once(max_messages=0, wait=0.05)
    return p


def live_rows(row, peer: str | None = None) -> None:
    """The live viewer under hostile peers, over real sockets on loopback."""
    row("live: bound program", "600 K events, 20 K functions, a peer looping on subscriptions",
        _bound_drops(str(ROOT), True), "—", "—", "<= 10 % dropped",
        (_bound_drops(peer, True) if peer else "—") + f"; no flood: {_bound_drops(str(ROOT), False)}")
    import struct
    import time

    import zmq

    from tracevis3d.live import LiveSession

    def hdr(mtype, seq, sid):
        return struct.pack("<4sHHQQ", b"TV3L", 1, mtype, sid, seq)

    def hello():
        return struct.pack("<IqII", 42, 0, 1_000_000_000, 4) + b"prog"

    def functions(first, names):
        return struct.pack("<II", first, len(names)) + b"".join(struct.pack("<iHH", 7, len(x), 0) + x for x in names)

    def peer(ctx, sess):
        s = ctx.socket(zmq.XPUB)
        s.setsockopt(zmq.SNDHWM, 100_000)
        s.connect(sess.endpoint)
        t0 = time.monotonic()
        while not s.poll(10) and time.monotonic() - t0 < 5:
            sess.poll_once()
        s.recv()
        return s

    ctx = zmq.Context()
    # one FUNCTIONS message of 200 K names: the longest poll
    with LiveSession("tcp://127.0.0.1:*") as sess:
        s = peer(ctx, sess)
        s.send_multipart([hdr(1, 0, 5), hello()])
        s.send_multipart([hdr(2, 1, 5), functions(0, [b"pkg.mod%d.Klass.meth (/src/m.py:%d)" % (k, k)
                                                      for k in range(80_000)])])
        worst, polls, t_all = 0.0, 0, time.perf_counter()
        while len(sess.fnames) < 80_000 and time.perf_counter() - t_all < 60:
            ch = sess.poll_once(max_seconds=0.05, wait=0.01)
            worst, polls = max(worst, ch.seconds), polls + 1
        row("live: big table", "80 K functions in one message (3.4 MB)", f"{len(sess.fnames):,} in {polls} polls",
            f"{worst:.3f} (longest poll)", "—", "poll <= 0.2 s", "one 2.2 s poll (issue)")
        s.close(0)
    # 40 long-named tables from one session, and 4 peers flooding an unread viewer: the
    # peers run in their own processes (their send queues are not the viewer's memory)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        rss0 = _rss_mb()
        procs = [_peer_process(sess, "long")]
        t0 = time.perf_counter()
        worst = 0.0
        while time.perf_counter() - t0 < 60:
            ch = sess.poll_once(max_seconds=0.05, wait=0.05)
            worst = max(worst, ch.seconds)
            if procs[0].poll() is not None and not ch.messages and not any(
                    x.pending or x.backlog for x in sess.sessions.values()):
                break
        row("live: long names", "40 tables x 1000 names x 4 KB", f"{len(sess.fnames):,} kept, "
            f"{sum(sess.bad.values())} refused", f"{worst:.3f} (longest poll)", f"{_rss_mb() - rss0:.0f}",
            "<= 100 MB", "~12 MB a message (issue): ~480 MB")
    with LiveSession("tcp://127.0.0.1:*") as sess:
        rss0 = _rss_mb()
        procs = [_peer_process(sess, "flood") for _ in range(4)]
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 8:  # subscribe them, then read nothing
            sess.poll_once(max_messages=0, wait=0.05)
        grown = _rss_mb() - rss0
        for pr in procs:
            pr.kill()
        row("live: 4 flooding peers", "80 x 4 MB messages each, unread", "—", "—", f"{grown:.0f}",
            "<= 300 MB", "RCVHWM 64: 256 MB a peer (issue)")
    # more flooding peers than the viewer admits (max_peers 8): the rest refused at the handshake
    with LiveSession("tcp://127.0.0.1:*") as sess:
        rss0 = _rss_mb()
        procs = [_peer_process(sess, "flood") for _ in range(12)]
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 8:
            sess.poll_once(max_messages=0, wait=0.05)
        grown = _rss_mb() - rss0
        for pr in procs:
            pr.kill()
        row("live: 12 flooding peers", "12 peers, 80 x 4 MB messages each, unread", f"{sess.peers_refused} refusals",
            "—", f"{grown:.0f}", "<= 8 peers' pipes (8 x 64 MB)", "not capped (issue): 12 x 64 MB")
    ctx.term()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(ROOT))
    ap.add_argument("--issue", type=int, default=9)
    ap.add_argument("--peer", default=None, help="--issue 20: a checkout from before the fix")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--max-gb", type=float, default=6.0, help="address-space limit per run")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    if args.issue == 20:
        return issue20(args) if not args.only else live_rows(
            lambda *c: print("| " + " | ".join(str(x) for x in c) + " |", flush=True), args.peer)
    names = args.only or list(SIZES)
    print(f"# repo {args.repo}; per run: timeout {args.timeout:.0f} s, address space {args.max_gb:g} GB")
    print("| case | file bytes (3 sizes) | outcome | load s | peak RSS MB | exponent |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="tv3d-hostile-") as d:
        for name in names:
            files, outs, secs, peaks = [], [], [], []
            stop = False
            for n in SIZES[name]:
                data, opts = CASES[name](n)
                files.append(len(data))
                if stop:
                    outs.append("skipped")
                    secs.append(None)
                    peaks.append(None)
                    continue
                r = measure_case(data, opts, workdir=d, timeout=args.timeout,
                                 max_address_space=int(args.max_gb * (1 << 30)), repo=args.repo, name=name)
                outs.append(r["outcome"])
                secs.append(r["seconds"])
                peaks.append(r["peak_mb"])
                if r["outcome"] == "timeout":
                    stop = True  # a bigger one would time out too
            good = [t if o not in ("timeout", "skipped") else None for o, t in zip(outs, secs)]
            ex = exponent(files, good)
            fmt_t = " / ".join("—" if t is None else (f">{t:.0f}" if o == "timeout" else f"{t:.2f}")
                               for o, t in zip(outs, secs))
            fmt_m = " / ".join("—" if m is None else f"{m:.0f}" for m in peaks)
            print(f"| {name} | {' / '.join(f'{b:,}' for b in files)} | {' / '.join(outs)} | {fmt_t} | "
                  f"{fmt_m} | {ex:.2f} |", flush=True)


if __name__ == "__main__":
    main()
