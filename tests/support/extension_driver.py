"""Driver run in a fresh Blender process by tests/support/extension_runs.py (not a test module):

    python tests/support/extension_driver.py EXTENSION.zip WORKDIR [--skip STEP,STEP]
    python tests/support/extension_driver.py WORKDIR --real REALDATA_DIR   (after the first run)
    python tests/support/extension_driver.py WORKDIR --reopen SPEC.json    (after the first run)
    python tests/support/extension_driver.py WORKDIR --compare SPEC.json   (after the first run)
    python tests/support/extension_driver.py WORKDIR --compare-reopen SPEC.json

Installs the zip through ``bpy.ops.extensions.package_install_files`` into the (isolated)
user repository, enables it, runs its operators on a small real trace file, saves and
reopens a .blend, runs the registered CLI command, then disables/re-enables/disables it and
checks nothing is left behind.  The last stdout line is JSON: {"steps": {name: {ok, detail}}};
WORKDIR/driver-progress.json holds the same after every step plus the step in progress, so a
step that crashes Blender is known; the caller reruns with that step in --skip.
Every step runs even if an earlier one failed (unless it cannot), so one run reports all.
"""
import contextlib
import ctypes
import json
import os
import pathlib
import sys
import tempfile
import traceback

PKG = "bl_ext.user_default.tracevis3d"
OPERATORS = ("import_trace", "build", "compare", "cancel_job", "frame", "render_figure", "show_call",
             "compare_align", "compare_brush", "compare_color_mode", "threads", "threads_focus_picked",
             "threads_who_released", "search", "next_hit", "bookmark_add", "bookmark_go", "bookmark_remove",
             "cone_tree", "cone_expand", "live_connect",
             "live_disconnect", "extravis", "extravis_highlight", "animate", "clear_animation", "render_animation",
             "build_view", "zoom_to", "live_memory_connect", "live_memory_disconnect")
STEPS: dict = {}
SKIP: set = set()  # steps to skip (they crashed the process in an earlier run)
PROGRESS_FILE = None  # results so far, rewritten before and after every step


def _save_progress(current=None):
    if PROGRESS_FILE is not None:
        tmp = PROGRESS_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps({"steps": STEPS, "current": current}))
        os.replace(tmp, PROGRESS_FILE)


def step(name):
    """Record the outcome of ``fn() -> (ok, detail)``; exceptions are failures with the traceback."""

    def deco(fn):
        if name in SKIP:
            return fn
        _save_progress(current=name)
        try:
            out = fn()
            if out is None:
                out = (True, "")
            if out == "skip" or (isinstance(out, tuple) and out[0] == "skip"):
                STEPS[name] = {"ok": False, "skip": True, "detail": out[1] if isinstance(out, tuple) else ""}
            else:
                ok, detail = out
                STEPS[name] = {"ok": bool(ok), "detail": str(detail)[:4000]}
        except Exception as e:  # noqa: BLE001
            STEPS[name] = {"ok": False, "detail": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}"}
        _save_progress()
        return fn

    return deco


@contextlib.contextmanager
def captured_fds():
    """Capture what C code prints on fd 1 and 2 (Blender's own warnings)."""
    libc = ctypes.CDLL(None)
    out = {"text": ""}
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        sys.stdout.flush()
        sys.stderr.flush()
        libc.fflush(None)
        saved = os.dup(1), os.dup(2)
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            out["text"] = tmp.read().decode("utf-8", "replace")


def op_error(call):
    """Run an operator that must fail with a report: (message or None if it did not raise)."""
    try:
        call()
    except RuntimeError as e:
        return str(e)
    return None


