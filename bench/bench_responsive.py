"""Responsive from the first click (issue 10): one table, cold and warm, against main's code.

    .venv/bin/python bench/bench_responsive.py [--main-ref main] [--skip-main] [--quick]
    .venv/bin/python bench/bench_responsive.py --fresh-user [--with-extension]

``--fresh-user`` (issue 21) prints its own table instead: a new user (empty home and
caches, a folder outside the checkout) runs the ``tracevis3d`` console script of the wheel
(tools/build_wheel.py, installed into a new venv that sees this environment's bpy): a
corrupt file, the first icicle, the first compare, cold and warm, against the checkout's
``python -m tracevis3d`` (no pre-built kernels: they compile); the kernels the wheel's
caches miss (tests/support/first_use_probe.py); with ``--with-extension`` the zip's first uses too.

"Today" is measured in the same run: ``git archive <main-ref>`` into a temporary folder,
its extension zip built there (the same wheels).  Every extension figure runs in a fresh
Blender process (the bpy module) with its own Blender user folders: install the zip, then
the clock runs from enabling the extension; "cold" is a clean numba cache (the extension's
user folder is new), "warm" is a second process in the same folders.

Rows:
- enable → first icicle: ``import_trace`` (load + build) of a real VizTracer trace
  (12,533 calls, 9 threads), then a 960x540 Workbench render;
- enable → first compare of two real runs (HTA's PyTorch A/B pair, 75k/68k calls);
- enable → a corrupt file's one-line error;
- the longest main-thread block while importing + building a real 1.1M-call trace
  (sympy) and comparing two 1M-call traces through the UI path (the job polled from a loop
  like the modal timer; today the operator's synchronous call is one block), and the
  longest gap of that loop (a worker holding the GIL would show there);
- the job machinery's warm cost against calling the same steps directly;
- what the generic-CPU kernels (what the zip ships) cost at run time against host-CPU
  kernels, warm.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
PKG = "bl_ext.user_default.tracevis3d"
REAL = Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))
ICICLE_TRACE = REAL / "viztracer-examples" / "multi_process_pool.json"
COMPARE_A, COMPARE_B = REAL / "hta-trace-diff" / "control.json.gz", REAL / "hta-trace-diff" / "test.json.gz"
BIG_TRACE = REPO / "build" / "traces" / "sympy.json"


# ------------------------------------------------------------------ inside Blender (driver)
def driver(zip_path: str, action: str, out_json: str) -> None:
    """Fresh process: install (untimed), enable, run ``action``; write {"s": seconds, ...}."""
    import bpy

    addons = bpy.context.preferences.addons
    if PKG not in addons:
        r = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                      enable_on_install=False)
        assert r == {"FINISHED"}, r
    t0 = time.perf_counter()
    bpy.ops.preferences.addon_enable(module=PKG)
    ops = bpy.ops.tracevis3d
    res = {"action": action, "enable": time.perf_counter() - t0}
    work = Path(out_json).parent
    if action == "icicle":
        r = ops.import_trace(filepath=str(ICICLE_TRACE), build=True)
        res["built"] = time.perf_counter() - t0
        s = bpy.context.scene.tracevis3d
        s.resolution_x, s.resolution_y, s.render_output = 960, 540, str(work / "first.png")
        r2 = ops.render_figure()
        res["ok"] = r == {"FINISHED"} and r2 == {"FINISHED"} and (work / "first.png").is_file()
    elif action == "corrupt":
        bad = work / "corrupt.json"
        bad.write_text('{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": ')
        try:
            ops.import_trace(filepath=str(bad), build=True)
            res["ok"] = False
        except RuntimeError as e:
            res["ok"] = "corrupt.json" in str(e)
            res["message"] = str(e).strip()
    elif action == "compare":
        has_op = hasattr(ops, "compare")
        try:
            ops.compare.get_rna_type()
        except (KeyError, AttributeError):
            has_op = False
        if has_op:
            s = bpy.context.scene.tracevis3d
            s.trace_path, s.compare_path = str(COMPARE_A), str(COMPARE_B)
            res["ok"] = ops.compare() == {"FINISHED"}
        else:  # main: no operator; the core's compare in Blender's process
            core = sys.modules[f"{PKG}.tracevis3d"]
            c = core.compare(core.load(COMPARE_A), core.load(COMPARE_B))
            res["ok"] = c.n_pairs_total > 0
    res["s"] = time.perf_counter() - t0
    res["after"] = res["s"] - res["enable"]
    import numba

    res["compiled"] = sum(sum(d._cache_misses.values()) for d in _dispatchers(numba))
    Path(out_json).write_text(json.dumps(res))


def _dispatchers(numba):
    """Every numba dispatcher of the extension's core (to count kernels compiled)."""
    from numba.core.registry import CPUDispatcher

    seen = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith(PKG) or mod is None:
            continue
        for v in vars(mod).values():
            if isinstance(v, CPUDispatcher) and v not in seen:
                seen.append(v)
    return seen


