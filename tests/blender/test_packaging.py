"""TraceVis3D as a Python package (issue 21): pyproject.toml, one version, the wheel.

- the version is written once (tracevis3d/_version.py) and blender_manifest.toml agrees;
- the wheel (tools/build_wheel.py) holds the ``tracevis3d`` package only, with ``py.typed``
  and the pre-built kernel caches;
- installed into a fresh virtual environment without bpy, it loads and compares real traces;
  with bpy, its ``tracevis3d`` console script renders a figure.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib import metadata

import pytest

#: builds the zip or the wheel (they need the other interpreters' kernels): runs after the layer's other tests
pytestmark = pytest.mark.builds_packages

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_one_version_shared_by_package_manifest_and_pyproject():
    import tracevis3d
    from tracevis3d._version import __version__

    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text())
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert manifest["version"] == __version__ == tracevis3d.__version__
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "tracevis3d._version.__version__"}
    # no second literal anywhere in the package
    hits = [p for p in (REPO / "tracevis3d").rglob("*.py")
            if p.name != "_version.py" and re.search(r"(?m)^__version__\s*=", p.read_text())]
    assert hits == []


def test_build_tool_refuses_a_manifest_with_another_version(monkeypatch, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_extension", REPO / "tools" / "build_extension.py")
    be = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(be)
    bad = tmp_path / "blender_manifest.toml"
    bad.write_text(re.sub(r'(?m)^version = ".*"', 'version = "9.9.9"', (REPO / "blender_manifest.toml").read_text()))
    monkeypatch.setattr(be, "MANIFEST", bad)
    try:
        be.build(["linux-x64"], offline=True, write_manifest=False, kernels=False)
    except be.BuildError as e:
        assert "9.9.9" in str(e) and "_version.py" in str(e)
    else:  # pragma: no cover
        raise AssertionError("a manifest with another version was accepted")


def test_pyproject_declares_what_the_issue_asks():
    p = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert p["name"] == "tracevis3d"
    assert p["requires-python"] == ">=3.11,<3.14"
    deps = {re.split(r"[<>=!~ ]", d)[0]: d for d in p["dependencies"]}
    assert set(deps) == {"numpy", "numba", "llvmlite", "orjson", "pyzmq"}
    assert all(("<" in d and ">=" in d) for d in deps.values()), deps  # ranges, both ends
    assert "bpy" not in deps and p["optional-dependencies"]["bpy"][0].startswith("bpy")
    assert p["scripts"] == {"tracevis3d": "tracevis3d.cli:console"}
    assert (REPO / "tracevis3d" / "py.typed").is_file()


def ruff_command() -> list[str] | None:
    """ruff from this environment (pinned in requirements-dev.txt), else one on PATH."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    return [exe] if exe else None


def test_ruff_passes_with_the_rules_of_pyproject():
    cmd = ruff_command()
    if cmd is None:
        pytest.skip(f"ruff is not installed for {sys.executable} (pinned in requirements-dev.txt)")
    assert "ruff" in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]
    r = subprocess.run([*cmd, "check", "--no-cache", "--output-format", "concise", "."], capture_output=True,
                       text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_version_option_of_module_command():
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "--version"], capture_output=True, text=True,
                       cwd=REPO, timeout=60)
    from tracevis3d import __version__

    assert r.returncode == 0 and r.stdout.strip() == f"tracevis3d {__version__}", r


# ------------------------------------------------------------------ the wheel

REALDATA = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))
COMPARE_PAIR = (REALDATA / "hta-trace-diff" / "control.json.gz", REALDATA / "hta-trace-diff" / "test.json.gz")
ICICLE_TRACE = REALDATA / "viztracer-examples" / "multi_process_pool.json"
PROBE = REPO / "tests" / "support" / "first_use_probe.py"
#: the runtime dependencies the fresh environments borrow from this one (no bpy among them)
RUNTIME_DISTS = ("numpy", "numba", "llvmlite", "orjson", "pyzmq")


@pytest.fixture(scope="module")
def wheel() -> pathlib.Path:
    """dist/tracevis3d-*.whl built by tools/build_wheel.py (kernels reused from build/kernel-cache/)."""
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_wheel.py")], capture_output=True, text=True,
                       timeout=1200, cwd=REPO)
    if r.returncode != 0:
        pytest.fail(f"building the wheel failed: {r.stderr.strip().splitlines()[-1:]}", pytrace=False)
    return pathlib.Path(r.stdout.strip().splitlines()[-1])


