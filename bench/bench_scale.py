"""Every view at 10^6-10^7 calls, end to end through the command line (issue 26's table).

    .venv/bin/python bench/bench_scale.py [--calls 1e6,1e7] [--views icicle,cone,threads[,compare]]
                                          [--before REV|none]

For each size, a 4-thread synthetic trace (`tracevis3d.synthetic`) saved as a native file;
for each view, ``python -m tracevis3d render-<view> TRACE -o fig.png`` at 1920x1080 in a fresh
process (kernels already compiled: one untimed run first), its wall time and peak resident
memory (the child's ru_maxrss), with this tree and with the version at ``--before`` (a git
revision extracted to a temporary folder; the peer, measured in the same run; ``none``: no
peer).  Prints one table: seconds and GB of both, and the ratio to the peer.

``compare`` (opt-in: name it in ``--views``; minutes at 10^7 calls, and up to the 16 GiB of
issue 26's goal: hold the machine's heavy-run lock) is ``render-compare A B``, B the trace's
`tracevis3d.perturb` copy (seed 1) saved beside it: loading both, the comparison, its layout
and the render, end to end.  Measured once (this 2-core shared machine, under the heavy-run
lock, no peer: ``--calls 1e7 --views compare --before none``; the comparison is being sped
up in parallel, so this is the figure before that work):

    | view    | calls      | this tree s | GB  |
    |---------|------------|-------------|-----|
    | compare | 10,000,000 | 498.6       | 7.0 |

Measured again at stop 59 (2026-11-27, the same command; the comparison now takes the fused join,
its overview estimated past the budget, B's membership rows and the other stages' speed-ups):

    | view    | calls      | this tree s | GB  |
    |---------|------------|-------------|-----|
    | compare | 10,000,000 | 146.7       | 7.4 |

(the comparison itself ~102-112 s of it; the PNG looked at: both overviews, the legend's
"estimated from a weighted sample of 1 in 467 of the matches", the tubes between the two
icicles.)

Measured at stop 52 (2026-11-26, ``--calls 1e7 --views icicle,threads,cone --before none``, no peer;
the icicle three times: the machine's other jobs move it by seconds):

    | view    | calls      | this tree s     | GB  | goal   |
    |---------|------------|-----------------|-----|--------|
    | icicle  | 10,000,000 | 19.0, 21.3, 25.0 | 3.7 | ≤ 20 s |
    | threads | 10,000,000 | 10.8            | 2.5 |        |
    | cone    | 10,000,000 | 7.1             | 1.6 |        |

(25.0 beside a test run; ``/usr/bin/time`` of the same command on a quiet machine: 16.3 s, of which
layout 9-11 s spread over twenty stages of 0.3-0.8 s each, the lanes' occupancy grid twice over
all 9.95 M drawn calls 1.7 s, the load 0.6 s, the Workbench render 3.8 s.)

Measured at stop 54 (2026-11-26, ``--calls 1e7 --views icicle,threads,cone --before cf98429``: the
peer is the tree before `tracevis3d.allocator`, which the ``render-*`` commands now apply; a quiet
machine):

    | view    | calls      | this tree s | GB  | cf98429 s | GB  | time × peer | goal   |
    |---------|------------|-------------|-----|-----------|-----|-------------|--------|
    | icicle  | 10,000,000 | 14.0        | 3.9 | 15.0      | 3.8 | 0.94×       | ≤ 20 s |
    | threads | 10,000,000 | 7.9         | 2.3 | 7.8       | 2.5 | 1.02×       |        |
    | cone    | 10,000,000 | 4.7         | 1.8 | 5.4       | 1.7 | 0.87×       |        |

(One run each: the icicle moves by a second or two between runs.  ``/usr/bin/time`` of the icicle's
command, alternating, twice each: 12.95 / 13.94 s with the allocator settings against 15.45 / 15.74 s
without (``TRACEVIS3D_MALLOC=system``); minor page faults 0.58 M against 1.2 M, system time 3.7-3.9 s
against 5.6-6.1 s.  The layout alone, warm, in one process: 7.9 s → 4.4 s.)
"""
from __future__ import annotations

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))  # a bench script, not the add-on
from bench_views import extract  # noqa: E402  (a git revision into a folder: the peer)

GOALS = {"icicle": 20.0}  # seconds at 10^7 calls (issue 26)
OPT_IN = ("compare",)  # views measured only when named: long at 10^7


