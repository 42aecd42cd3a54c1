"""Every view at 10^6-10^7 calls, end to end through the command line (issue 26's table).

    .venv/bin/python bench/bench_scale.py [--calls 1e6,1e7] [--views icicle,cone,threads[,compare]]
                                          [--before REV|none]

For each size, a 4-thread synthetic trace (`tracevis3d.synthetic`) saved as a native file;
for each view, ``python -m tracevis3d render-<view> TRACE -o fig.png`` at 1920x1080 in a fresh
process (kernels already compiled: one untimed run first), its wall time and peak resident
memory (the child's ru_maxrss), with this tree and with the version at ``--before`` (a git
revision extracted to a temporary folder; the peer, measured in the same run; ``none``: no
peer).  Prints one table: seconds and GB of both, and the ratio to the peer.

``--overview`` (``make bench``): issue 79's rows instead, in one table beside a peer or a limit
measured in the same run: ``render-icicle`` of the 10^7-call native file end to end (median of
``--repeat`` fresh processes, with the medians of the command's own build and render times; the
peer numpy's sort of 10^7 doubles), the overview layout's own
peak bytes a call at 10^7 (the limit: the file's own bytes a call), and with ``--huge`` the
whole overview of the 10^8-call native file, mapped, as `build_icicle` makes it headless (the
peer: its arrays read once), under the machine's lock ``/tmp/tv3d-bigmem.lock`` and only with
`HUGE_NEEDS_GB` available.

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
import re
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


#: the command's own progress lines that time its phases: the scene's build (load excluded: the
#: layout and the scene write) and the render with its PNG
PHASE_LINES = {"build": re.compile(r"\] scene: .* in ([0-9.]+) s$"), "render": re.compile(r"\] rendered in ([0-9.]+) s$")}


def phases_of(stderr: str) -> dict:
    """{phase: seconds} read from a ``render-<view>`` command's progress lines (`PHASE_LINES`)."""
    out = {}
    for line in stderr.splitlines():
        for name, rx in PHASE_LINES.items():
            m = rx.search(line.strip())
            if m:
                out[name] = float(m.group(1))
    return out


def ours_cache() -> str:
    """This tree's kernel cache: ``$NUMBA_CACHE_DIR`` (``make bench`` sets the one it seeded with
    the kernels a wheel installs here), else build/numba-cache."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(REPO / "build" / "numba-cache")


def _bytecode_cached(env: dict, root: pathlib.Path) -> dict:
    """``env`` with Python's bytecode cached (in ``root``/build/pycache), as an installed wheel has it:
    a machine that sets PYTHONDONTWRITEBYTECODE would make every fresh process compile the sources
    of modules edited since their last .pyc (~0.45 s of a render here, nothing a user pays)."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "build" / "pycache")
    return env


def render(root: pathlib.Path, view: str, traces: list, png: pathlib.Path, cache: str, phases: dict | None = None
           ) -> tuple:
    """(seconds, peak GB) of one render through the command line of the tree at ``root``;
    ``phases`` gets the command's own phase times (`phases_of`)."""
    env = _bytecode_cached(dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=cache), root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "tracevis3d", f"render-{view}", *map(str, traces), "-o", str(png)],
                       cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    sec = time.perf_counter() - t
    if phases is not None:
        phases.update(phases_of(r.stderr))
    if r.returncode != 0:
        return None, " ".join(r.stderr.strip().splitlines()[-1:])[-120:]
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of any child so far: measure each case in a
    # fresh grandchild so the peak is this run's (see main)
    return sec, max(peak, before) / 2 ** 20


def one(root: str, view: str, traces: str, png: str, cache: str) -> None:
    """Child mode: run one render and print 'SECONDS PEAK_GB' (its own children only), then its
    phases as 'PHASES {json}'; ``traces``: the trace files joined by os.pathsep."""
    import json

    phases = {}
    sec, gb = render(pathlib.Path(root), view, [pathlib.Path(t) for t in traces.split(os.pathsep)],
                     pathlib.Path(png), cache, phases)
    print(f"RESULT {sec} {gb}")
    print(f"PHASES {json.dumps(phases)}")


def measure(root, view, traces, png, cache, phases: dict | None = None) -> tuple:
    """(seconds, peak GB) of ``render-<view>`` in a fresh grandchild (`one`); ``phases`` gets its
    phase times (`phases_of`)."""
    import json

    if root is None:
        return None, "no peer"
    r = subprocess.run([sys.executable, __file__, "--one", str(root), view, os.pathsep.join(map(str, traces)),
                        str(png), cache],
                       capture_output=True, text=True, timeout=3600)
    for line in r.stdout.splitlines():
        if line.startswith("PHASES ") and phases is not None:
            phases.update(json.loads(line[len("PHASES "):]))
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            _, sec, gb = line.split(" ", 2)
            return (None, gb) if sec == "None" else (float(sec), float(gb))
    return None, (r.stderr or r.stdout).strip()[-120:]


