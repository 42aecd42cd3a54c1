"""Benchmark: what watching a program's memory live costs the program (issue 71, item 4).

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_memray_live.py \
        [--rounds 8] [--repeat 3] [--no-view] [--python-allocators]

One JSON-heavy program (records built, dumped, parsed, some kept: the memory view tests'
workload, ``--rounds`` of it), run in the same bench run:
- plain: ``python program.py``;
- ``python -m memray run -o capture.bin program.py`` (memray's own file mode, the peer);
- ``python -m memray run --live-remote`` with the socket only drained (memray's live mode's own cost);
- ``python -m memray run --live-remote`` with our reader attached: `MemrayLiveStream` drained
  every 50 ms and a `capture()` of what arrived at the rate `LiveMemoryView` rebuilds (every
  max(1 s, 2 x the last capture's cost));
- the same with the whole `LiveMemoryView` (bpy headless: scan, layout and scene rebuilt as the
  program runs, in this process), unless ``--no-view``.
``--python-allocators``: every memray run with ``--trace-python-allocators`` (pymalloc too: a stream
some hundred times longer, the heavy case for the rebuilds).  Each is the program's own wall time of its work (it prints perf_counter around its loop: memray's
start-up, the wait for a client and the capture's compression are outside) and the process's wall
time, the best of ``--repeat``; ratios to plain and to memray's file mode.  The machine is shared
(2 cores, other jobs running): the ratios in one run are what the table says, not absolute times.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

PROGRAM = textwrap.dedent('''
    import json, random, sys, time
    random.seed(7)
    t0 = time.perf_counter()
    kept = []
    def record(i):
        return {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 13), "x" * (i % 40)],
                "scores": [random.random() for _ in range(i % 30)], "nested": {"a": i, "b": [i] * (i % 7)}}
    def batch(n):
        rows = [record(i) for i in range(n)]
        text = json.dumps(rows, indent=1, sort_keys=True)
        return text, json.loads(text)
    for round_ in range(int(sys.argv[1])):
        text, back = batch(2000 + 800 * (round_ % 6))
        if round_ % 3 == 0:
            kept.append(back)
        compact = json.dumps(back, separators=(",", ":"))
        del text, compact
    print("WORK", time.perf_counter() - t0)
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _work(out: bytes) -> float:
    for line in out.decode().splitlines():
        if line.startswith("WORK "):
            return float(line.split()[1])
    raise RuntimeError(f"the program printed no WORK line: {out[-500:]!r}")


def run_plain(prog, rounds, folder):
    t = time.perf_counter()
    r = subprocess.run([sys.executable, prog, str(rounds)], cwd=folder, capture_output=True, check=True)
    return _work(r.stdout), time.perf_counter() - t, {}


MEMRAY_EXTRA: list = []  # --trace-python-allocators with --python-allocators


def run_memray_file(prog, rounds, folder):
    out = os.path.join(folder, "file.bin")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "memray", "run", "-q", "-f", *MEMRAY_EXTRA, "-o", out, prog,
                        str(rounds)], cwd=folder,
                       capture_output=True, check=True)
    return _work(r.stdout), time.perf_counter() - t, {"bytes": os.path.getsize(out)}


def run_memray_live(prog, rounds, folder, view: bool, scan: bool = True):
    from tracevis3d.io.memray import MemrayLiveStream

    port = _free_port()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memray", "run", "-q", *MEMRAY_EXTRA, "--live-remote",
                             "--live-port", str(port), prog, str(rounds)], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    extra = {}
    try:
        stream = MemrayLiveStream(port, connect_timeout=60)
        if view:
            import bpy

            from tracevis3d.blender.live_memory import LiveMemoryView

            with LiveMemoryView(stream, scene=bpy.context.scene, rebuild_seconds=1.0) as v:
                v.run(600)
                extra = {"rebuilds": v.stats["builds"], "longest_rebuild_s": round(v.stats["longest_build_s"], 2),
                         "bytes": v.stats["bytes_received"]}
        else:
            n_caps, wait, last = 0, 1.0, -1e9
            with stream:
                while not stream.finished:
                    stream.poll(timeout=0.05)
                    if scan and time.monotonic() - last >= wait and stream.n_bytes:
                        last = time.monotonic()
                        stream.capture()
                        n_caps += 1
                        wait = max(1.0, 2.0 * (time.monotonic() - last))
                if scan:
                    stream.capture()
                extra = {"captures": n_caps + scan, "bytes": stream.n_bytes}
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    if proc.returncode != 0:
        raise RuntimeError(err.decode()[-2000:])
    return _work(out), time.perf_counter() - t, extra


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-view", action="store_true", help="skip the LiveMemoryView row (no bpy)")
    ap.add_argument("--python-allocators", action="store_true", help="memray run --trace-python-allocators")
    a = ap.parse_args(argv)
    if a.python_allocators:
        MEMRAY_EXTRA.append("--trace-python-allocators")

    folder = tempfile.mkdtemp(prefix="tv3d-bench-live-memory-")
    prog = os.path.join(folder, "json_heavy.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    modes = [("plain python", lambda: run_plain(prog, a.rounds, folder)),
             ("memray run -o FILE (peer)", lambda: run_memray_file(prog, a.rounds, folder)),
             ("memray run --live-remote, socket drained only", lambda: run_memray_live(prog, a.rounds, folder, False,
                                                                                        scan=False)),
             ("memray run --live-remote + MemrayLiveStream", lambda: run_memray_live(prog, a.rounds, folder, False))]
    if not a.no_view:
        modes.append(("memray run --live-remote + LiveMemoryView (bpy)",
                      lambda: run_memray_live(prog, a.rounds, folder, True)))
    best = {}
    for k in range(a.repeat):  # interleaved, so that the machine's load falls on every mode alike
        for name, fn in modes:
            w, wall, extra = fn()
            b = best.get(name)
            if b is None or w < b[0]:
                best[name] = (w, wall, extra)
            print(f"# repeat {k}: {name}: work {w:.3f} s, process {wall:.3f} s {extra}", file=sys.stderr)
    plain = best["plain python"][0]
    peer = best["memray run -o FILE (peer)"][0]
    what = ", --trace-python-allocators" if a.python_allocators else ""
    print(f"| mode (json-heavy program, {a.rounds} rounds{what}; best of {a.repeat}, loaded machine) | work s | x plain | "
          f"x memray file | process s | notes |")
    print("|---|---|---|---|---|---|")
    for name, (w, wall, extra) in best.items():
        print(f"| {name} | {w:.3f} | {w / plain:.2f} | {w / peer:.2f} | {wall:.2f} | "
              f"{', '.join(f'{k} {v:,}' if isinstance(v, int) else f'{k} {v}' for k, v in extra.items())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
