"""TraceVis3D as a Python package (issue 21): pyproject.toml, one version, the wheel.

- the version is written once (tracevis3d/_version.py) and blender_manifest.toml agrees;
- the wheel (tools/build_wheel.py) holds the ``tracevis3d`` package only, with ``py.typed``
  and the pre-built kernel caches;
- installed into a fresh virtual environment without bpy, it loads and compares real traces;
  with bpy, its ``tracevis3d`` console script renders a figure.
"""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import tomllib

REPO = pathlib.Path(__file__).resolve().parent.parent


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
    assert p["scripts"] == {"tracevis3d": "tracevis3d.cli:main"}
    assert (REPO / "tracevis3d" / "py.typed").is_file()


def test_version_option_of_module_command():
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "--version"], capture_output=True, text=True,
                       cwd=REPO, timeout=60)
    from tracevis3d import __version__

    assert r.returncode == 0 and r.stdout.strip() == f"tracevis3d {__version__}", r