# ---------------------------------------------------------------- issue 79's overview rows
#: issue 79's goals: the 10^7 icicle end to end (s), the whole 10^8 overview (s, GB peak), the
#: overview layout's own memory at 10^7 (bytes a call)
OVERVIEW_GOALS = {"render": 8.0, "huge_s": 120.0, "huge_gb": 12.0, "bytes": 64.0}
HUGE_LOCK = "/tmp/tv3d-bigmem.lock"  # the machine's lock for runs over ~4 GB


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _child_json(code: str, *args: str, timeout: int = 3600) -> dict:
    """Run ``code`` (a function of this file, by name) in a fresh process; its JSON line."""
    import json

    env = _bytecode_cached(dict(os.environ, PYTHONPATH=str(REPO), NUMBA_CACHE_DIR=ours_cache()),
                           REPO)
    r = subprocess.run([sys.executable, __file__, "--child", code, *args], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=timeout)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise SystemExit(f"{code} failed:\n{r.stderr[-2000:]}")
    return json.loads(lines[-1])


def child_layout_bytes(path: str) -> dict:
    """The overview layout's own peak memory (`icicle_layout` of the mapped native file, its
    peak resident set over the one before it: the file's pages are resident from the load)."""
    import tracevis3d
    from tracevis3d.layout import IcicleParams, icicle_layout

    trace = tracevis3d.load(path)
    icicle_layout(tracevis3d.synthetic(2000, threads=2, seed=1), IcicleParams())  # kernels loaded
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kb("VmRSS")
    t, c = time.perf_counter(), time.process_time()
    icicle_layout(trace, IcicleParams())
    return {"calls": len(trace), "bytes": (_status_kb("VmHWM") - before) * 1024.0 / len(trace),
            "seconds": time.perf_counter() - t, "cpu": time.process_time() - c}


def child_overview(path: str) -> dict:
    """The whole overview of a mapped native file as `build_icicle` makes it (headless): load +
    layout + the Blender scene; seconds and the process's peak resident set (the file's pages
    included)."""
    t = time.perf_counter()
    import bpy

    import tracevis3d
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams

    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    t_import = time.perf_counter() - t
    t = time.perf_counter()
    trace = tracevis3d.load(path)
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    info = build_icicle(trace, IcicleParams(), trace_path=path)
    return {"calls": len(trace), "import": t_import, "load": t_load, "build": time.perf_counter() - t,
            "layout": info["timings"].get("layout"), "peak_gb": _status_kb("VmHWM") * 1024 / 1e9}


def child_read_columns(path: str) -> dict:
    """The peer of the whole overview: the mapped native file's per-call arrays read once
    (a sum of each); seconds and peak resident set."""
    import numpy as np

    import tracevis3d

    t = time.perf_counter()
    trace = tracevis3d.load(path)
    for name in ("start", "end", "func", "depth", "parent", "thread", "kind", "end_index"):
        float(np.sum(getattr(trace, name), dtype=np.float64))
    return {"seconds": time.perf_counter() - t, "peak_gb": _status_kb("VmHWM") * 1024 / 1e9}


#: the memory the 10^8-call overview needs available (its ~12 GB peak, the file's pages included, and room)
HUGE_NEEDS_GB = 14.0


def _meminfo_gb(field: str) -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024 / 1e9
    return 0.0


def sort_peer(n: int) -> float:
    """Seconds numpy takes to sort ``n`` random doubles (the machine's pace now)."""
    import numpy as np

    keys = np.random.default_rng(0).random(n)
    t = time.perf_counter()
    np.sort(keys)
    return time.perf_counter() - t


def native_file(n: int, work: pathlib.Path) -> pathlib.Path:
    """The 4-thread synthetic trace of ``n`` calls as a native file (`tracevis3d.save_synthetic`:
    straight into the file's pages; the trace `make_trace` saves), made once (``work`` made too:
    the 10^8 file's folder, build/compare-goal, is not there on a clean checkout)."""
    work.mkdir(parents=True, exist_ok=True)
    return _made(work / f"synthetic_{n}.tv3d.npz",
                 "import sys, tracevis3d; tracevis3d.save_synthetic(sys.argv[2], int(sys.argv[1]), threads=4)", str(n))


