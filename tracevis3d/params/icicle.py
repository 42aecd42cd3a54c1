"""The icicle's parameters (`IcicleParams`): the schema and the object `icicle_layout` takes."""
from __future__ import annotations

from . import shared as S
from .core import Param, Params, Schema
from .core import Alias
from .kinds import Choice, Flag, Number

EXTRUDE_ITEMS = (
    ("constant", "Constant", "Every box has the same depth"),
    ("inclusive", "Inclusive time", "Depth grows with the call's inclusive (total) time"),
    ("self", "Self time", "Depth grows with the call's self (exclusive) time"),
    ("calls", "Calls of function", "Depth grows with how often the call's function is called"),
)
COLOR_ITEMS = (
    ("auto", "Automatic", "By module for large traces, by function for small ones"),
    ("function", "Function", "One colour per function"),
    ("module", "Module", "One colour per module (from the function's file path)"),
    ("kind", "Waits and I/O", "SyncTrace's scheme: brown when neither the call nor its subtree waits "
                              "or does I/O, else red to green by the share of I/O in the waiting"),
    ("depth", "Depth", "Colour by stack depth"),
    ("inclusive", "Inclusive time", "Perceptual colour scale of inclusive time"),
    ("self", "Self time", "Perceptual colour scale of self time"),
)
EXTRUDE_MEASURES = tuple(i[0] for i in EXTRUDE_ITEMS)
COLOR_BY = tuple(i[0] for i in COLOR_ITEMS)

ICICLE = Schema("icicle", [
    S.THREADS.but(aliases=(Alias("--thread", takes_value=True),)),
    S.THREAD_ORDER, S.PACK_THREADS, S.MAX_LANES, S.MERGE, S.TIME_WINDOW, S.MAX_DEPTH, S.FOLD, S.HIDE, S.HIDE_MODULES, S.HIDE_UTILITIES,
    S.COLLAPSE_PATTERNS, S.EXPAND, S.HIGHLIGHT, S.CRITICAL_PATH, S.COUNTERS, S.MAX_COUNTERS, S.SHOW_FLOWS,
    S.SHOW_INSTANTS,
    S.SHOW_ASYNC, S.CUTAWAY,
    Param("color_by", Choice(COLOR_ITEMS), "auto", label="Colour by",
          help="box colour: auto (module for large traces, function for small), function, module, kind "
               "(waits and I/O), stack depth, inclusive or self time"),
    Param("extrude_measure", Choice(EXTRUDE_ITEMS), "self", label="Extrude by", flag="--extrude",
          help="what a box's extent in depth encodes: nothing, inclusive time, self time, calls of its function"),
    S.RESOLUTION, S.CLUSTER_PX, S.LABEL_PX, S.LABEL_MIN_PX, S.MAX_LABELS, S.MAX_CALLOUTS, S.INSET, S.MAX_COLORS,
    S.SHOW_LABELS, S.SHOW_LEGEND,
    Param("show_axes", Flag(), True, label="Axes",
          help="the time axis and the lane names"),
    S.SHOW_TITLE, S.TITLE.but(default_text="automatic: trace name, calls, threads, time span"),
    Param("lane_gap", Number(0.0, None, optional=True, placeholder=1.0, soft_max=20.0), None, group=S.CAMERA,
          label="Lane gap", default_text="automatic: no lane hides the one behind it",
          help="extra world gap between thread lanes"),
    S.ORTHOGRAPHIC, S.TIME_LENGTH, S.LANE_DEPTH, S.AZIMUTH, S.ELEVATION, S.LENS_MM,
], doc="The extruded icicle: x is time, height is stack depth, one lane per thread.")


class IcicleParams(Params, schema=ICICLE):
    """Parameters of `icicle_layout`; JSON-able through `to_dict`/`from_dict`.

    - ``color_by``: ``auto`` (module colours above `AUTO_MODULE_CALLS` calls, else
      function), ``function``, ``module``, ``kind`` (SyncTrace IV-B3: waits and I/O),
      ``depth``, ``inclusive``, ``self``.
    - ``fold``: ``auto`` (the documented rule in `layout.fold`), ``none``, or level ranges
      ``"A:B[,C:D]"`` (inclusive) drawn as thin bands.
    - ``hide`` / ``hide_modules``: calls whose name matches one of the regular expressions,
      or whose module is (or is inside) one of the modules, are removed and their children
      promoted (Firefox Profiler's "merge function").
    - ``hide_utilities``: also hide the N likeliest utility routines (SEAT 2.9.1.2,
      `analysis.filters.utilities`; 0: none); ``collapse_patterns``: draw every later
      instance of a repeated subtree (of at least 4 calls) as its root call only, marked
      partially expanded (SEAT 2.9.1.1).  A call some of whose subtree is hidden carries
      the partially-expanded marker; ``expand``: calls (indices) shown fully expanded
      anyway (their hidden children come back).
    - ``highlight``: regular expressions on function names (or display names): the calls
      that match keep their colour, every other call is pale (SEAT's highlighting).
    - ``threads``: indices or names to show (None: all); ``thread_order``: ``default``
      (processes by first activity, each its main thread first, then by first activity),
      ``start``, ``name``, ``busy`` (most busy first), or a list of names/indices shown first in that order; ``pack_threads``:
      interchangeable threads that never run at once share a lane (`layout.select.pack_lanes`).
    - ``label_px``: label text height in pixels at 1080 image lines (scaled with the
      resolution; never below 14 px at 1080 lines).
    - ``title``: None for the automatic title (trace, calls, threads, span), "" for none.

    Every field is declared once in `ICICLE` (name, kind, default, range, help).
    """
