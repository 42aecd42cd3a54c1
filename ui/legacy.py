"""A .blend saved by the previous version of the add-on (before the parameter schemas,
commit 83e0e5d): its panel fields mapped onto today's groups.

Blender keeps the values of properties a registered class no longer defines in the data
block's system properties (``scene.bl_system_properties_get()``, Blender >= 5.0; the custom
properties before): one IDProperty group per pointer, ``tracevis3d``,
``tracevis3d_structure``, ``tracevis3d_threads``, an enum as the index of its item.  `migrate` reads the old values there through the explicit tables below
(`RENAMED`: old name -> new group and property, with the old enum items; `combined`: the
old fields that became one parameter), writes them into the new groups, and removes the
old values (so it happens once, and a saved file no longer carries them).  Values the new
properties cannot hold are skipped; nothing is printed.

Fields the previous version shared between views (the fold, the labels, the resolution,
the camera switch, the title, the filters) go into every view that used them.
"""
from __future__ import annotations

from ..tracevis3d.params.threads import THREADS

_EXTRUDE = ("constant", "inclusive", "self", "calls")
_COLOR_BY = ("auto", "function", "module", "kind", "depth", "inclusive", "self")
_THREAD_ORDER = ("default", "start", "name", "busy", "list")
_FOLD_MODE = ("auto", "none", "levels")
_ENGINE = ("workbench", "eevee", "cycles")          # BLENDER_WORKBENCH, BLENDER_EEVEE, CYCLES
_ORIENTATION = ("auto", "vertical", "horizontal")
_THREAD_COLOR = ("kind", "thread", "object")

S, ST, TH = "tracevis3d", "tracevis3d_structure", "tracevis3d_threads"
I, C, T, K = "tracevis3d_icicle_params", "tracevis3d_compare_params", "tracevis3d_threads_params", "tracevis3d_cone_params"
L = "tracevis3d_live_params"

