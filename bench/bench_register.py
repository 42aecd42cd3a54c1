"""Extension import + register time, with and without numba compilation.

    .venv/bin/python bench/bench_register.py [--zip dist/tracevis3d-0.1.0-linux_x64.zip] [--repeat 3]

Every measurement runs in a fresh Python process with the bpy module (registration happens
once per process), against Blender user folders in a temporary directory where the built
extension zip is installed once (build it first: tools/build_extension.py --platform linux-x64).

Rows
- peer: enabling Blender's bundled Node Wrangler add-on (operators, menus, key maps; not
  enabled by default), measured in the same run;
- enable: import + register of TraceVis3D (properties, operators, panel, CLI command).  The
  core imports numpy only; numba is not even imported, so no compilation is included;
- enable + first build, warm cache: enable, then Import Trace (+ build) of a 2,000-call
  Chrome trace with numba's on-disk cache already filled (kernels are loaded, not compiled);
- enable + first build, cold cache: the same after deleting the extension's numba cache
  (every kernel the import and layout use is compiled);
- first build alone (cold minus enable) is what a user waits for once after installing;
  ``import numba`` is timed apart from it.
Medians over ``--repeat`` runs (the cold row: over max(1, repeat // 2) runs).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
PKG = "bl_ext.user_default.tracevis3d"


# ---------------------------------------------------------------- child process
def child(mode: str, arg: str) -> None:
    t0 = time.perf_counter()
    import bpy

    out = {"import_bpy": time.perf_counter() - t0}
    if mode == "install":
        r = bpy.ops.extensions.package_install_files(filepath=arg, repo="user_default", enable_on_install=False)
        out["ok"] = r == {"FINISHED"}
    elif mode == "peer":
        import addon_utils

        t0 = time.perf_counter()
        assert "node_wrangler" not in bpy.context.preferences.addons  # really enabled here
        addon_utils.enable("node_wrangler", default_set=True, handle_error=None)
        out["t"] = time.perf_counter() - t0
        out["ok"] = "node_wrangler" in bpy.context.preferences.addons
    else:
        t0 = time.perf_counter()
        bpy.ops.preferences.addon_enable(module=PKG)
        out["enable"] = time.perf_counter() - t0
        out["ok"] = hasattr(bpy.types.Scene, "tracevis3d")
        if mode == "build":
            t1 = time.perf_counter()
            import numba  # noqa: F401  (the first build imports it anyway; timed apart)

            out["import_numba"] = time.perf_counter() - t1
            s = bpy.context.scene.tracevis3d
            s.resolution_x, s.resolution_y = 640, 360
            t1 = time.perf_counter()
            r = bpy.ops.tracevis3d.import_trace(filepath=arg, build=True)
            out["first_build"] = time.perf_counter() - t1
            out["ok"] = out["ok"] and r == {"FINISHED"}
        out["t"] = time.perf_counter() - t0
    print("RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------- parent
def run_child(env, mode: str, arg: str = "") -> dict:
    r = subprocess.run([sys.executable, __file__, "--child", mode, arg], env=env,
                       capture_output=True, text=True, timeout=1800)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"bench child {mode!r} failed (exit {r.returncode}): {r.stderr.strip()[-800:]}")
    res = json.loads(lines[-1][7:])
    if not res.get("ok"):
        raise SystemExit(f"bench child {mode!r} did not succeed: {res} {r.stdout[-800:]}")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description="TraceVis3D extension register time")
    ap.add_argument("--zip", default=None, help="built extension (default: newest dist/*linux_x64.zip)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    zips = sorted((REPO / "dist").glob("tracevis3d-*-linux_x64.zip"), key=lambda p: p.stat().st_mtime)
    zip_path = pathlib.Path(args.zip) if args.zip else (zips[-1] if zips else None)
    if zip_path is None or not zip_path.is_file():
        print("no extension zip: run tools/build_extension.py --platform linux-x64 first", file=sys.stderr)
        return 1

    work = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-bench-register-"))
    env = dict(os.environ)
    for var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        (work / var.lower()).mkdir()
        env[f"BLENDER_USER_{var}"] = str(work / var.lower())
    env.pop("NUMBA_CACHE_DIR", None)
    numba_cache = work / "extensions" / ".user" / "user_default" / "tracevis3d" / "numba_cache"

    # a 2,000-call Chrome trace written by the core (outside Blender)
    trace = work / "bench_trace.json"
    gen = ("import sys, tracevis3d; from tracevis3d.io.chrome_writer import save_chrome; "
           "save_chrome(tracevis3d.synthetic(2000, threads=2, seed=7), sys.argv[1])")
    subprocess.run([sys.executable, "-c", gen, str(trace)], check=True, cwd=REPO,
                   env={**os.environ, "PYTHONPATH": str(REPO)})

    t0 = time.perf_counter()
    run_child(env, "install", str(zip_path))
    install_s = time.perf_counter() - t0

    n = max(1, args.repeat)
    peer = [run_child(env, "peer") for _ in range(n)]
    enable = [run_child(env, "enable") for _ in range(n)]
    cold = []
    for _ in range(max(1, n // 2)):
        shutil.rmtree(numba_cache, ignore_errors=True)
        cold.append(run_child(env, "build", str(trace)))
    warm = [run_child(env, "build", str(trace)) for _ in range(n)]

    med = lambda rows, key="t": statistics.median(r[key] for r in rows)  # noqa: E731
    peer_t = med(peer)
    rows = [
        ("import bpy (context, not part of the ratio)", med(peer + enable, "import_bpy")),
        ("peer: enable node_wrangler (bundled add-on)", peer_t),
        ("TraceVis3D enable = import + register (no numba)", med(enable)),
        ("TraceVis3D enable + first import/build, warm numba cache", med(warm)),
        ("TraceVis3D enable + first import/build, cold numba cache", med(cold)),
        ("  of which import numba + llvmlite", med(warm + cold, "import_numba")),
        ("  of which first import/build, warm (kernels loaded)", med(warm, "first_build")),
        ("  of which first import/build, cold (kernels compiled)", med(cold, "first_build")),
    ]
    print(f"TraceVis3D extension register time (bpy {importlib.metadata.version('bpy')}, "
          f"{os.cpu_count()} CPUs, medians of {n} fresh processes; cold: {len(cold)})")
    print(f"install of {zip_path.name} ({zip_path.stat().st_size / 1e6:.0f} MB, unzip + wheels, incl. "
          f"process start): {install_s:.2f} s")
    print(f"{'measurement':58s} {'seconds':>9s} {'x peer':>8s}")
    print("-" * 77)
    for name, t in rows:
        print(f"{name:58s} {t:9.3f} {t / peer_t:8.2f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
    else:
        sys.exit(main())