def run_extension(zip_path: Path, users: Path, action: str) -> dict:
    env = dict(os.environ)
    for var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        d = users / var.lower()
        d.mkdir(parents=True, exist_ok=True)
        env[f"BLENDER_USER_{var}"] = str(d)
    env.pop("NUMBA_CACHE_DIR", None)
    env["HOME"] = str(users)
    out = users / f"{action}.json"
    r = subprocess.run([PY, __file__, "--driver", str(zip_path), action, str(out)], env=env,
                       capture_output=True, text=True, timeout=1800, cwd=str(users))
    if not out.is_file():
        raise RuntimeError(f"driver {action} failed: {r.stderr[-2000:]}")
    return json.loads(out.read_text())


# ------------------------------------------------------------------ the bpy module (1M figures)
BLOCKS_TODAY = r'''
import sys, time, json
sys.path.insert(0, sys.argv[1])
import bpy, tracevis3d
from tracevis3d.blender.session import get_trace
from tracevis3d.blender.scene import build_icicle
t = time.perf_counter(); tr = get_trace(sys.argv[2]); build_icicle(tr, {}); imp = time.perf_counter() - t
a, b = tracevis3d.load(sys.argv[3]), tracevis3d.load(sys.argv[4])
t = time.perf_counter(); tracevis3d.compare(a, b); cmp = time.perf_counter() - t
print(json.dumps({"import_build": imp, "compare": cmp}))
'''

BLOCKS_NOW = r'''
import sys, time, json, statistics
sys.path.insert(0, sys.argv[1])
import bpy, tracevis3d
from tracevis3d.blender import tasks, session
from tracevis3d.blender.writer import drain, write_scene_steps

def ui_loop(job):
    """The modal timer's loop: poll, then let the UI run (10 ms); longest poll and gap."""
    tasks.QUEUE.submit(job)
    worst_poll = worst_gap = 0.0
    last = time.perf_counter()
    while True:
        t = time.perf_counter(); busy = tasks.QUEUE.poll(); d = time.perf_counter() - t
        worst_poll = max(worst_poll, d)
        time.sleep(0.01)
        now = time.perf_counter(); worst_gap = max(worst_gap, now - last - 0.01); last = now
        if not busy:
            break
    assert job.state == "done", job.error
    return worst_poll, worst_gap, job.longest_text

def direct_import_build(path):
    session.clear_cache()
    trace = session.read_trace(session.file_key(path))
    params, spec = tasks._layout(trace, {})
    drain(write_scene_steps(spec, scene=bpy.context.scene))

def job_import_build(path):
    session.clear_cache()
    tasks.import_job(path, scene=bpy.context.scene, params={}).run()

a_path, b_path = sys.argv[3], sys.argv[4]
out = {}
from tracevis3d import warmup
warmup.run()  # every kernel compiled (or loaded) before anything is measured
job_import_build(sys.argv[2])  # warm-up: the cache is filled, the modules are imported
session.clear_cache()
out["import_build"] = ui_loop(tasks.import_job(sys.argv[2], scene=bpy.context.scene, params={}))
out["compare"] = ui_loop(tasks.compare_job(a_path, b_path))
reps = int(sys.argv[5])
d, j = [], []
for _ in range(reps):
    t = time.perf_counter(); direct_import_build(sys.argv[2]); d.append(time.perf_counter() - t)
    t = time.perf_counter(); job_import_build(sys.argv[2]); j.append(time.perf_counter() - t)
out["overhead_import_build"] = (statistics.median(d), statistics.median(j))
A, B = tracevis3d.load(a_path), tracevis3d.load(b_path)
d, j = [], []
for _ in range(2 if reps > 1 else 1):
    t = time.perf_counter(); tracevis3d.compare(A, B); d.append(time.perf_counter() - t)
    session.clear_cache()
    t = time.perf_counter(); tasks.compare_job(a_path, b_path).run(); j.append(time.perf_counter() - t)
# the job loads both files too: take the load time out of the job's figure
t = time.perf_counter(); tracevis3d.load(a_path); tracevis3d.load(b_path); t_load = time.perf_counter() - t
out["overhead_compare"] = (statistics.median(d), statistics.median(j) - t_load)
print(json.dumps(out))
'''