def write_traces(work: pathlib.Path):
    """A small valid Chrome trace (2 threads, args on one call) and a corrupt one."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}]
    ev.append({"ph": "X", "name": "main (app.py:1)", "ts": 0, "dur": 1000, "pid": 1, "tid": 1})
    ev.append({"ph": "X", "name": "load_config (app.py:10)", "ts": 10, "dur": 300, "pid": 1, "tid": 1,
               "args": {"path": "config.toml"}})
    ev.append({"ph": "X", "name": "parse (parser.py:5)", "ts": 20, "dur": 200, "pid": 1, "tid": 1})
    ev.append({"ph": "X", "name": "compute (app.py:30)", "ts": 400, "dur": 550, "pid": 1, "tid": 1})
    ev.append({"ph": "X", "name": "kernel (math.py:7)", "ts": 450, "dur": 400, "pid": 1, "tid": 1})
    ev.append({"ph": "X", "name": "worker_loop (pool.py:3)", "ts": 100, "dur": 800, "pid": 1, "tid": 2})
    ev.append({"ph": "X", "name": "kernel (math.py:7)", "ts": 200, "dur": 500, "pid": 1, "tid": 2})
    tiny = work / "tiny_trace.json"  # no sub-pixel calls at all: the cluster layer is empty
    tiny.write_text(json.dumps({"traceEvents": ev}))
    # 40 sub-pixel calls (0.05 µs; a pixel is ~0.5 µs at 1920 px), merged into cluster boxes
    ev += [{"ph": "X", "name": "tick (math.py:20)", "ts": 210 + 10 * k, "dur": 0.05, "pid": 1, "tid": 2}
           for k in range(40)]
    good = work / "small_trace.json"
    good.write_text(json.dumps({"traceEvents": ev}))
    bad = work / "corrupt.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": ')
    return good, bad, tiny


def leftovers(bpy, ext_module_handlers_prefix=PKG):
    """Everything of ours still registered (empty list when clean)."""
    found = []
    for prop in ("tracevis3d", "tracevis3d_icicle_params", "tracevis3d_compare_params", "tracevis3d_threads_params",
                  "tracevis3d_cone_params"):
        if hasattr(bpy.types.Scene, prop):
            found.append(f"Scene.{prop}")
    for name in dir(bpy.types):
        if name.startswith(("TRACEVIS3D_", "VIEW3D_PT_tracevis3d", "TraceVis3D")):
            found.append(f"bpy.types.{name}")
    for op in OPERATORS:
        try:
            getattr(bpy.ops.tracevis3d, op).get_rna_type()
            found.append(f"operator tracevis3d.{op}")
        except (KeyError, AttributeError):
            pass
    for hname in dir(bpy.app.handlers):
        lst = getattr(bpy.app.handlers, hname)
        if isinstance(lst, list):
            for fn in lst:
                if getattr(fn, "__module__", "").startswith(ext_module_handlers_prefix):
                    found.append(f"handler {hname}: {fn.__name__}")
    kc = bpy.context.window_manager.keyconfigs.addon
    if kc is not None:
        for km in kc.keymaps:
            for kmi in km.keymap_items:
                if kmi.idname.startswith("tracevis3d."):
                    found.append(f"keymap {km.name}: {kmi.idname}")
    for menu in ("TOPBAR_MT_file_import",):
        for fn in getattr(bpy.types, menu)._dyn_ui_initialize():
            if getattr(fn, "__module__", "").startswith(PKG):
                found.append(f"menu {menu}: {fn.__name__}")
    if PKG in bpy.context.preferences.addons:
        found.append("still in preferences.addons")
    if "tracevis3d" in os.environ.get("NUMBA_CACHE_DIR", ""):
        found.append(f"NUMBA_CACHE_DIR={os.environ['NUMBA_CACHE_DIR']}")
    return found


def cli_command_taken(bpy) -> bool:
    """Is a 'tracevis3d' CLI command registered?  (Blender warns about a duplicate.)"""
    with captured_fds() as cap:
        probe = bpy.utils.register_cli_command("tracevis3d", lambda argv: 0)
    bpy.utils.unregister_cli_command(probe)
    return "duplicate" in cap["text"]


def main(zip_path: str, work: str) -> None:
    work = pathlib.Path(work)
    good, bad, tiny = write_traces(work)
    import bpy

    ext_dir = pathlib.Path(os.environ["BLENDER_USER_EXTENSIONS"])

    @step("install")
    def _():
        r = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                      enable_on_install=True)
        return r == {"FINISHED"}, r

    @step("enabled")
    def _():
        return (PKG in bpy.context.preferences.addons and PKG in sys.modules,
                sorted(bpy.context.preferences.addons.keys()))

    @step("wheels_installed")
    def _():
        site = ext_dir / ".local" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
        have = sorted(p.name for p in site.iterdir()) if site.is_dir() else []
        need = {"numba", "llvmlite", "zmq", "orjson"}
        ok = need <= set(have) and not any(h.lower().startswith("numpy") for h in have)
        return ok, f"{site}: {have}"

    @step("numba_cache_dir")
    def _():
        d = os.environ.get("NUMBA_CACHE_DIR", "")
        expect = bpy.utils.extension_path_user(PKG, path="numba_cache")
        from numba.core import config

        addon_dir = pathlib.Path(sys.modules[PKG].__file__).parent
        ok = (d == expect and os.path.isdir(d) and pathlib.Path(d).is_relative_to(ext_dir)
              and not pathlib.Path(d).is_relative_to(addon_dir) and config.CACHE_DIR == d)
        import numba

        origin = "the extension's wheels" if pathlib.Path(numba.__file__).is_relative_to(ext_dir) else "the Python environment"
        return ok, (f"NUMBA_CACHE_DIR={d!r} expected {expect!r}; numba config {config.CACHE_DIR!r}; "
                    f"numba {numba.__version__} from {origin} ({numba.__file__})")

    @step("registered_things")
    def _():
        s = bpy.context.scene.tracevis3d
        ops = [o for o in OPERATORS
               if getattr(bpy.ops.tracevis3d, o).poll() is not None]
        panels = [n for n in dir(bpy.types) if n.startswith("VIEW3D_PT_tracevis3d")]
        declared = len(sys.modules[f"{PKG}.ui.panels"].CLASSES)  # hand-made + one per registry view without one
        handler = any(getattr(f, "__module__", "").startswith(PKG) for f in bpy.app.handlers.load_post)
        return (s.trace_path == "" and len(ops) == len(OPERATORS) and len(panels) == declared >= 10 and handler
                and all(hasattr(bpy.context.scene, f"tracevis3d_{v}_params") for v in ("icicle", "compare", "threads", "cone")),
                f"ops={ops} panels={panels} (declared {declared}) load_post handler={handler}")

    @step("keymap")
    def _():
        kc = bpy.context.window_manager.keyconfigs.addon
        items = [(km.name, kmi.idname, kmi.type, bool(kmi.shift), bool(kmi.ctrl), bool(kmi.alt))
                 for km in kc.keymaps for kmi in km.keymap_items if kmi.idname.startswith("tracevis3d.")]
        # the chord must be free in Blender's default key map where the viewport listens
        # (headless, keyconfigs.default is not filled: read Blender's own key map data)
        keyconfig_dir = os.path.join(bpy.utils.resource_path("LOCAL"), "scripts", "presets", "keyconfig")
        sys.path.insert(0, keyconfig_dir)
        try:
            from keymap_data import blender_default as bd
        finally:
            sys.path.remove(keyconfig_dir)
        viewport_keymaps = {"Window", "Screen", "Frames", "3D View Generic", "3D View", "Object Mode",
                            "Object Non-modal", "User Interface"}
        clashes, n_items = [], 0
        for km_name, _params, data in bd.generate_keymaps(bd.Params()):
            for idname, ev, _props in data.get("items", []):
                n_items += 1
                if km_name in viewport_keymaps and (ev.get("type") == "D" or ev.get("any")) and \
                        ev.get("shift", False) and ev.get("alt", False) and not ev.get("ctrl", False):
                    clashes.append(f"{km_name}: {idname}")
        assert n_items > 1000, n_items  # the data really was read
        ok = items == [("3D View", "tracevis3d.show_call", "D", True, False, True)] and not clashes
        return ok, f"{items} clashes in the default key map: {clashes}"

    @step("file_import_menu")
    def _():
        fns = [fn.__name__ for fn in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()
               if getattr(fn, "__module__", "").startswith(PKG)]
        return fns == ["menu_file_import"], fns

    @step("panel_refers_to_real_properties_and_operators")
    def _():
        """Panels only draw in the UI (never headless): check statically that every
        ``prop(s, "name")`` is a property of one of the scene's groups and every
        ``operator("id")`` is registered, so a typo cannot hide until a user opens the sidebar;
        then every panel drawn with a recording layout: each field it shows (the views' fields
        come from their schemas) is a property of the group it is drawn from."""
        import ast

        src = (pathlib.Path(sys.modules[PKG].__file__).parent / "ui" / "panels.py").read_text()
        props = set()
        for g in ("tracevis3d", "tracevis3d_icicle_params", "tracevis3d_compare_params", "tracevis3d_threads_params",
                  "tracevis3d_cone_params", "tracevis3d_live_params", "tracevis3d_extravis_params"):
            props |= set(getattr(bpy.context.scene, g).bl_rna.properties.keys())
        used_props, used_ops, bad = set(), set(), []
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                args = [a.value for a in node.args if isinstance(a, ast.Constant)]
                if node.func.attr == "prop" and args:
                    used_props.add(args[0])
                elif node.func.attr == "operator" and args:
                    used_ops.add(args[0])
        bad += [p for p in used_props if p not in props]
        for op in used_ops:
            mod, name = op.split(".")
            try:
                getattr(getattr(bpy.ops, mod), name).get_rna_type()
            except (KeyError, AttributeError):
                bad.append(op)
        log = panel_calls(bpy)
        bad += [n for kind, d, n in log if kind == "prop" and n not in d.bl_rna.properties.keys()]
        drawn = {(d.bl_rna.identifier, n) for kind, d, n in log if kind == "prop"}
        # the props written by name are the session's (endpoint, search, ...): the views' come from their schemas
        # the panels' operators: every TraceVis3D one of OPERATORS but the viewport's and menu's own
        # (show_call: a key, compare_color_mode: the comparison's
        # legend), and Blender's animation_play
        expect_ops = {f"tracevis3d.{o}" for o in OPERATORS} - {
            "tracevis3d.show_call", "tracevis3d.compare_color_mode"} | {"screen.animation_play"}
        ok = not bad and len(used_props) >= 7 and used_ops == expect_ops and len(drawn) >= 120
        return ok, (f"unknown={bad} props used={len(used_props)} drawn={len(drawn)} operators={sorted(used_ops)} "
                    f"missing={sorted(expect_ops - used_ops)} unexpected={sorted(used_ops - expect_ops)}")

    @step("params_match_icicle_defaults")
    def _():
        """The panel's defaults are IcicleParams' defaults, and the two convert both ways."""
        props_mod = sys.modules[f"{PKG}.ui.properties"]
        icicle = __import__(f"{PKG}.tracevis3d.params.icicle", fromlist=["IcicleParams"])
        scene = bpy.context.scene
        g = scene.tracevis3d_icicle_params
        d = props_mod.params_of(scene, "icicle").to_dict()
        default = icicle.IcicleParams().to_dict()
        diff = {k: (v, default.get(k)) for k, v in d.items() if default.get(k) != v}
        # round trip through IcicleParams
        customs = [
            dict(d, extrude_measure="calls", color_by="module", threads=["MainThread", 1],
                 time_window=[5.0, 250.0], lane_gap=0.5, max_depth=3, resolution=[800, 600], show_labels=False),
            # the fields of issue 8: colour auto/kind, fold, hide, thread order, label size, title
            dict(d, color_by="kind", fold="3:40,50:", hide=["^_call", r"importlib\."],
                 hide_modules=["runpy", "importlib._bootstrap"], thread_order=["worker", 0], label_px=22.0,
                 label_min_px=6.0, show_title=True, title="Slide 3"),
            dict(d, color_by="auto", fold="none", thread_order="busy", show_title=False, title=None),
        ]
        mismatch = {}
        for custom in customs:
            p = icicle.IcicleParams.from_dict(custom)
            props_mod.put_params(scene, "icicle", p)
            back = props_mod.params_of(scene, "icicle").to_dict()
            mismatch.update({k: (back[k], custom[k]) for k in custom if back[k] != custom[k]})
        props_mod.put_params(scene, "icicle", icicle.IcicleParams())  # restore defaults
        # an empty time window is the user's error, named
        g.use_time_window, g.time_window_start, g.time_window_end = True, 10.0, 10.0
        try:
            props_mod.params_of(scene, "icicle")
            window_error = None
        except ValueError as e:
            window_error = str(e)
        g.use_time_window = False
        ok = not diff and not mismatch and window_error is not None and "Time window" in window_error
        return ok, f"defaults differ: {diff}; round-trip mismatch: {mismatch}; window error: {window_error!r}"

    @step("cli_command_registered")
    def _():
        return cli_command_taken(bpy), "register_cli_command('tracevis3d') did not warn about a duplicate"

    ops = bpy.ops.tracevis3d
    settings = bpy.context.scene.tracevis3d

    @step("op_bad_file_reports")
    def _():
        msg = op_error(lambda: ops.import_trace(filepath=str(bad), build=False))
        ok = (msg is not None and "corrupt.json" in msg and "TraceVis3D" in msg
              and "Traceback" not in msg and len(msg.strip().splitlines()) == 1 and settings.trace_path == "")
        return ok, f"message={msg!r} trace_path={settings.trace_path!r}"

    @step("op_missing_file_reports")
    def _():
        msg = op_error(lambda: ops.import_trace(filepath=str(work / "nope.json"), build=False))
        return msg is not None and "not found" in msg and "Traceback" not in msg, repr(msg)

    @step("op_build_without_trace_reports")
    def _():
        msg = op_error(lambda: ops.build())
        return msg is not None and "no trace file" in msg and "Traceback" not in msg, repr(msg)

    @step("op_first_import_on_a_cold_cache")
    def _():
        """The first import through the operator after install: the extension's numba cache is
        empty; the zip's pre-built kernels are installed into it and nothing is compiled."""
        import time

        cache = os.environ["NUMBA_CACHE_DIR"]
        before = [f for _r, _d, fs in os.walk(cache) for f in fs if f.endswith(".nbi")]
        t = time.perf_counter()
        r = ops.import_trace(filepath=str(tiny), build=True)
        dt = time.perf_counter() - t
        rep = sys.modules[f"{PKG}.tracevis3d.kernel_cache"]._installed.get(cache)
        from numba.core.registry import CPUDispatcher

        compiled = {}
        for name, mod in list(sys.modules.items()):
            for v in vars(mod).values() if name.startswith(PKG) and mod is not None else ():
                if isinstance(v, CPUDispatcher) and sum(v._cache_misses.values()):
                    compiled[f"{name}.{v.py_func.__name__}"] = sum(v._cache_misses.values())
        coll = bpy.data.collections.get("TraceVis3D")
        ok = (r == {"FINISHED"} and not before and rep is not None and rep["installed"] > 0
              and not compiled and coll is not None and len(coll.objects) > 0)
        return ok, (f"{r} in {dt:.2f} s; cache before: {len(before)} indexes; shipped kernels: {rep}; "
                    f"compiled on first use: {compiled}")

    @step("op_import")
    def _():
        r = ops.import_trace(filepath=str(good), build=False)
        return r == {"FINISHED"} and settings.trace_path == str(good), f"{r} {settings.trace_path!r}"

    def blender_layer(name):
        try:
            __import__(f"{PKG}.tracevis3d.blender.{name}")
            return True
        except ImportError as e:
            return ("skip", f"engineer A's tracevis3d/blender/{name}.py is not importable: {e}")

    @step("op_build")
    def _():
        if (s := blender_layer("scene")) is not True:
            return s
        with captured_fds() as cap:
            r = ops.build()
        print(cap["text"], end="")
        coll = bpy.data.collections.get("TraceVis3D")
        objs = list(coll.all_objects) if coll else []
        stored = bpy.context.scene.get("tracevis3d_build")
        reported = [ln for ln in cap["text"].splitlines() if ln.startswith("Info: Built")]
        n_reported = int(reported[0].split("(")[-1].split()[0]) if reported else -1
        return (r == {"FINISHED"} and len(objs) > 0 and stored is not None and n_reported == len(objs),
                f"{r} objects={[o.name for o in objs][:10]} report={reported} tracevis3d_build={str(stored)[:200]}")

    @step("op_build_removed_startup_objects")
    def _():
        """The driver starts from Blender's startup file: its untouched Cube, Light and Camera
        are gone after the first Build; the figure's own camera is the scene camera."""
        left = [n for n in ("Cube", "Light", "Camera") if n in bpy.context.scene.objects]
        cam = bpy.context.scene.camera
        return not left and cam is not None and cam.name.startswith("TV3D"), f"left={left} camera={cam}"

    @step("op_build_keeps_user_objects")
    def _():
        """A user's object, and a cube the user adds (no startup material), survive a rebuild."""
        mine = bpy.data.objects.new("MyThing", bpy.data.meshes.new("MyThing"))
        bpy.context.scene.collection.objects.link(mine)
        bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 0.0))
        r = ops.build()
        names = {ob.name for ob in bpy.context.scene.objects}
        ok = r == {"FINISHED"} and {"MyThing", "Cube"} <= names
        for name in ("MyThing", "Cube"):
            if name in bpy.data.objects:
                bpy.data.objects.remove(bpy.data.objects[name])
        return ok, f"{r} objects after the rebuild: {sorted(n for n in names if not n.startswith('TV3D'))}"

    @step("op_frame")
    def _():
        if (s := blender_layer("scene")) is not True:
            return s
        r = ops.frame()
        return r == {"FINISHED"} and bpy.context.scene.camera is not None, f"{r} camera={bpy.context.scene.camera}"

    @step("op_show_call")
    def _():
        if (s := blender_layer("pick")) is not True:
            return s
        r = ops.show_call(call_index=1)  # load_config, the call with args
        text = settings.picked_text
        return (r == {"FINISHED"} and settings.picked_call == 1 and "load_config" in text
                and "config.toml" in text), f"{r} {text!r}"

    @step("op_show_call_errors")
    def _():
        if (s := blender_layer("pick")) is not True:
            return s
        no_mouse = op_error(lambda: ops.show_call())
        out_of_range = op_error(lambda: ops.show_call(call_index=10 ** 6))
        ok = (no_mouse is not None and "no mouse position" in no_mouse
              and out_of_range is not None and "out of range" in out_of_range)
        return ok, f"{no_mouse!r} {out_of_range!r}"

    @step("pick_synthetic_ray")
    def _():
        """pick_call needs a 3D viewport (none headless); its ray part gets synthetic rays
        starting inside every box: each must map back to that box's call."""
        if (s := blender_layer("pick")) is not True:
            return s
        pick = sys.modules[f"{PKG}.tracevis3d.blender.pick"]
        import numpy as np

        coll = bpy.data.collections.get("TraceVis3D")
        if coll is None:
            return False, "no TraceVis3D collection (build failed?)"
        checked, wrong = 0, []
        for ob in coll.objects:
            if ob.type not in ("POINTCLOUD", "MESH") or "call_index" not in ob.data.attributes:
                continue
            n = len(ob.data.points)
            pos = np.empty(n * 3, np.float32)
            ob.data.attributes["position"].data.foreach_get("vector", pos)
            ci = np.empty(n, np.int32)
            ob.data.attributes["call_index"].data.foreach_get("value", ci)
            for p, c in zip(pos.reshape(n, 3), ci):
                if c < 0:
                    continue
                world = ob.matrix_world @ __import__("mathutils").Vector(p.tolist())
                got = pick.pick_ray(tuple(world), (0.0, 1.0, 0.0))
                checked += 1
                if got != c:
                    wrong.append((int(c), got))
        # the mouse-based entry point refuses cleanly without a viewport
        msg = op_error(lambda: ops.show_call(mouse_x=10, mouse_y=10))
        ok = checked >= 7 and not wrong and msg is not None and "3D viewport" in msg
        return ok, f"checked {checked} boxes, wrong={wrong[:5]}, no-viewport message={msg!r}"

    @step("op_render")
    def _():
        if (s := blender_layer("render")) is not True:
            return s
        out = work / "figure.png"
        bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y = 192, 108
        settings.engine = "workbench"
        settings.output = str(out)
        r = ops.render_figure()
        if r != {"FINISHED"} or not out.is_file():
            return False, f"{r} exists={out.is_file()}"
        img = bpy.data.images.load(str(out))
        w, h = img.size
        import numpy as np

        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
        bpy.data.images.remove(img)
        px = px.reshape(h, w, 4)[..., :3]
        distinct = len(np.unique((px * 255).astype(np.uint8).reshape(-1, 3), axis=0))
        return (w, h) == (192, 108) and distinct >= 4, f"size={w}x{h} distinct colours={distinct}"

    @step("op_render_relative_path_unsaved_blend")
    def _():
        """'//' with an unsaved .blend resolves to the home folder (HOME is the work dir here)."""
        if (s := blender_layer("render")) is not True:
            return s
        assert not bpy.data.filepath
        settings.output = "//figures/unsaved.png"
        expect = pathlib.Path(os.path.expanduser("~")) / "figures" / "unsaved.png"
        with captured_fds() as cap:
            r = ops.render_figure()
        print(cap["text"], end="")
        return r == {"FINISHED"} and expect.is_file() and str(expect) in cap["text"], \
            f"{r} expected {expect} exists={expect.is_file()}"

    @step("op_render_bad_output_reports")
    def _():
        if (s := blender_layer("render")) is not True:
            return s
        settings.output = str(work)  # a folder
        msg = op_error(lambda: ops.render_figure())
        return msg is not None and "folder" in msg and "Traceback" not in msg, repr(msg)

    @step("op_render_formats")
    def _():
        """The output's extension names the format; an unknown one is an error naming it."""
        if (s := blender_layer("render")) is not True:
            return s
        bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y = 96, 54
        magic = {"fig.jpg": b"\xff\xd8\xff", "fig.tif": b"II*\x00", "fig.exr": b"\x76\x2f\x31\x01",
                 "fig.png": b"\x89PNG"}
        got = {}
        for name, m in magic.items():
            settings.output = str(work / name)
            r = ops.render_figure()
            head = (work / name).read_bytes()[:4] if (work / name).is_file() else b""
            got[name] = (r == {"FINISHED"} and head.startswith(m), head)
        settings.output = str(work / "fig.bmp")
        msg = op_error(lambda: ops.render_figure())
        ok = all(v[0] for v in got.values()) and msg is not None and ".bmp" in msg and not (work / "fig.bmp").exists()
        return ok, f"{got} bmp message={msg!r}"

    @step("saved_blend_reopens")
    def _():
        icicle = bpy.context.scene.tracevis3d_icicle_params
        icicle.extrude_measure = "self"
        icicle.color_by = "depth"
        icicle.threads = "MainThread"
        blend = work / "session.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        session = sys.modules[f"{PKG}.tracevis3d.blender.session"]
        session.get_trace(str(good))
        assert session.cached_paths()
        bpy.ops.wm.open_mainfile(filepath=str(blend))
        s = bpy.context.scene.tracevis3d
        i = bpy.context.scene.tracevis3d_icicle_params
        ok = (s.trace_path == str(good) and i.extrude_measure == "self" and i.color_by == "depth"
              and i.threads == "MainThread" and session.cached_paths() == []
              and s.trace_path_rel == "//small_trace.json")
        return ok, (f"trace_path={s.trace_path!r} extrude={i.extrude_measure} colour={i.color_by} "
                    f"threads={i.threads!r} cache after load={session.cached_paths()} "
                    f"relative path recorded on save={s.trace_path_rel!r}")

    @step("load_post_tolerates_bad_records")
    def _():
        """A hand-edited or foreign build record never breaks opening a file: unreadable JSON
        is ignored; wrong parameter types leave those settings alone, the path comes back."""
        scene = bpy.context.scene
        scene.tracevis3d.trace_path = ""
        colour_before = scene.tracevis3d_icicle_params.color_by
        scene["tracevis3d_build"] = "not json {"
        blend = work / "bad_record.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        with captured_fds() as cap1:
            r1 = bpy.ops.wm.open_mainfile(filepath=str(blend))
        path1 = bpy.context.scene.tracevis3d.trace_path
        bpy.context.scene["tracevis3d_build"] = json.dumps({
            "trace_path": str(good), "params": {"color_by": "rainbow", "lane_gap": "wide", "resolution": "big",
                                                "extrude_measure": "calls", "hide": 5, "threads": 7}})
        bpy.ops.wm.save_as_mainfile(filepath=str(blend))
        with captured_fds() as cap2:
            r2 = bpy.ops.wm.open_mainfile(filepath=str(blend))
        s = bpy.context.scene.tracevis3d
        i = bpy.context.scene.tracevis3d_icicle_params
        text = cap1["text"] + cap2["text"]
        ok = (r1 == r2 == {"FINISHED"} and path1 == "" and s.trace_path == str(good)
              and i.extrude_measure == "calls" and i.color_by == colour_before and "Traceback" not in text)
        return ok, (f"{r1} {r2} unreadable record -> trace_path={path1!r}; bad types -> trace_path={s.trace_path!r} "
                    f"extrude={i.extrude_measure} colour={i.color_by}; output={text[-600:]!r}")

    @step("cli_via_extension")
    def _():
        try:
            __import__(f"{PKG}.tracevis3d.cli")
        except ImportError as e:
            return "skip", f"the tracevis3d.cli package is not importable: {e}"
        cli = sys.modules[PKG]._cli_command
        out = work / "cli.png"
        bpy.context.scene.tracevis3d.trace_path = ""
        with captured_fds() as cap_good:
            rc_good = cli(["render-icicle", str(good), "-o", str(out), "--resolution", "160x90",
                           "--color-by", "module", "--fold", "none", "--save", str(work / "cli.blend")])
        # registered extension: the CLI fills the scene properties as the panel would
        s = bpy.context.scene.tracevis3d
        i = bpy.context.scene.tracevis3d_icicle_params
        filled = (s.trace_path == str(good) and i.color_by == "module" and i.fold_mode == "none"
                  and (i.resolution_x, i.resolution_y) == (160, 90) and s.trace_path_rel == "//small_trace.json")
        stdout_lines = [ln for ln in cap_good["text"].splitlines() if not ln.startswith(("[", "Info: Built"))]
        quiet = stdout_lines == [str(out)] and "EGL" not in cap_good["text"] and "Saved" not in cap_good["text"]
        with captured_fds() as cap:
            rc_bad = cli(["render-icicle", str(bad), "-o", str(work / "bad.png")])
        err_lines = [ln for ln in cap["text"].splitlines() if ln.strip() and "error" in ln.lower()]
        ok = (rc_good == 0 and out.is_file() and rc_bad != 0 and len(err_lines) == 1
              and "Traceback" not in cap["text"] and filled and quiet)
        return ok, (f"good rc={rc_good} file={out.is_file()} properties filled={filled} "
                    f"(trace_path={s.trace_path!r} colour={i.color_by} rel={s.trace_path_rel!r}); "
                    f"output other than progress={stdout_lines}; "
                    f"bad rc={rc_bad} output={cap['text'][-800:]!r}")

    @step("op_import_and_build_tiny_trace")
    def _():
        """A 7-call trace: nothing is sub-pixel, so the cluster layer is empty."""
        if (s := blender_layer("scene")) is not True:
            return s
        def boxes_with_call():
            coll = bpy.data.collections.get("TraceVis3D")
            n = 0
            for ob in (coll.objects if coll else ()):
                if ob.type in ("POINTCLOUD", "MESH") and "call_index" in ob.data.attributes:
                    n += sum(a.value >= 0 for a in ob.data.attributes["call_index"].data)
            return n

        s = bpy.context.scene.tracevis3d_icicle_params
        s.threads = "MainThread"  # the scene property is honoured: 5 of the 7 calls
        r1 = ops.import_trace(filepath=str(tiny), build=True)
        n_main = boxes_with_call()
        s.threads = ""
        r2 = ops.build()
        n_all = boxes_with_call()
        return (r1 == r2 == {"FINISHED"} and n_main == 5 and n_all == 7,
                f"{r1} {r2} boxes with a call index: MainThread {n_main}, all threads {n_all}")


    @step("op_structure_search_bookmark_cone")
    def _():
        """The Structure section: search (history, hits, the camera flies), bookmark with a
        note, the cone tree and expanding a node; all stored in the scene."""
        scene = bpy.context.scene
        st = scene.tracevis3d
        st.search_pattern = "."
        cam0 = tuple(scene.camera.location) if scene.camera else None
        r1 = ops.search()
        lm = json.loads(scene.get("tracevis3d_landmarks", "{}"))
        r2 = ops.next_hit(step=1)
        st.bookmark_note = "look here"
        r3 = ops.bookmark_add()
        lm2 = json.loads(scene.get("tracevis3d_landmarks", "{}"))
        scene.tracevis3d_cone_params.max_nodes = 20
        r4 = ops.cone_tree()
        names = [o.name for o in bpy.data.collections["TraceVis3D"].all_objects]
        cone = json.loads(scene.get("tracevis3d_cone", "{}"))
        scene.tracevis3d.picked_call = int(lm["hits"][0]) if lm.get("hits") else -1
        r5 = ops.cone_expand()
        r6 = ops.bookmark_go(index=0)
        r7 = ops.bookmark_remove(index=0)
        expanded = scene.tracevis3d_cone_params.expand
        ok = (r1 == r2 == r3 == r4 == r5 == r6 == r7 == {"FINISHED"} and lm.get("history") == ["."]
              and lm2.get("bookmarks", [{}])[0].get("note") == "look here" and "TV3D_cone_nodes" in names
              and cone.get("params", {}).get("max_nodes") == 20 and expanded != ""
              and scene.tracevis3d_icicle_params.expand == expanded
              and cam0 is not None and tuple(scene.camera.location) != cam0)
        scene.tracevis3d.picked_call = -1
        # the expanded calls are indices into this trace: reloading it keeps them, loading another forgets them
        r8 = ops.import_trace(filepath=st.trace_path, build=False)
        kept = scene.tracevis3d_cone_params.expand
        r9 = ops.import_trace(filepath=str(good), build=False)
        forgot = (scene.tracevis3d_cone_params.expand, scene.tracevis3d_icicle_params.expand)
        r10 = ops.import_trace(filepath=str(tiny), build=False)  # the trace of the steps after
        ok = ok and r8 == r9 == r10 == {"FINISHED"} and kept == expanded and forgot == ("", "")
        return ok, (f"{r1} {r2} {r3} {r4} {r5} {r6} {r7} {r8} {r9} {r10} expand {expanded!r} -> {kept!r} -> "
                    f"{forgot} landmarks={str(lm2)[:300]} objects={names[:8]} cone={cone}")

    @step("op_live")
    def _():
        """Connect (binds a loopback port), a replay of the good trace arrives through real
        ZeroMQ, the timer's tick (called here: timers never fire headless) grows the scene
        and the status line, Disconnect stops and keeps the scene."""
        import importlib
        import threading
        import time

        s = bpy.context.scene.tracevis3d
        s.live_endpoint = "tcp://127.0.0.1:*"
        r = ops.live_connect()
        live_ops = sys.modules[f"{PKG}.ui.operators.live_ops"]
        sess = live_ops.live_state().get("session")
        if sess is None:
            return False, f"{r}: no session"
        trace = importlib.import_module(f"{PKG}.tracevis3d").load(str(good))
        replay = importlib.import_module(f"{PKG}.tracevis3d.live.replay").replay
        th = threading.Thread(target=replay, args=(trace, sess.endpoint), kwargs=dict(wait_subscriber=10.0))
        th.start()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and not any(x.ended for x in sess.sessions.values()):
            live_ops.live_tick(bpy.context.scene)
            time.sleep(0.01)
        th.join(30)
        live_ops.live_tick(bpy.context.scene)
        n, status = sess.n_calls, s.live_status
        objs = sorted(o.name for o in bpy.data.collections["TraceVis3D Live"].objects)
        r2 = ops.live_disconnect()
        gone = live_ops.live_state().get("session") is None and not bpy.app.timers.is_registered(live_ops.live_tick)
        ok = (r == r2 == {"FINISHED"} and n == len(trace) and f"{n:,} calls" in status and gone
              and "TV3D_live_calls_0" in objs and "TV3D_live_calls_0" in bpy.data.objects)
        return ok, f"{r} {r2} {n}/{len(trace)} calls, status {status!r}, objects {objs}, gone={gone}"

    @step("nothing_written_into_the_addon_folder")
    def _():
        import zipfile

        addon_dir = pathlib.Path(sys.modules[PKG].__file__).parent
        shipped = set(zipfile.ZipFile(zip_path).namelist())  # the pre-built kernels come in the zip
        new = [p for p in addon_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts
               and p.relative_to(addon_dir).as_posix() not in shipped]
        numba_files = [str(p) for p in new if p.suffix in (".nbi", ".nbc")]
        cache = pathlib.Path(os.environ["NUMBA_CACHE_DIR"])
        cached = [p.name for p in cache.rglob("*.nbi")]
        other = [str(p.relative_to(addon_dir)) for p in new if p.suffix not in (".py", ".toml", ".whl")]
        return (not numba_files and len(cached) > 0 and not other,
                f"numba files in add-on folder: {numba_files[:5]}; kernels in the user cache: {len(cached)}; "
                f"other new files: {other[:5]}")

    # ---------------------------------------------------------------- unregister, twice
    def disable():
        bpy.ops.preferences.addon_disable(module=PKG)

    @step("disable_1_clean")
    def _():
        disable()
        left = leftovers(bpy)
        taken = cli_command_taken(bpy)
        session = sys.modules[f"{PKG}.tracevis3d.blender.session"]
        return not left and not taken and session.cached_paths() == [], f"left={left} cli={taken}"

    @step("unregister_again_is_harmless")
    def _():
        sys.modules[PKG].unregister()
        left = leftovers(bpy)
        return not left, f"left={left}"

    @step("enable_2")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        ok = hasattr(bpy.types.Scene, "tracevis3d") and cli_command_taken(bpy)
        msg = op_error(lambda: bpy.ops.tracevis3d.import_trace(filepath=str(bad), build=False))
        return ok and msg is not None and "corrupt.json" in msg, f"registered={ok} op message={msg!r}"

    @step("disable_2_clean")
    def _():
        disable()
        left = leftovers(bpy)
        taken = cli_command_taken(bpy)
        return not left and not taken, f"left={left} cli={taken}"


