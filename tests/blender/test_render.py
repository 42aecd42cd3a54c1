"""Render tests: real bpy (headless), Workbench at 320x180 unless stated; we look at pixels.

The reference scene and pixel helpers live in tools/regen_reference_images.py (also the
regeneration script), so tests and reference images come from the same code.
"""
import json
import pathlib
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import regen_reference_images as ref  # noqa: E402

from tracevis3d.layout import IcicleParams, icicle_layout  # noqa: E402
from tracevis3d.layout.palette import linear_to_srgb, srgb_to_linear  # noqa: E402

BG_TOL = 0.06  # a pixel differs from the white background by more than this → something drawn
RES = (320, 180)


def _drawn(img):
    return np.abs(img[..., :3] - 1.0).max(-1) > BG_TOL


def _render(tmp_path, name="fig.png", **params):
    p = dict(resolution=RES)
    p.update(params)
    path = tmp_path / name
    info = ref.render_case(p, path)
    return ref.load_png(path), info, IcicleParams(**p)


def _spec(**params):
    p = dict(resolution=RES)
    p.update(params)
    return icicle_layout(ref.reference_trace(), IcicleParams(**p))


def _front_centre(lay, k):
    """World point in the middle of box k's front face (the face towards the camera)."""
    c = lay.positions[k].astype(float).copy()
    c[1] -= lay.scales[k, 1] / 2
    return c


BARE = dict(show_labels=False, show_legend=False, show_axes=False, show_title=False)


@pytest.fixture
def bare(tmp_path):
    """Boxes only: no labels, legend, title, lane names or axis."""
    return _render(tmp_path, **BARE)


def test_boxes_where_calls_are_and_nowhere_else(bare):
    img, info, params = bare
    spec = _spec(**BARE)
    drawn = _drawn(img)
    shape = drawn.shape
    inside = np.zeros(shape, bool)
    core = np.zeros(shape, bool)
    for lay in spec.layers:
        for k in range(len(lay)):
            inside |= ref.box_mask(lay.positions[k], lay.scales[k], shape, grow=1.5)
            core |= ref.box_mask(lay.positions[k], lay.scales[k], shape, grow=-1.5)
    assert drawn.sum() > 500
    # nothing drawn outside the boxes (antialiasing margin 1.5 px)
    assert (drawn & ~inside).sum() == 0, f"{(drawn & ~inside).sum()} stray pixels"
    # every box interior is drawn
    assert (core & ~drawn).sum() <= 0.002 * core.sum()


def _colour_at(img, world_pt):
    x, y = ref.project_points([world_pt])[0]
    x, y = int(x), int(y)
    return img[y - 1:y + 2, x - 1:x + 2, :3].reshape(-1, 3).mean(0), (x, y)


def _chroma_dir(c):
    c = np.asarray(c, float)
    d = c - c.mean()
    return d / max(np.linalg.norm(d), 1e-9)


def test_depth_and_function_colours(bare):
    img, info, params = bare
    spec = _spec(**BARE)
    tr = ref.reference_trace()
    calls = spec.layer("calls")
    ci = calls.attributes["call_index"].tolist()
    seen = {}
    for i in range(4):  # alpha (depth 0), beta (1), delta (2), gamma (1)
        k = ci.index(i)
        col, (x, y) = _colour_at(img, _front_centre(calls, k))
        seen[i] = (col, y)
        assert _drawn(img)[y, x], f"call {i} not drawn at its place"
        # rendered colour has the hue of the box colour (shading scales brightness only)
        want = linear_to_srgb(calls.colors[k, :3])
        assert _chroma_dir(col) @ _chroma_dir(want) > 0.9, (i, col, want)
    # deeper levels are higher in the image (y grows downwards)
    assert seen[2][1] < seen[1][1] < seen[0][1]
    assert seen[3][1] < seen[0][1]
    # different functions, different colours
    cols = [seen[i][0] for i in range(4)]
    for a in range(4):
        for b in range(a + 1, 4):
            assert np.abs(cols[a] - cols[b]).max() > 0.12, (a, b)
    assert tr.depth[:4].tolist() == [0, 1, 2, 1]


