#!/usr/bin/env python3
"""Pre-built numba kernel caches: the one place that makes them, for the extension zip
(tools/build_extension.py) and the wheel (tools/build_wheel.py) alike.

    python tools/kernel_caches.py STAGE_ROOT        # into STAGE_ROOT/tracevis3d/_kernel_cache/<tag>/

For every usable interpreter (below) the staged core's first-use kernels are compiled for the
generic x86-64 CPU (``python -m tracevis3d.warmup`` with ``NUMBA_CPU_NAME=generic`` and an
empty ``NUMBA_CACHE_DIR``) and exported by `tracevis3d.kernel_cache.export_cache` into
``tracevis3d/_kernel_cache/<tag>/`` (tag: ``py3.11-numba0.68.1-x86_64``); at run time
`tracevis3d.kernel_cache.install_shipped` relocates the folder matching the running Python
into the user's cache.  Results are kept in ``build/kernel-cache/<sources hash>/``, so an
unchanged core is not compiled again.

Interpreters: this one, ``$TRACEVIS3D_KERNEL_PYTHONS`` (paths separated by ``os.pathsep``) and
``.venv313/bin/python`` (made by ``make test`` for the bpy 5.2 smoke test), each used when it
is CPython 3.11-3.13 on linux x86-64 with numba importable; one per Python version.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL_CACHE = REPO / "build" / "kernel-cache"
SHIPPED_DIRNAME = "_kernel_cache"  # = tracevis3d.kernel_cache.SHIPPED_DIRNAME
#: Python versions whose kernels can ship (requires-python of pyproject.toml)
PYTHONS = ((3, 11), (3, 12), (3, 13))

_PROBE = ("import json, platform, sys, importlib.util, importlib.metadata as m; "
          "ok = importlib.util.find_spec('numba') is not None and importlib.util.find_spec('numpy') is not None; "
          "print(json.dumps({'python': list(sys.version_info[:2]), 'impl': sys.implementation.name, "
          "'platform': sys.platform, 'machine': platform.machine().lower(), "
          "'numba': m.version('numba') if ok else None}))")


class KernelCacheError(Exception):
    pass


def probe(python: str) -> dict | None:
    """What ``python`` is (version, platform, numba), or None when it does not run."""
    try:
        r = subprocess.run([python, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def interpreters() -> list[tuple[str, dict]]:
    """The interpreters that can make shippable caches here, one per Python version."""
    cands = [sys.executable]
    cands += [p for p in os.environ.get("TRACEVIS3D_KERNEL_PYTHONS", "").split(os.pathsep) if p]
    cands.append(str(REPO / ".venv313" / "bin" / "python"))
    out, seen = [], set()
    for py in cands:
        if not os.path.exists(py):
            continue
        info = probe(py)
        if (info is None or info["impl"] != "cpython" or info["platform"] != "linux"
                or info["machine"] not in ("x86_64", "amd64") or not info["numba"]
                or tuple(info["python"]) not in PYTHONS or tuple(info["python"]) in seen):
            continue
        seen.add(tuple(info["python"]))
        out.append((py, info))
    return out


def sources_digest(core: Path, info: dict) -> str:
    """sha256 over the core's kernel sources (the .py files numba caches: they use ``njit``;
    path and content), the warm-up, and the Python and numba versions."""
    h = hashlib.sha256(f"py{info['python']} numba {info['numba']} {info['machine']}".encode())
    for f in sorted(core.rglob("*.py")):
        if SHIPPED_DIRNAME in f.parts:
            continue
        text = f.read_bytes()
        if re.search(rb"(?m)^\s*@(numba\.|nb\.)?n?jit\b", text) or f.name == "warmup.py":
            h.update(str(f.relative_to(core)).encode() + b"\0" + text)
    return h.hexdigest()[:20]


def _compile(python: str, stage_root: Path, out: Path) -> None:
    """Warm-up with the generic CPU in an empty cache, exported into ``out``."""
    core = stage_root / "tracevis3d"
    with tempfile.TemporaryDirectory(prefix="tv3d-kernels-") as tmp:
        env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CACHE_DIR=tmp, PYTHONPATH=str(stage_root))
        env.pop("NUMBA_CPU_FEATURES", None)
        steps = [[python, "-m", "tracevis3d.warmup"],
                 [python, "-c", "import sys; from tracevis3d.kernel_cache import export_cache; "
                                "export_cache(sys.argv[1], sys.argv[2], sys.argv[3])",
                  tmp, str(core), str(out) + ".tmp"]]
        for cmd in steps:
            r = subprocess.run(cmd, env=env, cwd=str(stage_root), capture_output=True, text=True)
            if r.returncode != 0:
                last = (r.stderr.strip().splitlines() or ["failed"])[-1]
                raise KernelCacheError(f"pre-building the kernels with {python} failed: {last}")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(str(out) + ".tmp", out)


def prebuild(stage_root: Path, pythons: list[tuple[str, dict]] | None = None) -> str:
    """Put the generic-CPU kernel caches of every usable interpreter into the staged core
    (``stage_root/tracevis3d/_kernel_cache/<tag>/``); a one-line summary."""
    core = Path(stage_root) / "tracevis3d"
    pythons = interpreters() if pythons is None else pythons
    if not pythons:
        return "no pre-built kernels: no CPython 3.11-3.13 with numba on linux x86-64 here"
    shipped = core / SHIPPED_DIRNAME
    shutil.rmtree(shipped, ignore_errors=True)
    parts = []
    for python, info in pythons:
        out = KERNEL_CACHE / sources_digest(core, info)
        if not (out / "manifest.json").is_file():
            _compile(python, Path(stage_root), out)
        tag = json.loads((out / "manifest.json").read_text())["tag"]
        shutil.copytree(out, shipped / tag)
        n = sum(1 for _ in (shipped / tag).rglob("*.nbi"))
        size = sum(f.stat().st_size for f in (shipped / tag).rglob("*") if f.is_file())
        parts.append(f"{tag}: {n} kernel indexes, {size / 1e6:.1f} MB ({out.name})")
    return "pre-built kernels: " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stage_root", type=Path, help="folder holding the tracevis3d package to pre-build for")
    args = ap.parse_args(argv)
    if not (args.stage_root / "tracevis3d" / "__init__.py").is_file():
        print(f"kernel_caches: error: no tracevis3d package in {args.stage_root}", file=sys.stderr)
        return 1
    try:
        print(prebuild(args.stage_root))
    except (KernelCacheError, OSError, ValueError) as e:
        print(f"kernel_caches: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
