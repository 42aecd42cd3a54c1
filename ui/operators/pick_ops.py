"""Picking: what is under the mouse (Shift+Alt+D), or a given call or tube, shown as text in
the panel's Call Details and a popup: an icicle box, a box of one run of a comparison (with
its best match in the other), a tube (its two calls), a curve of the thread view (who
released the wait).  The ray casting and the descriptions are the Blender layer's
(`tracevis3d.blender.pick`); this module turns them into the session's ``picked_*`` fields."""
from __future__ import annotations

import json
import os

import bpy
from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import session
from .common import abspath, reported, settings_of, trace_path_of


def format_call(d: dict) -> str:
    """Multi-line text of `describe_call`'s dict (one 'key: value' per line)."""
    lines = []
    for key, value in d.items():
        if isinstance(value, float):
            value = f"{value:,.3f}"
        elif isinstance(value, (dict, list, tuple)):
            value = json.dumps(value, ensure_ascii=False, default=str)
            if len(value) > 200:
                value = value[:199] + "…"
        lines.append(f"{str(key).replace('_', ' ')}: {value}")
    return "\n".join(lines)


def _tube_hit(scene, match_index: int) -> dict:
    """The pick of the tube of kept match ``match_index`` (its first face)."""
    import numpy as np

    from ...tracevis3d.blender.pick import tube_hit
    from ...tracevis3d.blender.tubes import tube_values

    ob = properties.tube_object(scene)
    if ob is None:
        raise ValueError("no comparison scene: press Compare first")
    tubes = np.flatnonzero(tube_values(ob.data, "match_index") == match_index)
    if tubes.size == 0:
        raise ValueError(f"match {match_index} has no tube in this scene (not in view, or merged into another)")
    tube_index = np.empty(len(ob.data.polygons), np.int32)
    ob.data.attributes["tube_index"].data.foreach_get("value", tube_index)
    return tube_hit(ob, int(np.flatnonzero(tube_index == tubes[0])[0]), int(tubes[0]))


def _best_match_line(context, side: str, call: int) -> str | None:
    """"name (call j), similarity s" of the call's best partner, when the comparison of the
    panel's traces and τ is kept in the session (None otherwise: nothing is computed here)."""
    settings = settings_of(context)
    tau = float(f"{float(context.scene.tracevis3d_compare_params.tau):.7g}")  # as CompareParams.from_props reads it
    key = session.comparison_key(trace_path_of(context), abspath(settings.compare_path), tau,
                                 bool(context.scene.tracevis3d_compare_params.merge))
    cmp = session.cached_comparison(key)
    if cmp is None:
        return None
    rows = cmp.partners(call, side)
    if rows.size == 0:
        return "none: no call of the other run matches it (where the runs differ)"
    r = rows[0]
    other = "b" if side == "a" else "a"
    return f"{r[f'name_{other}']} (call {r[f'call_{other}']}), similarity {r['similarity']:.3f}"


def describe_extravis(context, hit: dict) -> tuple:
    """(title, fields, picked call, "") of a pick of the EXTRAVIS scene: an element (ring sector
    or icicle box), a relation tube or a mural row, in the window and at the level the scene
    was built with (its record; `tracevis3d.layout.extravis_describe`)."""
    from ...tracevis3d.blender.extravis_tasks import read_extravis_record
    from ...tracevis3d.blender.pick import describe_call
    from ...tracevis3d.layout.extravis_describe import describe_extravis_hit

    rec = read_extravis_record(context.scene)
    if rec is None:
        raise ValueError("no EXTRAVIS scene to describe: build it first (Who Calls Whom)")
    path = rec["trace_path"] if rec["trace_path"] and os.path.isfile(rec["trace_path"]) else trace_path_of(context)
    title, d, call = describe_extravis_hit(session.get_trace(path), rec["params"], hit, describe_call)
    return str(title), d, int(call), ""