def test_cluster_box_replaces_subpixel_calls(bare, tmp_path):
    img, info, params = bare
    spec = _spec(**BARE)
    cl = spec.layer("clusters")
    assert len(cl) == 1 and cl.attributes["call_count"][0] == ref.TINY_N
    assert spec.meta["n_boxes"] == 4  # the 40 tiny calls have no box of their own
    col, (x, y) = _colour_at(img, _front_centre(cl, 0))
    # the colour of what it holds (the function tiny), lightened: lighter than every call box
    want = linear_to_srgb(cl.colors[0, :3])
    assert _chroma_dir(col) @ _chroma_dir(want) > 0.8, (col, want)
    calls = spec.layer("calls")
    for k in range(len(calls)):
        c, _ = _colour_at(img, _front_centre(calls, k))
        assert c.mean() < col.mean()
    # without clustering the same place shows 40 separate narrow boxes: many more edges
    img2, _, _ = _render(tmp_path, "nocluster.png", cluster_px=0, **BARE)
    m = ref.box_mask(cl.positions[0], cl.scales[0], img.shape[:2], grow=-1)
    assert m.sum() > 4
    lum1 = img[..., :3].mean(-1)[m]
    lum2 = img2[..., :3].mean(-1)[m]
    assert lum1.std() < lum2.std() or abs(lum1.mean() - lum2.mean()) > 0.1


def test_labels_readable_at_default_resolution(tmp_path):
    params = IcicleParams()  # default resolution 1920x1080
    path = tmp_path / "full.png"
    ref.render_case(params.to_dict() | {"resolution": tuple(params.resolution)}, path)
    img = ref.load_png(path)
    spec = icicle_layout(ref.reference_trace(), params)
    lab = spec.labels
    kinds = np.array(lab.kind)
    call_labels = np.flatnonzero(kinds == "call")
    assert len(call_labels) >= 3  # alpha, beta, gamma at least
    from tracevis3d.blender.figure_report import label_pixel_boxes

    boxes = [b[2:] for b in label_pixel_boxes()]  # the rendered text objects, projected through the camera
    lum = img[..., :3] @ np.array([0.2126, 0.7152, 0.0722])
    calls = spec.layer("calls")
    pos = {int(c): k for k, c in enumerate(calls.attributes["call_index"])}
    for j in call_labels:
        x0, y0, x1, y1, em = boxes[j]
        assert em >= 14.0, f"label {lab.texts[j]!r}: text size {em:.1f} px"
        # inside its box's front face, as the camera sees it
        k = pos[int(lab.call_index[j])]
        fx0, fy0, fx1, fy1 = ref.face_pixel_box(calls.positions[k], calls.scales[k])
        assert fx0 - 1 <= x0 and x1 <= fx1 + 1 and fy0 - 1 <= y0 and y1 <= fy1 + 1, (lab.texts[j], boxes[j])
        region = lum[int(y0):int(y1) + 1, int(x0):int(x1) + 1]
        dark_text = lab.material[j] == "TV3D_text_dark"
        text_px = region < 0.25 if dark_text else region > 0.8
        frac = text_px.mean()
        assert 0.04 < frac < 0.7, (lab.texts[j], frac)  # glyph strokes, not an empty or filled box
        # WCAG contrast ratio between text and box (linear luminance), >= 3:1 for large text
        lin = srgb_to_linear(region)
        ratio = (np.percentile(lin, 95) + 0.05) / (np.percentile(lin, 5) + 0.05)
        assert ratio >= 3.0, (lab.texts[j], ratio)
    # legend, title and lane name are drawn too, at least 14 px, inside the frame
    for kind in ("legend", "lane", "title", "axis"):
        for j in np.flatnonzero(kinds == kind):
            x0, y0, x1, y1, em = boxes[j]
            assert em >= 14.0 - 1e-3 and 0 <= x0 and x1 <= 1920 and 0 <= y0 and y1 <= 1080, (kind, boxes[j])
            win = srgb_to_linear(lum[int(y0):int(y1) + 1, int(x0):int(x1) + 1])
            # glyphs against the white page: WCAG contrast at least 4.5:1 (body text)
            assert (win.max() + 0.05) / (win.min() + 0.05) >= 4.5, (kind, lab.texts[j])


@pytest.mark.parametrize("name", sorted(ref.REFERENCE_CASES))
def test_matches_reference_image(name, tmp_path):
    path = tmp_path / f"{name}.png"
    ref.render_case(ref.REFERENCE_CASES[name], path)
    got = ref.load_png(path)[..., :3]
    want = ref.load_png(ref.REF_DIR / f"{name}.png")[..., :3]
    assert got.shape == want.shape
    diff = np.abs(got - want).max(-1)
    # tolerant: renderer noise and font hinting move a few edge pixels
    assert diff.mean() < 0.02, diff.mean()
    assert (diff > 0.25).mean() < 0.01, (diff > 0.25).mean()


