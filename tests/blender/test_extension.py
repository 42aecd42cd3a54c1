"""The built extension: manifest, zip contents, Blender's own validation, install/enable/unregister.

The zip for linux-x64 is built once per session with tools/build_extension.py (wheels are
cached in build/wheels, so only the first run needs the network).  Installing and enabling
runs in a fresh Python process with the bpy module (tests/test_extension_driver.py) with its
own isolated Blender user folders: enabling the extension points numba's cache at the
extension's folder and adds wheels to sys.path, which must not leak into other tests.
"""
import json
import os
import pathlib
import subprocess
import sys
import tomllib
import zipfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import build_extension as bx  # noqa: E402

DRIVER = REPO / "tests" / "blender" / "test_extension_driver.py"
MANIFEST = tomllib.loads((REPO / "blender_manifest.toml").read_text())
PACKAGES = ("numba", "llvmlite", "pyzmq", "orjson")


def built_zip() -> pathlib.Path:
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_extension.py"), "--platform", "linux-x64"],
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        pytest.fail(f"building the extension failed: {r.stderr.strip().splitlines()[-1:]}")
    out = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert out.is_file()
    return out


_MEMO: dict = {}  # one build and one driver run per pytest process (shared with test_operators.py)


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


@pytest.fixture(scope="module")
def ext_zip():
    return extension_zip()


@pytest.fixture(scope="module")
def driver_results():
    return run_driver()


# ------------------------------------------------------------------ the manifest
def test_manifest_declares_what_the_issue_asks():
    m = MANIFEST
    assert m["schema_version"] == "1.0.0" and m["id"] == "tracevis3d" and m["type"] == "add-on"
    assert m["blender_version_min"] == "4.2.0"
    assert set(m["platforms"]) == {"linux-x64", "macos-arm64", "windows-x64"}
    perms = m["permissions"]
    assert set(perms) == {"files", "network"} and all(perms.values())
    assert "network" in perms["network"].lower() or "zeromq" in perms["network"].lower()
    excluded = m["build"]["paths_exclude_pattern"]
    for d in ("/tests/", "/bench/", "/docs/", "/tools/", "/examples/", ".*", "__pycache__/"):
        assert d in excluded


def test_manifest_wheels_cover_every_platform_and_python_and_never_numpy():
    wheels = [w.split("/")[-1] for w in MANIFEST["wheels"]]
    assert all(w.endswith(".whl") for w in wheels)
    assert not [w for w in wheels if w.lower().startswith("numpy")], "numpy must never be bundled"
    for package, version in bx.PINS.items():
        for python in bx.PYTHONS:
            for platform in MANIFEST["platforms"]:
                hits = [w for w in wheels if bx._matches(w, package, version, python)
                        and bx.platform_of_wheel(w) in (platform, None)]
                assert len(hits) == 1, f"{package}=={version} Python {python} {platform}: {hits}"
    assert set(bx.PINS) == {"numba", "llvmlite", "pyzmq", "orjson"}


def test_build_tool_rejects_a_manifest_that_does_not_match_the_pins(tmp_path):
    text = (REPO / "blender_manifest.toml").read_text()
    dropped = bx.manifest_wheels(text)[0]
    edited = bx.replace_wheels_block(text, [w for w in bx.manifest_wheels(text) if w != dropped])
    assert dropped not in bx.manifest_wheels(edited)
    assert len(bx.manifest_wheels(edited)) == len(bx.manifest_wheels(text)) - 1
    with pytest.raises(bx.BuildError, match="block"):
        bx.replace_wheels_block("wheels = []\n", ["a-1-cp311-cp311-win_amd64.whl"])


def test_wheel_platform_names():
    assert bx.platform_of_wheel("numba-0.68.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl") == "linux-x64"
    assert bx.platform_of_wheel("pyzmq-27.3.0-cp312-abi3-macosx_10_15_universal2.whl") == "macos-arm64"
    assert bx.platform_of_wheel("orjson-3.13.0-cp313-cp313-win_amd64.whl") == "windows-x64"
    assert bx.platform_of_wheel("x-1.0-py3-none-any.whl") is None
    assert bx.platform_of_wheel("x-1.0-cp311-cp311-macosx_11_0_x86_64.whl") == "?"
    # stable ABI: a cp312-abi3 wheel serves 3.13 but not 3.11
    assert bx._matches("pyzmq-27.3.0-cp312-abi3-win_amd64.whl", "pyzmq", "27.3.0", "3.13")
    assert not bx._matches("pyzmq-27.3.0-cp312-abi3-win_amd64.whl", "pyzmq", "27.3.0", "3.11")


