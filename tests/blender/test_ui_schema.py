"""The add-on's property groups are the parameter schemas (issue 22), in real (headless)
Blender: for every view the registered group has exactly the properties its schema's kinds
describe, with the schema's defaults, ranges and enum items; a fresh group reads back as the
default parameter object; a non-default object survives to_props -> from_props.  The session
group is its table plus the render schema's fields.  And a .blend saved by the previous
version (tests/data/old_session.blend, made by tests/data/make_old_blend.py with the add-on
of commit 83e0e5d) reopens with its fields in the new groups and rebuilds the same scene.

The add-on (the repository root) is loaded in this process as the package ``tv3d_addon``
(tests/support/addon_loader.py: its core is the ``tracevis3d`` the other tests import) and
registered for this module only.
"""
import math
import pathlib
import shutil
import sys

import numpy as np
import pytest

from tracevis3d.views import VIEWS as REGISTRY

bpy = pytest.importorskip("bpy")

pytestmark = pytest.mark.blender
REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
PKG = "tv3d_addon"
VIEWS = tuple(v.name for v in REGISTRY)  # every view of the registry has its group
RNA_TYPES = {"Bool": "BOOLEAN", "Int": "INT", "Float": "FLOAT", "String": "STRING", "Enum": "ENUM"}


@pytest.fixture(scope="module")
def addon():
    from addon_loader import registered_addon

    yield from registered_addon()


def _props(addon):
    return sys.modules[f"{PKG}.ui.properties"]


def _f32(v) -> float:
    return float(np.float32(v))


def _check_row(rna, name, type_, options):
    """One registered property against its description ``(name, type, options)``."""
    prop = rna.properties[name]
    assert prop.type == RNA_TYPES[type_], name
    assert prop.name == options.get("name", ""), name
    assert prop.description == options.get("description", ""), name
    if type_ == "Enum":
        assert [i.identifier for i in prop.enum_items] == [i[0] for i in options["items"]], name
        assert [i.name for i in prop.enum_items] == [i[1] for i in options["items"]], name
        assert prop.default == options["default"], name
        return
    default = options.get("default", {"Bool": False, "Int": 0, "Float": 0.0, "String": ""}[type_])
    if type_ == "Float":
        assert prop.default == pytest.approx(_f32(default)), name
    else:
        assert prop.default == default, name
    if type_ in ("Int", "Float"):
        if "min" in options:
            assert prop.hard_min == pytest.approx(_f32(options["min"])), name
        if "max" in options:
            assert prop.hard_max == pytest.approx(_f32(options["max"])), name
        if "soft_max" in options:
            assert prop.soft_max == pytest.approx(_f32(options["soft_max"])), name
    if "subtype" in options:
        assert prop.subtype == options["subtype"], name
    for flag in options.get("options", ()):
        if flag == "HIDDEN":
            assert prop.is_hidden, name
        if flag == "SKIP_SAVE":
            assert prop.is_skip_save, name


def _group_names(rna) -> set:
    return {p.identifier for p in rna.properties} - {"rna_type", "name"}


@pytest.mark.parametrize("view", VIEWS)
def test_view_group_is_its_schema(addon, view):
    """Every property the schema's kinds describe, nothing else, each as described; the
    scene pointer scene.tracevis3d_<view> holds one."""
    P = _props(addon)
    cls = P.VIEWS[view]
    rna = getattr(bpy.context.scene, f"tracevis3d_{view}_params").bl_rna
    rows = [row for p in cls.SCHEMA for row in p.kind.props(p)]
    assert _group_names(rna) == {r[0] for r in rows}
    assert len(rows) == len({r[0] for r in rows})
    for row in rows:
        _check_row(rna, *row)
    # the schema's own numbers, read from the registered properties (not from kind.props)
    for p in cls.SCHEMA:
        k = p.kind
        if _is(k, "Number"):
            prop = rna.properties[p.name]
            if k.lo is not None:
                assert prop.hard_min == pytest.approx(_f32(k.lo)), p.name
            if k.hi is not None:
                assert prop.hard_max == pytest.approx(_f32(k.hi)), p.name
            if p.default is not None:
                assert prop.default == pytest.approx(_f32(p.default)), p.name
            if k.optional:
                assert rna.properties[f"use_{p.name}"].default == (p.default is not None), p.name
        elif _is(k, "Choice"):
            prop = rna.properties[p.name]
            assert tuple(i.identifier for i in prop.enum_items) == k.choices and prop.default == p.default, p.name
        elif _is(k, "Flag"):
            assert rna.properties[p.name].default == p.default, p.name


