"""Geometry Nodes groups of the animations (`blender.animate`): data, not Python.

- ``TV3D_growth``: a modifier placed before a layer's instancer
  (`writer.instancer_group_steps`).  From the Scene Time node's seconds it computes the
  trace time "now" (the clock below) and, per point, the visible share of its box
  f = clamp((now − t_start) / (t_end − t_start)) from the point attributes ``t_start`` and
  ``t_end`` (µs from the figure's left edge); the box keeps its left edge and its width
  becomes f times its width (``tv_scale``.x).  A box with f = 0 has no width and the
  instancer leaves it out, so a call appears when its start is reached.
- ``TV3D_now``: the "now" line (a thin bar over the lanes' height at x(now)) and the clock
  (the trace time as text, String to Curves with Blender's built-in font).

The clock, the same in both: u = clamp((seconds − Start) / Duration), e = u + Ease·(3u² −
2u³ − u) (Ease 0: linear, 1: smoothstep), now = Trace Start + e·(Trace End − Trace
Start).  Start, Duration, Ease, Trace Start and Trace End are inputs of every modifier, driven by
the scene's custom properties ``TraceVis3D clock: …`` (`write_clock`; drivers that need no
Python), which the names' visibility drivers read too: a presenter retimes the whole
animation by editing those five properties.  `trace_time` is the same mapping in
Python (tests, labels' keyframes).
"""
from __future__ import annotations

import math

import bpy
import numpy as np

from .compat import modifier_input_path, set_modifier_input, set_node_option
from .meshobj import tag_datablock

CLOCK_INPUTS = (("Start (s)", 0.0), ("Duration (s)", 1.0), ("Ease", 1.0),
                ("Trace Start (µs)", 0.0), ("Trace End (µs)", 1.0))

GROWTH_MODIFIER = "TraceVis3D growth"  # the modifier a growth puts on every box layer


def trace_time(frames, fps: float, start_s: float, duration_s: float, ease: float, t0: float, t1: float):
    """The trace time (µs) the clock shows at scene ``frames`` (the nodes' formula)."""
    u = np.clip((np.asarray(frames, np.float64) / fps - start_s) / duration_s, 0.0, 1.0)
    e = u + ease * (u * u * (3.0 - 2.0 * u) - u)
    return t0 + e * (t1 - t0)


def clock_seconds(times, clock: dict):
    """The scene second at which the clock (a modifier's inputs, `CLOCK_INPUTS`) reaches
    each trace time in ``times`` (the inverse of `trace_time`; clamped to the animation)."""
    t0, t1 = clock["Trace Start (µs)"], clock["Trace End (µs)"]
    e = np.clip((np.asarray(times, np.float64) - t0) / max(t1 - t0, 1e-30), 0.0, 1.0)
    u = np.linspace(0.0, 1.0, 4097)
    eased = u + clock["Ease"] * (u * u * (3.0 - 2.0 * u) - u)
    return clock["Start (s)"] + np.interp(e, eased, u) * clock["Duration (s)"]


class _Graph:
    """A little helper to add nodes and links to a node tree."""

    def __init__(self, ng):
        self.ng, self.N, self.L = ng, ng.nodes, ng.links

    def node(self, kind: str, loc=(0, 0), **props):
        n = self.N.new(kind)
        n.location = loc
        for k, v in props.items():
            setattr(n, k, v)
        return n

    def link(self, a, b):
        self.L.new(a, b)

    def math(self, op, a, b=None, c=None, clamp=False, loc=(0, 0)):
        n = self.node("ShaderNodeMath", loc, operation=op, use_clamp=clamp)
        for k, v in enumerate((a, b, c)):
            if v is None:
                continue
            if isinstance(v, (int, float)):
                n.inputs[k].default_value = float(v)
            else:
                self.link(v, n.inputs[k])
        return n.outputs[0]

    def attribute(self, name: str, data_type: str = "FLOAT", loc=(0, 0)):
        n = self.node("GeometryNodeInputNamedAttribute", loc, data_type=data_type)
        n.inputs["Name"].default_value = name
        return n.outputs["Attribute"]

    def combine(self, x, y, z, loc=(0, 0)):
        n = self.node("ShaderNodeCombineXYZ", loc)
        for k, v in enumerate((x, y, z)):
            if isinstance(v, (int, float)):
                n.inputs[k].default_value = float(v)
            else:
                self.link(v, n.inputs[k])
        return n.outputs[0]