# ------------------------------------------------------------------ the zip
def test_zip_holds_the_addon_and_only_linux_wheels(ext_zip):
    names = zipfile.ZipFile(ext_zip).namelist()
    for f in ("blender_manifest.toml", "__init__.py", "ui/__init__.py", "ui/properties.py", "ui/operators/__init__.py",
              "ui/panels.py", "tracevis3d/__init__.py", "tracevis3d/blender/session.py"):
        assert f in names, f
    wheels = [n for n in names if n.startswith("wheels/")]
    assert len(wheels) == len(PACKAGES) * len(bx.PYTHONS)
    assert all(bx.platform_of_wheel(w) == "linux-x64" for w in wheels), wheels
    for prefix in ("tests/", "bench/", "docs/", "tools/", "examples/", ".venv", ".git", "build/", "dist/"):
        assert not [n for n in names if n.startswith(prefix)], prefix
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".blend", ".blend1"))]
    generated = zipfile.ZipFile(ext_zip).read("blender_manifest.toml").decode()
    gen = tomllib.loads(generated)["build"]["generated"]
    assert gen["platforms"] == ["linux-x64"]
    assert sorted(gen["wheels"]) == sorted("./" + w for w in wheels)


def test_zip_validates_with_blenders_own_tool(ext_zip):
    tool = bx.blender_ext_tool()
    r = subprocess.run([sys.executable, str(tool), "validate", str(ext_zip)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FATAL_ERROR" not in r.stdout + r.stderr


def test_blenders_tool_rejects_a_broken_zip(tmp_path):
    """The validation we rely on is not a no-op: a zip without manifest fails."""
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("__init__.py", "")
    r = subprocess.run([sys.executable, str(bx.blender_ext_tool()), "validate", str(bad)],
                       capture_output=True, text=True)
    assert r.returncode != 0 or "FATAL_ERROR" in r.stdout + r.stderr


# ------------------------------------------------------------------ install, enable, unregister
INSTALL_STEPS = [
    "install",
    "enabled",
    "wheels_installed",
    "numba_cache_dir",
    "registered_things",
    "keymap",
    "file_import_menu",
    "panel_refers_to_real_properties_and_operators",
    "disable_1_clean",
    "unregister_again_is_harmless",
    "enable_2",
    "disable_2_clean",
    "cli_command_registered",
]


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", INSTALL_STEPS)
def test_install_enable_unregister(driver_results, step):
    check_step(driver_results, step)


@pytest.mark.blender
@pytest.mark.slow
def test_driver_printed_no_traceback(driver_results):
    assert "Traceback" not in driver_results["stderr"], driver_results["stderr"][-3000:]
    # Blender's own output (reports, warnings); the driver's JSON result lines hold the
    # tracebacks of failed steps, which the step tests show already
    blender_out = "\n".join(ln for ln in driver_results["stdout"].splitlines() if '"steps"' not in ln)
    assert "Traceback" not in blender_out, blender_out[-3000:]


def test_build_tool_offline_without_cached_wheels_names_the_missing_wheel(tmp_path, monkeypatch):
    monkeypatch.setattr(bx, "WHEEL_CACHE", tmp_path / "empty-cache")
    with pytest.raises(bx.BuildError, match=r"numba==0\.68\.1 for Python 3\.11 / linux-x64 .*--offline"):
        bx.download_wheel("numba", "0.68.1", "3.11", "linux-x64", offline=True)


def test_build_tool_command_line_fails_with_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_extension.py"), "--platform", "linux-x64",
                        "--offline"], capture_output=True, text=True,
                       env={**os.environ, "PATH": os.environ.get("PATH", "")}, cwd=tmp_path)
    # with the wheels cached (the zip fixture ran or a previous build) this succeeds; either way
    # the output is a path or exactly one error line, never a traceback
    assert "Traceback" not in r.stderr
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("build_extension: error:")]
        assert len(errors) == 1, r.stderr
    else:
        assert r.stdout.strip().endswith("linux_x64.zip")