def runtime_deps_dir(dest: pathlib.Path) -> pathlib.Path:
    """A folder of links to this environment's numpy, numba, llvmlite, orjson and pyzmq (their
    files and metadata, nothing else: no bpy), for a fresh venv's .pth (no download, no copy)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_DISTS:
        dist = metadata.distribution(name)
        root = pathlib.Path(dist.locate_file(""))
        for top in {f.parts[0] for f in dist.files or () if f.parts and f.parts[0] not in ("..", "bin")}:
            src = root / top
            if src.exists() and not (dest / top).exists():
                (dest / top).symlink_to(src)
    return dest


def fresh_venv(where: pathlib.Path, wheel: pathlib.Path, extra_site, base_python=sys.executable) -> pathlib.Path:
    """A new venv of ``base_python`` (no pip inside) with the wheel installed by this pip
    (--no-deps) and ``extra_site`` on its path; its python."""
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    py = where / "bin" / "python"
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
                        "--no-index", "--disable-pip-version-check", str(wheel)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (pathlib.Path(purelib) / "tracevis3d_test_deps.pth").write_text(str(extra_site) + "\n")
    return py


def fresh_user_env(home: pathlib.Path) -> dict:
    """An empty home and caches (no NUMBA_CACHE_DIR, no PYTHONPATH): a new user."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "XDG_CACHE_HOME", "PYTHONHOME", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    return env


def probe(py: pathlib.Path, env: dict, cwd: pathlib.Path, *args) -> dict:
    r = subprocess.run([str(py), str(PROBE), *map(str, args)], capture_output=True, text=True, env=env,
                       cwd=str(cwd), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def venv_without_bpy(wheel, tmp_path_factory) -> pathlib.Path:
    tmp = tmp_path_factory.mktemp("wheel-venv")
    return fresh_venv(tmp / "venv", wheel, runtime_deps_dir(tmp / "deps"))


@pytest.mark.slow  # the wheel: ~10 s, up to ~3 min when build/kernel-cache/ is empty
def test_wheel_holds_the_package_typed_with_the_caches_and_nothing_else(wheel):
    from tracevis3d._version import __version__

    assert wheel.name == f"tracevis3d-{__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"tracevis3d", f"tracevis3d-{__version__}.dist-info"}, tops
    assert "tracevis3d/py.typed" in names and "tracevis3d/__main__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "egg-info" in n]
    for ui in ("ui/", "blender_manifest.toml", "tests/", "bench/", "tools/"):
        assert not [n for n in names if n.startswith(ui)], ui
    # the pre-built caches: CPython 3.11 at least (3.13 too where a 3.13 with numba was found)
    tags = {n.split("/")[2] for n in names if n.startswith("tracevis3d/_kernel_cache/") and n.endswith("manifest.json")}
    assert any(t.startswith("py3.11-numba") and t.endswith("x86_64") for t in tags), tags
    for t in tags:
        listed = json.loads(zipfile.ZipFile(wheel).read(f"tracevis3d/_kernel_cache/{t}/manifest.json"))["files"]
        assert listed and all(f"tracevis3d/_kernel_cache/{t}/{f}" in names for f in listed)
    meta = zipfile.ZipFile(wheel).read(f"tracevis3d-{__version__}.dist-info/entry_points.txt").decode()
    assert "tracevis3d = tracevis3d.cli:console" in meta


@pytest.mark.slow  # the wheel: ~10 s, up to ~3 min when build/kernel-cache/ is empty
def test_installed_wheel_loads_and_compares_real_traces_without_bpy_and_compiles_nothing(venv_without_bpy,
                                                                                         wheel, tmp_path):
    """A new user (empty home, no caches, outside the checkout): the first load + compare of the
    real PyTorch A/B pair and the first icicle run on the shipped kernels, none compiled; the
    kernels installed are those of the highest x86-64 level the wheel carries and this CPU runs."""
    if not all(p.is_file() for p in (*COMPARE_PAIR, ICICLE_TRACE)):
        pytest.skip(f"real traces not found at {REALDATA} (set TRACEVIS3D_REALDATA)")
    py = venv_without_bpy
    env = fresh_user_env(tmp_path / "home")
    r = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('bpy') is None)"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.stdout.strip() == "True", "the fresh environment must not see bpy"
    cmp = probe(py, env, tmp_path, "load-compare", *COMPARE_PAIR)
    assert cmp["ok"] and cmp["package"].startswith(str(py.parent.parent)), cmp["package"]
    assert cmp["installed"]["skipped"] == "" and cmp["installed"]["installed"] > 0, cmp["installed"]
    assert cmp["compiled"] == [], f"the shipped caches miss {len(cmp['compiled'])} kernels: {cmp['compiled']}"
    from tracevis3d import kernel_cache as kc

    order = list(kc.CPUS)
    carried = {n.split("/")[3] for n in zipfile.ZipFile(wheel).namelist()
               if n.startswith(f"tracevis3d/_kernel_cache/{kc.tag()}/") and n.endswith("/manifest.json")
               and n.count("/") == 4} | {"generic"}
    host = order.index(kc.host_cpu_level())
    assert cmp["installed"]["cpu"] == max((c for c in carried if order.index(c) <= host), key=order.index), \
        (cmp["installed"], carried)
    # large traces do not keep their class pairs: the join fused with its consumers (setjoin_fused)
    fu = probe(py, env, tmp_path, "load-compare-fused", *COMPARE_PAIR)
    assert fu["ok"] and fu["pairs"] == cmp["pairs"], fu
    assert fu["compiled"] == [], f"the shipped caches miss {len(fu['compiled'])} kernels: {fu['compiled']}"
    ic = probe(py, env, tmp_path, "icicle", ICICLE_TRACE)
    assert ic["ok"] and ic["compiled"] == [], f"the shipped caches miss: {ic['compiled']}"
    bad = tmp_path / "corrupt.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": ')
    rej = probe(py, env, tmp_path, "corrupt", bad)
    assert rej["ok"] and "corrupt.json" in rej["message"] and not rej["numba_imported"], rej