def describe_band(hit: dict) -> tuple:
    """(title, fields, -1, "") of a pick of a memory band (`memory_tasks.pick_band`): the bytes
    it holds at the moment under the mouse, their age then, its peak, its allocations, the
    threads that allocated most of it and its heaviest stack."""
    from ...tracevis3d.layout.memory import fmt_bytes, fmt_ms

    d = {"band": int(hit["band"]), "at": fmt_ms(hit["at_ms"]), "holds then": fmt_bytes(hit["held_bytes"])}
    if "age_ms" in hit:
        d["age then"] = fmt_ms(hit["age_ms"])
    if "peak_bytes" in hit:
        d["peak"] = fmt_bytes(hit["peak_bytes"])
    for key, label in (("allocations", "allocations"), ("bytes_allocated", "allocated in all"),
                       ("leaked_bytes", "leaked")):
        if key in hit:
            d[label] = f"{hit[key]:,}" if key == "allocations" else fmt_bytes(hit[key])
    if "first_ms" in hit:
        d["allocating"] = f"{fmt_ms(hit['first_ms'])} – {fmt_ms(hit.get('last_ms', hit['first_ms']))}"
    if hit.get("size") is not None:
        d["range"] = f"{fmt_bytes(hit['size'])} at {hit.get('address', '?')}"
    if hit.get("threads"):
        d["threads"] = ", ".join(hit["threads"])
    if hit.get("stack"):
        d["stack"] = str(hit["stack"])
    return str(hit.get("name") or f"band {hit['band']}"), d, -1, ""


def describe_hit(context, hit: dict) -> tuple:
    """(title, fields, picked call, picked side) of a pick: an icicle box, a box of one run
    of a comparison (with its best match in the other), a tube (the two calls), or a part of
    the EXTRAVIS scene (`describe_extravis`)."""
    from ...tracevis3d.blender.pick import SIDE_NAMES, describe_box, describe_call, describe_match
    from ...tracevis3d.layout.extravis_describe import is_extravis_hit

    settings = settings_of(context)
    if is_extravis_hit(hit):
        return describe_extravis(context, hit)
    if hit["kind"] == "band":  # a band of the memory view: what it holds there and then
        return describe_band(hit)
    if hit["kind"] in ("counter", "flow", "instant", "async"):  # what a trace carries besides calls
        from ...tracevis3d.blender.pick import describe_side

        d = describe_side(session.get_trace(trace_path_of(context)), hit)
        title = f"{d['from']} → {d['to']}" if hit["kind"] == "flow" else d.get("name", hit["kind"])
        call = int(d.get("from_call", -1))
        return str(title), d, call, ""
    if hit["kind"] == "tube" or hit.get("side") is not None:
        a = session.get_trace(trace_path_of(context))
        b_path = abspath(settings.compare_path)
        if not b_path:
            raise ValueError("no second trace: set the trace to compare with")
        b = session.get_trace(b_path)
        if hit["kind"] == "tube":
            d = describe_match(a, b, hit)
            return f"{d['A']} ↔ {d['B']}", d, int(hit["call_a"]), "a"
        side, i = int(hit["side"]), int(hit["call"])
        tr, path = (a, trace_path_of(context)) if side == 0 else (b, b_path)
        _check_call(tr, i)
        d = describe_box(tr, i, side, os.path.basename(path))
        best = _best_match_line(context, "ab"[side], i)
        if best is not None:
            d[f"best match in {SIDE_NAMES[1 - side]}"] = best
        return str(d.get("name")), d, i, "ab"[side]
    trace = session.get_trace(trace_path_of(context))
    if _merged_figure(context.scene):  # a figure of merged stacks: its calls are the merged trace's
        from ...tracevis3d import merge

        trace = merge(trace)
    i = int(hit["call"])
    _check_call(trace, i)
    d = describe_call(trace, i)
    r = int(hit.get("release_call", -1))
    if hit["kind"] == "curve" and 0 <= r < len(trace):  # a correspondence of the thread view
        d["released by"] = (f"{trace.thread_names[trace.thread[r]]}: {trace.name(r).split(' (')[0]} (call {r}) "
                            f"at {trace.start[r] / 1e3:.3f} ms")
    return str(d.get("name", f"call {i}")), d, i, ""


def _merged_figure(scene) -> bool:
    """Is the scene's figure merged stacks (its layout's ``x_unit``, recorded by the build:
    `tracevis3d.blender.animate.remember_meta`)?"""
    from ...tracevis3d.blender.animate import META_KEY

    try:
        return bool(json.loads(scene.get(META_KEY, "{}")).get("x_unit"))
    except (TypeError, ValueError, AttributeError):
        return False