def _new_group(name: str, inputs: tuple):
    """A fresh Geometry Nodes group with a Geometry input and output and float ``inputs``
    ((name, default) each); the group and its input node."""
    ng = tag_datablock(bpy.data.node_groups.new(name, "GeometryNodeTree"))
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    for sname, default in inputs:
        sock = ng.interface.new_socket(sname, in_out="INPUT", socket_type="NodeSocketFloat")
        sock.default_value = default
    g = _Graph(ng)
    return ng, g, g.node("NodeGroupInput", (-1200, 0)), g.node("NodeGroupOutput", (1400, 0))


def _clock(g: _Graph, gi):
    """The trace time "now" from the Scene Time node and the clock inputs (module docstring)."""
    sec = g.node("GeometryNodeInputSceneTime", (-1000, 400)).outputs["Seconds"]
    a = g.math("SUBTRACT", sec, gi.outputs["Start (s)"], loc=(-800, 400))
    u = g.math("DIVIDE", a, gi.outputs["Duration (s)"], clamp=True, loc=(-650, 400))
    s1 = g.math("MULTIPLY_ADD", u, -2.0, 3.0, loc=(-500, 500))
    s2 = g.math("MULTIPLY", u, u, loc=(-500, 350))
    smooth = g.math("MULTIPLY", s1, s2, loc=(-350, 450))
    d = g.math("SUBTRACT", smooth, u, loc=(-200, 450))
    e = g.math("MULTIPLY_ADD", d, gi.outputs["Ease"], u, loc=(-50, 450))
    span = g.math("SUBTRACT", gi.outputs["Trace End (µs)"], gi.outputs["Trace Start (µs)"], loc=(-50, 300))
    return g.math("MULTIPLY_ADD", e, span, gi.outputs["Trace Start (µs)"], loc=(100, 400))


#: point attributes the growth modifier drops before the instancer (the material reads only
#: ``tv_color`` and ``tv_local``, the instancer ``tv_scale`` and ``tv_mat``)
DROPPED_ATTRIBUTES = ("call_index", "depth", "lane", "folded_levels", "call_count", "t_start", "t_end")


def growth_group() -> bpy.types.NodeTree:
    """``TV3D_growth`` (module docstring)."""
    ng, g, gi, go = _new_group("TV3D_growth", CLOCK_INPUTS)
    now = _clock(g, gi)
    ts, te = g.attribute("t_start", loc=(-400, -200)), g.attribute("t_end", loc=(-400, -350))
    grown = g.math("SUBTRACT", now, ts, loc=(250, -100))
    length = g.math("MAXIMUM", g.math("SUBTRACT", te, ts, loc=(-200, -300)), 1e-9, loc=(0, -300))
    f = g.math("DIVIDE", grown, length, clamp=True, loc=(400, -150))
    sep = g.node("ShaderNodeSeparateXYZ", (-200, -500))
    g.link(g.attribute("tv_scale", "FLOAT_VECTOR", loc=(-400, -500)), sep.inputs[0])
    sx = sep.outputs["X"]
    nsx = g.math("MULTIPLY", sx, f, loc=(550, -300))
    ox = g.math("MULTIPLY", g.math("SUBTRACT", nsx, sx, loc=(700, -300)), 0.5, loc=(850, -300))
    setpos = g.node("GeometryNodeSetPosition", (1000, 0))
    g.link(gi.outputs["Geometry"], setpos.inputs["Geometry"])
    g.link(g.combine(ox, 0.0, 0.0, loc=(1000, -300)), setpos.inputs["Offset"])
    store = g.node("GeometryNodeStoreNamedAttribute", (1200, 0), data_type="FLOAT_VECTOR", domain="POINT")
    store.inputs["Name"].default_value = "tv_scale"
    g.link(setpos.outputs["Geometry"], store.inputs["Geometry"])
    g.link(g.combine(nsx, sep.outputs["Y"], sep.outputs["Z"], loc=(1000, -450)), store.inputs["Value"])
    last = store.outputs["Geometry"]
    # what the instancer after it does not need: fewer attributes to carry to every instance
    # (picking reads the point cloud itself, not the evaluated instances)
    for j, name in enumerate(DROPPED_ATTRIBUTES):
        rm = g.node("GeometryNodeRemoveAttribute", (1200 + 150 * j, -200))
        rm.inputs["Name"].default_value = name
        g.link(last, rm.inputs["Geometry"])
        last = rm.outputs["Geometry"]
    g.link(last, go.inputs["Geometry"])
    return ng


