"""The built extension's runs in fresh Blender processes, shared by the extension, operator and
panel tests: the zip built once per pytest process (tools/build_extension.py), the driver
(tests/support/extension_driver.py) run once in isolated Blender user folders, then again in
those folders on real files, on saved and reopened .blend files and on a comparison; each
returns {"steps": {step: {ok, detail}}}, kept for the session (`check_step` asserts one).

Installing and enabling runs in a fresh process with the bpy module: enabling the extension
points numba's cache at the extension's folder and adds wheels to sys.path, which must not leak
into other tests."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "support" / "extension_driver.py"


def built_zip() -> pathlib.Path:
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_extension.py"), "--platform", "linux-x64"],
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        pytest.fail(f"building the extension failed: {r.stderr.strip().splitlines()[-1:]}")
    out = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert out.is_file()
    return out


_MEMO: dict = {}  # one build and one driver run per pytest process (shared by every test module)


def extension_zip() -> pathlib.Path:
    if "zip" not in _MEMO:
        _MEMO["zip"] = built_zip()
    return _MEMO["zip"]


def run_driver() -> dict:
    """Run the install/enable/operators/unregister driver once; {"steps": {step: {ok, detail}}}."""
    if "driver" in _MEMO:
        return _MEMO["driver"]
    ext = extension_zip()
    import tempfile

    from conftest import session_tmp

    work = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-ext-driver-", dir=session_tmp()))  # (~400 MB: removed)
    env = dict(os.environ)
    for var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        d = work / "blender-user" / var.lower()
        d.mkdir(parents=True)
        env[f"BLENDER_USER_{var}"] = str(d)
    env.pop("NUMBA_CACHE_DIR", None)  # the extension must choose it
    env["HOME"] = str(work)  # '//' paths of an unsaved .blend resolve to the home folder
    steps, skip, stderr, stdout = {}, [], "", ""
    for _attempt in range(4):  # a step that crashes Blender is recorded, then skipped
        cmd = [sys.executable, str(DRIVER), str(ext), str(work)] + (["--skip", ",".join(skip)] if skip else [])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env, cwd=str(work))
        stderr += r.stderr
        stdout += r.stdout
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{") and '"steps"' in ln]
        if lines:
            steps.update(json.loads(lines[-1])["steps"])
            break
        progress = work / "driver-progress.json"
        if not progress.is_file():
            pytest.fail(f"driver produced no result (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        state = json.loads(progress.read_text())
        steps.update(state["steps"])
        crashed = state.get("current")
        if not crashed:
            break
        tail = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("EGL")][-3:]
        steps[crashed] = {"ok": False, "detail": f"Blender crashed in this step (exit {r.returncode}): {tail}"}
        skip.append(crashed)
    res = {"steps": steps, "stderr": stderr, "stdout": stdout, "work": work, "env": env}
    _MEMO["driver"] = res
    return res


def run_driver_real(realdata: pathlib.Path) -> dict:
    """The operators on real trace files, in the first run's user folders (installed, warm)."""
    if "real" in _MEMO:
        return _MEMO["real"]
    first = run_driver()
    r = subprocess.run([sys.executable, str(DRIVER), str(first["work"]), "--real", str(realdata)],
                       capture_output=True, text=True, timeout=1800, env=first["env"], cwd=str(first["work"]))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{") and '"steps"' in ln]
    steps = json.loads(lines[-1])["steps"] if lines else {}
    progress = first["work"] / "driver-real-progress.json"
    if not lines and progress.is_file():
        state = json.loads(progress.read_text())
        steps = state["steps"]
        if state.get("current"):
            tail = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("EGL")][-3:]
            steps[state["current"]] = {"ok": False, "detail": f"Blender crashed in this step (exit {r.returncode}): {tail}"}
    _MEMO["real"] = {"steps": steps, "stderr": r.stderr, "stdout": r.stdout}
    return _MEMO["real"]


def _driver_reopen(first: dict, spec: dict, mode: str = "--reopen") -> dict:
    """One fresh driver process in ``mode`` (--reopen, --compare, --compare-reopen); its steps
    (a crash is reported as a failure)."""
    spec_file = pathlib.Path(spec["blend"]).parent.parent / f"{spec['prefix']}-spec.json"
    spec_file.write_text(json.dumps(spec))
    r = subprocess.run([sys.executable, str(DRIVER), str(first["work"]), mode, str(spec_file)],
                       capture_output=True, text=True, timeout=1800, env=first["env"], cwd=str(first["work"]))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{") and '"steps"' in ln]
    if lines:
        return json.loads(lines[-1])["steps"]
    progress = spec_file.with_suffix(".progress.json")
    steps = json.loads(progress.read_text())["steps"] if progress.is_file() else {}
    tail = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("EGL")][-3:]
    steps[f"{spec['prefix']}_crashed"] = {"ok": False, "detail": f"exit {r.returncode}: {tail}"}
    return steps


