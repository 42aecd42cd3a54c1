"""Smoke test of one Blender line, run with the Python of the venv that holds its bpy module
(PyPI's bpy 4.2 LTS and 4.5 LTS on Python 3.11 + numpy 1.26, 5.0 in the main .venv, 5.2 on
Python 3.13 + numpy 2; scripts/smoke_all.sh builds the venvs and runs this for each):

    .venv-bpy42/bin/python tests/smoke/smoke_bpy.py --out build/smoke/bpy42 [--zip dist/tracevis3d-*-linux_x64.zip]
    .venv/bin/python tests/smoke/smoke_bpy.py --compare build/smoke/bpy50 build/smoke/bpy42 ...

Every check runs in a fresh process, as a user's would, each printed as one "ok"/"FAIL" line:
1. core: the package imports and its numba kernels run (a synthetic trace, written as Chrome
   JSON and read back);
2. render-icicle: ``python -m tracevis3d render-icicle TRACE -o cli.png --save scene.blend`` on a
   small real recording (tests/data, py-spy);
3. zoom: a fresh process opens scene.blend, ``view.zoom_to`` a window, renders zoom.png; both
   figures are 640x360 with more than a few colours;
4. with --zip: the extension installs through ``package_install_files`` (its wheels for this
   Python), enables, imports + builds + renders through its operators, reports a corrupt file
   as an error naming it, and disables leaving nothing registered.
Each process must exit 0 within `EXIT_LAG_S` of its last output and print no "Error:" line
(the one error the corrupt file must raise excepted).  ``--compare`` (any venv with bpy): the
figures of every line are the same figure as the first's (`FIGURES_ALIKE`).
Exit status 0 only when every check passed.  Blender's user folders and the zoom cache go to a
temporary folder (nothing of the user's is touched); the figures stay in --out to look at.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "data" / "formats" / "recorded" / "py-spy" / "pyspy.speedscope.json.gz"
RESOLUTION = (640, 360)
PKG = "bl_ext.user_default.tracevis3d"
#: a process must end within this many seconds of its last output (bpy 4.5 once waited for ever),
#: or `EXIT_LAG_PEER` times what a plain ``import bpy`` process takes on this machine now, if more
#: (a busy machine: 1-2 s for that, 3-5 s for a step's process, which also frees numba and a scene)
EXIT_LAG_S, EXIT_LAG_PEER = 10.0, 4.0
#: a process still there this long after its last line (a hang at exit) is killed
EXIT_KILL_S = 60.0
#: a step's process is killed after this long (a cold numba cache compiles for minutes)
STEP_TIMEOUT_S = 900
#: "Blender's own error lines": any line with "Error:" (e.g. "Error: Not freed memory blocks")
ERROR_LINE = re.compile(r"Error:")
#: two renders of one figure by two Blender lines: at most this share of pixels differs by more
#: than this much (4.2 vs 5.0 measured: none over 10/255; a label missing is > 0.2 % of 640x360)
FIGURES_ALIKE = (0.001, 32)


# ------------------------------------------------------------------ the steps (child processes)
def step_core(work: pathlib.Path) -> str:
    import tracevis3d
    from tracevis3d.io.chrome_writer import save_chrome

    t = tracevis3d.synthetic(5000, threads=2, seed=3)
    t.check()
    save_chrome(t, work / "synthetic.json")
    back = tracevis3d.load(work / "synthetic.json")
    assert len(back) == len(t), (len(back), len(t))
    return f"{len(t)} calls, reloaded {len(back)} from Chrome JSON"


def distinct_colours(bpy, png) -> tuple:
    """((width, height), number of distinct RGB colours) of an image file."""
    import numpy as np

    img = bpy.data.images.load(str(png))
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return (w, h), len(np.unique((px.reshape(-1, 4)[:, :3] * 255).astype(np.uint8), axis=0))


def step_zoom(work: pathlib.Path) -> str:
    import bpy

    import tracevis3d
    from tracevis3d.blender import view
    from tracevis3d.blender.render import render_figure

    bpy.ops.wm.open_mainfile(filepath=str(work / "scene.blend"))
    trace = tracevis3d.load(TRACE)
    a, b = float(trace.start.min()), float(trace.end.max())
    out = view.zoom_to(bpy.context.scene, window=(a + 0.4 * (b - a), a + 0.6 * (b - a)))
    render_figure(str(work / "zoom.png"), engine="workbench", resolution=RESOLUTION)
    sizes = {n: distinct_colours(bpy, work / n) for n in ("cli.png", "zoom.png")}
    assert all(s == RESOLUTION and n >= 8 for s, n in sizes.values()), sizes
    return f"zoom drew {out.get('calls_drawn')} calls; figures {sizes}"


def step_extension(work: pathlib.Path, zip_path: str) -> str:
    import bpy

    r = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    site = (pathlib.Path(os.environ["BLENDER_USER_EXTENSIONS"]) / ".local" / "lib"
            / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")
    have = sorted(p.name for p in site.iterdir()) if site.is_dir() else []
    assert r == {"FINISHED"} and PKG in bpy.context.preferences.addons, (r, list(bpy.context.preferences.addons))
    assert {"numba", "llvmlite", "zmq", "orjson"} <= set(have) and not any(h.startswith("numpy") for h in have), have
    ops, s = bpy.ops.tracevis3d, bpy.context.scene.tracevis3d
    r1 = ops.import_trace(filepath=str(TRACE), build=True)
    bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y = RESOLUTION
    s.output = str(work / "operator.png")
    r2 = ops.render_figure()
    size, n = distinct_colours(bpy, work / "operator.png")
    assert r1 == r2 == {"FINISHED"} and size == RESOLUTION and n >= 8, (r1, r2, size, n)
    bad = work / "corrupt.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": ')
    try:
        ops.import_trace(filepath=str(bad), build=False)
        msg = None
    except RuntimeError as e:
        msg = str(e)
    assert msg is not None and "corrupt.json" in msg and "Traceback" not in msg, msg
    bpy.ops.preferences.addon_disable(module=PKG)
    left = leftovers(bpy)
    assert not left, f"left behind: {left}"
    return f"wheels {[h for h in have if not h.endswith('info')]}; operator figure {size} {n} colours; bad file: {msg!r}"


def leftovers(bpy) -> list:
    """What of the extension is still registered after it was disabled."""
    left = [n for n in dir(bpy.types) if n.startswith(("TRACEVIS3D_", "VIEW3D_PT_tracevis3d", "TraceVis3D"))]
    left += [f"Scene.{n}" for n in ("tracevis3d", "tracevis3d_icicle_params", "tracevis3d_compare_params",
                                      "tracevis3d_threads_params", "tracevis3d_cone_params")
             if hasattr(bpy.types.Scene, n)]
    for hname in dir(bpy.app.handlers):
        lst = getattr(bpy.app.handlers, hname)
        if isinstance(lst, list):
            left += [f"{hname}: {f.__name__}" for f in lst if getattr(f, "__module__", "").startswith(PKG)]
    if PKG in bpy.context.preferences.addons:
        left.append("still in preferences.addons")
    return left


def run_step(name: str, work: pathlib.Path, zip_path: str | None) -> int:
    """A child process: run one step, print its detail; exit 1 on an exception."""
    sys.path.insert(0, str(REPO))  # the core as a top-level package (test script, not product code)
    fn = {"core": step_core, "zoom": step_zoom}.get(name)
    detail = fn(work) if fn else step_extension(work, zip_path)
    print(f"SMOKE-DETAIL {detail}", flush=True)
    return 0


# ------------------------------------------------------------------ the parent
def _reader(stream, lines: list, last: list, final, done: list) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\n")
        lines.append(line)
        last[0] = time.monotonic()
        if final(line):
            done[0] = last[0]


def watched(cmd: list, env: dict, final, allowed_error=None) -> dict:
    """Run ``cmd``; {rc, seconds, exit_lag (s from its last output to its end), errors (its
    "Error:" lines but ``allowed_error``'s), lines}.  Killed `EXIT_KILL_S` after its ``final(line)``
    line if it has not ended by then (rc -9), or after `STEP_TIMEOUT_S` in all."""
    t0 = time.monotonic()
    last, done = [t0], [None]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(REPO))
    out, err = [], []
    readers = [threading.Thread(target=_reader, args=(s, ln, last, final, done), daemon=True)
               for s, ln in ((proc.stdout, out), (proc.stderr, err))]
    for t in readers:
        t.start()
    rc = None
    while rc is None:
        try:
            rc = proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if now - t0 > STEP_TIMEOUT_S or (done[0] is not None and now - done[0] > EXIT_KILL_S):
                proc.kill()
    t_end = time.monotonic()
    for t in readers:
        t.join(timeout=5)
    lines = out + err
    errors = [ln for ln in lines if ERROR_LINE.search(ln) and not (allowed_error and allowed_error in ln)]
    return {"rc": rc, "seconds": t_end - t0, "exit_lag": t_end - last[0], "errors": errors, "lines": lines}


def _is_detail(line: str) -> bool:
    return line.startswith("SMOKE-DETAIL ")


def check(name: str, res: dict, failed: list, lag_limit: float) -> None:
    detail = next((ln[len("SMOKE-DETAIL "):] for ln in res["lines"] if _is_detail(ln)), "")
    ok = res["rc"] == 0 and res["exit_lag"] <= lag_limit and not res["errors"]
    why = "" if ok else " | " + "\n".join(res["lines"][-25:])
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {res['rc']} after {res['seconds']:.1f} s, "
          f"{res['exit_lag']:.1f} s after its last output (at most {lag_limit:.1f}), {len(res['errors'])} Error: lines "
          f"{res['errors'][:3]}; {detail}{why}", flush=True)
    if not ok:
        failed.append(name)


def main(argv: list) -> int:
    out = pathlib.Path(argv[argv.index("--out") + 1] if "--out" in argv else tempfile.mkdtemp(prefix="tv3d-smoke-"))
    zip_path = str(pathlib.Path(argv[argv.index("--zip") + 1]).resolve()) if "--zip" in argv else None
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in ("cli.png", "zoom.png", "operator.png", "scene.blend"):
        (out / old).unlink(missing_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-smoke-user-"))
    env = dict(os.environ, TRACEVIS3D_ZOOM_CACHE=str(tmp / "zoom_cache"), HOME=str(tmp))
    for var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        (tmp / var.lower()).mkdir()
        env[f"BLENDER_USER_{var}"] = str(tmp / var.lower())
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    me = [sys.executable, str(pathlib.Path(__file__).resolve())]
    from importlib.metadata import version  # bpy itself runs only in the steps' processes

    bpy_version = version("bpy")
    print(f"bpy {bpy_version}, Python {sys.version.split()[0]}, numpy {version('numpy')}: {out}", flush=True)
    failed: list = []
    peer = watched([sys.executable, "-c", "import bpy; print('SMOKE-DETAIL plain import bpy', flush=True)"], env,
                   _is_detail)
    lag = max(EXIT_LAG_S, EXIT_LAG_PEER * peer["exit_lag"])
    check("plain import bpy (the exit time's peer)", peer, failed, lag)
    check("core (numba kernels)", watched(me + ["--step", "core", "--work", str(out)], env, _is_detail), failed, lag)
    png = str(out / "cli.png")
    check("render-icicle --save", watched([sys.executable, "-m", "tracevis3d", "render-icicle", str(TRACE),
                                           "-o", png, "--save", str(out / "scene.blend"),
                                           "--resolution", f"{RESOLUTION[0]}x{RESOLUTION[1]}"], env,
                                          lambda line: line == png), failed, lag)
    check("zoom_to on the saved scene, render", watched(me + ["--step", "zoom", "--work", str(out)], env, _is_detail),
          failed, lag)
    if zip_path:
        ext_env = {k: v for k, v in env.items() if k != "NUMBA_CACHE_DIR"}  # the extension chooses it
        check("extension: install, enable, operators, corrupt file, disable",
              watched(me + ["--step", "extension", "--work", str(out), "--zip", zip_path], ext_env, _is_detail,
                      allowed_error="corrupt.json"), failed, lag)
    else:
        print("skip extension checks (no --zip)", flush=True)
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)  # the user folders (~170 MB: an installed extension)
    print(json.dumps({"bpy": bpy_version, "failed": failed}), flush=True)
    return 1 if failed else 0


def compare(dirs: list) -> int:
    """Every figure of ``dirs[1:]`` against the same figure of ``dirs[0]`` (`FIGURES_ALIKE`)."""
    import bpy  # noqa: F401
    import numpy as np

    def pixels(png):
        img = bpy.data.images.load(str(png))
        a = np.empty(img.size[0] * img.size[1] * 4, np.float32)
        img.pixels.foreach_get(a)
        bpy.data.images.remove(img)
        return np.round(a.reshape(-1, 4)[:, :3] * 255).astype(np.int16)

    share, level = FIGURES_ALIKE
    failed = []
    for name in ("cli.png", "zoom.png", "operator.png"):
        ref = pathlib.Path(dirs[0]) / name
        if not ref.is_file():
            continue
        base = pixels(ref)
        for d in dirs[1:]:
            other = pathlib.Path(d) / name
            if not other.is_file():
                continue
            p = pixels(other)
            frac = float((np.abs(p - base).max(axis=1) > level).mean()) if p.shape == base.shape else 1.0
            ok = frac <= share
            print(f"{'ok  ' if ok else 'FAIL'} {other} vs {ref}: {100 * frac:.3f} % of pixels differ by more than "
                  f"{level}/255 (at most {100 * share:.1f} %)", flush=True)
            if not ok:
                failed.append(str(other))
    return 1 if failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--compare" in args:
        sys.exit(compare(args[args.index("--compare") + 1:]))
    if "--step" in args:
        sys.exit(run_step(args[args.index("--step") + 1], pathlib.Path(args[args.index("--work") + 1]),
                          args[args.index("--zip") + 1] if "--zip" in args else None))
    sys.exit(main(args))