NOW_INPUTS = CLOCK_INPUTS + (("World per µs", 1.0), ("Bottom", 0.0), ("Top", 1.0), ("Front", 0.0),
                             ("Thickness", 0.01), ("Text Size", 0.1), ("Clock Offset (µs)", 0.0),
                             ("Clock Scale", 1e-3), ("Left", 0.0), ("Right", 1.0))


def now_group(unit: str, decimals: int, line_material, text_material) -> bpy.types.NodeTree:
    """``TV3D_now``: the "now" line and the clock text ``<time> <unit>`` (module docstring).
    The time shown is (now + Clock Offset) · Clock Scale with ``decimals`` decimals."""
    ng, g, gi, go = _new_group("TV3D_now", NOW_INPUTS)
    I = gi.outputs
    now = _clock(g, gi)
    x = g.math("MULTIPLY", now, I["World per µs"], loc=(300, 400))
    height = g.math("SUBTRACT", I["Top"], I["Bottom"], loc=(300, 200))
    zmid = g.math("MULTIPLY_ADD", height, 0.5, I["Bottom"], loc=(450, 200))
    cube = g.node("GeometryNodeMeshCube", (450, 0))
    g.link(g.combine(I["Thickness"], I["Thickness"], height, loc=(300, 0)), cube.inputs["Size"])
    bar = g.node("GeometryNodeTransform", (650, 0))
    g.link(cube.outputs["Mesh"], bar.inputs["Geometry"])
    g.link(g.combine(x, I["Front"], zmid, loc=(450, -150)), bar.inputs["Translation"])
    bar_mat = g.node("GeometryNodeSetMaterial", (850, 0))
    bar_mat.inputs["Material"].default_value = line_material
    g.link(bar.outputs["Geometry"], bar_mat.inputs["Geometry"])
    # the clock's text
    shown = g.math("MULTIPLY", g.math("ADD", now, I["Clock Offset (µs)"], loc=(300, -400)), I["Clock Scale"],
                   loc=(450, -400))
    v2s = g.node("FunctionNodeValueToString", (600, -400))
    v2s.inputs["Decimals"].default_value = int(decimals)
    g.link(shown, v2s.inputs["Value"])
    join = g.node("GeometryNodeStringJoin", (800, -400))
    join.inputs["Delimiter"].default_value = " "
    unit_node = g.node("FunctionNodeInputString", (600, -550))
    unit_node.string = unit
    g.link(unit_node.outputs[0], join.inputs["Strings"])  # multi-input: the last link comes first
    g.link(v2s.outputs["String"], join.inputs["Strings"])
    s2c = g.node("GeometryNodeStringToCurves", (950, -400))
    set_node_option(s2c, "align_x", "CENTER")
    set_node_option(s2c, "align_y", "BOTTOM_BASELINE")
    g.link(join.outputs["String"], s2c.inputs["String"])
    g.link(I["Text Size"], s2c.inputs["Size"])
    real = g.node("GeometryNodeRealizeInstances", (1100, -400))
    g.link(s2c.outputs["Curve Instances"], real.inputs["Geometry"])
    fill = g.node("GeometryNodeFillCurve", (1250, -400))
    g.link(real.outputs["Geometry"], fill.inputs["Curve"])
    # centred over the bar, kept inside [Left, Right] (half a text of 8 characters each side)
    half = g.math("MULTIPLY", I["Text Size"], 2.2, loc=(450, -700))
    lo = g.math("ADD", I["Left"], half, loc=(600, -700))
    hi = g.math("SUBTRACT", I["Right"], half, loc=(600, -850))
    tx = g.math("MINIMUM", g.math("MAXIMUM", x, lo, loc=(750, -700)), hi, loc=(900, -700))
    tz = g.math("MULTIPLY_ADD", I["Text Size"], 0.4, I["Top"], loc=(900, -850))
    place = g.node("GeometryNodeTransform", (1400, -400))
    place.inputs["Rotation"].default_value = (math.pi / 2, 0.0, 0.0)  # upright, facing −y
    g.link(fill.outputs["Mesh"], place.inputs["Geometry"])
    g.link(g.combine(tx, I["Front"], tz, loc=(1250, -700)), place.inputs["Translation"])
    text_mat = g.node("GeometryNodeSetMaterial", (1550, -400))
    text_mat.inputs["Material"].default_value = text_material
    g.link(place.outputs["Geometry"], text_mat.inputs["Geometry"])
    both = g.node("GeometryNodeJoinGeometry", (1700, 0))
    g.link(text_mat.outputs["Geometry"], both.inputs[0])
    g.link(bar_mat.outputs["Geometry"], both.inputs[0])
    go.location = (1900, 0)
    g.link(both.outputs[0], go.inputs["Geometry"])
    return ng