def overview_rows(args) -> None:
    """Issue 79's three rows in one table, each beside a peer or a limit measured in this run."""
    import fcntl
    import statistics

    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = ours_cache()
    big = native_file(10 ** 7, work)
    rows = []
    # 1. render-icicle of 10^7 calls end to end: fresh processes, after an untimed one (kernels)
    measure(REPO, "icicle", [native_file(10 ** 4, work)], work / "icicle_warm.png", cache)
    runs, peers, loads, phases = [], [], [], []
    for _ in range(args.repeat):
        peers.append(sort_peer(10 ** 7))
        loads.append(os.getloadavg()[0])
        phases.append({})
        runs.append(measure(REPO, "icicle", [big], work / "icicle_10000000.png", cache, phases[-1]))
    secs = [r[0] for r in runs if r[0]]
    sec, peer = statistics.median(secs), statistics.median(peers)
    split = ", ".join(f"{name} {statistics.median(p[name] for p in phases if name in p):.1f} s"
                      for name in PHASE_LINES if any(name in p for p in phases))
    rows.append(("`render-icicle` of 10^7 calls (native file), 1920×1080, end to end, median of "
                 f"{len(secs)} ({', '.join(f'{x:.1f}' for x in secs)} s; of it {split}), "
                 f"peak {max(r[1] for r in runs):.1f} GB",
                 f"{sec:.1f} s", f"numpy sort of 10^7 doubles {peer:.2f} s", f"{sec / peer:.0f}×",
                 f"≤ {OVERVIEW_GOALS['render']:g} s", statistics.median(loads)))
    # 2. the overview layout's own memory at 10^7 calls
    lay = _child_json("child_layout_bytes", str(big))
    file_b = big.stat().st_size / lay["calls"]
    rows.append(("overview layout (`icicle_layout`, mapped native file), own peak bytes a call at 10^7",
                 f"{lay['bytes']:.1f} B", f"the file's own {file_b:.0f} B a call", f"{lay['bytes'] / file_b:.2f}×",
                 f"≤ {OVERVIEW_GOALS['bytes']:g} B", os.getloadavg()[0]))
    # 3. the whole overview of 10^8 calls: minutes and ~12 GB, under the machine's lock
    huge_row = ("whole overview of 10^8 calls (mapped native file, `build_icicle` headless)", "–", "–", "–",
                f"≤ {OVERVIEW_GOALS['huge_s']:g} s, ≤ {OVERVIEW_GOALS['huge_gb']:g} GB", os.getloadavg()[0])
    available = _meminfo_gb("MemAvailable")
    if args.huge and available < HUGE_NEEDS_GB:
        huge_row = huge_row[:1] + (f"not run: {available:.0f} GB available, it needs {HUGE_NEEDS_GB:g}",) + \
            huge_row[2:]
    elif args.huge:
        with open(HUGE_LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = native_file(10 ** 8, pathlib.Path(args.huge_dir))
            read = _child_json("child_read_columns", str(path))
            ov = _child_json("child_overview", str(path), timeout=7200)
        huge_row = (f"whole overview of 10^8 calls (mapped native file, `build_icicle` headless; load "
                    f"{ov['load']:.1f} s, layout {ov['layout']:.0f} s)",
                    f"{ov['load'] + ov['build']:.0f} s, {ov['peak_gb']:.1f} GB",
                    f"its arrays read once {read['seconds']:.1f} s, {read['peak_gb']:.1f} GB",
                    f"{(ov['load'] + ov['build']) / read['seconds']:.0f}×",
                    huge_row[4], os.getloadavg()[0])
    rows.append(huge_row)
    print("| what | this tree | peer / limit (same run) | × peer | goal | load |")
    print("|---|---|---|---|---|---|")
    for what, val, peer_s, ratio, goal, load in rows:
        print(f"| {what} | {val} | {peer_s} | {ratio} | {goal} | {load:.1f} |")
    if not args.huge:
        print("\n(the 10^8 row: --huge; ~12 GB and minutes, under flock " + HUGE_LOCK + ")")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(*sys.argv[2:7])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        import json

        print(json.dumps(globals()[sys.argv[2]](*sys.argv[3:])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", default="1e6,1e7")
    ap.add_argument("--views", default="icicle,cone,threads",
                    help=f"views to measure; opt-in, only when named: {', '.join(OPT_IN)}")
    ap.add_argument("--before", default="46f84dc",
                    help="the peer: a git revision (default: before this table), or none")
    ap.add_argument("--work", default=str(REPO / "build" / "scale"))
    ap.add_argument("--overview", action="store_true",
                    help="issue 79's rows instead: the 10^7 icicle end to end, the overview layout's bytes a call, "
                         "and (--huge) the whole 10^8 overview")
    ap.add_argument("--huge", action="store_true", help="with --overview: also the 10^8-call overview")
    ap.add_argument("--huge-dir", default=str(REPO / "build" / "compare-goal"),
                    help="where the 10^8-call native file is, or goes (4.5 GB; the default: bench_compare_goal's "
                         "folder, whose file is the same trace, synthetic(10^8, threads=4): made once for both)")
    ap.add_argument("--repeat", type=int, default=3, help="with --overview: runs of the 10^7 render (median)")
    args = ap.parse_args()
    if args.overview:
        overview_rows(args)
        return
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = ours_cache()
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