def run_driver_reopen() -> dict:
    """Save with --save, reopen in a fresh process, Build and Show call work (issue 8, item 7).

    1. ``python -m tracevis3d render-icicle ... --save`` with the PyPI bpy module (the
       extension is not registered there) into folder ``cli-project``; the folder is moved.
    2. A fresh Blender process enables the installed extension, opens the moved .blend: the
       trace path (the moved trace) and the parameters are back; Build, Show call and a pick
       work.  The same process imports a trace through the operator and saves a .blend
       (the panel's way) into ``panel-project``, which is moved in turn.
    3. Another fresh process opens that .blend: trace path, parameters, Build, Show call.
    """
    if "reopen" in _MEMO:
        return _MEMO["reopen"]
    import shutil

    first = run_driver()
    root = first["work"] / "reopen"
    shutil.rmtree(root, ignore_errors=True)
    cli_dir, panel_dir = root / "cli-project", root / "panel-project"
    for d in (cli_dir, panel_dir):
        d.mkdir(parents=True)
        shutil.copy(first["work"] / "small_trace.json", d / "small_trace.json")
    env = dict(os.environ)  # the pytest process's isolated Blender folders: no extension there
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-icicle", str(cli_dir / "small_trace.json"),
                        "-o", str(cli_dir / "fig.png"), "--resolution", "320x180",
                        "--save", str(cli_dir / "scene.blend"),
                        "--color-by", "module", "--thread", "MainThread", "--fold", "none"],
                       capture_output=True, text=True, timeout=900, env=env, cwd=str(root))
    steps = {"reopen_cli_save": {"ok": r.returncode == 0 and r.stdout == f"{cli_dir / 'fig.png'}\n"
                                 and (cli_dir / "scene.blend").is_file(),
                                 "detail": f"exit {r.returncode} stdout={r.stdout!r} stderr={r.stderr[-1500:]}"}}
    moved = root / "cli-project-moved"
    cli_dir.rename(moved)
    steps.update(_driver_reopen(first, {
        "prefix": "reopen_cli", "blend": str(moved / "scene.blend"), "trace": str(moved / "small_trace.json"),
        "params": {"tracevis3d_icicle_params.color_by": "module", "tracevis3d_icicle_params.threads": "MainThread",
                   "tracevis3d_icicle_params.fold_mode": "none", "tracevis3d_icicle_params.resolution_x": 320,
                   "tracevis3d_icicle_params.resolution_y": 180},
        "then_save_panel": {"trace": str(panel_dir / "small_trace.json"), "blend": str(panel_dir / "panel.blend")},
    }))
    moved = root / "panel-project-moved"
    panel_dir.rename(moved)
    steps.update(_driver_reopen(first, {
        "prefix": "reopen_panel", "blend": str(moved / "panel.blend"), "trace": str(moved / "small_trace.json"),
        "params": {"tracevis3d_icicle_params.color_by": "depth", "tracevis3d_icicle_params.extrude_measure": "self"},
        "then_save_panel": None,
    }))
    _MEMO["reopen"] = {"steps": steps, "stderr": "", "stdout": ""}
    return _MEMO["reopen"]


def run_driver_compare(pair: tuple) -> dict:
    """The Compare panel and its operators on a recorded pair (issue 11), in a fresh Blender
    process with the installed extension; it saves a .blend, the folder is moved, and another
    fresh process reopens it: both traces and the comparison's settings are back, Compare
    rebuilds."""
    if "compare" in _MEMO:
        return _MEMO["compare"]
    import shutil

    first = run_driver()
    root = first["work"] / "compare"
    shutil.rmtree(root, ignore_errors=True)
    proj = root / "cmp-project"
    proj.mkdir(parents=True)
    a, b = proj / "json_tool_a.json", proj / "json_tool_b.json"
    shutil.copy(pair[0], a)
    shutil.copy(pair[1], b)
    corrupt = proj / "cut_short.json"
    corrupt.write_bytes(b'{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": }]}')  # not JSON
    steps = _driver_reopen(first, {"prefix": "cmp", "a": str(a), "b": str(b), "corrupt": str(corrupt),
                                   "blend": str(proj / "cmp.blend"), "align": "_iterencode_list"}, "--compare")
    moved = root / "cmp-project-moved"
    proj.rename(moved)
    steps.update(_driver_reopen(first, {
        "prefix": "cmp_reopen", "blend": str(moved / "cmp.blend"),
        "a": str(moved / a.name), "b": str(moved / b.name),
        "props": {"tracevis3d_compare_params.color_by": "similarity", "tracevis3d_compare_params.tau": 0.25,
                  "tracevis3d_compare_params.thread_a": "MainThread", "tracevis3d_compare_params.use_window_a": True,
                  "tracevis3d_compare_params.brush_a": "_iterencode_list"}}, "--compare-reopen"))
    _MEMO["compare"] = {"steps": steps, "stderr": "", "stdout": ""}
    return _MEMO["compare"]


def check_step(res: dict, step: str) -> None:
    r = res["steps"].get(step)
    assert r is not None, f"driver did not reach step {step!r}; stderr:\n{res['stderr'][-3000:]}"
    if r.get("skip"):
        pytest.skip(r["detail"])
    assert r["ok"], r["detail"]
