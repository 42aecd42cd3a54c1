"""The EXTRAVIS view's parameters (`ExtravisParams`; Cornelissen et al., Sec. 3–5): the schema
and the object `layout.extravis.extravis_layout` takes."""
from __future__ import annotations

from . import shared as S
from .core import Param, Params, Schema
from .kinds import Choice, Number, Words, regex_item

LEVEL_ITEMS = (("auto", "Auto", "The coarsest of module, class, function level at which no element takes more "
                                 "than half the calls (C++ and free-text names have no module; a script is one)"),
               ("package", "Package", "Relations between packages (a module's first dotted part)"),
               ("module", "Module", "Relations between modules"),
               ("class", "Class", "Relations between classes (module-level functions: the module's '(functions)')"),
               ("function", "Function", "Relations between functions"))
COLOR_MODE_ITEMS = (("gradient", "Direction", "Caller → callee as a green → red gradient along every tube and row"),
                    ("time", "Time", "Each relation in the colour of when its calls happen (temporal mode)"))

EXTRAVIS = Schema("extravis", [
    Param("level", Choice(LEVEL_ITEMS), "auto", group=S.SHOW, label="Level",
          help="hierarchy level of the relations: auto (the coarsest of module, class, function at which no "
               "element takes more than half the calls), package, module, class or function"),
    Param("beta", Number(0.0, 1.0), 0.85, group=S.LOOK, label="Bundling strength",
          help="β of the edge bundles (Eq. 1): 0 straight lines, 1 the full hierarchy path"),
    Param("power", Number(-5.0, 5.0), -1.0, group=S.LOOK, label="Contribution power",
          help="p of the call importance W = f^p (Eq. 2) in the sequence view: 0 linear anti-aliasing, "
               "< 0 rare calls (outliers) stand out, > 0 frequent ones"),
    Param("importance_window", Number(1, 100000, integer=True), 25, group=S.LOOK, label="Importance window",
          unit="calls", help="calls in the window centred on each call in which its relation's share f is counted"),
    S.FOLD.but(default="none", help="merge calls away before relations are taken, their children called by their "
                                    "caller: none, auto (runtime infrastructure: imports, runpy, exec, thread start-up), "
                                    "or stack level ranges A:B[,C:D]"),
    S.HIDE, S.HIDE_MODULES,
    S.PACK_THREADS.but(help="threads of one kind (one process, names that differ only in their numbers: a server's "
                            "thread per request, a pool's workers) are one element of the hierarchy, the caller of "
                            "all their root calls ('36× process_request_thread'), when there are more than 8 threads"),
    S.TIME_WINDOW.but(help="the calls shown in both views: those starting in a time window (µs, or with a unit, "
                           "0:50ms) from the trace start"),
    Param("color_mode", Choice(COLOR_MODE_ITEMS), "gradient", group=S.LOOK, label="Colour",
          help="gradient: caller → callee green → red; time: when the calls happen (temporal mode)"),
    Param("highlight", Words(regex_item, "; ", "REGEX"), [], group=S.LOOK, label="Highlight", default_text="none",
          help="hierarchy elements (regex on their dotted names) whose calls stay lit in both views; "
               "the other calls are drawn pale"),
    Param("max_pairs", Number(1, 10 ** 6, integer=True), 4000, group=S.SHOW, label="Max relations",
          help="at most this many element pairs drawn as tubes, those carrying most calls"),
    Param("colour_share", Number(0.5, 1.0), 0.95, group=S.LOOK, label="Coloured share",
          help="where more than 200 relations are drawn, the heaviest carrying this share of their calls are "
               "in colour and the others pale, behind them (1: all in colour)"),
    S.RESOLUTION, S.LABEL_PX, S.SHOW_LABELS, S.SHOW_LEGEND, S.SHOW_TITLE, S.TITLE,
    S.AZIMUTH.but(default=0.0), S.ELEVATION.but(default=8.0), S.LENS_MM.but(default=120.0),
], doc="EXTRAVIS: which parts of the program call which (hierarchical edge bundles on the hierarchy's ring) "
       "and when (the massive sequence view: every call a row, rare calls kept visible), one time window.")


class ExtravisParams(Params, schema=EXTRAVIS):
    """What the EXTRAVIS view shows and how.

    - ``level``: the hierarchy level relations are lifted to (package, module, class,
      function; ``auto``: `analysis.hierarchy.auto_level`); the leaves of the ring and the
      columns of the sequence view;
    - ``beta``: bundling strength β of Eq. 1; ``power``: p of Eq. 2 (in [-5, 5]);
      ``importance_window``: |w| of Eq. 2 (25 calls);
    - ``fold`` / ``hide`` / ``hide_modules``: calls merged away before the relations are
      taken (their children are then called by their caller), as in the cone tree;
    - ``time_window``: (t0, t1) µs: the calls starting in it are shown in both views
      (None: the whole trace);
    - ``color_mode``: ``gradient`` (caller green → callee red) or ``time`` (temporal mode);
    - ``highlight``: regexes on elements' dotted names: their calls stay lit in both views;
    - ``max_pairs``: element pairs drawn as tubes, those carrying most calls first;
    - ``colour_share``: of many tubes, the heaviest carrying this share of the calls in colour,
      the rest pale (`layout.extravis_heb.coloured_pairs`).
    Every field is declared once in `EXTRAVIS`.
    """
