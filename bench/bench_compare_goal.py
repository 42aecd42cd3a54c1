"""Issue 79's compare rows (``--goal``), and the compare old tree against new in the same run.

    .venv/bin/python bench/bench_compare_goal.py --goal [--sizes 1e6,1e7,1e8] [--repeat 3]

``--goal`` (what ``make bench`` runs): one table, a row per size of A (10^6, 10^7, 10^8 calls:
``tracevis3d.synthetic(n, threads=4)`` against ``tracevis3d.perturb(a, seed=2)``; 10^8 as two
native files under build/compare-goal/, made once, mapped as the command line maps them), each
compare in a fresh process: wall s (median of ``--repeat`` at 10^6, one run above), CPU s, the
peak resident memory during the compare (VmHWM; the mapped files' pages count there) and its
anonymous part (RssAnon sampled every 10 ms: what the system cannot drop), the load average;
beside them what the same process measured as its peers: numpy's argsort of n doubles (time
÷ argsort) and the two traces' own bytes (peak ÷ traces), and the goals.  Runs past 4 GB hold
``/tmp/tv3d-bigmem.lock`` (the shared machine's rule) when that file can be opened.

Old tree against new (issue 26's form): wall, CPU and peak per stage.

    git archive <base> tracevis3d | tar -x -C /tmp/base-compare
    .venv/bin/python bench/bench_compare_goal.py --base /tmp/base-compare [--n 1000000] [--repeat 2]
                                                 [--a TRACE --b TRACE|perturb]

Workload (issue 26): a = tracevis3d.synthetic(n, threads=4), b = tracevis3d.perturb(a, seed=2);
or, with ``--a``, trace files (real recordings: ``--b perturb`` compares A with its perturbed copy).

Measured at stop 57 (2026-11-27, this 2-core machine, base = 8b1fc54, the tree before the groups
kernel's rewrite; real VizTracer recordings of docutils in 16 worker threads, 107 levels):

    | pair                                   | old wall s | new wall s | × old | peak MB old / new |
    |----------------------------------------|------------|------------|-------|-------------------|
    | 10^6 calls against its perturbed copy  | 51.30      | 1.69       | 0.033 | 1577 / 794        |
    | 12,993,071 × 12,256,138 calls (2 runs) | 34.42      | 28.01      | 0.81  | 5472 / 5473       |

(groups 49.78 -> 0.26 s and 11.21 -> 4.14 s; best of 2 and a single run respectively.)

Measured at stop 58 (2026-11-27, base = a5c9cec, the tree before the overview's threshold
sample past ``overview_budget``; best of 2, the first round slowed by a test run beside it):

    | pair                                   | old wall s | new wall s | × old | join old / new s |
    |----------------------------------------|------------|------------|-------|------------------|
    | synthetic 10^6 against its perturbed   | 13.71      | 11.58      | 0.844 | 12.25 / 9.90     |

(CPU 25.14 -> 20.91 s.  10^7, single runs in one process, not this script, the final tree:
exact 233 s (join 210), default budget 141.5 s (join 118.5, θ = 467, 3.4·10^7 of 4.7·10^9
matches visited), the overview left out altogether 125.6 s (join 104.5): the goal's 2 min
is out of reach of the overview alone.)

Measured at stop 59 (2026-11-27, base = 2a42745, the tree before this stop's work: 16-byte column
records, B's membership rows, the parallel estimate, the repetitions' own thread, the two Γ
sweeps, the rows by counting and top_k by class; 10^6 best of 2, 10^7 one run each):

    | pair                                   | old wall s | new wall s | × old | join old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|------------------|-----------|
    | synthetic 10^6 against its perturbed   | 10.28      | 8.44       | 0.821 | 9.01 / 7.46      | 0.866     |
    | synthetic 10^7 against its perturbed   | 143.75     | 106.41     | 0.740 | 121.33 / 92.07   | 0.771     |

(10^7: classes 5.43 -> 2.95 s, top_k 5.29 -> 2.21, repetitions 1.85 -> 0 after the join; peak RSS
4738 / 5349 MB, 3570 / 3606 MB above the process before the compare; 4.66·10^9 class pairs both.
Issue 26's 10^7 goal, ≤ 2 min and ≤ 16 GiB, is met; the 10^6 goal, ≤ 5 s, is not.  An earlier run
of the same pair the same hour, with only the records, membership rows and repetitions' thread:
138.97 -> 111.73 s.)

Measured at stop 60 (2026-11-27, base = 82eac93, the tree before the overview budget went from
10^7 to 10^6 class pairs: `comparison.OVERVIEW_BUDGET`; 10^6 best of 3, 10^7 one run each):

    | pair                                   | old wall s | new wall s | × old | join old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|------------------|-----------|
    | synthetic 10^6 against its perturbed   | 9.31       | 7.88       | 0.846 | 8.20 / 6.75      | 0.845     |
    | synthetic 10^7 against its perturbed   | 104.99     | 98.64      | 0.940 | 90.57 / 83.93    | 0.928     |

(Peak RSS 755 / 755 MB and 4789 / 4790 MB; the same class pairs.  The machine was slower than at
stop 59: the old tree's 10^6 figure was 8.44 s then.  θ = 552 at 10^6, 4670 at 10^7; the largest
bar error 3.8-5.2·10^-4 of the largest bar at 10^6 against 1.0-1.3·10^-4 before.)

Measured at stop 62 (2026-11-27, the fused join reads each row's window instead of listing its
matches, `kernels/setjoin_window`; θ calibrated to the budget's matches; not alternated: the old
tree, 23306b8, run alone at the stop's start; the machine ±10-15 % between runs):

    | pair                                   | old wall s | new wall s | × old | join old / new s |
    |----------------------------------------|------------|------------|-------|------------------|
    | synthetic 10^6 against its perturbed   | 7.43       | 5.16-5.65  | 0.69-0.76 | 6.42 / 4.13-4.56 |

(the goal, ≤ 5 s, not met; single-thread walk 11.7-12.3 -> 6.9-8.0 CPU s, of which counting 3.5.)
The same hour, alternated (base = 23306b8, after the review's mends; best of 3; runs 7.49-7.67
against 5.10-5.64):

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 against its perturbed   | 7.49       | 5.10       | 0.681 | 13.97 / 9.37    | 0.671     |

Measured at stop 63 (2026-11-27, base = 1bdc6d8, stop 62's final tree; membership rows added
four at a time, the fused join's scratch and accumulators on huge pages and zeroed by their
parts' threads, the rows' keys computed in place, B's side of the plan on a second thread;
best of 4, alternated).  Two runs of the bench the same evening, the machine ~20 % slower
in the second:

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 (tree before the plan's thread) | 5.13 | 4.58 (4.58-4.98) | 0.893 | 9.41 / 8.32 | 0.884 |
    | synthetic 10^6 (final tree, slower hour)       | 5.86 | 5.17 (5.17-5.73) | 0.882 | 10.53 / 9.34 | 0.887 |

(10^7, one run of the final tree, ``--only-new``: 61.8 s, join 47.0 s, peak RSS 5.5 GB.)

Measured at stop 64 (2026-11-28, base = a68c274, stop 63's final tree; the items dealt to the
fused join's parts by a kernel instead of a Python loop, `bfs_groups` walked in two runs cut at
calls of depth 0 on two threads; best of 3, alternated, a quiet hour; every new run below every
old one):

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 against its perturbed   | 4.44 (4.44-4.57) | 4.24 (4.24-4.40) | 0.957 | 8.23 / 7.87 | 0.957 |

(groups 0.17 -> 0.12 s; the join's preparation before the walk 0.13 -> 0.03-0.04 s.)

Measured at stop 65 (2026-11-28, base = 1a72002, stop 64's final tree; the fused join's walkers
share one queue of items and the overview is made after the walk in 16 parts of B's rows, numpy's
huge-page advice off for the arrays the comparison writes once; best of 4, alternated; the new
tree's first run paid its fresh cache's loads):

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 against its perturbed   | 4.35 (4.35-4.69) | 4.04 (4.04-4.63) | 0.928 | 7.94 / 7.58 | 0.954 |

(join 3.43 -> 3.26 s, pair_fields 0.14-0.18 -> 0.06 s, peak RSS 795 -> 716 MB.  10^7, one run of
the new tree, ``--only-new``: 56.5 s, join 40.6 s, peak RSS 4.8 GB, against stop 63's 61.8 s and
5.5 GB.)  The stop's final tree (67e4fff: the same code moved and reviewed) 50 minutes later, a
slower hour, best of 3:

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 against its perturbed   | 4.76 (4.76-5.69) | 4.40 (4.40-5.34) | 0.924 | 8.81 / 8.16 | 0.926 |

(the goal, ≤ 5 s, met by every run of the quieter hour but not by the slowest run of this one.)

Measured at stop 66 (2026-11-28, base = 9d2974d, stop 65's final tree; the walk's hot loops
indexed by unsigned positions (numba's negative-index wrap cost 2 of 5 instructions a delta
posting's increment, kept the window pass's runs from vectorising without a slice a run, and
the copied children's window copy went element by element), no reference counting per run or
per pair, the overview sample's layers disjoint; best of 3, alternated):

    | pair                                   | old wall s | new wall s | × old | CPU old / new s | CPU × old |
    |----------------------------------------|------------|------------|-------|-----------------|-----------|
    | synthetic 10^6 against its perturbed   | 4.38 (4.38-5.44) | 3.57 (3.57-4.67) | 0.814 | 8.21 / 6.53 | 0.795 |

(join 3.48 -> 2.68 s.  The slowest new run was the first repeat, 4.67 s, as the old tree's first,
5.44 s: the machine was slower then.  10^7, one run of the new tree, ``--only-new``: 52.2 s, join 35.4 s, peak RSS 4.76 GB,
against stop 65's 56.5 s and 4.8 GB.)

Tried for issue 79 and reverted (2026-11-29, base = 42383e0): the deferred overview made on a
thread of its own beside the kept pairs, its parts on the walk's threads.  On a busy machine
(load 4-6, medians of 5 at 10^6, one run each at 10^7; walls 3x a quiet one's):

    | pair                                   | old wall s | new wall s | CPU old / new s | peak MB old / new |
    |----------------------------------------|------------|------------|-----------------|-------------------|
    | synthetic 10^6 against its perturbed   | 10.58      | 11.31      | 6.81 / 6.97     | 689 / 705         |
    | synthetic 10^7 against its perturbed   | 128.44     | 120.12     | 84.91 / 81.01   | 3879 / 3965       |

On the machine at load 1.5-1.9 (best of 5, alternated, twice): wall 3.25 and 3.26 s against 3.27
and 3.19 s, CPU 6.25 against 6.08 s, peak 765 against 654 MB: no gain on two cores, where the
kept pairs' serial part leaves less idle time than the overview needs, for more CPU and memory.
(Where the CPU goes at 10^6, perf with a map of numba's entry points, one run, CPU s: the
fused join's walk 4.0 (counting 1.9, window pass 1.05, row readouts 0.75, overview sample
0.27), the deferred overview 0.6, the plan and its estimate sample 0.3, top-k 0.3, classes
0.28, union, groups and fields 0.24, faults and zeroing 0.2.  The walk alone is ~2 s on two
cores: issue 79's 2 s needs it about halved.)

Each tree runs in its own fresh process per repeat (PYTHONPATH = that tree, its own numba cache,
filled first by small warm-up compares, kept and not kept, that are not timed); the runs of the two trees alternate
(old, new, old, new, ...) so both see the same load on this shared machine, and each reports its
best run.  Per run: ``compare`` wall and CPU seconds (process time: all threads), the peak RSS
during ``compare`` (VmHWM, reset after the traces are made) and the stage laps of
``params["timings"]`` (wall).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from bench_compare_memory import _reset_peak, _status_kb  # this folder's (run as a script)

REPO = pathlib.Path(__file__).resolve().parent.parent


def child(tree: str, n: int, path_a: str | None = None, path_b: str | None = None) -> dict:
    sys.path.insert(0, tree)
    import tracevis3d

    w = tracevis3d.synthetic(3000, threads=4)
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2))
    # and the way of large traces (class pairs not kept: the fused join, where the tree has it),
    # else the timed compare compiles it
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2), keep_class_pairs=False)
    if path_a:
        a = tracevis3d.load(path_a)
        b = tracevis3d.perturb(a, seed=2) if path_b in (None, "perturb") else tracevis3d.load(path_b)
    else:
        a = tracevis3d.synthetic(n, threads=4)
        b = tracevis3d.perturb(a, seed=2)
    rss0 = _status_kb("VmRSS")
    _reset_peak()
    c0, t0 = time.process_time(), time.perf_counter()
    c = tracevis3d.compare(a, b)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(wall=wall, cpu=cpu, peak_mb=_status_kb("VmHWM") / 1024, before_mb=rss0 / 1024,
                stages=c.params["timings"], class_pairs=c.n_class_pairs, pairs_total=c.n_pairs_total)


#: issue 79's goals per size of A: (wall s, peak GiB or None)
GOALS = {10 ** 6: (2.0, None), 10 ** 7: (45.0, 8.0), 10 ** 8: (900.0, 16.0)}
GOAL_DIR = REPO / "build" / "compare-goal"
LOCK = "/tmp/tv3d-bigmem.lock"


def _peak_anon_sampler():
    """A thread sampling RssAnon every 10 ms; returns (start, stop -> peak kB)."""
    import threading

    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _status_kb("RssAnon"))
            done.wait(0.01)

    t = threading.Thread(target=watch, daemon=True)

    def stop():
        done.set()
        t.join()
        return max(peak[0], _status_kb("RssAnon"))
    return t.start, stop


def goal_child(n: int, path_a: str | None, path_b: str | None) -> dict:
    """One compare of issue 79's workload in this process: its wall and CPU seconds, peak RSS and
    peak anonymous RSS, with numpy's argsort of n doubles and the traces' bytes as its peers."""
    import numpy as np

    import tracevis3d
    from tracevis3d.io import mapguard

    w = tracevis3d.synthetic(3000, threads=4)
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2), keep_class_pairs=False)   # kernels loaded, not timed
    del w
    if path_a:
        mapguard.exit_on_sigbus()            # mapped in place, as the command line maps them
        a, b = tracevis3d.load(path_a), tracevis3d.load(path_b)
    else:
        a = tracevis3d.synthetic(n, threads=4)
        b = tracevis3d.perturb(a, seed=2)
    x = np.random.default_rng(0).random(len(a))
    t = time.perf_counter()
    np.argsort(x)
    argsort_s = time.perf_counter() - t
    del x
    rss0 = _status_kb("VmRSS")
    _reset_peak()
    start, stop = _peak_anon_sampler()
    start()
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        c = tracevis3d.compare(a, b)
    except MemoryError as e:            # refused by its memory check (a message, not a crash)
        stop()
        return dict(n=n, refused=str(e), wall=time.perf_counter() - t0, load=os.getloadavg()[0])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    anon = stop()
    return dict(n=n, calls=len(a) + len(b), wall=wall, cpu=cpu, peak_gib=_status_kb("VmHWM") / 2 ** 20,
                anon_gib=anon / 2 ** 20, before_gib=rss0 / 2 ** 20, argsort_s=argsort_s,
                traces_gib=(a.nbytes + b.nbytes) / 2 ** 30, load=os.getloadavg()[0], stages=c.params["timings"],
                pairs_in_file=bool(c.params.get("pairs_in_file")), class_pairs=c.n_class_pairs,
                need_gib=c.params.get("memory_need", 0) / 2 ** 30)


def _goal_files(n: int) -> list:
    """The 10^n-call pair as native files under `GOAL_DIR` (A written straight to its file,
    `io.synthesis.save_synthetic`; B = its perturbed copy), made once."""
    GOAL_DIR.mkdir(parents=True, exist_ok=True)
    path_a, path_b = GOAL_DIR / f"synthetic_{n}.tv3d.npz", GOAL_DIR / f"synthetic_{n}_perturbed2.tv3d.npz"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if not path_a.exists():
        subprocess.run([sys.executable, "-c", "import sys; from tracevis3d.io.synthesis import save_synthetic; "
                        "save_synthetic(sys.argv[2], int(sys.argv[1]), threads=4)", str(n), str(path_a)],
                       env=env, check=True)
    if not path_b.exists():
        subprocess.run([sys.executable, "-c", "import sys, tracevis3d; tracevis3d.save(tracevis3d.perturb("
                        "tracevis3d.load(sys.argv[1]), seed=2), sys.argv[2])", str(path_a), str(path_b)],
                       env=env, check=True)
    return [str(path_a), str(path_b)]


def _big_lock(n: int):
    """The shared machine's lock for runs past 4 GB (a no-op where the file cannot be opened)."""
    import contextlib
    import fcntl

    if n < 10 ** 7:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def held():
        try:
            f = open(LOCK, "a")
        except OSError:
            yield
            return
        with f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield
    return held()


