"""Smoke test on bpy 5.2.x (Python 3.13, numpy 2): the core, the Blender layer, the extension.

Set-up and run (from the repository root; needs python3.13):

    python3.13 -m venv .venv313
    .venv313/bin/python -m pip install -r tests/smoke/requirements-bpy52.txt
    .venv/bin/python tools/build_extension.py --platform linux-x64     # for --zip
    .venv313/bin/python tests/smoke/smoke_bpy52.py [--zip dist/tracevis3d-0.1.0-linux_x64.zip]

Checks, each printed as one "ok"/"FAIL" line:
1. the core imports and its numba kernels run under numpy 2 (synthetic trace + a real
   Chrome trace written and re-read);
2. the Blender layer builds the icicle of a small trace and Workbench renders a 320x180 PNG
   whose pixels are not all the same;
3. with --zip: the extension installs through ``package_install_files`` (its cp313 wheels),
   enables, imports + builds + renders through its operators, reports a corrupt file as an
   error, and disables leaving nothing registered.
Exit status 0 only when every check passed.  Blender's user folders and numba's cache go to a
temporary folder (nothing of the user's is touched).
"""
import json
import os
import pathlib
import sys
import tempfile
import time
import traceback

REPO = pathlib.Path(__file__).resolve().parents[2]
TMP = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-smoke52-"))
for _var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
    (TMP / "user" / _var.lower()).mkdir(parents=True)
    os.environ[f"BLENDER_USER_{_var}"] = str(TMP / "user" / _var.lower())
os.environ.setdefault("NUMBA_CACHE_DIR", str(TMP / "numba"))
sys.path.insert(0, str(REPO))  # the core as a top-level package (test script, not product code)

FAILED = []


def check(name, fn):
    t0 = time.perf_counter()
    try:
        ok, detail = fn()
    except Exception as e:  # noqa: BLE001
        ok, detail = False, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    print(f"{'ok  ' if ok else 'FAIL'} {name} ({time.perf_counter() - t0:.1f} s): {detail}", flush=True)
    if not ok:
        FAILED.append(name)


def distinct_colours(png: pathlib.Path, bpy):
    import numpy as np

    img = bpy.data.images.load(str(png))
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return (w, h), len(np.unique((px.reshape(-1, 4)[:, :3] * 255).astype(np.uint8), axis=0))


def main(argv):
    zip_path = argv[argv.index("--zip") + 1] if "--zip" in argv else None
    import bpy
    import numpy

    print(f"bpy {bpy.app.version_string}, Python {sys.version.split()[0]}, numpy {numpy.__version__}")
    state = {}

    def core():
        import tracevis3d

        t = tracevis3d.synthetic(5000, threads=2, seed=3)
        t.check()
        path = TMP / "synthetic.json"
        from tracevis3d.io.chrome_writer import save_chrome

        save_chrome(t, path)
        back = tracevis3d.load(path)
        state["trace"], state["path"] = t, path
        return len(back) == len(t), f"{len(t)} calls, reloaded {len(back)} from Chrome JSON"

    check("core (numba kernels, numpy 2)", core)

    def blender_layer():
        from tracevis3d.blender.render import render_figure
        from tracevis3d.blender.scene import build_icicle
        from tracevis3d.layout.icicle import IcicleParams

        out = build_icicle(state["trace"], IcicleParams(resolution=(320, 180)))
        png = render_figure(str(TMP / "icicle52.png"), engine="workbench", resolution=(320, 180))
        size, n = distinct_colours(pathlib.Path(png), bpy)
        return size == (320, 180) and n >= 8, f"layers={list(out['objects']['layers'])} {png} {size} {n} colours"

    check("Blender layer: build + Workbench render", blender_layer)

    if zip_path:
        pkg = "bl_ext.user_default.tracevis3d"

        def install():
            r = bpy.ops.extensions.package_install_files(filepath=str(pathlib.Path(zip_path).resolve()),
                                                          repo="user_default", enable_on_install=True)
            site = (pathlib.Path(os.environ["BLENDER_USER_EXTENSIONS"]) / ".local" / "lib"
                    / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")
            have = sorted(p.name for p in site.iterdir()) if site.is_dir() else []
            ok = (r == {"FINISHED"} and pkg in bpy.context.preferences.addons
                  and {"numba", "llvmlite", "zmq", "orjson"} <= set(have)
                  and not any(h.startswith("numpy") for h in have))
            return ok, f"{r} wheels in {site.name}: {[h for h in have if not h.endswith('info')]}"

        check(f"extension installs (cp{sys.version_info[0]}{sys.version_info[1]} wheels) and enables", install)

        def operators():
            ops = bpy.ops.tracevis3d
            s = bpy.context.scene.tracevis3d
            r1 = ops.import_trace(filepath=str(state["path"]), build=True)
            bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y = 320, 180
            s.output = str(TMP / "operator52.png")
            r2 = ops.render_figure()
            size, n = distinct_colours(TMP / "operator52.png", bpy)
            bad = TMP / "corrupt.json"
            bad.write_text('{"traceEvents": [')
            try:
                ops.import_trace(filepath=str(bad), build=False)
                msg = None
            except RuntimeError as e:
                msg = str(e)
            ok = (r1 == r2 == {"FINISHED"} and n >= 8 and msg is not None and "corrupt.json" in msg
                  and "Traceback" not in msg)
            return ok, f"import+build {r1}, render {r2} {size} {n} colours; bad file: {msg!r}"

        check("extension operators", operators)

        def disable():
            bpy.ops.preferences.addon_disable(module=pkg)
            left = [n for n in dir(bpy.types) if n.startswith(("TRACEVIS3D_", "VIEW3D_PT_tracevis3d", "TraceVis3D"))]
            left += [f"Scene.{n}" for n in ("tracevis3d", "tracevis3d_icicle_params", "tracevis3d_compare_params",
                                              "tracevis3d_threads_params", "tracevis3d_cone_params")
                     if hasattr(bpy.types.Scene, n)]
            left += [f.__name__ for f in bpy.app.handlers.load_post if f.__module__.startswith(pkg)]
            return not left, f"left behind: {left}"

        check("extension disables cleanly", disable)

    print(json.dumps({"failed": FAILED}))
    import shutil  # the user folders (~170 MB: an installed extension) go; the figures stay to look at
    shutil.rmtree(TMP / "user", ignore_errors=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