def test_every_view_has_a_registered_panel_section(addon):
    """Each view of the registry has its section (hand-made or generated), labelled as the
    registry says, and registered."""
    panels = sys.modules[f"{PKG}.ui.panels"]
    labels = {cls.bl_label: cls for cls in panels.CLASSES}
    for v in REGISTRY:
        assert v.panel in labels, v.name
        assert getattr(labels[v.panel], "is_registered", False), v.name
    hand_made = {cls.bl_label for cls in panels.HAND_MADE}
    generated = [cls for cls in panels.CLASSES if cls.bl_label not in hand_made
                 and cls.bl_label in {v.panel for v in REGISTRY}]
    assert {cls.bl_label for cls in generated} == {v.panel for v in REGISTRY} - hand_made
    from extension_driver import RecordingLayout

    for cls in generated:  # a Build button and every field of the view's schema
        v = next(v for v in REGISTRY if v.panel == cls.bl_label)
        log = []
        cls.draw(type("P", (), {"layout": RecordingLayout(log)})(), bpy.context)
        group = getattr(bpy.context.scene, f"tracevis3d_{v.name}_params")
        shown = {n for kind, d, n in log if kind == "prop" and d == group}
        assert ("operator", None, "tracevis3d.build_view") in log, v.name
        assert {row[0] for p in v.params_class.SCHEMA if p.ui for row in p.kind.props(p)} <= shown, v.name


def test_any_view_builds_from_the_panel_through_the_registry(addon, tmp_path):
    """``tracevis3d.build_view`` (the generated sections' Build) builds a view by its registry
    entry: the trace loaded as every view's, the job steps and the scene record the entry names,
    the parameters of the view's panel group."""
    import json

    from tracevis3d.warmup import chrome_events

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": chrome_events(n_roots=8)}), encoding="utf-8")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.tracevis3d.trace_path = str(path)
    scene.tracevis3d_cone_params.max_nodes = 30
    scene.tracevis3d_cone_params.resolution_x, scene.tracevis3d_cone_params.resolution_y = 320, 180
    assert bpy.ops.tracevis3d.build_view(view="cone") == {"FINISHED"}
    record = json.loads(scene[next(v for v in REGISTRY if v.name == "cone").scene_key])
    assert record["params"]["max_nodes"] == 30 and record["trace_path"] == str(path)