def main_real(work: str, realdata: str) -> None:
    """Second run, same user folders (extension installed, numba cache warm): the operators on
    real trace files from ../shared/realdata (JSON, .json.gz, and native .npz written here)."""
    work, real = pathlib.Path(work), pathlib.Path(realdata)
    import bpy
    import numpy as np

    @step("real_enable")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        return hasattr(bpy.types.Scene, "tracevis3d"), "enabled"

    ops = bpy.ops.tracevis3d
    s = bpy.context.scene.tracevis3d
    core = sys.modules.get(f"{PKG}.tracevis3d")

    def n_boxes():
        coll = bpy.data.collections.get("TraceVis3D")
        n = 0
        for ob in (coll.objects if coll else ()):
            if ob.type in ("POINTCLOUD", "MESH") and "call_index" in ob.data.attributes:
                n += len(ob.data.attributes["call_index"].data)
        return n

    def render(name, engine, w, h):
        out = work / name
        s.engine, s.output = engine, str(out)
        bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y = w, h
        r = ops.render_figure()
        img = bpy.data.images.load(str(out))
        px = np.empty(img.size[0] * img.size[1] * 4, np.float32)
        img.pixels.foreach_get(px)
        size = tuple(img.size)
        bpy.data.images.remove(img)
        distinct = len(np.unique((px.reshape(-1, 4)[:, :3] * 255).astype(np.uint8), axis=0))
        return r, size, distinct

    multithread = real / "viztracer-examples" / "multithread.json"

    @step("real_import_build_json")
    def _():
        r = ops.import_trace(filepath=str(multithread), build=True)
        t = sys.modules[f"{PKG}.tracevis3d.blender.session"].get_trace(str(multithread))
        return r == {"FINISHED"} and t.n_threads == 5 and n_boxes() > 0, \
            f"{r} {len(t)} calls, {t.n_threads} threads, {n_boxes()} boxes"

    @step("real_render_workbench")
    def _():
        r, size, distinct = render("real_workbench.png", "workbench", 320, 180)
        return r == {"FINISHED"} and size == (320, 180) and distinct >= 8, f"{r} {size} {distinct} colours"

    @step("real_render_eevee")
    def _():
        r, size, distinct = render("real_eevee.png", "eevee", 160, 90)
        return r == {"FINISHED"} and size == (160, 90) and distinct >= 8, f"{r} {size} {distinct} colours"

    @step("real_show_call")
    def _():
        t = sys.modules[f"{PKG}.tracevis3d.blender.session"].get_trace(str(multithread))
        i = int(np.argmax(t.end - t.start))
        r = ops.show_call(call_index=i)
        name = t.function_names[t.func[i]]
        return r == {"FINISHED"} and name in s.picked_text, f"{r} call {i} {name!r}: {s.picked_text[:200]!r}"

    @step("real_native_npz")
    def _():
        t = sys.modules[f"{PKG}.tracevis3d.blender.session"].get_trace(str(multithread))
        npz = work / "multithread.tv3d.npz"
        core.save(t, str(npz))
        r = ops.import_trace(filepath=str(npz), build=True)
        back = sys.modules[f"{PKG}.tracevis3d.blender.session"].get_trace(str(npz))
        return r == {"FINISHED"} and len(back) == len(t) and s.trace_path == str(npz), \
            f"{r} {len(back)} calls (json had {len(t)})"

    @step("real_import_build_gz")
    def _():
        gz = real / "hta-trace-diff" / "control.json.gz"
        bpy.context.scene.tracevis3d_icicle_params.resolution_x = 640
        bpy.context.scene.tracevis3d_icicle_params.resolution_y = 360
        r = ops.import_trace(filepath=str(gz), build=True)
        t = sys.modules[f"{PKG}.tracevis3d.blender.session"].get_trace(str(gz))
        return r == {"FINISHED"} and len(t) > 1000 and n_boxes() > 0, f"{r} {len(t)} calls, {n_boxes()} boxes"

    @step("real_disable")
    def _():
        bpy.ops.preferences.addon_disable(module=PKG)
        left = leftovers(bpy)
        return not left, f"left={left}"


