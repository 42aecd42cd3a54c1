"""What a pick of the EXTRAVIS scene is, in words (bpy-free; Show Call in both views).

The scene's picks (`blender.pick.pick_ray_detail`) carry indices only: a ring sector or an
icicle box its ``element_index``, a relation tube its ``src_element``/``dst_element`` and
``calls``, a mural row its ``call`` (of the loaded trace) and pixel ``line``.  Elements are
those of the hierarchy of the *shown* trace (after ``fold``/``hide``, `layout.extravis.shown_trace`)
and the counts are those of the *window* (``time_window``), so describing a pick needs the
parameters the scene was built with (its build record, ``scene["tracevis3d_extravis"]``).

- `describe_element`: the element's dotted path (package.module.class.function), its kind,
  and within the window the calls it receives from outside its subtree ("calls in"), makes
  to outside ("calls out") and makes inside it ("calls within");
- `describe_relation`: caller element → callee element, its calls, the first and last call's
  start (and those calls);
- `describe_extravis_hit`: either of those or, for a mural row, `blender`-free
  `describe_row` (the call, as `describe_call` says it, plus its relation).
"""
from __future__ import annotations

import numpy as np

from ..analysis.hierarchy import KIND_NAMES
from ..model import Trace
from ..params.extravis import ExtravisParams

_CACHE: dict = {}  # the last (trace, params) -> context: a pick after a pick costs nothing


def extravis_context(trace: Trace, params: ExtravisParams) -> dict:
    """{"trace": the shown trace, "orig": its calls' indices in ``trace`` (or None),
    "h": its `Hierarchy`, "seq": the window's calls (shown-trace indices, sequence order),
    "caller"/"callee": their elements at the level, "params": ``params`` with its level resolved
    (``auto``: `layout.extravis.resolved_level`)} as `layout.extravis.extravis_layout` has them."""
    from .extravis import extravis_hierarchy, resolved_level, shown_trace, window_calls

    params = params.validate()
    key = (id(trace), len(trace), repr(params.to_dict()))
    if key in _CACHE:
        return _CACHE[key]
    shown, orig = shown_trace(trace, params)
    h = extravis_hierarchy(shown, params)
    seq = window_calls(shown, params)
    params = resolved_level(params, h, seq)
    rel = h.relations(params.level)
    ctx = {"trace": shown, "orig": orig, "h": h, "seq": seq, "caller": rel.caller[seq], "callee": rel.callee[seq],
           "params": params}
    _CACHE.clear()
    _CACHE[key] = ctx
    return ctx


def _loaded(ctx, i: int) -> int:
    """The loaded trace's index of shown call ``i``."""
    return int(i) if ctx["orig"] is None else int(ctx["orig"][i])


def _check_element(ctx, e: int) -> int:
    e = int(e)
    if not 0 < e < len(ctx["h"]):
        raise ValueError(f"element {e} is not in this trace's hierarchy ({len(ctx['h']):,} elements): "
                         "the scene was built from another trace or with other parameters")
    return e


def _fmt_us(us: float) -> str:
    from .annotate import fmt_time

    return fmt_time(float(us))


def describe_element(trace: Trace, params: ExtravisParams, e: int) -> tuple:
    """(fields, the first call it takes part in within the window (loaded index, -1: none))
    of hierarchy element ``e`` (module docstring)."""
    ctx = extravis_context(trace, params)
    h = ctx["h"]
    e = _check_element(ctx, e)
    lo, hi = e, int(h.end[e])
    src_in = (ctx["caller"] >= lo) & (ctx["caller"] < hi)
    dst_in = (ctx["callee"] >= lo) & (ctx["callee"] < hi)
    n_in, n_out, n_within = int((dst_in & ~src_in).sum()), int((src_in & ~dst_in).sum()), int((src_in & dst_in).sum())
    d = {"element": h.full_names[e], "kind": KIND_NAMES[int(h.kind[e])]}
    if h.kind[e] <= 3:
        d["level shown"] = ctx["params"].level
    d["calls in"] = n_in
    d["calls out"] = n_out
    d["calls within"] = n_within
    d["window"] = _window_text(ctx)
    seq = ctx["seq"]
    part = np.flatnonzero(dst_in | src_in)
    first = -1
    if part.size:
        first = _loaded(ctx, seq[part[0]])
        d["first call"] = f"{trace.name(first).split(' (')[0]} (call {first}) at {_fmt_us(trace.start[first])}"
    return d, first