def test_a_view_with_its_own_reader_builds_from_the_panel(addon, tmp_path):
    """The memory view's input is a memray capture, read by its entry's ``load``
    (`io.load_memory`), then built by the same operator with its panel group's values."""
    import json

    from memray_captures import record

    path = record("json", str(tmp_path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.tracevis3d.trace_path = path
    scene.tracevis3d_memory_params.bins = 64
    assert bpy.ops.tracevis3d.build_view(view="memory") == {"FINISHED"}
    built = json.loads(scene[next(v for v in REGISTRY if v.name == "memory").scene_key])
    assert built["params"]["bins"] == 64 and built["capture_path"] == path


@pytest.mark.parametrize("view", VIEWS)
def test_fresh_group_reads_as_the_default_params(addon, view):
    P = _props(addon)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert P.params_of(bpy.context.scene, view) == P.VIEWS[view]()


def _is(kind, name: str) -> bool:
    """Is ``kind`` a ``name`` (by class name: the add-on has its own copy of the kinds)?"""
    return any(c.__name__ == name for c in type(kind).__mro__)


def _other_value(p):
    """A valid value of parameter ``p`` other than its default (walks the kinds)."""
    k, d = p.kind, p.default
    if _is(k, "Flag"):
        return not d
    if _is(k, "Number"):
        lo = k.lo if k.lo is not None else 0
        base = d if d is not None else (k.placeholder if k.placeholder is not None else lo)
        for v in (base + 1, base - 1, (lo + base) / 2):
            v = int(v) if k.integer else round(float(v), 3)
            try:
                if k.check(v, p.name) != d and v != base or d is None:
                    return k.check(v, p.name)
            except ValueError:
                continue
        raise AssertionError(p.name)
    if _is(k, "Choice"):
        return [c for c in k.choices if c != d][-1]
    if _is(k, "Cutaway"):
        return k.example()
    if _is(k, "Text"):
        return "A title, with ünïcode"
    if _is(k, "Words"):
        return ["json.encoder", "re"] if p.name == "hide_modules" else ["^app\\.", "util"]
    if _is(k, "Threads"):
        return [0, "worker-1"]
    if _is(k, "CallRef"):
        return 5
    if _is(k, "Thread"):
        return "worker-1"
    if _is(k, "Calls"):
        return [2, 7]
    if _is(k, "Window"):
        return (1.5, 20.25)
    if _is(k, "Fold"):
        return "2:3,5:"
    if _is(k, "Inset"):
        return "1.5:20.25"
    if _is(k, "ThreadOrder"):
        return ["main", 2]
    if _is(k, "Resolution"):
        return (800, 600)
    if _is(k, "Path"):
        return "/tmp/calls.json"
    raise AssertionError(f"no other value for {p.name} ({type(k).__name__})")


@pytest.mark.parametrize("view", VIEWS)
def test_params_round_trip_through_the_group(addon, view):
    """params -> to_props -> from_props is the identity for an object whose every field is
    not its default; and back to the defaults again."""
    P = _props(addon)
    cls = P.VIEWS[view]
    values = {p.name: _other_value(p) for p in cls.SCHEMA}
    if view == "compare":
        values["align_a"] = None  # align_a sets window_b: not both
    params = cls(**values).validate()
    assert all(getattr(params, p.name) != p.default for p in cls.SCHEMA if p.name != "align_a")
    scene = bpy.context.scene
    P.put_params(scene, view, params)
    assert P.params_of(scene, view) == params
    P.put_params(scene, view, cls())
    assert P.params_of(scene, view) == cls()


def test_session_group_is_its_table_and_the_render_schema(addon):
    P = _props(addon)
    from tracevis3d.params.animation import ANIMATION
    from tracevis3d.params.cluster import CLUSTER_PANEL_FIELDS, CLUSTER_SCHEMA
    from tracevis3d.params.render import RENDER

    rna = bpy.context.scene.tracevis3d.bl_rna
    rows = P.SESSION + [row for p in RENDER if p.name in P.RENDER_FIELDS for row in p.kind.props(p)]
    rows += [row for p in ANIMATION if p.name in P.ANIMATION_FIELDS for row in p.kind.props(p)]
    rows += [row for p in CLUSTER_SCHEMA if p.name in CLUSTER_PANEL_FIELDS for row in p.kind.props(p)]
    assert _group_names(rna) == {r[0] for r in rows}
    for row in rows:
        _check_row(rna, *row)
    assert P.render_options(bpy.context.scene.tracevis3d) == {"output": None, "engine": "workbench",
                                                              "samples": None, "transparent": False,
                                                              "device": "auto"}
    assert P.animation_options(bpy.context.scene.tracevis3d) == {"kind": "auto", "seconds": 10.0, "fps": 30,
                                                                 "easing": "eased", "reveal_order": "time",
                                                                 "zoom_window": None, "zoom_levels": 4}


def test_a_bad_field_is_an_operator_report(addon):
    """An empty fold 'Levels' field: the Build operator reports the parameter's message."""
    scene = bpy.context.scene
    scene.tracevis3d.trace_path = str(DATA / "old_session_trace.json.gz")
    scene.tracevis3d_icicle_params.fold_mode = "levels"
    scene.tracevis3d_icicle_params.fold_levels = ""
    try:
        with pytest.raises(RuntimeError, match="fold 'Levels' needs level ranges"):
            bpy.ops.tracevis3d.build()
    finally:
        scene.tracevis3d_icicle_params.fold_mode = "auto"


def test_build_record_restores_the_view_group(addon, tmp_path):
    """A scene built by a script (no extension fields set) reopens with the record's
    parameters in scene.tracevis3d_icicle_params (``IcicleParams.from_known(...).to_props``)."""
    import json

    P = _props(addon)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    params = {"color_by": "module", "fold": "1:4", "label_px": 22.5, "max_depth": 9, "future_key": 1}
    scene["tracevis3d_build"] = json.dumps({"trace_path": str(DATA / "old_session_trace.json.gz"), "params": params})
    assert P.restore_session(scene, blend_path=str(tmp_path / "x.blend"))
    p = P.params_of(scene, "icicle")
    assert (p.color_by, p.fold, p.label_px, p.max_depth) == ("module", "1:4", 22.5, 9)
    assert scene.tracevis3d.trace_path == str(DATA / "old_session_trace.json.gz")


_PATH_KEY_OF_RECORD = {"threads": "source", "memory": "capture_path"}  # as their build jobs write them


def _changed_number_field(cls):
    """(name, value) of a numeric field of ``cls`` moved off its default to a value it accepts."""
    d = cls().to_dict()
    for name, value in d.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for new in (value + 1, value * 2 + 1, value / 2):
                try:
                    cls.from_known({name: new})
                    return name, new
                except ValueError:
                    pass
    raise AssertionError(f"{cls.__name__} has no numeric field to change")


@pytest.mark.parametrize("view", [v for v in REGISTRY if v.scene_key and v.name not in ("icicle", "compare")],
                         ids=lambda v: v.name)
def test_every_views_build_record_restores_its_group(addon, tmp_path, view):
    """Every view of the registry with a build record (`View.scene_key`) reopens a scene saved by
    the command line with the record's file as the trace path and its parameters in its group;
    a set trace path stays, an unreadable record changes nothing."""
    import json

    P = _props(addon)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    cls = view.params_class
    name, value = _changed_number_field(cls)
    path = str(tmp_path / f"{view.name}.json")
    scene[view.scene_key] = "{not json"
    assert not P.restore_session(scene, blend_path=str(tmp_path / "x.blend"))
    assert scene.tracevis3d.trace_path == ""
    scene[view.scene_key] = json.dumps({_PATH_KEY_OF_RECORD.get(view.name, "trace_path"): path,
                                        "params": {name: value, "future_key": 1}})
    assert P.restore_session(scene, blend_path=str(tmp_path / "x.blend"), what=view.name)
    assert scene.tracevis3d.trace_path == path
    assert getattr(P.params_of(scene, view.name), name) == pytest.approx(value)
    scene.tracevis3d.trace_path = "/elsewhere.json"
    assert not P.restore_session(scene, blend_path=str(tmp_path / "x.blend"), what=view.name)
    assert scene.tracevis3d.trace_path == "/elsewhere.json"


# ------------------------------------------------------------------ a .blend of the previous version
_ATTR_WIDTH = {"FLOAT": 1, "INT": 1, "FLOAT_VECTOR": 3, "FLOAT_COLOR": 4, "BYTE_COLOR": 4, "BOOLEAN": 1,
               "FLOAT2": 2, "INT8": 1, "INT32_2D": 2, "QUATERNION": 4}


#: labels that name calls (the label stage's choice of which calls to name and where
#: improves between versions: e.g. a row's label no longer stands over a folded band thinner
#: than it), left out of the comparison of an old scene with today's build of its fields
NAME_LABEL_KINDS = frozenset({"call", "run", "row", "group", "cluster", "fold"})


def _geometry(scene, names: bool = True) -> dict:
    """What the built scene draws: per TraceVis3D object its type and transform, every
    attribute of a point cloud or mesh (foreach_get), a text object's body; ``names``
    False: without text objects (`_texts`)."""
    out = {}
    for ob in scene.objects:
        if "tracevis3d" not in ob:
            continue
        if not names and ob.type == "FONT":  # compared by `_texts` (their object names shift)
            continue
        out[(ob.name, "type")] = ob.type
        out[(ob.name, "matrix")] = np.array(ob.matrix_world, dtype=np.float64)
        data = ob.data
        if ob.type == "FONT":
            out[(ob.name, "body")] = data.body
        if ob.type in ("POINTCLOUD", "MESH"):
            for a in data.attributes:
                if a.name.startswith(".") or a.data_type not in _ATTR_WIDTH:
                    continue
                field = "color" if "COLOR" in a.data_type else ("vector" if a.data_type in ("FLOAT_VECTOR", "FLOAT2", "INT32_2D") else "value")
                n = len(a.data) * _ATTR_WIDTH[a.data_type]
                arr = np.empty(n, dtype=np.float64)
                a.data.foreach_get(field, arr)
                out[(ob.name, a.name)] = arr
                if a.name == "tv_mat" and ob.type == "POINTCLOUD":  # a box's material, by name: a layer
                    mats = [m.name for m in data.materials]  # lists the materials its boxes use (any order)
                    out[(ob.name, a.name)] = tuple(mats[int(k)] if 0 <= int(k) < len(mats) else "" for k in arr)
    return out


def _texts(scene) -> list:
    """(kind, body) of every TraceVis3D text that does not name calls (`NAME_LABEL_KINDS`),
    sorted; and how many name calls."""
    fonts = [ob for ob in scene.objects if "tracevis3d" in ob and ob.type == "FONT"]
    other = sorted((str(ob.get("tv3d_kind")), ob.data.body) for ob in fonts if ob.get("tv3d_kind") not in NAME_LABEL_KINDS)
    return other, sum(ob.get("tv3d_kind") in NAME_LABEL_KINDS for ob in fonts)


#: what tests/data/make_old_blend.py set through the old fields, in the new groups
EXPECTED = {
    "tracevis3d_icicle_params": dict(extrude_measure="inclusive", color_by="depth", thread_order="name", fold_mode="levels",
                              fold_levels="1:2", hide_modules="app.util", use_max_depth=True, max_depth=12,
                              resolution_x=1280, resolution_y=720, cluster_px=2.0, label_px=20.0, use_lane_gap=True,
                              lane_gap=3.0, show_axes=False, title="An old scene", hide_utilities=2, highlight="^app"),
    "tracevis3d_compare_params": dict(tau=0.35, lam=0.5, band=6.0, color_by="trace-b", declutter_px=0.0, thread_a="1",
                               use_window_b=True, window_b_start=10.0, window_b_end=900.0, show_overview=False,
                               fold_mode="levels", fold_levels="1:2", resolution_x=1280, cluster_px=2.0, label_px=20.0,
                               title="An old scene"),
    "tracevis3d_threads_params": dict(focus="0", color_by="thread", fold_mode="none", max_levels=9, focus_scale=3.0,
                               use_time_window=True, time_window_start=500.0, time_window_end=2500.0,
                               show_icicle=False),
    "tracevis3d_cone_params": dict(max_nodes=50, orientation="horizontal", fold_recursion=False, hide_utilities=2,
                            highlight="^app", hide_modules="app.util", resolution_x=1280, label_px=20.0,
                            title="An old scene"),
    "tracevis3d_live_params": dict(window_us=250000.0),
    "tracevis3d": dict(engine="eevee", use_samples=True, samples=4, transparent=True, search_pattern="util",
                       trace_path="//old_session_trace.json.gz",
                       trace_path_rel="//old_session_trace.json.gz"),
}


def _check_expected(scene):
    for group, values in EXPECTED.items():
        g = getattr(scene, group)
        for name, v in values.items():
            got = getattr(g, name)
            if isinstance(v, float):
                assert math.isclose(got, v, rel_tol=1e-6), (group, name, got, v)
            else:
                assert got == v, (group, name, got, v)


def test_old_blend_reopens_restores_and_rebuilds_the_same_scene(addon, tmp_path, capfd):
    """tests/data/old_session.blend (the previous version's property names, its icicle built
    by the previous version) in a folder of its own: opening it maps every old field onto
    the new groups silently (the old values gone from the file's system properties), the
    trace is found next to it, a save and reopen keeps the values, and Build with
    the restored fields gives the same geometry as the saved scene (the same objects; the
    camera's framing and the heads-up display's placement follow today's page layout, so
    of those only the texts are compared; which calls are named, and where, is today's
    label stage: those labels are counted, not compared)."""
    for f in ("old_session.blend", "old_session_trace.json.gz"):
        shutil.copy(DATA / f, tmp_path / f)
    blend = tmp_path / "old_session.blend"
    capfd.readouterr()
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    out = capfd.readouterr()
    assert "tracevis3d" not in out.out + out.err and "Traceback" not in out.err, out  # nothing noisy
    scene = bpy.context.scene
    _check_expected(scene)
    stored = scene.bl_system_properties_get()
    assert "tracevis3d_structure" not in stored.keys()
    left = set(stored["tracevis3d"].keys())
    assert not left & {"compare_lam", "fold_mode", "use_time_window", "render_engine", "render_samples", "title"}, left
    assert "tracevis3d_threads" not in stored.keys()  # the old thread view's group, now tracevis3d_threads_params
    P = _props(addon)
    icicle = P.params_of(scene, "icicle")
    record = __import__("json").loads(scene["tracevis3d_build"])["params"]
    assert icicle.to_dict() == P.VIEWS["icicle"].from_dict(record).to_dict()  # the panel = what was built

    saved = _geometry(scene, names=False)
    saved_texts, saved_names = _texts(scene)
    assert any(k[1] == "position" for k in saved) and saved_names > 0, sorted(saved)[:10]
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "again.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "again.blend"))
    scene = bpy.context.scene
    _check_expected(scene)
    assert P.params_of(scene, "icicle") == icicle

    page = _page_objects(bpy.context.scene)  # the camera and what hangs on it (title, legend)
    saved_page = _page_desc(bpy.context.scene, page)
    assert bpy.ops.tracevis3d.build() == {"FINISHED"}
    rebuilt = _geometry(bpy.context.scene, names=False)
    # the callouts' leaders go with today's label stage (the old version had no callouts)
    rebuilt = {k: v for k, v in rebuilt.items() if k[0] != "TV3D_callout_leaders"}
    assert sorted(rebuilt) == sorted(saved)
    rebuilt_texts, rebuilt_names = _texts(bpy.context.scene)
    assert _not_legend(rebuilt_texts) == _not_legend(saved_texts) and rebuilt_names > 0
    assert _legend_words(rebuilt_texts) == _legend_words(saved_texts, old=True)  # today's wording, wrapping
    rebuilt_page = _page_desc(bpy.context.scene, _page_objects(bpy.context.scene))
    assert page and _not_legend(rebuilt_page) == _not_legend(saved_page)
    assert _legend_words(rebuilt_page) == _legend_words(saved_page, old=True)
    legend_objects = {n for n in page if bpy.context.scene.objects[n].get("tv3d_kind") == "legend"}
    for key, value in saved.items():
        if key[0] in page and (key[1] != "body" or key[0] in legend_objects):
            continue  # the page's layout (title size, legend place, framing) is today's, not the old version's
        if isinstance(value, np.ndarray):
            if key[1] in PAGE_SCALED:  # the same calls, where today's page puts them
                assert rebuilt[key].shape == value.shape, key
                span = max(float(np.ptp(value)), 1.0)
                np.testing.assert_allclose(rebuilt[key], value, rtol=0.02, atol=0.02 * span, err_msg=str(key))
            else:
                np.testing.assert_allclose(rebuilt[key], value, rtol=1e-5, atol=1e-6, err_msg=str(key))
        else:
            assert rebuilt[key] == value, key


#: geometry that the page layout scales (the content rectangle's height follows the title's
#: size): compared within 2 % of its extent; what names the calls (their indices, lanes,
#: depths, colours, materials, counts) is compared exactly
PAGE_SCALED = frozenset({"matrix", "position", "tv_scale"})


#: legend notes today's version words differently from the old scene's (old → today's)
LEGEND_REWORDED = {"thin bands: folded levels (wrappers, imports)":
                   "thin bands: folded levels (wrappers, imports; +n: n levels)"}


def _not_legend(items) -> list:
    """The (…, kind, text) items that are not legend lines."""
    return [x for x in items if x[-2] != "legend"]


def _legend_words(items, old: bool = False) -> dict:
    """The words of the legend lines of ``items`` ((…, kind, text)), however they wrap; for
    ``old``, its notes reworded as today's (`LEGEND_REWORDED`)."""
    import collections

    words = collections.Counter(w for x in items if x[-2] == "legend" for w in x[-1].split())
    if old:
        for was, now in LEGEND_REWORDED.items():
            gone = collections.Counter(was.split())
            if not gone - words:  # the old note is there: today's words instead
                words = words - gone + collections.Counter(now.split())
    return words


def _page_desc(scene, names) -> list:
    """The page objects ``names`` as (type, kind or name, text): text objects are told apart
    by what they say, not by their object names (numbered in the order labels are made)."""
    out = []
    for n in names:
        ob = scene.objects[n]
        font = ob.type == "FONT"
        out.append((ob.type, str(ob.get("tv3d_kind")) if font else n, ob.data.body if font else ""))
    return sorted(out)


def _page_objects(scene) -> set:
    """Names of the TraceVis3D camera and the objects parented to it (the heads-up display)."""
    cam = scene.camera
    return {ob.name for ob in scene.objects if "tracevis3d" in ob and (ob == cam or ob.parent == cam)}


def test_old_name_table_fills_in_the_old_defaults(addon):
    """`legacy.assignments`: an old field stored without its partner takes the partner's
    old default (viewpoint A, window 0..100 ms); an enum index the old items do not have is
    left out; engine indices name today's engines."""
    from addon_loader import load_addon

    legacy = sys.modules[f"{load_addon().__name__}.ui.legacy"]
    S, TH = "tracevis3d", "tracevis3d_threads"
    got = legacy.assignments({(S, "compare_color_by"): 1, (S, "render_samples"): 0, (S, "lane_gap_auto"): True,
                              (TH, "use_window"): 1, (S, "color_by"): 99, (S, "render_engine"): 2,
                              ("tracevis3d_structure", "cone_expand"): "4,9"})
    assert sorted(got) == sorted([
        ("tracevis3d_compare_params", "color_by", "trace-a"),
        ("tracevis3d", "use_samples", False),
        ("tracevis3d_icicle_params", "use_lane_gap", False),
        ("tracevis3d_threads_params", "use_time_window", True),
        ("tracevis3d_threads_params", "time_window_start", 0.0),
        ("tracevis3d_threads_params", "time_window_end", 100000.0),
        ("tracevis3d", "engine", "cycles"),
        ("tracevis3d_cone_params", "expand", "4,9"), ("tracevis3d_icicle_params", "expand", "4,9")])