def _check_call(trace, i: int) -> None:
    if not 0 <= i < len(trace):
        raise ValueError(f"call index {i} out of range: the trace has {len(trace):,} calls")


@with_props([
    ("call_index", "Int", dict(name="Call", default=-1, min=-1, options={"SKIP_SAVE"},
                               description="Call to show (-1: the call under the mouse)")),
    ("side", "Enum", dict(name="Run", default="icicle", options={"SKIP_SAVE"},
                          items=(("icicle", "Trace", "A call of the scene's trace (an icicle)"),
                                 ("a", "A", "A call of run A of a comparison"),
                                 ("b", "B", "A call of run B of a comparison")),
                          description="Which trace the call index refers to")),
    ("match_index", "Int", dict(name="Match", default=-1, min=-1, options={"SKIP_SAVE"},
                                description="Show the tube of this match of a comparison (-1: none)")),
    ("element_index", "Int", dict(name="Element", default=-1, min=-1, options={"SKIP_SAVE"},
                                  description="Show this hierarchy element of the EXTRAVIS view (-1: none)")),
    ("mouse_x", "Int", dict(default=-1, options={"SKIP_SAVE", "HIDDEN"})),
    ("mouse_y", "Int", dict(default=-1, options={"SKIP_SAVE", "HIDDEN"}))])
class TRACEVIS3D_OT_show_call(Operator):
    """Show what is under the mouse: a call (name, thread, start, duration, self time, depth, args) or, in a comparison, a tube (its two calls, similarity, Δt, duration ratio)"""

    bl_idname = "tracevis3d.show_call"
    bl_label = "Show Call Under Mouse"

    @reported
    def invoke(self, context, event):
        if self.call_index < 0 and self.match_index < 0 and self.element_index < 0 and self.mouse_x < 0:
            self.mouse_x, self.mouse_y = event.mouse_region_x, event.mouse_region_y
        return self.execute(context)

    def _target(self, context) -> dict | None:
        """The pick: a given match or call, else what is under the mouse."""
        if self.match_index >= 0:
            return _tube_hit(context.scene, self.match_index)
        if self.element_index >= 0:
            return {"kind": "sector", "element_index": self.element_index}
        if self.call_index >= 0:
            return {"kind": "box", "call": self.call_index,
                    "side": None if self.side == "icicle" else "ab".index(self.side)}
        if self.mouse_x < 0 or self.mouse_y < 0:
            raise ValueError("no mouse position: run this from the 3D viewport (Shift+Alt+D) "
                             "or give a call index")
        if context.region is None or context.region_data is None:
            raise ValueError("the mouse is not over a 3D viewport")
        from ...tracevis3d.blender.pick import pick_detail

        return pick_detail(context, (self.mouse_x, self.mouse_y))

    @reported
    def execute(self, context):
        settings = settings_of(context)
        trace_path_of(context)  # no trace: one line, before anything is picked
        hit = self._target(context)
        if hit is None:
            self.report({"INFO"}, "No call under the mouse")
            return {"CANCELLED"}
        title, d, call, side = describe_hit(context, hit)
        text = format_call(d)
        settings.picked_call, settings.picked_side, settings.picked_text = call, side, text
        element = d.get("element") if hit.get("element_index", -1) >= 0 else None
        settings.picked_element = element if isinstance(element, str) else ""
        summary = "; ".join([ln for ln in text.splitlines() if not ln.startswith("index:")][:6])
        what = (title if "src_element" in hit or hit.get("element_index", -1) >= 0 else
                f"Tube {hit['match_index']}" if hit["kind"] == "tube" else
                f"Band {hit['band']} ({title})" if hit["kind"] == "band" else
                f"{hit['kind'].capitalize()} {hit['index']}" if "index" in hit else f"Call {call}")
        self.report({"INFO"}, f"{what}: {summary}")
        if not bpy.app.background and context.window_manager is not None:
            def draw(menu, _context):
                for line in text.splitlines():
                    menu.layout.label(text=line)

            context.window_manager.popup_menu(draw, title=title, icon="INFO")
        return {"FINISHED"}


CLASSES = (TRACEVIS3D_OT_show_call,)