def describe_relation(trace: Trace, params: ExtravisParams, src: int, dst: int) -> tuple:
    """(fields, its first call (loaded index, -1: none)) of the relation ``src`` → ``dst``
    within the window (module docstring)."""
    ctx = extravis_context(trace, params)
    h = ctx["h"]
    src, dst = _check_element(ctx, src), _check_element(ctx, dst)
    k = np.flatnonzero((ctx["caller"] == src) & (ctx["callee"] == dst))
    d = {"caller": h.full_names[src], "callee": h.full_names[dst], "calls": int(k.size),
         "level shown": ctx["params"].level, "window": _window_text(ctx)}
    if k.size == 0:
        return d, -1
    shown = ctx["trace"]
    calls = ctx["seq"][k]
    t = shown.start[calls]
    a, b = int(np.argmin(t)), int(np.argmax(t))
    first, last = _loaded(ctx, calls[a]), _loaded(ctx, calls[b])
    d["first"] = f"{_fmt_us(t[a])}: {trace.name(first).split(' (')[0]} (call {first})"
    d["last"] = f"{_fmt_us(t[b])}: {trace.name(last).split(' (')[0]} (call {last})"
    d["first µs"], d["last µs"] = float(t[a]), float(t[b])
    return d, first


def describe_row(trace: Trace, params: ExtravisParams, call: int, describe_call) -> dict:
    """A mural row: ``describe_call(trace, call)`` (the call drawn on that pixel line) and its
    relation at the level (caller element → callee element)."""
    d = describe_call(trace, call)
    ctx = extravis_context(trace, params)
    i = int(call) if ctx["orig"] is None else int(np.searchsorted(ctx["orig"], call))
    if 0 <= i < len(ctx["trace"]) and (ctx["orig"] is None or ctx["orig"][i] == call):
        rel = ctx["h"].relations(ctx["params"].level)
        d["relation"] = f"{ctx['h'].full_names[rel.caller[i]]} → {ctx['h'].full_names[rel.callee[i]]}"
    return d


def _window_text(ctx) -> str:
    from .extravis import axis_times

    w = ctx["params"].time_window
    if w is None:
        return f"the whole trace ({ctx['seq'].size:,} calls)"
    a, b = axis_times(w)
    return f"{a}–{b} ({ctx['seq'].size:,} calls)"


def is_extravis_hit(hit: dict) -> bool:
    """A pick of the EXTRAVIS scene: an element, a relation tube or a mural row."""
    return (int(hit.get("element_index", -1)) >= 0 or "src_element" in hit
            or (hit.get("kind") == "box" and "line" in hit))


def describe_extravis_hit(trace: Trace, params: ExtravisParams, hit: dict, describe_call) -> tuple:
    """(title, fields, the picked call or -1) of an EXTRAVIS pick (`is_extravis_hit`);
    ``describe_call``: `blender.pick.describe_call` (passed in: this module is bpy-free)."""
    if "src_element" in hit:
        d, call = describe_relation(trace, params, hit["src_element"], hit["dst_element"])
        return f"{d['caller']} → {d['callee']}", d, call
    if int(hit.get("element_index", -1)) >= 0:
        d, call = describe_element(trace, params, hit["element_index"])
        return d["element"], d, call
    call = int(hit["call"])
    if not 0 <= call < len(trace):
        raise ValueError(f"call index {call} out of range: the trace has {len(trace):,} calls")
    d = describe_row(trace, params, call, describe_call)
    return str(d.get("name", f"call {call}")), d, call


__all__ = ["describe_element", "describe_extravis_hit", "describe_relation", "describe_row", "extravis_context",
           "is_extravis_hit"]