def main_reopen(work: str, spec_file: str) -> None:
    """A FRESH process (same user folders, extension installed): enable the extension, open a
    .blend saved by another process (the CLI's ``--save`` with the PyPI bpy module, or the
    panel) whose folder was moved since, and check that the trace path and the parameters are
    back and that Build and Show call work.  ``spec_file`` (JSON): {"prefix", "blend",
    "trace", "params": {property: value}, "then_save_panel": {"trace", "blend"} or null}."""
    spec = json.loads(pathlib.Path(spec_file).read_text())
    pre = spec["prefix"]
    import bpy
    import numpy as np

    @step(f"{pre}_enable")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        return hasattr(bpy.types.Scene, "tracevis3d"), "enabled"

    @step(f"{pre}_open")
    def _():
        r = bpy.ops.wm.open_mainfile(filepath=spec["blend"])
        return r == {"FINISHED"} and bpy.data.filepath == spec["blend"], f"{r} {bpy.data.filepath}"

    ops = bpy.ops.tracevis3d

    @step(f"{pre}_trace_path")
    def _():
        s = bpy.context.scene.tracevis3d
        return s.trace_path == spec["trace"], f"trace_path={s.trace_path!r} expected {spec['trace']!r}"

    @step(f"{pre}_params")
    def _():
        got = {k: scene_prop(bpy, k) for k in spec["params"]}
        return got == spec["params"], f"got {got} expected {spec['params']}"

    @step(f"{pre}_no_startup_objects")
    def _():
        left = [n for n in ("Cube", "Light", "Camera") if n in bpy.context.scene.objects]
        return not left, f"left={left}"

    @step(f"{pre}_build")
    def _():
        r = ops.build()
        coll = bpy.data.collections.get("TraceVis3D")
        n = sum(1 for ob in (coll.objects if coll else ()) if "call_index" in getattr(ob.data, "attributes", ()))
        return r == {"FINISHED"} and n > 0, f"{r} layers with call indices: {n}"

    @step(f"{pre}_show_call")
    def _():
        s = bpy.context.scene.tracevis3d
        r = ops.show_call(call_index=1)  # load_config, the call with args
        ok = r == {"FINISHED"} and "load_config" in s.picked_text and "config.toml" in s.picked_text
        return ok, f"{r} {s.picked_text!r}"

    @step(f"{pre}_pick")
    def _():
        """A ray into the box of call 1 (as the mouse would cast) picks call 1."""
        pick = sys.modules[f"{PKG}.tracevis3d.blender.pick"]
        coll = bpy.data.collections["TraceVis3D"]
        for ob in coll.objects:
            if ob.type in ("POINTCLOUD", "MESH") and "call_index" in ob.data.attributes:
                n = len(ob.data.attributes["call_index"].data)
                ci = np.empty(n, np.int32)
                ob.data.attributes["call_index"].data.foreach_get("value", ci)
                if (ci == 1).any():
                    pos = np.empty(n * 3, np.float32)
                    ob.data.attributes["position"].data.foreach_get("vector", pos)
                    centre = pos.reshape(n, 3)[int(np.argmax(ci == 1))].tolist()
                    p = ob.matrix_world @ __import__("mathutils").Vector(centre)
                    got = pick.pick_ray(tuple(p), (0.0, 1.0, 0.0))
                    return got == 1, f"picked {got}"
        return False, "no box of call 1"

    panel = spec.get("then_save_panel")
    if panel:
        @step(f"{pre}_panel_save")
        def _():
            r1 = ops.import_trace(filepath=panel["trace"], build=True)
            s = bpy.context.scene.tracevis3d
            i = bpy.context.scene.tracevis3d_icicle_params
            i.color_by, i.extrude_measure = "depth", "self"
            r2 = bpy.ops.wm.save_as_mainfile(filepath=panel["blend"])
            return (r1 == r2 == {"FINISHED"} and s.trace_path_rel == "//" + pathlib.Path(panel["trace"]).name,
                    f"{r1} {r2} rel={s.trace_path_rel!r}")

    @step(f"{pre}_disable")
    def _():
        bpy.ops.preferences.addon_disable(module=PKG)
        left = leftovers(bpy)
        return not left, f"left={left}"