def _made(path: pathlib.Path, code: str, arg: str) -> pathlib.Path:
    """``path``, written by ``code`` (run with argv [arg, path] in a fresh process) unless it exists."""
    if not path.exists():
        subprocess.run([sys.executable, "-c", code, arg, str(path)], cwd=REPO, check=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    return path


def make_trace(n: int, out: pathlib.Path) -> pathlib.Path:
    return _made(out / f"synthetic_{n}.tv3d.npz",
                 "import sys, tracevis3d; tracevis3d.save(tracevis3d.synthetic(int(sys.argv[1]), threads=4), "
                 "sys.argv[2])", str(n))


def make_pair(n: int, out: pathlib.Path) -> list:
    """[the trace of ``n`` calls, its `tracevis3d.perturb` copy (seed 1)]: ``render-compare``'s inputs."""
    a = make_trace(n, out)
    return [a, _made(out / f"synthetic_{n}_perturbed.tv3d.npz",
                     "import sys, tracevis3d; tracevis3d.save(tracevis3d.perturb(tracevis3d.load(sys.argv[1]), "
                     "seed=1), sys.argv[2])", str(a))]


def inputs(view: str, n: int, out: pathlib.Path) -> list:
    """The trace files ``render-<view>`` takes at ``n`` calls."""
    return make_pair(n, out) if view == "compare" else [make_trace(n, out)]


def render(root: pathlib.Path, view: str, traces: list, png: pathlib.Path, cache: str) -> tuple:
    """(seconds, peak GB) of one render through the command line of the tree at ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "tracevis3d", f"render-{view}", *map(str, traces), "-o", str(png)],
                       cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    sec = time.perf_counter() - t
    if r.returncode != 0:
        return None, " ".join(r.stderr.strip().splitlines()[-1:])[-120:]
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of any child so far: measure each case in a
    # fresh grandchild so the peak is this run's (see main)
    return sec, max(peak, before) / 2 ** 20


def one(root: str, view: str, traces: str, png: str, cache: str) -> None:
    """Child mode: run one render and print 'SECONDS PEAK_GB' (its own children only);
    ``traces``: the trace files joined by os.pathsep."""
    sec, gb = render(pathlib.Path(root), view, [pathlib.Path(t) for t in traces.split(os.pathsep)],
                     pathlib.Path(png), cache)
    print(f"RESULT {sec} {gb}")


def measure(root, view, traces, png, cache) -> tuple:
    if root is None:
        return None, "no peer"
    r = subprocess.run([sys.executable, __file__, "--one", str(root), view, os.pathsep.join(map(str, traces)),
                        str(png), cache],
                       capture_output=True, text=True, timeout=3600)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            _, sec, gb = line.split(" ", 2)
            return (None, gb) if sec == "None" else (float(sec), float(gb))
    return None, (r.stderr or r.stdout).strip()[-120:]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(*sys.argv[2:7])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", default="1e6,1e7")
    ap.add_argument("--views", default="icicle,cone,threads",
                    help=f"views to measure; opt-in, only when named: {', '.join(OPT_IN)}")
    ap.add_argument("--before", default="46f84dc",
                    help="the peer: a git revision (default: before this table), or none")
    ap.add_argument("--work", default=str(REPO / "build" / "scale"))
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = str(REPO / "build" / "numba-cache")
    with tempfile.TemporaryDirectory(prefix="tv3d-scale-") as tmp:
        peer = extract(args.before, pathlib.Path(tmp)) if args.before != "none" else None
        peer_cache = str(pathlib.Path(tmp) / "numba-cache")
        print(f"| view | calls | this tree s | GB | {args.before} s | GB | time × peer | goal |")
        print("|---|---|---|---|---|---|---|---|")
        for n in (int(float(c)) for c in args.calls.split(",")):
            for view in args.views.split(","):
                traces = inputs(view, n, work)
                png = work / f"{view}_{n}.png"
                for root, c in ((REPO, cache), (peer, peer_cache)):  # compile first, untimed
                    measure(root, view, inputs(view, 10_000, work), png, c)
                ours = measure(REPO, view, traces, png, cache)
                theirs = measure(peer, view, traces, work / f"{view}_{n}_peer.png", peer_cache)
                ratio = f"{ours[0] / theirs[0]:.2f}×" if ours[0] and theirs[0] else "–"
                goal = f"≤ {GOALS[view]:g} s" if view in GOALS and n >= 10 ** 7 else ""
                cells = [f"{x[0]:.1f} | {x[1]:.1f}" if x[0] else "– | –" if x[1] == "no peer" else f"error: {x[1]} |"
                         for x in (ours, theirs)]
                print(f"| {view} | {n:,} | {cells[0]} | {cells[1]} | {ratio} | {goal} |", flush=True)


if __name__ == "__main__":
    main()