CPU_COST = r'''
import sys, time, json
sys.path.insert(0, sys.argv[1])
import tracevis3d
from tracevis3d.layout import IcicleParams, icicle_layout
def best(fn, n=2):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return min(ts)
tr = tracevis3d.load(sys.argv[2])
a, b = tracevis3d.load(sys.argv[3]), tracevis3d.load(sys.argv[4])
print(json.dumps({"load": best(lambda: tracevis3d.load(sys.argv[2])),
                  "layout": best(lambda: icicle_layout(tr, IcicleParams())),
                  "compare": best(lambda: tracevis3d.compare(a, b), 1)}))
'''


def run_py(code: str, args: list, cache: Path, cpu: str | None = None, users: Path | None = None) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("NUMBA_CPU_NAME", None)
    if cpu:
        env["NUMBA_CPU_NAME"] = cpu
    if users is not None:
        for var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
            (users / var.lower()).mkdir(parents=True, exist_ok=True)
            env[f"BLENDER_USER_{var}"] = str(users / var.lower())
    r = subprocess.run([PY, "-c", code, *map(str, args)], env=env, capture_output=True, text=True, timeout=3600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"bench step failed ({r.returncode}): {r.stderr[-2000:]}")
    return json.loads(lines[-1])


# ------------------------------------------------------------------ set-up
def build_zip(src: Path, extra: list) -> Path:
    wheels = src / "build" / "wheels"
    if src != REPO:
        wheels.mkdir(parents=True, exist_ok=True)
        for w in (REPO / "build" / "wheels").glob("*.whl"):
            if not (wheels / w.name).exists():
                shutil.copy2(w, wheels / w.name)
    r = subprocess.run([PY, str(src / "tools" / "build_extension.py"), "--platform", "linux-x64", *extra],
                       capture_output=True, text=True, cwd=str(src), timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"building the zip in {src} failed: {r.stderr[-1500:]}")
    return Path(r.stdout.strip().splitlines()[-1])


def main_tree(ref: str, tmp: Path) -> Path:
    dest = tmp / "main_src"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def synthetic_pair(tmp: Path, cache: Path) -> tuple[Path, Path]:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import tracevis3d, json; "
            "a = tracevis3d.synthetic(1_000_000, threads=4, seed=1); tracevis3d.save(a, sys.argv[2]); "
            "tracevis3d.save(tracevis3d.perturb(a, seed=2), sys.argv[3]); print(json.dumps({}))")
    a, b = tmp / "a_1m.tv3d.npz", tmp / "b_1m.tv3d.npz"
    run_py(code, [REPO, a, b], cache)
    return a, b


# ------------------------------------------------------------------ the table
def ratio(now, today):
    return f"{now / today:.2f}×" if now is not None and today else ""


def fmt(v, unit="s"):
    if v is None:
        return "—"
    return f"{v * 1000:.0f} ms" if unit == "ms" else f"{v:.2f} s"


# ------------------------------------------------------------------ a fresh user (issue 21)
PROBE = REPO / "tests" / "support" / "first_use_probe.py"
CORRUPT = '{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": '


def build_wheel() -> Path:
    r = subprocess.run([PY, str(REPO / "tools" / "build_wheel.py")], capture_output=True, text=True,
                       cwd=str(REPO), timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"building the wheel failed: {r.stderr[-1500:]}")
    return Path(r.stdout.strip().splitlines()[-1])