class RecordingLayout:
    """Stands in for a panel's ``layout`` headless (panels never draw there): records every
    ``prop`` and ``operator`` call, f-string names included, so they can be checked."""

    def __init__(self, log):
        self.__dict__["log"] = log

    def __setattr__(self, name, value):  # scale_y, enabled, use_property_split, ...
        self.__dict__[name] = value

    def prop(self, data, name, **_kw):
        self.log.append(("prop", data, name))

    def operator(self, idname, **_kw):
        self.log.append(("operator", None, idname))
        return type("OperatorProperties", (), {})()

    def label(self, **_kw):
        pass

    def progress(self, **_kw):
        pass

    def separator(self, **_kw):
        pass

    def row(self, **_kw):
        return RecordingLayout(self.log)

    column = box = split = row


def panel_calls(bpy) -> list:
    """Every (kind, data, name) a TraceVis3D panel's draw asks for, drawn with the scene's
    settings as they are."""
    log = []
    panels = sys.modules[f"{PKG}.ui.panels"]
    for cls in panels.CLASSES:
        cls.draw(type("PanelSelf", (), {"layout": RecordingLayout(log)})(), bpy.context)
    return log


def tube_object(bpy):
    obs = [ob for ob in bpy.context.scene.objects if ob.type == "MESH" and "tv3d_tubes" in ob]
    return obs[0] if len(obs) == 1 else None


