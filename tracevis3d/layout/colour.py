"""Colour stage: what a box's colour says (bpy-free).

Every call gets a colour *slot*; each slot is one material (Workbench shows material
colours, not attributes), so the number of slots stays small.

Categorical modes (``function``, ``module``; ``auto`` picks one):
- the colour budget goes to what covers the most area in the figure: a call's area is its
  duration times its height after folding (a folded call is thin), summed over every call
  of the trace the figure is cut from, not only the threads shown, so a function keeps its
  colour in every thread's figure.  With a time window the icicle is cut to the window's
  calls first, their times clipped to it (`select.window_cut`): the ranking is the
  window's, the figure of that window on its own.  Chosen because a user who opens a window of a large
  trace looks at that window: ranked over the whole trace, the colours go to the trace's
  heaviest functions, which may not be in the window at all, and what the window does is
  grey "other"; and ranking over the whole trace would read every call of a trace that
  may be larger than the memory.  The price: a function may take another colour in
  another window (the legend names the colours of each figure);
- ``module``: packages are hue families (``docutils`` blue, ``json`` green, ...), the
  modules of a package are shades of its hue; the heaviest module of each of the top
  families gets a shade first, then the heaviest remaining modules; modules left over
  share their family's muted "other modules" shade; C built-ins are one family;
- ``function``: the heaviest functions get distinct hues; a frame the profiler could not
  name (an unsymbolicated address, ``0x7f57c92a3f14``) gets none: a Firefox profile without
  symbols gave 14 of its 16 colours to addresses, its named functions grey;
- ``auto``: ``function`` when its colours cover `AUTO_FUNCTION_COVER` of the area (a small
  trace), else ``module``;
- reserved, in every categorical mode: runtime infrastructure (import machinery, start-up,
  thread bootstrap: `naming.INFRA_MODULES`) in a muted sand tone, waits (SyncTrace kind
  ``wait``: locks, queues, joins) in a strong red that no other slot uses, and "other" in
  grey.
``kind`` (SyncTrace IV-B3): brown when neither the call nor anything it calls waits or does
I/O; otherwise red when waiting dominates and green when I/O does, more intense the larger
the share of the call's time (dur_w/dur or dur_o/dur, Eq. 3-4).
``depth``, ``inclusive``, ``self``: a perceptual sequential ramp (log scale for times).
Clusters of sub-pixel calls take the colour of their longest call, lightened (SyncTrace
IV-B2).
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..kernels.sync import kind_durations
from ..model import KIND_IO, KIND_OTHER, KIND_WAIT, Trace
from . import palette
from ..naming import function_table
from ..params.kinds import parse_fold

AUTO_FUNCTION_COVER = 0.75
#: a function name that is only a code address (a profile without symbols), bare or in a library
#: ("libxul.so+0x7a7702d"): no colour of its own
ADDRESS_NAME = re.compile(r"(?:[^\s+]{1,200}\+)?0x[0-9a-fA-F]+")
FOLDED_AREA = 0.15  # a folded call's height relative to a level, for the area ranking
SEQ_BINS = 16
KIND_BINS = 4
#: a call that waits or does I/O for less than this share of its time is drawn as one that
#: does neither: black's format_str, 0.0004 % reading, was pale green ("does I/O") in the
#: thread view, as a call that spends a tenth of its time in I/O
KIND_NEGLIGIBLE = 0.01
CLUSTER_LIGHTEN = 0.5

# hues (OKLCh degrees) of the families, farthest-first; none near the wait red (~27°)
FAMILY_HUES = (255.0, 145.0, 320.0, 70.0, 195.0, 290.0, 110.0, 350.0, 225.0, 170.0)
# shades of a family: (lightness, chroma, hue offset)
SHADES = ((0.66, 0.13, 0.0), (0.52, 0.12, -10.0), (0.80, 0.10, 10.0), (0.59, 0.10, 18.0), (0.73, 0.12, -18.0))
REST_SHADE = (0.86, 0.05, 0.0)  # a family's "other modules"


def oklch_rgb(L, C, h) -> np.ndarray:
    """One OKLCh colour → linear sRGB (3,)."""
    return palette.oklab_to_linear_srgb(palette.oklch(L, C, h)[None])[0]


WAIT_RGB = oklch_rgb(0.50, 0.19, 27.0)
INFRA_RGB = oklch_rgb(0.86, 0.045, 85.0)
OTHER_RGB = oklch_rgb(0.80, 0.0, 0.0)
KIND_BROWN = oklch_rgb(0.58, 0.075, 60.0)

_AREA_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SYNC_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@dataclass
class LegendItem:
    name: str
    slot: int  # colour slot, -1 for a note without swatch
    weight: float = 0.0  # area in the figure (ordering)
    #: items of one scale share one legend row (`legend_swatch_rows`): their swatches side
    #: by side, light to dark, then this text ("" for an item with a row of its own)
    ramp: str = ""


def legend_swatch_rows(legend: list) -> list:
    """HUD legend rows (text, slot, kind) of a colouring's legend (`annotate.plan_hud`): one
    "swatch" row per item, and one "ramp" row (slots as a tuple) per run of items of one
    scale (``LegendItem.ramp``), so a sequential scale reads as one line, not one per bin."""
    rows: list = []
    for it in legend:
        if it.ramp and rows and rows[-1][2] == "ramp" and rows[-1][0] == it.ramp:
            rows[-1] = (it.ramp, rows[-1][1] + (it.slot,), "ramp")
        elif it.ramp:
            rows.append((it.ramp, (it.slot,), "ramp"))
        else:
            rows.append((it.name, it.slot, "swatch"))
    return rows


@dataclass
class Colouring:
    mode: str  # the resolved mode
    title: str  # what colour means, for the legend heading
    slot: np.ndarray  # per shown call: uint8 (categorical, up to 256 slots) or int32
    slot_rgb: np.ndarray  # (m,3) linear sRGB
    slot_names: list  # material names
    legend: list = field(default_factory=list)  # LegendItem, in legend order
    cluster_rgb: np.ndarray = None  # (m,3) lightened slot colours
    categorical: bool = True


def call_area(trace: Trace, fold) -> np.ndarray:
    """Area each call of ``trace`` covers in a figure: duration × (folded ? thin : 1)."""
    key = str(fold)
    per = _AREA_CACHE.setdefault(trace, {})
    if key in per:
        return per[key]
    folded = _folded_calls(trace, fold)
    area = (trace.end - trace.start) * np.where(folded, FOLDED_AREA, 1.0)
    per[key] = area
    return area


def _folded_calls(trace: Trace, fold) -> np.ndarray:
    """bool per call of ``trace``: folded by the fold rule ``fold`` (`call_area`)."""
    from .fold import auto_fold_rule

    kind, ranges = parse_fold(fold)
    if kind == "auto":
        return auto_fold_rule(trace)
    folded = np.zeros(len(trace), np.bool_)
    if kind == "levels":
        for a, b in ranges:
            folded |= (trace.depth >= a) & (trace.depth <= b)
    return folded


def function_area(trace: Trace, fold, ft) -> np.ndarray:
    """Per function of ``trace``: the area (`call_area`) of its calls that neither wait nor
    are the runtime's (waits and the runtime's get their own colours), cached per trace and fold rule: a number a function
    held, not one a call.  The calls' areas are made and added in one pass, `COLOUR_CHUNK` at a
    time (`kernels.overview_sums.function_areas`: in call order as `np.add.at` and `np.bincount`
    add, the same sums, a reserved call's area counted as 0.0)."""
    key = ("functions", str(fold))
    per = _AREA_CACHE.setdefault(trace, {})
    if key not in per:
        from ..kernels.overview_sums import function_areas

        folded = _folded_calls(trace, fold)
        f_area = np.zeros(max(trace.n_functions, int(trace.func.max(initial=-1)) + 1))
        for a in range(0, len(trace), COLOUR_CHUNK):  # the reserved calls (waits, the runtime's): area 0
            s = slice(a, a + COLOUR_CHUNK)
            function_areas(f_area, trace.func[s], trace.kind[s], trace.start[s],
                           trace.end[s], folded[s], np.ascontiguousarray(ft.infra, np.bool_), int(KIND_WAIT),
                           float(FOLDED_AREA))
        per[key] = f_area
    return per[key]


def sync_durations(trace: Trace) -> tuple:
    """(dur_w, dur_o) of every call of ``trace`` (SyncTrace Eq. 4), cached."""
    hit = _SYNC_CACHE.get(trace)
    if hit is None:
        hit = (kind_durations(trace.kind, trace.start, trace.end, trace.parent, KIND_WAIT),
               kind_durations(trace.kind, trace.start, trace.end, trace.parent, KIND_IO))
        _SYNC_CACHE[trace] = hit
    return hit


def hue_ring(n: int) -> np.ndarray:
    """``n`` categorical colours avoiding the wait red: the family hues at two lightnesses."""
    out = []
    for k in range(n):
        h = FAMILY_HUES[k % len(FAMILY_HUES)]
        L, C, dh = SHADES[(k // len(FAMILY_HUES)) % len(SHADES)]
        out.append(oklch_rgb(L, C, h + dh))
    return np.array(out).reshape(-1, 3)


def family_shade(family_rank: int, shade: int) -> np.ndarray:
    """The RGB of shade ``shade`` of colour family ``family_rank`` (OKLCH; a negative shade: the rest shade)."""
    h = FAMILY_HUES[family_rank % len(FAMILY_HUES)]
    L, C, dh = SHADES[shade % len(SHADES)] if shade >= 0 else REST_SHADE
    return oklch_rgb(L, C, h + dh)


#: the colour stage reads this many calls at a time (bounded temporaries at 10^8 calls)
COLOUR_CHUNK = 1 << 20


def _categorical(trace, idx, mode, params, view_area, ft) -> Colouring:
    budget = int(params.max_colors) - 1
    n_func = trace.n_functions
    f_area = function_area(trace, params.fold, ft)
    named_area = f_area.copy()  # addresses rank last: named functions take the colours
    named_area[[f for f, nm in enumerate(ft.display) if ADDRESS_NAME.fullmatch(nm)]] = 0.0
    if mode == "auto":
        top = np.sort(named_area)[::-1][:budget].sum()
        mode = "function" if top >= AUTO_FUNCTION_COVER * max(named_area.sum(), 1e-300) else "module"
    colours, names = [], []
    if mode == "function":
        order = np.argsort(-named_area, kind="stable")
        order = order[named_area[order] > 0][:budget]
        key_slot_of_func = np.full(n_func, -1, np.int64)
        key_slot_of_func[order] = np.arange(order.size)
        ring = hue_ring(order.size)
        for k, f in enumerate(order):
            colours.append(ring[k])
            names.append(_function_legend_name(trace, ft, int(f)))
        slot_of_func = key_slot_of_func
        title = "function"
    else:
        n_mod = len(ft.modules)
        m_area = np.bincount(ft.module_id, weights=f_area, minlength=n_mod)
        fam_of_mod = np.zeros(n_mod, np.int64)
        fam_of_mod[ft.module_id] = ft.family_id
        fam_area = np.bincount(fam_of_mod, weights=m_area, minlength=len(ft.families))
        fam_order = np.argsort(-fam_area, kind="stable")
        fam_order = fam_order[fam_area[fam_order] > 0][:len(FAMILY_HUES)]
        fam_rank = np.full(len(ft.families), -1, np.int64)
        fam_rank[fam_order] = np.arange(fam_order.size)
        mod_order = np.argsort(-m_area, kind="stable")
        mod_order = mod_order[m_area[mod_order] > 0]
        slot_of_mod = np.full(n_mod, -1, np.int64)
        shades_used = np.zeros(len(ft.families), np.int64)
        rest_slot = {}

        def add(m):
            f = fam_of_mod[m]
            slot_of_mod[m] = len(colours)
            colours.append(family_shade(int(fam_rank[f]), int(shades_used[f])))
            names.append(_module_legend_name(ft.modules[m], ft.families[f]))
            shades_used[f] += 1

        for m in mod_order:  # the heaviest module of every coloured family first
            f = fam_of_mod[m]
            if fam_rank[f] >= 0 and shades_used[f] == 0 and len(colours) < budget:
                add(m)
        for m in mod_order:  # then the heaviest modules left, up to len(SHADES) per family
            f = fam_of_mod[m]
            if slot_of_mod[m] >= 0 or fam_rank[f] < 0:
                continue
            if shades_used[f] < len(SHADES) and len(colours) < budget:
                add(m)
        for m in mod_order:  # the rest of a coloured family: its muted "other modules" shade
            f = fam_of_mod[m]
            if slot_of_mod[m] >= 0 or fam_rank[f] < 0:
                continue
            if f not in rest_slot:
                rest_slot[f] = len(colours)
                colours.append(family_shade(int(fam_rank[f]), -1))
                names.append(f"{ft.families[f]} (other modules)")
            slot_of_mod[m] = rest_slot[f]
        slot_of_func = slot_of_mod[ft.module_id]
        title = "module"
    n_key = len(colours)
    infra_slot, wait_slot, other_slot = n_key, n_key + 1, n_key + 2
    colours += [INFRA_RGB, WAIT_RGB, OTHER_RGB]
    names += ["runtime (imports, start-up)", "waiting (locks, queues)", "other"]
    # a byte a shown call where the slots fit one (a 10^8-call overview), else int32; one pass, no
    # temporaries over the shown calls (`kernels.overview_sums.categorical_slots`: the reserved
    # slots of waits and the runtime's calls, else the function's)
    from ..kernels.overview_sums import categorical_slots

    slot = np.empty(idx.size, np.uint8 if len(colours) <= 256 else np.int32)
    categorical_slots(slot, trace.func, trace.kind, np.asarray(idx), np.asarray(slot_of_func, np.int64),
                      np.ascontiguousarray(ft.infra, np.bool_), int(KIND_WAIT), wait_slot, infra_slot, other_slot)
    rgb = np.array(colours).reshape(-1, 3)
    legend = _legend_from_slots(slot, view_area, names)
    other_keys = _other_keys(trace, idx, slot, other_slot, ft, mode)
    for item in legend:
        if item.slot == other_slot:
            if other_keys.size == 1:  # one function or module past the palette: its own name, in grey
                k = int(other_keys[0])
                item.name = (_function_legend_name(trace, ft, k) if mode == "function" else
                             _module_legend_name(ft.modules[k], ft.families[int(ft.family_id[ft.module_id == k][0])]))
            else:
                item.name = f"other ({other_keys.size} {'functions' if mode == 'function' else 'modules'})"
    return Colouring(mode, title, slot, rgb, [f"TV3D_c{k:02d}" for k in range(len(rgb))], legend,
                     palette.lighten(rgb, CLUSTER_LIGHTEN), True)


def _other_keys(trace, idx, slot, other_slot, ft, mode) -> np.ndarray:
    """The functions (or modules) of the shown calls coloured "other" (ascending, as
    ``np.unique`` gives them), marked in a table over the functions in one pass
    (`kernels.overview_sums.functions_in_slot`: no sort, no array over every shown call)."""
    from ..kernels.overview_sums import functions_in_slot

    present = np.zeros(max(int(trace.n_functions), int(trace.func.max(initial=-1)) + 1, 1), np.bool_)
    functions_in_slot(present, trace.func, np.asarray(idx), np.asarray(slot), int(other_slot))
    f = np.flatnonzero(present).astype(trace.func.dtype, copy=False)
    return f if mode == "function" else np.unique(ft.module_id[f])


def _legend_from_slots(slot, view_area, names) -> list:
    # each slot's area and whether it is used, `COLOUR_CHUNK` calls at a time, added in call
    # order as `np.add.at` adds (`kernels.overview_sums.add_at_marked`: the sums `np.bincount` gives)
    from ..kernels.overview_sums import add_at_marked

    w = np.zeros(max(len(names), int(slot.max()) + 1 if slot.size else 0))  # numpy 2: no -1 in a uint8 max
    present = np.zeros(w.size, np.bool_)
    for a in range(0, slot.size, COLOUR_CHUNK):
        s = slice(a, a + COLOUR_CHUNK)
        add_at_marked(w, present, np.asarray(slot[s]), np.asarray(view_area[s], np.float64))
    order = np.argsort(-w, kind="stable")
    return [LegendItem(names[k], int(k), float(w[k])) for k in order if present[k]]


def _module_legend_name(module: str, family: str) -> str:
    if family == "builtins" and not module.startswith("builtins"):
        return f"{module} (C)"
    return module or "(unknown module)"


def _function_legend_name(trace, ft, f: int) -> str:
    name = ft.display[f]
    if ft.short[f] == "<module>":
        name = f"{name} (module body)"
    line = int(trace.function_lines[f]) if f < len(trace.function_lines) else -1
    dup = ft.display.count(ft.display[f]) > 1 if len(ft.display) < 5000 else False
    if dup and line >= 0:
        name = f"{name}:{line}"
    return name


def _kind(trace, idx, view_area) -> Colouring:
    from ..kernels.sync import kind_slots

    dur_w, dur_o = sync_durations(trace)
    # SyncTrace IV-B3 colours red when wr = dur_o/dur_w < 0.5 and green otherwise.  That
    # threshold is asymmetric (a call waiting 1.9 s and doing 1 s of I/O would be green);
    # we split at equal shares: green when dur_o >= dur_w (wr >= 1), red otherwise.
    slot = kind_slots(dur_w, dur_o, trace.start, trace.end, np.ascontiguousarray(idx, np.int64), KIND_BINS,
                      KIND_NEGLIGIBLE)
    cols = [KIND_BROWN]
    names, ramps = [f"< {100 * KIND_NEGLIGIBLE:g} % waiting or I/O"], [""]
    for hue, what in ((27.0, "waits"), (145.0, "I/O")):
        for k in range(KIND_BINS):
            t = (k + 0.5) / KIND_BINS
            cols.append(oklch_rgb(0.88 - 0.36 * t, 0.05 + 0.14 * t, hue))
            lo, hi = int(100 * k / KIND_BINS), int(100 * (k + 1) / KIND_BINS)
            names.append(f"{what}: {lo}–{hi}% of its time")
            ramps.append(f"{what}: 0 → 100% of its time")
    rgb = np.array(cols)
    present = np.bincount(slot, minlength=len(names)) > 0
    # a scale is shown whole (every bin) where any of its bins is drawn
    ramp_shown = {r for r, p in zip(ramps, present) if r and p}
    legend = [LegendItem(names[k], k, 0.0, ramps[k]) for k in range(len(names))
              if present[k] or ramps[k] in ramp_shown]
    return Colouring("kind", "waiting and I/O (SyncTrace)", slot, rgb,
                     [f"TV3D_k{k:02d}" for k in range(len(rgb))], legend, palette.lighten(rgb, CLUSTER_LIGHTEN), False)


def _sequential(trace, idx, mode, measure_fn, fmt_time) -> Colouring:
    depth = trace.depth[idx]
    if mode == "depth":
        levels = int(depth.max()) + 1
        v = depth / max(levels - 1, 1)
        shown = np.arange(levels) if levels <= 8 else np.unique(np.linspace(0, levels - 1, 5).round().astype(int))
        ticks = [(d / max(levels - 1, 1), f"level {d}") for d in shown.tolist()]
        title = "stack level"
    else:
        m = measure_fn(mode)
        v = log_norm(m)
        mmax = float(m.max()) if m.size else 0.0
        ticks = [(1.0 - j / 4.0, ("≤ " if j == 4 else "") + fmt_time(mmax * 10 ** -j)) for j in range(5)]
        title = {"inclusive": "inclusive time", "self": "self time"}[mode]
    slot = np.minimum((v * SEQ_BINS).astype(np.int64), SEQ_BINS - 1).astype(np.int32)
    rgb = palette.sequential((np.arange(SEQ_BINS) + 0.5) / SEQ_BINS)
    legend = [LegendItem(txt, int(min(int(vv * SEQ_BINS), SEQ_BINS - 1)), 0.0)
              for vv, txt in sorted(ticks, key=lambda x: -x[0])]
    return Colouring(mode, title, slot, rgb, [f"TV3D_s{k:02d}" for k in range(SEQ_BINS)], legend,
                     palette.lighten(rgb, CLUSTER_LIGHTEN), False)


PALE_RGB = oklch_rgb(0.93, 0.0, 0.0)  # calls outside a highlight


def highlight_colouring(colouring: Colouring, keep: np.ndarray, what: str) -> Colouring:
    """SEAT's highlighting (2.9.1, requirement 3): the shown calls with ``keep`` (bool per
    shown call) keep their colour, the others take one pale slot; the legend says so."""
    if keep.all():
        return colouring
    pale = len(colouring.slot_rgb)
    rgb = np.vstack([colouring.slot_rgb, np.asarray(PALE_RGB)[None, :]])
    used = np.unique(colouring.slot[keep])
    legend = [it for it in colouring.legend if it.slot < 0 or it.slot in used]
    legend.append(LegendItem(f"pale: not {what}", pale, 0.0))
    return Colouring(colouring.mode, colouring.title, np.where(keep, colouring.slot, pale).astype(np.int32), rgb,
                     list(colouring.slot_names) + ["TV3D_pale"], legend,
                     palette.lighten(rgb, CLUSTER_LIGHTEN), colouring.categorical)


def log_norm(v: np.ndarray, decades: float = 4.0) -> np.ndarray:
    """log10(v / max) mapped from [-decades, 0] to [0, 1] (durations are heavy-tailed)."""
    vmax = float(v.max()) if v.size else 0.0
    if vmax <= 0:
        return np.zeros_like(v, dtype=np.float64)
    with np.errstate(divide="ignore"):
        x = np.log10(np.maximum(v, vmax * 10 ** -decades) / vmax)
    return 1.0 + x / decades


def colour_calls(trace: Trace, idx: np.ndarray, params, view_area: np.ndarray, measure_fn, fmt_time) -> Colouring:
    """The `Colouring` of the shown calls ``idx`` (see module doc).

    ``view_area`` is each shown call's area in this figure (legend order); ``measure_fn(name)``
    gives a measure per shown call for the sequential modes.
    """
    ft = function_table(trace)
    mode = params.color_by
    if mode in ("auto", "function", "module"):
        return _categorical(trace, idx, mode, params, view_area, ft)
    if mode == "kind":
        return _kind(trace, idx, view_area)
    return _sequential(trace, idx, mode, measure_fn, fmt_time)


__all__ = ["Colouring", "LegendItem", "colour_calls", "call_area", "sync_durations", "log_norm",
           "WAIT_RGB", "INFRA_RGB", "OTHER_RGB", "KIND_OTHER"]