def wheel_venv(where: Path, wheel: Path) -> Path:
    """A new venv with the wheel (--no-deps) and this environment's site-packages (bpy, numba,
    ...) on its path through a .pth; its bin folder."""
    import sysconfig

    subprocess.run([PY, "-m", "venv", "--without-pip", str(where)], check=True)
    py = where / "bin" / "python"
    subprocess.run([PY, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", "--no-index",
                    "--disable-pip-version-check", str(wheel)], check=True)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def fresh_env(home: Path, pythonpath: Path | None = None) -> dict:
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def timed(cmd: list, env: dict, cwd: Path) -> tuple[float, int, str]:
    t = time.perf_counter()
    r = subprocess.run([str(c) for c in cmd], env=env, cwd=str(cwd), capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - t, r.returncode, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""


def fresh_user(tmp: Path, with_extension: bool) -> dict:
    """Cold (empty home and caches) and warm (second run, same home) command-line figures from
    the installed wheel and, as the peer, from the checkout (``python -m tracevis3d``, no
    pre-built kernels); the kernels the wheel's caches miss (tests/support/first_use_probe.py)."""
    work = tmp / "outside"
    work.mkdir()
    bad = work / "corrupt.json"
    bad.write_text(CORRUPT)
    binpath = wheel_venv(tmp / "venv", build_wheel())
    runners = {"wheel": ([binpath / "tracevis3d"], None),
               "checkout": ([PY, "-m", "tracevis3d"], REPO)}
    icicle = ["render-icicle", ICICLE_TRACE, "-o", work / "icicle.png", "--resolution", "960x540",
              "--engine", "workbench"]
    compare = ["render-compare", COMPARE_A, COMPARE_B, "-o", work / "compare.png", "--resolution", "960x540",
               "--engine", "workbench"]
    res: dict = {}
    start = [timed([binpath / "python", "-c", "pass"], fresh_env(tmp / "home-start"), work)[0] for _ in range(3)]
    res["startup"] = sorted(start)[1]
    for who, (cmd, path) in runners.items():
        for action, args in (("corrupt", ["render-icicle", bad, "-o", work / "x.png"]), ("icicle", icicle),
                             ("compare", compare)):
            # milliseconds on a shared machine are noisy: the corrupt file's cold run is the
            # median of three new homes
            colds = []
            for k in range(3 if action == "corrupt" else 1):
                env = fresh_env(tmp / f"home-{who}-{action}-{k}", path)
                colds.append(timed(cmd + args, env, work))
            cold = sorted(colds)[len(colds) // 2]
            warm = timed(cmd + args, env, work)
            res[(who, action)] = (cold, warm)
            print(f"[bench] {who} {action}: cold {cold[0]:.2f} s rc={cold[1]}, warm {warm[0]:.2f} s rc={warm[1]}"
                  f" ({cold[2][:100]})", file=sys.stderr)
    for action, args in (("icicle", [ICICLE_TRACE]), ("load-compare", [COMPARE_A, COMPARE_B])):
        env = fresh_env(tmp / f"home-probe-{action}")
        r = subprocess.run([binpath / "python", PROBE, action, *args], env=env, cwd=work, capture_output=True,
                           text=True, timeout=1800)
        res[("compiled", action)] = len(json.loads(r.stdout.strip().splitlines()[-1])["compiled"])
    if with_extension:
        z = build_zip(REPO, [])
        for action in ("corrupt", "icicle", "compare"):
            res[("extension", action)] = run_extension(z, tmp / f"users-ext-{action}", action)
    return res


def print_fresh_user(res: dict) -> None:
    st = res["startup"]
    print(f"Fresh user (empty home and caches, outside the checkout); interpreter start-up {st * 1000:.0f} ms; "
          f"peer: the checkout's `python -m tracevis3d` (kernels compile)")
    print("| first use | checkout cold | wheel cold | × | checkout warm | wheel warm | kernels compiled (wheel) | goal |")
    print("|---|---|---|---|---|---|---|---|")
    labels = {"corrupt": ("corrupt file rejected (one line, exit 1), beyond start-up", "≤ 0.5 s", None),
              "icicle": ("first icicle: 12,533 calls, 960x540 Workbench render", "≤ 8 s", "icicle"),
              "compare": ("first compare: PyTorch A/B pair (75k/68k calls), render", "≤ 10 s", "load-compare")}
    for action, (label, goal, probe) in labels.items():
        (cc, cw), (wc, ww) = res[("checkout", action)], res[("wheel", action)]
        off, unit = (st, "ms") if action == "corrupt" else (0.0, "s")
        ok = all(x[1] == (1 if action == "corrupt" else 0) for x in (cc, cw, wc, ww))
        compiled = str(res[("compiled", probe)]) if probe else "— (numba not imported)"
        print(f"| {label}{'' if ok else ' (EXIT STATUS WRONG)'} | {fmt(cc[0] - off, unit)} | {fmt(wc[0] - off, unit)} | "
              f"{ratio(wc[0] - off, cc[0] - off)} | {fmt(cw[0] - off, unit)} | {fmt(ww[0] - off, unit)} | {compiled} | "
              f"{goal} |")
    for action in ("corrupt", "icicle", "compare"):
        e = res.get(("extension", action))
        if e:
            t, unit = (e["after"], "ms") if action == "corrupt" else (e["s"], "s")
            print(f"| extension: enable → {action} (cold{'' if e.get('ok') else ', NOT OK'}) | | {fmt(t, unit)} | | | | "
                  f"{e['compiled']} | {labels[action][1]} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--main-ref", default="main")
    ap.add_argument("--skip-main", action="store_true", help="no 'today' columns (faster)")
    ap.add_argument("--quick", action="store_true", help="one repetition for the overhead rows")
    ap.add_argument("--fresh-user", action="store_true",
                    help="only the fresh-user table (issue 21): the installed wheel against the checkout")
    ap.add_argument("--with-extension", action="store_true",
                    help="with --fresh-user: also the extension zip's first uses (builds the zip)")
    ap.add_argument("--driver", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.driver:
        driver(*args.driver)
        return 0
    if args.fresh_user:
        tmp = Path(tempfile.mkdtemp(prefix="tv3d-bench-fresh-"))
        print(f"[bench] work folder {tmp}", file=sys.stderr)
        print_fresh_user(fresh_user(tmp, args.with_extension))
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="tv3d-bench-resp-"))
    print(f"[bench] work folder {tmp}", file=sys.stderr)
    res: dict = {"today": {}, "now": {}}
    zips = {"now": build_zip(REPO, ["--offline"])}
    trees = {"now": REPO}
    if not args.skip_main:
        trees["today"] = main_tree(args.main_ref, tmp)
        zips["today"] = build_zip(trees["today"], ["--offline"])
    for side, z in zips.items():
        for action in ("corrupt", "icicle", "compare"):
            users = tmp / f"users-{side}-{action}"
            cold = run_extension(z, users, action)
            warm = run_extension(z, users, action)
            res[side][action] = (cold, warm)
            print(f"[bench] {side} {action}: cold {cold['s']:.2f} s ({cold['compiled']} compiled, ok={cold['ok']}), "
                  f"warm {warm['s']:.2f} s", file=sys.stderr)
    cache = tmp / "numba-host"
    a1m, b1m = synthetic_pair(tmp, cache)
    reps = 1 if args.quick else 5
    res["now"]["blocks"] = run_py(BLOCKS_NOW, [REPO, BIG_TRACE, a1m, b1m, reps], cache, users=tmp / "users-bpy")
    print(f"[bench] now blocks {res['now']['blocks']}", file=sys.stderr)
    if "today" in trees:
        run_py(BLOCKS_TODAY, [trees["today"], BIG_TRACE, a1m, b1m], tmp / "numba-today", users=tmp / "users-bpy")
        res["today"]["blocks"] = run_py(BLOCKS_TODAY, [trees["today"], BIG_TRACE, a1m, b1m], tmp / "numba-today",
                                        users=tmp / "users-bpy")
        print(f"[bench] today blocks {res['today']['blocks']}", file=sys.stderr)
    generic = tmp / "numba-generic"
    shipped = REPO / "build" / "extension" / "tracevis3d" / "_kernel_cache"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import json; from tracevis3d import kernel_cache as k; "
            "print(json.dumps(k.install_shipped(sys.argv[2], sys.argv[3], sys.argv[4])))")
    res["now"]["install"] = run_py(code, [REPO, shipped, REPO / "tracevis3d", generic], generic)
    res["now"]["cpu_host"] = run_py(CPU_COST, [REPO, BIG_TRACE, a1m, b1m], cache)
    res["now"]["cpu_generic"] = run_py(CPU_COST, [REPO, BIG_TRACE, a1m, b1m], generic)
    (tmp / "results.json").write_text(json.dumps(res, indent=1, default=str))
    print_table(res)
    return 0