def face_ints(me, name):
    import numpy as np

    a = np.empty(len(me.polygons), np.int32)
    if name == "material_index":
        me.polygons.foreach_get("material_index", a)
    elif name in me.attributes:
        me.attributes[name].data.foreach_get("value", a)
    else:  # stored once per tube (tubes.tube_values), spread over the faces
        me.attributes["tube_index"].data.foreach_get("value", a)
        a = np.asarray(me["tv3d_tube_data"][name])[a]
    return a


def camera_ray_to_tube(bpy, k=0):
    """(origin, direction) from the camera through the centre of a tube face."""
    import numpy as np

    ob = tube_object(bpy)
    me = ob.data
    c = np.empty(len(me.polygons) * 3, np.float32)
    me.polygons.foreach_get("center", c)
    c = c.reshape(-1, 3)
    cam = bpy.context.scene.camera.matrix_world.translation
    f = np.random.default_rng(k).integers(0, len(c))
    target = ob.matrix_world @ __import__("mathutils").Vector(c[f].tolist())
    return tuple(cam), tuple((target - cam).normalized())


def main_compare(work: str, spec_file: str) -> None:
    """Same user folders as the first run (extension installed, kernels warm), a fresh
    process: the Compare panel and its operators on a real pair (issue 11).  ``spec_file``
    (JSON): {"a", "b", "corrupt", "blend"} (the .blend this run saves for `main_compare_reopen`)."""
    spec = json.loads(pathlib.Path(spec_file).read_text())
    import bpy
    import numpy as np

    @step("cmp_enable")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        return hasattr(bpy.types.Scene, "tracevis3d"), "enabled"

    ops = bpy.ops.tracevis3d
    s = bpy.context.scene.tracevis3d
    c = bpy.context.scene.tracevis3d_compare_params
    props_mod = sys.modules[f"{PKG}.ui.properties"]
    session = sys.modules[f"{PKG}.tracevis3d.blender.session"]
    pick = sys.modules.get(f"{PKG}.tracevis3d.blender.pick") or __import__(f"{PKG}.tracevis3d.blender.pick",
                                                                          fromlist=["pick"])

    def record():
        return json.loads(bpy.context.scene.get("tracevis3d_compare", "{}"))

    @step("cmp_panels_draw")
    def _():
        """Every panel drawn with a recording layout: each property it shows exists, each
        button is a registered operator (f-string names included)."""
        c.color_by = "trace-a"
        log = panel_calls(bpy)
        # each property on the data it is drawn from (each view has its own property group)
        bad = [n for kind, d, n in log if kind == "prop" and n not in d.bl_rna.properties.keys()]
        for kind, _d, n in log:
            if kind == "operator":
                mod, name = n.split(".")
                try:
                    getattr(getattr(bpy.ops, mod), name).get_rna_type()
                except (KeyError, AttributeError):
                    bad.append(n)
        shown = {(d.bl_rna.identifier, n) for kind, d, n in log if kind == "prop"}
        shown = {n for g, n in shown if g == "TraceVis3DCompareSettings"} | {n for g, n in shown if n == "compare_path"}
        need = {"compare_path", "tau", "lam", "band", "beta", "color_by", "thread_a", "thread_b", "use_window_a",
                "window_a_start", "window_b_end", "brush_a", "brush_b", "align_a", "declutter_px", "show_overview"}
        c.color_by = "permutation"
        return not bad and need <= shown, f"unknown={bad} missing={sorted(need - shown)}"

    @step("cmp_params_match_compare_defaults")
    def _():
        """The panel's defaults are CompareParams' defaults, and the two convert both ways."""
        compare = __import__(f"{PKG}.tracevis3d.params.compare", fromlist=["CompareParams"])
        scene = bpy.context.scene
        d = props_mod.params_of(scene, "compare").to_dict()
        default = compare.CompareParams().to_dict()
        diff = {k: (v, default.get(k)) for k, v in d.items() if default.get(k) != v}
        customs = [dict(d, color_by="trace-b", lam=0.5, band=3.0, beta=0.25, window_a=[10.0, 200.0],
                        window_b=[5.0, 50.0], thread_a="MainThread", thread_b=1, show_overview=False,
                        fold="none", label_px=20.0, title="A vs B"),
                   dict(d, color_by="ratio", window_a=None, thread_b="worker", fold="2:5", show_title=False)]
        mismatch = {}
        for custom in customs:
            props_mod.put_params(scene, "compare", compare.CompareParams.from_dict(custom))
            back = props_mod.params_of(scene, "compare").to_dict()
            mismatch.update({k: (back[k], custom[k]) for k in custom if back[k] != custom[k]})
        props_mod.put_params(scene, "compare", compare.CompareParams(brush_a=3))
        brush = {k: v for k, v in props_mod.params_of(scene, "compare").to_dict().items() if k.startswith("brush")}
        props_mod.put_params(scene, "compare", compare.CompareParams())
        back = props_mod.params_of(scene, "compare").to_dict()
        reset = {k: (v, default.get(k)) for k, v in back.items() if default.get(k) != v}
        ok = not diff and not mismatch and not reset and brush == {"brush_a": 3, "brush_b": None}
        return ok, f"defaults differ: {diff}; round trip: {mismatch}; reset: {reset}; brush: {brush}"

    @step("cmp_op_errors_report")
    def _():
        s.trace_path, s.compare_path = spec["a"], ""
        none = op_error(lambda: ops.compare())
        s.compare_path = spec["corrupt"]
        corrupt = op_error(lambda: ops.compare())
        no_tubes = op_error(lambda: ops.compare_color_mode(mode="ratio"))
        s.compare_path = spec["b"]
        ok = (none is not None and "no second trace" in none and corrupt is not None
              and os.path.basename(spec["corrupt"]) in corrupt and no_tubes is not None
              and "press Compare first" in no_tubes)
        return ok, f"{none!r} {corrupt!r} {no_tubes!r}"

    @step("cmp_op_compare")
    def _():
        s.trace_path, s.compare_path = spec["a"], spec["b"]
        c.resolution_x, c.resolution_y = 480, 270
        r = ops.compare()
        ob = tube_object(bpy)
        rec = record()
        ok = (r == {"FINISHED"} and ob is not None and rec.get("trace_a") == spec["a"]
              and rec.get("trace_b") == spec["b"] and "call pairs above" in s.compare_summary
              and bpy.context.scene.camera is not None
              and not [n for n in ("Cube", "Light") if n in bpy.context.scene.objects])
        return ok, f"{r} tubes={ob} record={rec.get('trace_a')} summary={s.compare_summary!r}"

    @step("cmp_colour_switch_without_rebuild")
    def _():
        ob = tube_object(bpy)
        me = ob.data
        pointer, name = ob.as_pointer(), me.name
        c.color_by = "ratio"  # the property: recoloured at once
        by_prop = np.array_equal(face_ints(me, "material_index"), face_ints(me, "bin_ratio"))
        r = ops.compare_color_mode(mode="trace-b")  # the operator
        by_op = np.array_equal(face_ints(me, "material_index"), face_ints(me, "bin_trace_b"))
        c.color_by = "trace-a"
        viewpoint = np.array_equal(face_ints(me, "material_index"), face_ints(me, "bin_trace_a"))
        dbg = (ob.get("tv3d_colour_mode"), c.color_by,
               int((face_ints(me, "material_index") != face_ints(me, "bin_trace_a")).sum()),
               int((face_ints(me, "bin_trace_b") != face_ints(me, "bin_trace_a")).sum()))
        same = tube_object(bpy).as_pointer() == pointer and tube_object(bpy).data.name == name
        ok = by_prop and r == {"FINISHED"} and by_op and viewpoint and same and c.color_by == "trace-a"
        return ok, (f"property->ratio {by_prop}; operator->trace-b {r} {by_op}; trace-a {viewpoint}; "
                    f"same object {same}; colour={c.color_by} {dbg}")

    @step("cmp_rebuild_keeps_the_comparison")
    def _():
        key = session.comparison_key(spec["a"], spec["b"], props_mod.params_of(bpy.context.scene, "compare").tau)
        before = session.cached_comparison(key)
        c.lam, c.band, c.beta = 0.6, 5.0, 0.5
        r = ops.compare()
        after = session.cached_comparison(key)
        p = record().get("params", {})
        ok = (r == {"FINISHED"} and before is not None and after is before
              and (p.get("lam"), p.get("band"), p.get("beta"), p.get("color_by")) == (0.6, 5.0, 0.5, "trace-a"))
        return ok, f"{r} kept={after is before} params={p.get('lam'), p.get('band'), p.get('beta'), p.get('color_by')}"

    @step("cmp_pick_tube")
    def _():
        for k in range(20):  # a ray from the camera through a tube face (a box may be in front)
            hit = pick.pick_ray_detail(*camera_ray_to_tube(bpy, k))
            if hit is not None and hit["kind"] == "tube":
                break
        else:
            return False, "no ray from the camera hit a tube first"
        r = ops.show_call(match_index=hit["match_index"])
        t = s.picked_text
        a = session.get_trace(spec["a"])
        name_a = a.function_names[a.func[hit["call_a"]]]
        ok = (r == {"FINISHED"} and s.picked_side == "a" and s.picked_call == hit["call_a"] and name_a in t
              and all(w in t for w in ("similarity:", "Δt µs:", "duration B ÷ A:", "A start µs:", "B duration µs:",
                                        "A thread:", "B thread:")))
        return ok, f"{r} hit={hit} text={t!r}"

    @step("cmp_pick_box_of_b")
    def _():
        ob = next((o for o in bpy.context.scene.objects if o.name == "TV3D_calls_b"), None)
        if ob is None:
            return False, "no TV3D_calls_b layer"
        n = len(ob.data.attributes["call_index"].data)
        pos = np.empty(n * 3, np.float32)
        ob.data.attributes["position"].data.foreach_get("vector", pos)
        ci = face_ints_points(ob, "call_index")
        k = int(np.flatnonzero(ci >= 0)[0])
        p = ob.matrix_world @ __import__("mathutils").Vector(pos.reshape(n, 3)[k].tolist())
        hit = pick.pick_ray_detail(tuple(p), (0.0, 1.0, 0.0))
        r = ops.show_call(call_index=int(ci[k]), side="b")
        t = s.picked_text
        ok = (hit is not None and hit["kind"] == "box" and hit["side"] == 1 and r == {"FINISHED"}
              and t.startswith("side: B") and "best match in A:" in t and s.picked_side == "b")
        return ok, f"hit={hit} {r} text={t!r}"

    @step("cmp_brush_picked")
    def _():
        call = s.picked_call  # the box of B picked above
        r = ops.compare_brush()
        p = record().get("params", {})
        r2 = ops.compare_brush(clear=True)
        p2 = record().get("params", {})
        ok = (r == r2 == {"FINISHED"} and p.get("brush_b") == call and c.brush_b == ""
              and p2.get("brush_b") is None)
        return ok, f"{r} brush_b={p.get('brush_b')} (picked {call}); cleared {r2} {p2.get('brush_b')}"

    @step("cmp_align")
    def _():
        compare = __import__(f"{PKG}.tracevis3d.layout.compare", fromlist=["align_window_b"])
        key = session.comparison_key(spec["a"], spec["b"], props_mod.params_of(bpy.context.scene, "compare").tau)
        cmp = session.cached_comparison(key)
        r = ops.compare_align(call=spec["align"])
        want = compare.align_window_b(cmp, cmp.find_call("a", spec["align"]))
        got = (c.window_b_start, c.window_b_end)
        p = record().get("params", {})
        ok = (r == {"FINISHED"} and c.use_window_b and np.allclose(got, want, rtol=1e-6)
              and np.allclose(p.get("window_b"), want) and c.align_a == spec["align"])
        c.use_window_b = False
        bad = op_error(lambda: ops.compare_align(call="no_such_function"))
        return ok and bad is not None and "Align" in bad, f"{r} window={got} want={want} record={p.get('window_b')} bad={bad!r}"

    @step("cmp_show_call_needs_a_viewport")
    def _():
        msg = op_error(lambda: ops.show_call(mouse_x=10, mouse_y=10))
        return msg is not None and "3D viewport" in msg, repr(msg)

    @step("cmp_save")
    def _():
        c.color_by, c.tau = "similarity", 0.25
        c.thread_a, c.use_window_a = "MainThread", True
        c.window_a_start, c.window_a_end = 0.0, 1e9
        c.brush_a = spec["align"]
        r = bpy.ops.wm.save_as_mainfile(filepath=spec["blend"])
        rec = record()
        ok = (r == {"FINISHED"} and s.compare_path_rel == "//" + os.path.basename(spec["b"])
              and rec.get("trace_b_rel") == "//" + os.path.basename(spec["b"]))
        return ok, f"{r} rel={s.compare_path_rel!r} record rel={rec.get('trace_b_rel')!r}"

    @step("cmp_disable")
    def _():
        bpy.ops.preferences.addon_disable(module=PKG)
        left = leftovers(bpy)
        return not left, f"left={left}"