REVEAL_INPUTS = (("Grow (s)", 0.5),)


def reveal_group() -> bpy.types.NodeTree:
    """``TV3D_reveal``: a comparison's tubes appear one after another, each growing from A to
    B.  Per vertex ``t_reveal`` (the scene second its tube starts) and ``t_along`` (0 at its
    A end, 1 at its B end): a vertex is kept while clamp((seconds − t_reveal) / Grow) ≥
    t_along, so a tube's rings appear from A to B over Grow seconds."""
    ng, g, gi, go = _new_group("TV3D_reveal", REVEAL_INPUTS)
    sec = g.node("GeometryNodeInputSceneTime", (-1000, 400)).outputs["Seconds"]
    since = g.math("SUBTRACT", sec, g.attribute("t_reveal", loc=(-1000, 200)), loc=(-800, 300))
    progress = g.math("DIVIDE", since, gi.outputs["Grow (s)"], clamp=True, loc=(-600, 300))
    cmp = g.node("FunctionNodeCompare", (-400, 300), data_type="FLOAT", operation="LESS_THAN")
    g.link(progress, cmp.inputs["A"])
    g.link(g.attribute("t_along", loc=(-600, 100)), cmp.inputs["B"])
    not_yet = g.node("FunctionNodeCompare", (-400, 100), data_type="FLOAT", operation="LESS_EQUAL")
    g.link(progress, not_yet.inputs["A"])
    not_yet.inputs["B"].default_value = 0.0
    either = g.node("FunctionNodeBooleanMath", (-250, 200), operation="OR")
    g.link(cmp.outputs["Result"], either.inputs[0])
    g.link(not_yet.outputs["Result"], either.inputs[1])
    drop = g.node("GeometryNodeDeleteGeometry", (-100, 0), domain="POINT")
    g.link(gi.outputs["Geometry"], drop.inputs["Geometry"])
    g.link(either.outputs[0], drop.inputs["Selection"])
    g.link(drop.outputs["Geometry"], go.inputs["Geometry"])
    return ng


def handoff_group() -> bpy.types.NodeTree:
    """``TV3D_handoffs``: the thread view's correspondence curves appear at their times.  A
    face whose ``t_handoff`` (µs from the window's start: the moment the wait was released)
    the clock (`_clock`) has not reached is deleted."""
    return appear_group("TV3D_handoffs", "t_handoff")