def print_table(res: dict) -> None:
    now, today = res["now"], res.get("today") or {}

    def pair(action, key="s"):
        n = now[action]
        t = today.get(action)
        return ([n[0][key], n[1][key]], [t[0][key], t[1][key]] if t else [None, None])

    rows = []
    for label, action, goal in (("enable → first icicle (load + build 12,533 calls, then a 960x540 render)",
                                 "icicle", "≤ 8 s cold"),
                                ("enable → first compare (75k vs 68k calls, real A/B runs)", "compare", "≤ 10 s cold")):
        (nc, nw), (tc, tw) = pair(action)
        rows.append((label, fmt(tc), fmt(nc), ratio(nc, tc), fmt(tw), fmt(nw), ratio(nw, tw), goal))
    (nc, nw), (tc, tw) = pair("corrupt", "after")
    rows.append(("corrupt file rejected: Import (one-line error), after enable", fmt(tc), fmt(nc, "ms"),
                 ratio(nc, tc), fmt(tw), fmt(nw, "ms"), ratio(nw, tw), "≤ 0.5 s cold"))
    (nc, nw), (tc, tw) = pair("corrupt", "enable")
    rows.append(("  the enable itself (Blender unpacks the wheels on a first enable)", fmt(tc), fmt(nc), "",
                 fmt(tw), fmt(nw), "", ""))
    (nc, nw), (tc, tw) = pair("icicle", "compiled")
    rows.append(("  numba signatures compiled in that first icicle", str(tc), str(nc), "", str(tw), str(nw), "", ""))
    b, tb = now["blocks"], today.get("blocks", {})
    rows.append(("longest main-thread block: import + build 1.1M calls (sympy), UI path", "",
                 "", "", fmt(tb.get("import_build"), "ms"), fmt(b["import_build"][0], "ms"),
                 ratio(b["import_build"][0], tb.get("import_build")), "≤ 0.1 s"))
    rows.append(("  longest gap of the UI loop (GIL held by a worker?)", "", "", "", "",
                 fmt(b["import_build"][1], "ms"), "", f"in: {b['import_build'][2]}"))
    rows.append(("longest main-thread block: compare 1M × 1M calls, UI path", "", "", "",
                 fmt(tb.get("compare"), "ms"), fmt(b["compare"][0], "ms"), ratio(b["compare"][0], tb.get("compare")),
                 "≤ 0.1 s"))
    rows.append(("  longest gap of the UI loop", "", "", "", "", fmt(b["compare"][1], "ms"), "", ""))
    for key, label in (("overhead_import_build", "job vs direct steps: import + build 1.1M calls"),
                       ("overhead_compare", "job vs direct: compare 1M × 1M")):
        d, j = b[key]
        rows.append((label + " (median)", "", "", "", fmt(d), fmt(j), ratio(j, d), "≤ 1.05×"))
    h, g = now["cpu_host"], now["cpu_generic"]
    for k, label in (("load", "load sympy.json 1.1M calls"), ("layout", "icicle layout 1.1M calls"),
                     ("compare", "compare 1M × 1M")):
        rows.append((f"generic-CPU kernels (shipped) vs host-CPU: {label}", "", "", "", fmt(h[k]), fmt(g[k]),
                     ratio(g[k], h[k]), "(cost of shipping)"))
    print("| figure | today cold | now cold | × | today warm | now warm | × | goal |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