def scene_prop(bpy, key: str):
    """``group.name`` (a property of ``scene.<group>``) or ``name`` (of ``scene.tracevis3d``)."""
    group, _, name = key.rpartition(".")
    return getattr(getattr(bpy.context.scene, group or "tracevis3d"), name)


def face_ints_points(ob, name):
    import numpy as np

    n = len(ob.data.attributes[name].data)
    a = np.empty(n, np.int32)
    ob.data.attributes[name].data.foreach_get("value", a)
    return a


def main_compare_reopen(work: str, spec_file: str) -> None:
    """A FRESH process: open a comparison .blend (saved by the panel, or by ``render-compare
    --save`` where the extension is not registered) whose folder was moved: the traces and
    the comparison's settings are back, and Compare rebuilds.  ``spec_file`` (JSON):
    {"prefix", "blend", "a", "b", "props": {property: value}}."""
    spec = json.loads(pathlib.Path(spec_file).read_text())
    pre = spec["prefix"]
    import bpy

    @step(f"{pre}_enable")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        return hasattr(bpy.types.Scene, "tracevis3d"), "enabled"

    @step(f"{pre}_open")
    def _():
        r = bpy.ops.wm.open_mainfile(filepath=spec["blend"])
        return r == {"FINISHED"} and tube_object(bpy) is not None, f"{r} tubes={tube_object(bpy)}"

    @step(f"{pre}_settings")
    def _():
        s = bpy.context.scene.tracevis3d
        got = {k: scene_prop(bpy, k) for k in spec["props"]}
        got = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in got.items()}
        ok = s.trace_path == spec["a"] and s.compare_path == spec["b"] and got == spec["props"]
        return ok, f"A={s.trace_path!r} B={s.compare_path!r} (expected {spec['a']!r}, {spec['b']!r}); got {got} expected {spec['props']}"

    @step(f"{pre}_compare")
    def _():
        s = bpy.context.scene.tracevis3d
        r = bpy.ops.tracevis3d.compare()
        rec = json.loads(bpy.context.scene.get("tracevis3d_compare", "{}"))
        return r == {"FINISHED"} and rec.get("trace_b") == spec["b"], f"{r} {rec.get('trace_b')} {s.compare_summary!r}"

    @step(f"{pre}_disable")
    def _():
        bpy.ops.preferences.addon_disable(module=PKG)
        left = leftovers(bpy)
        return not left, f"left={left}"


