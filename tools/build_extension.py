#!/usr/bin/env python3
"""Build the TraceVis3D Blender extension: wheels, per-platform zips, validation.

    .venv/bin/python tools/build_extension.py                    # all platforms -> dist/
    .venv/bin/python tools/build_extension.py --platform linux-x64
    .venv/bin/python tools/build_extension.py --write-manifest   # after changing PINS

Steps
1. Wheels.  For every pinned package (PINS) x Python (3.11 for Blender 4.2-5.0, 3.13 for
   Blender 5.1+) x platform, ``pip download --only-binary=:all: --no-deps`` into the cache
   ``build/wheels/`` (skipped when the file is already there, so reruns need no network).
   numpy is never downloaded: Blender ships its own.
2. The wheel list in ``blender_manifest.toml`` (between the BEGIN/END WHEELS markers) must
   name exactly the resolved files; ``--write-manifest`` rewrites it, otherwise a mismatch is
   an error (the committed manifest is the single, reviewable statement of what we ship).
3. Staging.  Only the add-on's own files (ADDON_FILES) are copied into
   ``build/extension/`` together with the wheels, so nothing else in the working tree (tests,
   benchmarks, virtualenvs, colleagues' scratch files) can leak into a zip; the manifest's
   ``[build] paths_exclude_pattern`` is the second line of defence.
   The staged core gets ``tracevis3d/_kernel_cache/<tag>/``: every first-use numba kernel
   compiled for the generic x86-64 CPU, and for the x86-64-v3 / -v4 levels in
   ``<tag>/<level>/`` (``$TRACEVIS3D_KERNEL_CPUS``, default all), by ``tools/kernel_caches.py``
   (the same tool builds the wheel's), so a new user does not wait a minute for numba: for this Python 3.11 and a
   3.13 with numba when there is one (``.venv313``, ``$TRACEVIS3D_KERNEL_PYTHONS``), on
   linux-x64; kept in ``build/kernel-cache/<sources hash>/``, so an unchanged core is not
   compiled again; ``--no-kernels`` leaves them out.
4. Build with Blender's own tool (``bl_pkg/cli/blender_ext.py``, shipped inside the bpy wheel)
   using ``--split-platforms``, then validate every zip with the same tool.  Output: dist/.

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
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "blender_manifest.toml"
WHEEL_CACHE = REPO / "build" / "wheels"
STAGE = REPO / "build" / "extension"
DIST = REPO / "dist"

# Third-party wheels we ship (never numpy).  numba 0.68 supports numpy >=1.22,<2.6, i.e. both
# Blender 4.2-5.0's numpy 1.26 and Blender 5.1+'s numpy 2.x; llvmlite is numba's exact partner.
PINS = {
    "numba": "0.68.1",
    "llvmlite": "0.50.0",
    "pyzmq": "27.3.0",
    "orjson": "3.13.0",
}
# Blender's Python per release line: 3.11 (Blender 4.2-5.0), 3.13 (Blender 5.1+)
PYTHONS = ("3.11", "3.13")
# Blender platform name -> platform tags we accept, newest first (pip does not expand an
# explicit manylinux --platform to older tags, so they are listed; Blender >= 4.2 needs glibc >= 2.28
# and macOS >= 11.2)
PLATFORM_TAGS = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_26_x86_64",
                  "manylinux_2_17_x86_64", "manylinux2014_x86_64"],
    # pip expands a macOS tag to older macOS versions itself; numba/llvmlite need macOS >= 12
    "macos-arm64": ["macosx_12_0_arm64"],
    "windows-x64": ["win_amd64"],
}
# What the add-on consists of (relative to the repo root); everything else stays out.
ADDON_FILES = (
    "__init__.py",
    "ui",
    "tracevis3d",
    "LICENSE",
)
WHEELS_BEGIN = "# BEGIN WHEELS"
WHEELS_END = "# END WHEELS"


class BuildError(Exception):
    pass


def blender_ext_tool() -> Path:
    """Blender's extension command line tool, from the installed bpy module."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("bpy")
    except Exception:  # pragma: no cover
        spec = None
    roots = []
    if spec and spec.submodule_search_locations:
        roots += [Path(p) for p in spec.submodule_search_locations]
    elif spec and spec.origin:
        roots.append(Path(spec.origin).parent)
    for root in roots:
        hits = sorted(root.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
        if hits:
            return hits[-1]
    raise BuildError(
        "Blender's extension tool (bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py) not found: "
        "run this with the Python that has the bpy module installed (.venv/bin/python)"
    )


def platform_of_wheel(filename: str) -> str | None:
    """Blender platform name of a wheel file name (None for pure 'any' wheels)."""
    plat = filename[:-4].split("-")[-1]
    if plat == "any":
        return None
    if "x86_64" in plat and ("manylinux" in plat or plat.startswith("linux")):
        return "linux-x64"
    if plat.startswith("macosx") and ("arm64" in plat or "universal2" in plat):
        return "macos-arm64"
    if plat == "win_amd64":
        return "windows-x64"
    return "?"


def _matches(filename: str, package: str, version: str, python: str) -> bool:
    name, ver, pytag, abitag = (filename[:-4].split("-") + ["", "", "", ""])[:4]
    if name.lower().replace("-", "_") != package.lower().replace("-", "_") or ver != version:
        return False
    cp = "cp" + python.replace(".", "")
    # exact CPython tag, or an older stable-ABI (abi3) wheel, which newer Pythons accept
    return pytag == cp or (abitag == "abi3" and pytag.startswith("cp3") and int(pytag[3:]) <= int(cp[3:]))


def cached_wheel(package: str, version: str, python: str, platform: str) -> str | None:
    if not WHEEL_CACHE.is_dir():
        return None
    for f in sorted(WHEEL_CACHE.glob("*.whl")):
        if _matches(f.name, package, version, python) and platform_of_wheel(f.name) in (platform, None):
            return f.name
    return None


def download_wheel(package: str, version: str, python: str, platform: str, offline: bool) -> str:
    hit = cached_wheel(package, version, python, platform)
    if hit:
        return hit
    if offline:
        raise BuildError(f"wheel {package}=={version} for Python {python} / {platform} is not in "
                         f"{WHEEL_CACHE} and --offline was given")
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--only-binary=:all:", "--no-deps", "--implementation", "cp",
           "--python-version", python, "--dest", str(WHEEL_CACHE)]
    for tag in PLATFORM_TAGS[platform]:
        cmd += ["--platform", tag]
    cmd.append(f"{package}=={version}")
    print(f"[wheels] {package}=={version} cp{python.replace('.', '')} {platform}", file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise BuildError(f"pip download {package}=={version} (Python {python}, {platform}) failed: {last}")
    hit = cached_wheel(package, version, python, platform)
    if not hit:
        raise BuildError(f"pip download {package}=={version} (Python {python}, {platform}) "
                         f"produced no matching wheel in {WHEEL_CACHE}")
    return hit


def resolve_wheels(platforms, offline: bool) -> list[str]:
    names = set()
    for platform in platforms:
        for python in PYTHONS:
            for package, version in PINS.items():
                names.add(download_wheel(package, version, python, platform, offline))
    if any(n.lower().startswith("numpy-") for n in names):  # paranoid: never ship numpy
        raise BuildError("numpy must never be bundled (Blender ships its own)")
    return sorted(names)


def manifest_wheels(text: str) -> list[str]:
    return [w.split("/")[-1] for w in tomllib.loads(text).get("wheels", [])]


def wheels_block(names: list[str]) -> str:
    lines = [WHEELS_BEGIN + " (generated by tools/build_extension.py --write-manifest)", "wheels = ["]
    lines += [f'  "./wheels/{n}",' for n in names]
    lines += ["]", WHEELS_END]
    return "\n".join(lines)


def replace_wheels_block(text: str, names: list[str]) -> str:
    pattern = re.compile(re.escape(WHEELS_BEGIN) + r".*?" + re.escape(WHEELS_END), re.S)
    if not pattern.search(text):
        raise BuildError(f"{MANIFEST.name}: no '{WHEELS_BEGIN}' ... '{WHEELS_END}' block to rewrite")
    return pattern.sub(lambda _m: wheels_block(names), text, count=1)


def stage(manifest_text: str, wheels: list[str]) -> Path:
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.blend1", "numba_cache", "_kernel_cache")
    for rel in ADDON_FILES:
        src = REPO / rel
        if src.is_dir():
            shutil.copytree(src, STAGE / rel, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, STAGE / rel)
        elif rel != "LICENSE":
            raise BuildError(f"add-on file missing: {src}")
    (STAGE / "wheels").mkdir()
    for name in wheels:
        shutil.copy2(WHEEL_CACHE / name, STAGE / "wheels" / name)
    (STAGE / MANIFEST.name).write_text(manifest_text)
    return STAGE


def _kernel_caches():
    """tools/kernel_caches.py: the one place that makes the pre-built kernels (the wheel's too)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernel_caches", Path(__file__).with_name("kernel_caches.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prebuilt_kernels(stage_root: Path) -> str:
    """Put the kernel caches (generic, and the x86-64 levels asked) into the staged core; a one-line summary."""
    kc = _kernel_caches()
    try:
        return kc.prebuild(stage_root)
    except kc.KernelCacheError as e:
        raise BuildError(str(e)) from None


def run_tool(args: list[str]) -> str:
    r = subprocess.run([sys.executable, str(blender_ext_tool()), *args], capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or "FATAL_ERROR" in out or "ERROR:" in out:
        tail = out.splitlines()[-1] if out else "no output"
        raise BuildError(f"blender_ext {args[0]} failed: {tail}")
    return out


def package_version() -> str:
    """The one version (``tracevis3d/_version.py``), read without importing the package."""
    m = re.search(r'(?m)^__version__\s*=\s*"([^"]+)"', (REPO / "tracevis3d" / "_version.py").read_text())
    if not m:
        raise BuildError("tracevis3d/_version.py: no __version__ = \"...\" line")
    return m.group(1)


def build(platforms: list[str], offline: bool, write_manifest: bool, kernels: bool = True) -> list[Path]:
    text = MANIFEST.read_text()
    version = package_version()
    if write_manifest:
        text = re.sub(r'(?m)^version\s*=\s*"[^"]*"', f'version = "{version}"', text, count=1)
    manifest = tomllib.loads(text)
    if manifest.get("version") != version:
        raise BuildError(f"{MANIFEST.name} says version {manifest.get('version')!r} but tracevis3d/_version.py "
                         f"says {version!r}; run tools/build_extension.py --write-manifest")
    declared = manifest.get("platforms", [])
    unknown = [p for p in platforms if p not in declared or p not in PLATFORM_TAGS]
    if unknown:
        raise BuildError(f"unknown platform(s) {unknown}; the manifest declares {declared}")

    if write_manifest:
        all_wheels = resolve_wheels(declared, offline)
        text = replace_wheels_block(text, all_wheels)
        write_whole(MANIFEST, text)
        print(f"[manifest] wrote {len(all_wheels)} wheels into {MANIFEST.name}", file=sys.stderr)

    listed = manifest_wheels(text)
    wanted = resolve_wheels(platforms, offline)
    missing = sorted(set(wanted) - set(listed))
    if missing:
        raise BuildError(f"{MANIFEST.name} does not list {missing[0]} (and {len(missing) - 1} more); "
                         "run tools/build_extension.py --write-manifest")
    stale = [w for w in listed if platform_of_wheel(w) in platforms and w not in wanted]
    if stale:
        raise BuildError(f"{MANIFEST.name} lists {stale[0]} which PINS do not produce; "
                         "run tools/build_extension.py --write-manifest")

    # Restrict a partial build to the requested platforms (the same zips --split-platforms
    # would make for them, without downloading the other platforms' wheels).
    if sorted(platforms) != sorted(declared):
        keep = [w for w in listed if platform_of_wheel(w) in platforms or platform_of_wheel(w) is None]
        text = replace_wheels_block(text, keep)
        text = re.sub(r"(?m)^platforms\s*=\s*\[.*?\]",
                      "platforms = [" + ", ".join(f'"{p}"' for p in platforms) + "]", text, count=1)
        listed = keep

    src = stage(text, listed)
    if kernels:
        print(f"[kernels] {prebuilt_kernels(src)}", file=sys.stderr)
    DIST.mkdir(exist_ok=True)
    version = manifest["version"]
    names = [f"{manifest['id']}-{version}-{p.replace('-', '_')}.zip" for p in platforms]
    # built and validated in a folder of their own beside dist/, then renamed into it: a failed or
    # interrupted build leaves the last good zips in dist/ as they were
    fresh = Path(tempfile.mkdtemp(prefix=".build-", dir=DIST))
    try:
        log = run_tool(["build", "--source-dir", str(src), "--output-dir", str(fresh), "--split-platforms"])
        print(log, file=sys.stderr)
        for name in names:
            built = fresh / name
            if not built.is_file():
                raise BuildError(f"expected {DIST / name} was not built")
            run_tool(["validate", str(built)])
            with open(built, "rb") as f:
                os.fsync(f.fileno())
            print(f"[validate] {name}: ok ({built.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
        for name in names:
            os.replace(fresh / name, DIST / name)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return [DIST / name for name in names]


def write_whole(path: Path, text: str) -> None:
    """``text`` as the whole of ``path`` (the manifest is a source file: a failed write must leave
    it as it was), through `tracevis3d/io/atomic.py`'s `write_whole`, loaded by its path (it needs
    only the standard library; this tool does not import the package)."""
    spec = importlib.util.spec_from_file_location("tv3d_build_atomic", REPO / "tracevis3d" / "io" / "atomic.py")
    atomic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(atomic)
    atomic.write_whole(path, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platform", action="append", choices=sorted(PLATFORM_TAGS),
                    help="build only this platform (repeatable; default: all in the manifest)")
    ap.add_argument("--offline", action="store_true", help="use only wheels already in build/wheels")
    ap.add_argument("--write-manifest", action="store_true",
                    help="rewrite the manifest's wheel list from PINS (downloads every platform)")
    ap.add_argument("--no-kernels", action="store_true",
                    help="leave out the pre-built numba kernel caches (first use then compiles)")
    args = ap.parse_args(argv)
    try:
        platforms = args.platform or tomllib.loads(MANIFEST.read_text()).get("platforms", [])
        outputs = build(sorted(set(platforms)), args.offline, args.write_manifest, not args.no_kernels)
    except (BuildError, OSError, tomllib.TOMLDecodeError) as e:
        print(f"build_extension: error: {e}", file=sys.stderr)
        return 1
    for o in outputs:
        print(o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