def appear_group(name: str = "TV3D_appear", attribute: str = "t_appear") -> bpy.types.NodeTree:
    """A group that deletes every face whose time attribute ``attribute`` (µs from the
    window's start) the clock (`_clock`) has not reached: the hand-offs (`handoff_group`),
    the cone tree's nodes, edges and circles (their calling context's first call)."""
    ng, g, gi, go = _new_group(name, CLOCK_INPUTS)
    now = _clock(g, gi)
    later = g.node("FunctionNodeCompare", (300, 0), data_type="FLOAT", operation="GREATER_THAN")
    g.link(g.attribute(attribute, loc=(100, -100)), later.inputs["A"])
    g.link(now, later.inputs["B"])
    drop = g.node("GeometryNodeDeleteGeometry", (500, 0), domain="FACE")
    g.link(gi.outputs["Geometry"], drop.inputs["Geometry"])
    g.link(later.outputs["Result"], drop.inputs["Selection"])
    g.link(drop.outputs["Geometry"], go.inputs["Geometry"])
    return ng


ARC_INPUTS = CLOCK_INPUTS + (("Centre X", 0.0), ("Centre Z", 0.0), ("Stretch X", 1.0))


def arc_growth_group() -> bpy.types.NodeTree:
    """``TV3D_arc_growth``: the thread view's ring sectors (bent boxes upright in the front
    plane, time along the angle) grow along their arcs.  Per face ``t_first`` (µs from the
    window's start: its sector's start) — a face whose sector has not started is deleted;
    per vertex ``t_vertex`` (the time at its angle), ``ring_r`` (its distance from the
    ring's centre, world units) and the angle map of its lane, θ(t) = ``arc_a0`` + t ·
    ``arc_dadt`` — a vertex later than now moves along its circle to θ(now):
    (Centre X + Stretch X · r cos θ, y, Centre Z − r sin θ) (a half-ellipse when the ring is
    stretched, `layout.ring.RingPlacement`), so a sector's far end travels with the clock
    and a call is whole once its end is reached."""
    ng, g, gi, go = _new_group("TV3D_arc_growth", ARC_INPUTS)
    I = gi.outputs
    now = _clock(g, gi)
    later = g.node("FunctionNodeCompare", (300, 200), data_type="FLOAT", operation="GREATER_THAN")
    g.link(g.attribute("t_first", loc=(100, 250)), later.inputs["A"])
    g.link(now, later.inputs["B"])
    drop = g.node("GeometryNodeDeleteGeometry", (500, 0), domain="FACE")
    g.link(gi.outputs["Geometry"], drop.inputs["Geometry"])
    g.link(later.outputs["Result"], drop.inputs["Selection"])
    theta = g.math("MULTIPLY_ADD", now, g.attribute("arc_dadt", loc=(100, -200)), g.attribute("arc_a0", loc=(100, -350)),
                   loc=(300, -250))
    r = g.attribute("ring_r", loc=(300, -450))
    x = g.math("MULTIPLY_ADD", g.math("MULTIPLY", r, I["Stretch X"], loc=(450, -150)),
               g.math("COSINE", theta, loc=(450, -250)), I["Centre X"], loc=(600, -250))
    z = g.math("SUBTRACT", I["Centre Z"], g.math("MULTIPLY", r, g.math("SINE", theta, loc=(450, -400)),
                                                  loc=(600, -400)), loc=(750, -400))
    sep = g.node("ShaderNodeSeparateXYZ", (600, -600))
    g.link(g.node("GeometryNodeInputPosition", (450, -600)).outputs[0], sep.inputs[0])
    ahead = g.node("FunctionNodeCompare", (600, -100), data_type="FLOAT", operation="GREATER_THAN")
    g.link(g.attribute("t_vertex", loc=(450, -100)), ahead.inputs["A"])
    g.link(now, ahead.inputs["B"])
    setpos = g.node("GeometryNodeSetPosition", (900, 0))
    g.link(drop.outputs["Geometry"], setpos.inputs["Geometry"])
    g.link(ahead.outputs["Result"], setpos.inputs["Selection"])
    g.link(g.combine(x, sep.outputs["Y"], z, loc=(800, -400)), setpos.inputs["Position"])
    g.link(setpos.outputs["Geometry"], go.inputs["Geometry"])
    return ng