if __name__ == "__main__":
    for flag, fn in (("--compare", main_compare), ("--compare-reopen", main_compare_reopen)):
        if flag in sys.argv:
            spec_path = sys.argv[sys.argv.index(flag) + 1]
            PROGRESS_FILE = pathlib.Path(spec_path).with_suffix(".progress.json")
            try:
                fn(sys.argv[1], spec_path)
            finally:
                print(json.dumps({"steps": STEPS}), flush=True)
            sys.exit(0)
    if "--reopen" in sys.argv:
        spec_path = sys.argv[sys.argv.index("--reopen") + 1]
        PROGRESS_FILE = pathlib.Path(spec_path).with_suffix(".progress.json")
        try:
            main_reopen(sys.argv[1], spec_path)
        finally:
            print(json.dumps({"steps": STEPS}), flush=True)
        sys.exit(0)
    if "--real" in sys.argv:
        PROGRESS_FILE = pathlib.Path(sys.argv[1]) / "driver-real-progress.json"
        try:
            main_real(sys.argv[1], sys.argv[sys.argv.index("--real") + 1])
        finally:
            print(json.dumps({"steps": STEPS}), flush=True)
        sys.exit(0)
    if "--skip" in sys.argv:
        SKIP.update(sys.argv[sys.argv.index("--skip") + 1].split(","))
    PROGRESS_FILE = pathlib.Path(sys.argv[2]) / "driver-progress.json"
    try:
        main(sys.argv[1], sys.argv[2])
    finally:
        sys.stdout.flush()
        print(json.dumps({"steps": STEPS}), flush=True)