def test_scene_content_attributes_and_rebuild():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    from tracevis3d.blender.scene import build_icicle, build_info

    tr = ref.reference_trace()
    p = IcicleParams(resolution=RES)
    info = build_icicle(tr, p)
    spec = icicle_layout(tr, p)
    coll = bpy.data.collections["TraceVis3D"]
    ob = bpy.data.objects[info["objects"]["layers"]["calls"]]
    assert ob.type == "POINTCLOUD" and ob.data.__class__.__name__ == "PointCloud"
    A = ob.data.attributes
    n = len(spec.layer("calls"))
    pos = np.empty(n * 3, np.float32)
    A["position"].data.foreach_get("vector", pos)
    assert np.array_equal(pos.reshape(n, 3), spec.layer("calls").positions)
    ci = np.empty(n, np.int32)
    A["call_index"].data.foreach_get("value", ci)
    assert np.array_equal(ci, spec.layer("calls").attributes["call_index"])
    assert A["tv_color"].data_type == "FLOAT_COLOR" and A["call_index"].data_type == "INT"
    assert ob.modifiers[0].type == "NODES"
    assert build_info()["params"] == p.to_dict()
    assert json.loads(bpy.context.scene["tracevis3d_build"])["trace_path"].endswith("reference")
    # the evaluated object really instances boxes: one instance per point
    dg = bpy.context.evaluated_depsgraph_get()
    n_inst = sum(1 for inst in dg.object_instances if inst.is_instance and inst.parent
                 and inst.parent.original == ob)
    assert n_inst == n
    # rebuilding replaces, never accumulates
    counts = (len(coll.objects), len(bpy.data.pointclouds), len(bpy.data.curves), len(bpy.data.cameras),
              len(bpy.data.materials), len(bpy.data.node_groups))
    build_icicle(tr, p)
    build_icicle(tr, p)
    assert counts == (len(coll.objects), len(bpy.data.pointclouds), len(bpy.data.curves),
                      len(bpy.data.cameras), len(bpy.data.materials), len(bpy.data.node_groups))


def test_pick_and_describe():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    from tracevis3d.blender.pick import describe_call, pick_ray
    from tracevis3d.blender.scene import build_icicle

    tr = ref.reference_trace()
    p = IcicleParams(resolution=RES)
    build_icicle(tr, p)
    spec = icicle_layout(tr, p)
    calls = spec.layer("calls")
    bpy.context.view_layer.update()
    cam = np.array(bpy.context.scene.camera.matrix_world.translation)
    for k, i in enumerate(calls.attributes["call_index"]):
        target = _front_centre(calls, k) + np.array([0, 0.001, 0])
        assert pick_ray(cam, target - cam) == i
    cl = spec.layer("clusters")
    got = pick_ray(cam, _front_centre(cl, 0) + [0, 0.001, 0] - cam)
    assert tr.func[got] == 4  # a call of the cluster (its longest)
    assert pick_ray(cam, [0, -1, 0]) is None  # looking away
    d = describe_call(tr, 1)
    assert d["name"].startswith("beta") and d["thread"] == "MainThread"
    assert d["start"] == 50.0 and d["duration"] == 400.0 and d["depth"] == 1
    assert d["self_time"] == pytest.approx(400.0 - 200.0)
    with pytest.raises(IndexError):
        describe_call(tr, 10_000)


def test_render_errors_and_transparency(tmp_path):
    from tracevis3d.blender.render import render_figure

    bpy.ops.wm.read_factory_settings(use_empty=True)
    with pytest.raises(ValueError, match="no camera"):
        render_figure(tmp_path / "x.png")
    ref.render_case(dict(resolution=(160, 90)), tmp_path / "a.png")
    with pytest.raises(ValueError, match="unknown render engine"):
        render_figure(tmp_path / "x.png", engine="povray")
    with pytest.raises(ValueError, match="resolution"):
        render_figure(tmp_path / "x.png", resolution=(0, 5))
    with pytest.raises(ValueError, match="folder"):
        render_figure(tmp_path / "nope" / "x.png")
    out = render_figure(tmp_path / "t.png", resolution=(160, 90), transparent=True)
    img = ref.load_png(out)
    assert img[0, 0, 3] == 0.0 and img[..., 3].max() == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["eevee", "cycles"])