def goal_table(sizes: list, repeat: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    rows = []
    for n in sizes:
        runs = []
        with _big_lock(n):
            files = _goal_files(n) if n >= 10 ** 8 else []
            for _ in range(repeat if n <= 10 ** 6 else 1):
                out = subprocess.run([sys.executable, __file__, "--goal-child", str(n), *files], env=env, check=True,
                                     capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
                if "refused" in runs[-1]:
                    print(f"# n={n:,}: {runs[-1]['refused']}", file=sys.stderr, flush=True)
                    break
                print(f"# n={n:,}: wall {runs[-1]['wall']:.2f} s, peak {runs[-1]['peak_gib']:.2f} GiB, "
                      f"{ {k: round(v, 2) for k, v in runs[-1]['stages'].items()} }", file=sys.stderr, flush=True)
        runs.sort(key=lambda r: r["wall"])
        rows.append((n, runs[len(runs) // 2], len(runs)))
    print("compare(synthetic(n, threads=4), perturb(a, seed=2)), each in a fresh process; peers measured in the "
          "same process: numpy argsort of n doubles, the two traces' own bytes")
    print("| calls of A | runs | wall s | CPU s | ÷ argsort | goal s | peak GiB | anon GiB | check's estimate GiB "
          "| ÷ traces | goal GiB | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r, k in rows:
        goal_s, goal_gib = GOALS.get(n, (None, None))
        if "refused" in r:
            print(f"| {n:,} | refused after {r['wall']:.1f} s: {r['refused']} | | | | {goal_s} | | | | | {goal_gib} "
                  f"| {r['load']:.1f} |")
            continue
        print(f"| {n:,} | {k} ({'median' if k > 1 else 'one'}) | {r['wall']:.2f} | {r['cpu']:.2f} | "
              f"{r['wall'] / r['argsort_s']:.0f}× | {goal_s if goal_s else '—'} | {r['peak_gib']:.2f} | "
              f"{r['anon_gib']:.2f} | {r.get('need_gib', 0):.2f} | {r['peak_gib'] / r['traces_gib']:.2f}× | "
              f"{goal_gib if goal_gib else '—'} | "
              f"{r['load']:.1f} |")


def run(tree: str, n: int, cache: str, files: list) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, __file__, "--child", tree, "--n", str(n), *files], env=env, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=False)
    ap.add_argument("--new", default=str(REPO))
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=None, help="runs per tree (2), or at 10^6 with --goal (3)")
    ap.add_argument("--only-new", action="store_true", help="skip the old tree (e.g. 10^7)")
    ap.add_argument("--a", default=None, help="trace file A instead of the synthetic trace")
    ap.add_argument("--b", default=None, help="trace file B, or 'perturb' (A's perturbed copy, the default)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--goal", action="store_true", help="issue 79's table: 10^6, 10^7, 10^8 calls")
    ap.add_argument("--sizes", default="1e6,1e7,1e8", help="with --goal: the sizes of A")
    ap.add_argument("--goal-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.goal_child is not None:
        print(json.dumps(goal_child(args.goal_child, *(args.paths or [None, None]))))
        return
    if args.goal:
        goal_table([int(float(x)) for x in args.sizes.split(",")], max(1, args.repeat or 3))
        return
    args.repeat = args.repeat or 2
    files = ["--a", str(pathlib.Path(args.a).resolve())] if args.a else []
    if args.a and args.b:
        files += ["--b", args.b if args.b == "perturb" else str(pathlib.Path(args.b).resolve())]
    if args.child:
        print(json.dumps(child(args.child, args.n, args.a, args.b)))
        return
    trees = [("new", args.new)] if args.only_new else [("old", args.base), ("new", args.new)]
    best = {}
    for _ in range(args.repeat):
        for tag, tree in trees:
            r = run(tree, args.n, f"/tmp/bench-goal-numba-{tag}", files)
            print(tag, json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()
                                   if k != "stages"}), {k: round(v, 2) for k, v in r["stages"].items()}, flush=True)
            if tag not in best or r["wall"] < best[tag]["wall"]:
                best[tag] = r
    stages = sorted({s for r in best.values() for s in r["stages"]}, key=lambda s: -max(
        r["stages"].get(s, 0.0) for r in best.values()))
    what = (f"{args.a} against {args.b or 'perturb'}" if args.a else f"n = {args.n:,} calls of A")
    print(f"\n{what}, best of {args.repeat} (wall s unless said)")
    print(f"{'':<18}" + "".join(f"{tag:>12}" for tag, _ in trees))
    for s in stages:
        print(f"{s:<18}" + "".join(f"{best[t]['stages'].get(s, 0.0):12.2f}" for t, _ in trees))
    for key, label in (("wall", "total wall"), ("cpu", "total CPU"), ("peak_mb", "peak RSS MB")):
        print(f"{label:<18}" + "".join(f"{best[t][key]:12.2f}" for t, _ in trees))
    print(f"{'class pairs':<18}" + "".join(f"{best[t]['class_pairs']:>12,}" for t, _ in trees))
    if len(trees) == 2:
        for key, label in (("wall", "wall × old"), ("cpu", "CPU × old")):
            print(f"{label:<18}{'':>12}{best['new'][key] / max(best['old'][key], 1e-9):12.3f}")


if __name__ == "__main__":
    main()