@pytest.mark.slow  # the wheel: ~10 s, up to ~3 min when build/kernel-cache/ is empty
def test_installed_console_script_version(venv_without_bpy, tmp_path):
    from tracevis3d._version import __version__

    r = subprocess.run([str(venv_without_bpy.parent / "tracevis3d"), "--version"], capture_output=True, text=True,
                       env=fresh_user_env(tmp_path / "home"), cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"tracevis3d {__version__}", (r.stdout, r.stderr)


@pytest.mark.slow
@pytest.mark.blender
def test_installed_console_script_renders_a_figure_with_bpy(wheel, tmp_path):
    """``tracevis3d render-icicle`` of a venv that has the wheel and this environment's bpy."""
    pytest.importorskip("bpy")
    py = fresh_venv(tmp_path / "venv", wheel, pathlib.Path(sysconfig.get_paths()["purelib"]))
    trace = REALDATA / "viztracer-examples" / "multithread.json"
    if not trace.is_file():
        pytest.skip(f"real traces not found at {REALDATA} (set TRACEVIS3D_REALDATA)")
    out = tmp_path / "fig.png"
    r = subprocess.run([str(py.parent / "tracevis3d"), "render-icicle", str(trace), "-o", str(out),
                        "--resolution", "480x270", "--engine", "workbench"], capture_output=True, text=True,
                       env=fresh_user_env(tmp_path / "home"), cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.is_file() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.stdout.strip().endswith("fig.png")


@pytest.mark.slow
def test_other_pythons_caches_in_the_wheel_compile_nothing_on_first_compare(wheel, tmp_path):
    """The wheel's caches for the other Pythons this machine has with numba (``.venv313``,
    ``$TRACEVIS3D_KERNEL_PYTHONS``: CPython 3.13 with numpy 2): a new user's first load +
    compare of the real pair compiles nothing there either."""
    import importlib.util

    if not all(p.is_file() for p in COMPARE_PAIR):
        pytest.skip(f"real traces not found at {REALDATA} (set TRACEVIS3D_REALDATA)")
    spec = importlib.util.spec_from_file_location("kernel_caches", REPO / "tools" / "kernel_caches.py")
    kc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kc)
    others = [(py, info) for py, info in kc.interpreters() if tuple(info["python"]) != sys.version_info[:2]]
    if not others:
        pytest.skip("no other CPython 3.11-3.13 with numba here (.venv313 or TRACEVIS3D_KERNEL_PYTHONS)")
    for py, info in others:
        site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        where = tmp_path / f"venv{info['python'][0]}{info['python'][1]}"
        new_py = fresh_venv(where, wheel, site, base_python=py)
        cmp = probe(new_py, fresh_user_env(where / "home"), tmp_path, "load-compare", *COMPARE_PAIR)
        assert cmp["ok"] and cmp["installed"]["installed"] > 0, (info, cmp["installed"])
        assert cmp["compiled"] == [], f"Python {info['python']}: the shipped caches miss {cmp['compiled']}"