#: the scene's custom properties that hold the clock (one place to retime an animation)
CLOCK_PROPERTY = "TraceVis3D clock: {}"


def write_clock(scene, clock: dict) -> None:
    """The clock's inputs (`CLOCK_INPUTS`) as the scene's custom properties, where every
    modifier's clock inputs and every name's visibility read them (`set_inputs`,
    `hide_while_before`): editing them in Scene Properties > Custom Properties retimes the
    whole animation."""
    for name, _ in CLOCK_INPUTS:
        if name in clock:
            scene[CLOCK_PROPERTY.format(name)] = float(clock[name])


def read_clock(scene) -> dict:
    """The clock the scene's custom properties hold now (`write_clock`)."""
    return {name: float(scene[CLOCK_PROPERTY.format(name)]) for name, _ in CLOCK_INPUTS
            if CLOCK_PROPERTY.format(name) in scene}


def clear_clock(scene) -> None:
    for name, _ in CLOCK_INPUTS:
        key = CLOCK_PROPERTY.format(name)
        if key in scene:
            del scene[key]


def _scene_variable(driver, var_name: str, scene, data_path: str) -> None:
    v = driver.variables.new()
    v.name, v.type = var_name, "SINGLE_PROP"
    v.targets[0].id_type = "SCENE"
    v.targets[0].id = scene
    v.targets[0].data_path = data_path


def set_inputs(mod, values: dict) -> None:
    """A Geometry Nodes modifier's input values by socket name; the clock's inputs
    (`CLOCK_INPUTS`) are also driven by the scene's clock properties (`write_clock`, written
    here): single-property drivers, which Blender evaluates without Python (they work in
    background renders and with script auto-run off)."""
    items = {it.name: it for it in mod.node_group.interface.items_tree
             if getattr(it, "in_out", None) == "INPUT" and it.socket_type != "NodeSocketGeometry"}
    clock_names = {name for name, _ in CLOCK_INPUTS}
    ob = mod.id_data
    scene = ob.users_scene[0] if ob.users_scene else None
    if scene is not None and clock_names & set(values):
        write_clock(scene, values)
    for name, v in values.items():
        ident = items[name].identifier
        set_modifier_input(mod, ident, float(v))
        if name in clock_names and scene is not None:
            fc = ob.driver_add(modifier_input_path(mod.name, ident))
            fc.driver.type = "AVERAGE"
            _scene_variable(fc.driver, "v", scene, f'["{CLOCK_PROPERTY.format(name)}"]')


def hide_while_before(ob, at_us: float, scene) -> None:
    """Hide ``ob`` (render and viewport) while the scene's clock (`write_clock`) has not
    reached trace time ``at_us``: a driver whose simple expression is the clock's formula
    (`trace_time`), evaluated by Blender without Python, so it follows a retime."""
    # e = u + ea·(3u² − 2u³ − u) written as u·(1 + ea·(u·(3 − 2u) − 1)): a driver's expression
    # holds at most 255 characters
    u = "min(max((frame*fb/fps-st)/(du+1e-9),0),1)"  # the Scene Time node's seconds: frame / (fps / fps_base)
    now = f"ts+{u}*(1+ea*({u}*(3-2*{u})-1))*(te-ts)"
    for prop in ("hide_render", "hide_viewport"):
        fc = ob.driver_add(prop)
        d = fc.driver
        d.type = "SCRIPTED"
        for var, name in (("st", "Start (s)"), ("du", "Duration (s)"), ("ea", "Ease"), ("ts", "Trace Start (µs)"),
                          ("te", "Trace End (µs)")):
            _scene_variable(d, var, scene, f'["{CLOCK_PROPERTY.format(name)}"]')
        _scene_variable(d, "fps", scene, "render.fps")
        _scene_variable(d, "fb", scene, "render.fps_base")
        d.expression = f"{now}<{float(at_us)!r}"  # full precision: a time clamped to the end is reached
        if not d.is_simple_expression:  # pragma: no cover - would need Python (off in background renders)
            raise RuntimeError(f"the visibility driver of {ob.name!r} is not a simple expression: {d.expression}")