#: (old group, old property) -> ([(new group, new property)], old enum items or None)
RENAMED = {
    (S, "extrude_measure"): ([(I, "extrude_measure")], _EXTRUDE),
    (S, "color_by"): ([(I, "color_by")], _COLOR_BY),
    (S, "threads"): ([(I, "threads")], None),
    (S, "thread_order"): ([(I, "thread_order")], _THREAD_ORDER),
    (S, "thread_order_list"): ([(I, "thread_order_list")], None),
    (S, "fold_mode"): ([(I, "fold_mode"), (C, "fold_mode")], _FOLD_MODE),
    (S, "fold_levels"): ([(I, "fold_levels"), (C, "fold_levels")], None),
    (S, "hide"): ([(I, "hide"), (K, "hide")], None),
    (S, "hide_modules"): ([(I, "hide_modules"), (K, "hide_modules")], None),
    (S, "use_time_window"): ([(I, "use_time_window")], None),
    (S, "time_window_start"): ([(I, "time_window_start")], None),
    (S, "time_window_end"): ([(I, "time_window_end")], None),
    (S, "use_max_depth"): ([(I, "use_max_depth")], None),
    (S, "max_depth"): ([(I, "max_depth")], None),
    (S, "resolution_x"): ([(I, "resolution_x"), (C, "resolution_x"), (K, "resolution_x")], None),
    (S, "resolution_y"): ([(I, "resolution_y"), (C, "resolution_y"), (K, "resolution_y")], None),
    (S, "cluster_px"): ([(I, "cluster_px"), (C, "cluster_px")], None),
    (S, "label_px"): ([(I, "label_px"), (C, "label_px"), (K, "label_px")], None),
    (S, "label_min_px"): ([(I, "label_min_px"), (C, "label_min_px")], None),
    (S, "lane_gap"): ([(I, "lane_gap")], None),
    (S, "orthographic"): ([(I, "orthographic"), (C, "orthographic")], None),
    (S, "show_labels"): ([(I, "show_labels"), (C, "show_labels")], None),
    (S, "show_legend"): ([(I, "show_legend"), (C, "show_legend"), (K, "show_legend")], None),
    (S, "show_axes"): ([(I, "show_axes")], None),
    (S, "show_title"): ([(I, "show_title"), (C, "show_title"), (K, "show_title")], None),
    (S, "title"): ([(I, "title"), (C, "title"), (K, "title")], None),
    (S, "render_engine"): ([(S, "engine")], _ENGINE),
    (S, "render_transparent"): ([(S, "transparent")], None),
    (S, "render_output"): ([(S, "output")], None),
    (S, "compare_tau"): ([(C, "tau")], None),
    (S, "compare_lam"): ([(C, "lam")], None),
    (S, "compare_band"): ([(C, "band")], None),
    (S, "compare_beta"): ([(C, "beta")], None),
    (S, "compare_thread_a"): ([(C, "thread_a")], None),
    (S, "compare_thread_b"): ([(C, "thread_b")], None),
    (S, "use_compare_window_a"): ([(C, "use_window_a")], None),
    (S, "compare_window_a_start"): ([(C, "window_a_start")], None),
    (S, "compare_window_a_end"): ([(C, "window_a_end")], None),
    (S, "use_compare_window_b"): ([(C, "use_window_b")], None),
    (S, "compare_window_b_start"): ([(C, "window_b_start")], None),
    (S, "compare_window_b_end"): ([(C, "window_b_end")], None),
    (S, "compare_brush_a"): ([(C, "brush_a")], None),
    (S, "compare_brush_b"): ([(C, "brush_b")], None),
    (S, "compare_align_a"): ([(C, "align_a")], None),
    (S, "compare_show_overview"): ([(C, "show_overview")], None),
    (ST, "hide_utilities"): ([(I, "hide_utilities"), (K, "hide_utilities")], None),
    (ST, "collapse_patterns"): ([(I, "collapse_patterns"), (K, "collapse_patterns")], None),
    (ST, "highlight"): ([(I, "highlight"), (K, "highlight")], None),
    (ST, "search_pattern"): ([(S, "search_pattern")], None),
    (ST, "bookmark_note"): ([(S, "bookmark_note")], None),
    (ST, "cone_max_nodes"): ([(K, "max_nodes")], None),
    (ST, "cone_orientation"): ([(K, "orientation")], _ORIENTATION),
    (ST, "cone_fold_recursion"): ([(K, "fold_recursion")], None),
    (ST, "cone_expand"): ([(K, "expand"), (I, "expand")], None),
    (TH, "highlight_picked"): ([(S, "highlight_picked")], None),
    (TH, "focus"): ([(T, "focus")], None),
    (TH, "color_by"): ([(T, "color_by")], _THREAD_COLOR),
    (TH, "threads"): ([(T, "threads")], None),
    (TH, "hide_threads"): ([(T, "hide_threads")], None),
    (TH, "max_levels"): ([(T, "max_levels")], None),
    (TH, "zero_radius"): ([(T, "zero_radius")], None),
    (TH, "focus_scale"): ([(T, "focus_scale")], None),
    (TH, "show_icicle"): ([(T, "show_icicle")], None),
    (S, "live_follow"): ([(L, "follow")], None),
    # kept as they were (same name and type in the session group tracevis3d): trace_path,
    # trace_path_rel, compare_path, compare_path_rel, live_endpoint, live_connect; not saved (SKIP_SAVE): picked_*, live_status, compare_summary and the
    # thread view's summary / picked_text
}

#: old fields that became one new parameter, with their old defaults (an old value absent
#: from the file is the old default): old keys -> how the new properties are set (`_combined`)
COMBINED = {
    (S, "lane_gap_auto"): True,                  # -> icicle use_lane_gap = not lane_gap_auto
    (S, "render_samples"): 0,                    # 0 (engine default) -> use_samples off
    (S, "compare_color_by"): 0, (S, "compare_viewpoint"): 0,   # "trace" + viewpoint -> trace-a / trace-b
    (S, "compare_all_tubes"): False,             # -> declutter_px 0 (all tubes) or 96
    (TH, "fold"): "auto",                        # fold text -> fold_mode / fold_levels
    (TH, "use_window"): False, (TH, "window_start"): 0.0, (TH, "window_end"): 100.0,  # ms -> µs
    (S, "live_window_ms"): 1000.0,               # ms -> the live view's window_us
}
_COMPARE_COLOR = ("permutation", "trace", "similarity", "ratio")
_VIEWPOINT = ("a", "b")


