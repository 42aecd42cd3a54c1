#!/usr/bin/env python3
"""Build the ``tracevis3d`` wheel with the pre-built kernel caches: dist/tracevis3d-<version>-py3-none-any.whl.

    .venv/bin/python tools/build_wheel.py               # -> dist/, prints the wheel's path
    .venv/bin/python tools/build_wheel.py --no-kernels  # without the caches (kernels compile on first use)

1. Staging: ``pyproject.toml``, ``README.md`` and the ``tracevis3d`` package (nothing else:
   no tests, benches, add-on UI) are copied into ``build/wheel-src/``.
2. The staged package gets ``tracevis3d/_kernel_cache/<tag>/`` from ``tools/kernel_caches.py``,
   the same tool and the same ``build/kernel-cache/`` the extension zip uses: generic x86-64
   kernels, and the same for the x86-64-v3 and -v4 levels in ``<tag>/<level>/`` (the CPUs of
   ``$TRACEVIS3D_KERNEL_CPUS``, default all), for CPython 3.11 and 3.13 (where an interpreter
   with numba is found); the highest level the CPU runs is installed into the user's numba
   cache on first use by `tracevis3d.kernel_cache.ensure_installed`.
3. ``pip wheel --no-deps`` with setuptools from ``build/wheels/`` (downloaded once there, then
   ``--no-index``: rebuilds need no network).  A plain ``pip install .`` of the checkout works
   too, without the caches.

Exit status is non-zero with a one-line message on any failure.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAGE = REPO / "build" / "wheel-src"
DIST = REPO / "dist"
BUILD_DEPS = REPO / "build" / "wheels"  # shared with build_extension's wheel cache
#: the build backend pyproject.toml asks for
SETUPTOOLS = "setuptools>=77"


class BuildError(Exception):
    pass


def kernel_caches():
    spec = importlib.util.spec_from_file_location("kernel_caches", Path(__file__).with_name("kernel_caches.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stage() -> Path:
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, STAGE / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "_kernel_cache", "*.egg-info")
    shutil.copytree(REPO / "tracevis3d", STAGE / "tracevis3d", ignore=ignore)
    return STAGE


def _setuptools_wheel() -> Path | None:
    for f in sorted(BUILD_DEPS.glob("setuptools-*.whl"), reverse=True):
        m = re.match(r"setuptools-(\d+)", f.name)
        if m and int(m.group(1)) >= 77:
            return f
    return None


def build_backend() -> None:
    """setuptools in build/wheels/ (one download, then none)."""
    if _setuptools_wheel() is None:
        BUILD_DEPS.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--only-binary=:all:", "--dest", str(BUILD_DEPS), SETUPTOOLS],
                           capture_output=True, text=True)
        if r.returncode != 0 or _setuptools_wheel() is None:
            last = (r.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise BuildError(f"cannot get the build backend ({SETUPTOOLS}) into {BUILD_DEPS}: {last}")


def build(kernels: bool = True) -> Path:
    src = stage()
    if kernels:
        kc = kernel_caches()
        try:
            print(f"[kernels] {kc.prebuild(src)}", file=sys.stderr)
        except kc.KernelCacheError as e:
            raise BuildError(str(e)) from None
    build_backend()
    DIST.mkdir(exist_ok=True)
    # built in a folder of its own beside dist/ and renamed into it once whole: a failed build
    # leaves the last good wheel in dist/ as it was
    fresh = Path(tempfile.mkdtemp(prefix=".wheel-", dir=DIST))
    try:
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--no-index", "--find-links", str(BUILD_DEPS), "--wheel-dir", str(fresh),
                            str(src)], capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["pip wheel failed"])[-1]
            raise BuildError(f"pip wheel failed: {last}")
        wheels = sorted(fresh.glob("tracevis3d-*.whl"))
        if len(wheels) != 1:
            raise BuildError(f"expected one tracevis3d wheel, pip wheel made {len(wheels)}")
        try:
            with zipfile.ZipFile(wheels[0]) as zf:
                bad = zf.testzip()
        except zipfile.BadZipFile as e:
            raise BuildError(f"the built wheel is not a whole zip: {e}") from None
        if bad is not None:
            raise BuildError(f"the built wheel has a damaged member: {bad}")
        with open(wheels[0], "rb") as f:
            os.fsync(f.fileno())
        target = DIST / wheels[0].name
        os.replace(wheels[0], target)
        for old in DIST.glob("tracevis3d-*.whl"):
            if old != target:
                old.unlink()
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-kernels", action="store_true",
                    help="leave out the pre-built numba kernel caches (first use then compiles)")
    args = ap.parse_args(argv)
    try:
        wheel = build(kernels=not args.no_kernels)
    except (BuildError, OSError) as e:
        print(f"build_wheel: error: {e}", file=sys.stderr)
        return 1
    print(f"[wheel] {wheel.name}: {wheel.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