def test_material_reads_instance_colours(tmp_path, engine):
    """EEVEE/Cycles colours come from the material reading the instancer attribute
    ``tv_color``: overwrite the attribute and the rendered boxes follow it."""
    from tracevis3d.blender.render import render_figure

    params = dict(show_labels=False, show_legend=False, show_axes=False, resolution=(160, 90))
    spec = _spec(**params)
    _render(tmp_path, "wb.png", **params)
    calls = spec.layer("calls")
    out = render_figure(tmp_path / "a.png", engine=engine, resolution=(160, 90), samples=8)
    img = ref.load_png(out)
    for k in range(len(calls)):
        c, _ = _colour_at(img, _front_centre(calls, k))
        want = linear_to_srgb(calls.colors[k, :3])
        assert _chroma_dir(c) @ _chroma_dir(want) > 0.8, (k, c, want)
    ob = bpy.data.objects["TV3D_calls"]
    n = len(calls)
    green = np.tile(np.array([0.0, 1.0, 0.0, 1.0], np.float32), n)
    ob.data.attributes["tv_color"].data.foreach_set("color", green)
    ob.data.update_tag()
    out = render_figure(tmp_path / "b.png", engine=engine, resolution=(160, 90), samples=8)
    img = ref.load_png(out)
    for k in range(n):
        c, _ = _colour_at(img, _front_centre(calls, k))
        assert c[1] > c[0] + 0.15 and c[1] > c[2] + 0.15, (k, c)


def test_build_from_edit_mode_and_excluded_collection():
    """Building works whatever state the user left the file in."""
    from tracevis3d.blender.scene import build_icicle

    bpy.ops.wm.read_factory_settings()  # the startup file: cube, light, camera
    cube = bpy.data.objects["Cube"]
    bpy.context.view_layer.objects.active = cube
    bpy.ops.object.mode_set(mode="EDIT")
    info = build_icicle(ref.reference_trace(), IcicleParams(resolution=RES))
    assert cube.mode == "OBJECT"
    n = len(bpy.data.collections["TraceVis3D"].objects)
    assert n == len(info["objects"]["labels"]) + len(info["objects"]["layers"]) + 1 + len(info["objects"]["lights"])
    bpy.context.view_layer.layer_collection.children["TraceVis3D"].exclude = True
    build_icicle(ref.reference_trace(), IcicleParams(resolution=RES))
    assert not bpy.context.view_layer.layer_collection.children["TraceVis3D"].exclude
    assert len(bpy.data.collections["TraceVis3D"].objects) == n
    assert bpy.context.scene.camera.name == info["objects"]["camera"]


def _material_state(mat) -> tuple:
    """A material's colour and its node tree: node types, every input's default value and
    every link (what `writer.ensure_material` writes), names aside."""
    nodes = sorted(mat.node_tree.nodes, key=lambda n: (n.bl_idname, tuple(n.location)))
    index = {n.name: k for k, n in enumerate(nodes)}

    def value(sock):
        v = getattr(sock, "default_value", None)
        return tuple(round(float(x), 7) for x in v) if hasattr(v, "__len__") and not isinstance(v, str) else v

    state = [(n.bl_idname, tuple(n.location), getattr(n, "operation", None),
              tuple((s.identifier, value(s)) for s in n.inputs), tuple(value(s) for s in n.outputs)) for n in nodes]
    links = sorted((index[lk.from_node.name], lk.from_socket.identifier, index[lk.to_node.name], lk.to_socket.identifier)
                   for lk in mat.node_tree.links)
    return tuple(round(float(c), 7) for c in mat.diffuse_color), mat.roughness, tuple(state), tuple(links)


def test_material_copied_from_a_template_is_the_material_built():
    """A build makes its second and later materials of one node shape as copies of the first
    (`writer.ensure_material`'s ``templates``): each is the material built node by node."""
    from tracevis3d.blender.writer import ensure_material
    from tracevis3d.layout.spec import MaterialSpec

    shapes = [dict(), dict(from_attribute=False), dict(kind="tube", cushion=False),
              dict(kind="tube", cushion=False, from_attribute=False), dict(kind="tube", gloss=0.6, from_attribute=False),
              dict(kind="tube", cushion=False, from_attribute=False, gloss=0.3, blended=True),
              dict(kind="text", cushion=False, from_attribute=False)]
    templates: dict = {}
    for k, shape in enumerate(shapes):
        for j, rgba in enumerate(((0.9, 0.2, 0.1, 1.0), (0.1, 0.5, 0.8, 0.7))):
            copied = ensure_material(MaterialSpec(f"TV3D_tpl_{k}_{j}", rgba, **shape), templates)
            built = ensure_material(MaterialSpec(f"TV3D_own_{k}_{j}", rgba, **shape))
            assert copied.name == f"TV3D_tpl_{k}_{j}"
            assert _material_state(copied) == _material_state(built), (shape, rgba)
            if shape.get("kind") == "tube":  # flows blend (smooth in EEVEE), the comparison's tubes dither
                want = "BLENDED" if shape.get("blended") else "DITHERED"
                assert copied.surface_render_method == built.surface_render_method == want, shape
    assert len(templates) == len(shapes)