def _container(scene):
    """Where the values of Python-defined properties are stored: the system properties
    (Blender >= 5.0), else the custom properties, which they share with them (4.x)."""
    if hasattr(scene, "bl_system_properties_get"):
        return scene.bl_system_properties_get()
    return scene


def _stored(scene) -> dict:
    """old group -> the IDProperty group holding its stored values (those present)."""
    box = _container(scene)
    if box is None:
        return {}
    return {g: box[g] for g in (S, ST, TH) if g in box.keys() and hasattr(box[g], "keys")}


def _enum(items, v):
    if isinstance(v, str):
        return v
    return items[int(v)]


def _combined(old: dict) -> list:
    """(group, property, value) of the old fields that became one parameter."""
    out = []

    def get(key):
        return old[key] if key in old else COMBINED[key]

    if (S, "lane_gap_auto") in old:
        out.append((I, "use_lane_gap", not bool(old[(S, "lane_gap_auto")])))
    if (S, "render_samples") in old:
        n = int(old[(S, "render_samples")])
        out.append((S, "use_samples", n > 0))
        if n > 0:
            out.append((S, "samples", n))
    if (S, "compare_color_by") in old or (S, "compare_viewpoint") in old:
        mode = _enum(_COMPARE_COLOR, get((S, "compare_color_by")))
        if mode == "trace":
            mode = f"trace-{_enum(_VIEWPOINT, get((S, 'compare_viewpoint')))}"
        out.append((C, "color_by", mode))
    if (S, "compare_all_tubes") in old:
        out.append((C, "declutter_px", 0.0 if old[(S, "compare_all_tubes")] else 96.0))
    if (TH, "fold") in old:
        p = THREADS["fold"]
        try:
            fold = p.kind.check(str(old[(TH, "fold")]).strip() or "auto", p.name)
            p.kind.to_props(p, fold, lambda name, v: out.append((T, name, v)))
        except ValueError:
            pass
    if any(k in old for k in ((TH, "use_window"), (TH, "window_start"), (TH, "window_end"))):
        out.append((T, "use_time_window", bool(get((TH, "use_window")))))
        out.append((T, "time_window_start", 1e3 * float(get((TH, "window_start")))))
        out.append((T, "time_window_end", 1e3 * float(get((TH, "window_end")))))
    if (S, "live_window_ms") in old:
        out.append((L, "window_us", 1e3 * float(old[(S, "live_window_ms")])))
    return out


def assignments(old: dict) -> list:
    """(new group, new property, value) for the old values ``old`` ({(group, name): value}),
    by the tables `RENAMED` and `COMBINED`."""
    out = []
    for key, v in old.items():
        if key in RENAMED:
            targets, items = RENAMED[key]
            try:
                v = _enum(items, v) if items else v
            except (IndexError, TypeError, ValueError):
                continue
            out.extend((g, name, v) for g, name in targets)
    return out + _combined(old)


def migrate(scene) -> bool:
    """Map the previous version's stored values of ``scene`` onto the new groups and remove
    them; True if there were any."""
    stored = _stored(scene)
    old = {}
    for group, idp in stored.items():
        for name in list(idp.keys()):
            if (group, name) in RENAMED or (group, name) in COMBINED:
                v = idp[name]
                old[(group, name)] = v.to_dict() if hasattr(v, "to_dict") else v
    if not old:
        return False
    for group, name, value in assignments(old):
        target = getattr(scene, group, None)
        if target is None:
            continue
        try:
            setattr(target, name, value)
        except (TypeError, ValueError, OverflowError, AttributeError):
            pass
    for group, name in old:
        try:
            del stored[group][name]
        except (KeyError, TypeError):
            pass
    for group in (ST, TH):  # groups no version registers any more
        if group in stored and not stored[group].keys():
            try:
                del _container(scene)[group]
            except (KeyError, TypeError):
                pass
    return True
