"""The comparison's parameters (`CompareParams`, TraceDiff Sec. III-IV): the schema and the
object `compare_layout` takes (``tau`` is the comparison's own: the matching threshold)."""
from __future__ import annotations

from . import shared as S
from .core import Alias, Param, Params, Schema
from .kinds import Choice, Flag, Number
from .trace_kinds import CallRef, Cutaway, Thread, Window

MATCHING, TUBES = "matching", "tubes"

TUBE_COLOR_ITEMS = (
    ("permutation", "Order changed", "Red when a match moved within its group (the order of the calls "
                                      "changed), grey when it kept its place (TraceDiff IV-D)"),
    ("trace-a", "Position, seen from A", "Rainbow of each match's position in its group, seen from run A: "
                                         "outliers moved (TraceDiff IV-D)"),
    ("trace-b", "Position, seen from B", "The same, seen from run B"),
    ("similarity", "Similarity", "Opaque and dark for strong matches, light and translucent for weak ones"),
    ("ratio", "Duration ratio", "Red when the call takes longer in B, blue when shorter, grey when alike"),
)
TUBE_COLOR_MODES = tuple(i[0] for i in TUBE_COLOR_ITEMS)

COMPARE = Schema("compare", [
    Param("tau", Number(0.0, 1.0, lo_open=True, hi_open=True, metavar="T"), 0.2, group=MATCHING, label="Similarity τ",
          help="two calls match when the sets of functions in their subtrees have a Jaccard similarity above T"),
    Param("thread_a", Thread(), None, group=S.SHOW, label="Thread of A", default_text="the thread that does the work",
          help="thread of A to show, by index or name"),
    Param("thread_b", Thread(), None, group=S.SHOW, label="Thread of B", default_text="the thread that does the work",
          help="thread of B to show, by index or name"),
    Param("window_a", Window(), None, group=S.SHOW, label="Focus of A", unit="µs", default_text="the whole trace",
          help="focus window of A: µs, or with a unit (0:50ms), from A's start"),
    Param("window_b", Window(), None, group=S.SHOW, label="Focus of B", unit="µs", default_text="the whole trace",
          excludes=("align_a",),
          help="focus window of B: µs, or with a unit, from B's start"),
    Param("align_a", CallRef(), None, group=S.SHOW, label="Align to", default_text="no alignment",
          help="set B's focus window on the matches of a call of A (an index, or a function name: its longest call)"),
    S.PACK_THREADS.but(help="a side whose thread is one of several of its kind that never run at once (a "
                            "server's thread per request) shows them all in its lane, when a run has more than 8 "
                            "threads"),
    S.MERGE.but(help="compare the two traces' stacks merged (speedscope's left heavy view, `tracevis3d.merge`): "
                               "per thread, calls with the same path from the root are one, as wide as their summed "
                               "self time; x is then time summed, not a clock"),
    S.FOLD, S.HIDE, S.HIDE_MODULES, S.HIGHLIGHT.but(group=S.SHOW),
    S.CUTAWAY.but(kind=Cutaway(("a", "b")),
                  help="remove what stands between the camera and a call of trace A (a:N) or of trace B (b:N), "
                       "tubes included, in the viewport and in renders (an Empty 'TV3D_cutaway' that can be "
                       "moved and animated)"),
    Param("color_by", Choice(TUBE_COLOR_ITEMS), "permutation", group=TUBES, effect="restyle", label="Tube colour",
          help="tube colour: permutation (red when a match moved within its group, grey when aligned), trace-a / "
               "trace-b (rainbow of the position in the group from A's / B's side), similarity (opaque = strong), "
               "ratio (red slower in B, blue faster)"),
    Param("lam", Number(0.0, 1.0, metavar="L"), 0.2, group=TUBES, flag="--lambda", label="Tube waist λ",
          help="the tubes' waist (TraceDiff Eq. 5): 0 thin in the middle, 1 no thinning"),
    Param("band", Number(0.5, 100.0, metavar="LEVELS"), 8.0, group=TUBES, unit="levels", label="Band",
          help="height of the bundling band between the two icicles, in stack levels"),
    Param("beta", Number(0.0, 1.0, metavar="B"), 0.85, group=TUBES, label="Bundling β",
          help="bundling strength: 0 straight tubes, 1 fully bundled"),
    Param("declutter_px", Number(0.0, 100000.0, metavar="PX"), 96.0, group=TUBES, unit="px", label="Declutter above",
          aliases=(Alias("--all-tubes", const=0.0, deprecated=False),),
          help="a tube wider than this at both ends is left out when finer tubes start inside both of its calls "
               "(they show the same correspondence); 0 (--all-tubes): every tube, the paper's view"),
    Param("max_tube_px", Number(0.0, 100000.0, metavar="PX"), 40.0, group=TUBES, unit="px", label="Widest tube end",
          help="widest tube end; 0: as wide as its call, as the paper draws it"),
    Param("max_tubes", Number(1, 500_000, integer=True), 20000, group=TUBES, label="Max tubes",
          help="at most this many tubes (moved ones first, then the widest)"),
    Param("tube_partners", Number(1, 64, integer=True), 1, group=TUBES, label="Partners",
          help="a tube for each call's best N matches, both ways"),
    Param("brush_a", CallRef(), None, group=TUBES, label="Brush A", default_text="no brushing",
          help="keep colour only on the groups rooted in the stack of a call of A (an index, or a function name: "
               "its longest call); the other tubes turn grey (TraceDiff IV-E)"),
    Param("brush_b", CallRef(), None, group=TUBES, label="Brush B", default_text="no brushing",
          help="the same for a call of B"),
    Param("tube_samples", Number(4, 200, integer=True), 50, group=TUBES, label="Tube samples",
          renamed_from=("samples",),
          help="samples along each tube's centre curve (TraceDiff IV-C: 50-100)"),
    Param("tube_sides", Number(3, 64, integer=True), 8, group=TUBES, label="Tube sides",
          help="sides of each tube's cross-section"),
    S.RESOLUTION, S.CLUSTER_PX, S.LABEL_PX, S.LABEL_MIN_PX, S.MAX_LABELS.but(default=300),
    S.SHOW_LABELS, S.SHOW_LEGEND,
    Param("show_overview", Flag(), True, label="Overview bars",
          help="overview bars (matches per time bin) outside the icicles"),
    S.SHOW_TITLE, S.TITLE.but(default_text="automatic: both trace names, τ, matching call pairs, groups in view"),
    S.ORTHOGRAPHIC, S.TIME_LENGTH, S.LANE_DEPTH, S.AZIMUTH, S.ELEVATION, S.LENS_MM,
], doc="Two runs side by side (TraceDiff): A's icicle above, B's mirrored below, a shaded tube between every "
       "call of A and its best match in B; calls without a match are orange.")


class CompareParams(Params, schema=COMPARE):
    """Parameters of `compare_layout`; JSON-able through `to_dict`/`from_dict`.

    ``color_by``: what a tube's colour says: ``permutation`` (|relative start in A −
    relative start in B| within the group, red when permuted, grey when aligned; IV-D),
    ``trace-a`` / ``trace-b`` (rainbow of the relative start within the group, from A's or
    B's side; IV-D), ``similarity`` (light and translucent for weak matches, dark and
    opaque for strong ones), ``ratio`` (duration in B ÷ duration in A on a diverging map:
    red slower in B, blue faster).  ``lam``: the tube's waist λ (TraceDiff Eq. 5);
    ``band``: the bundling band's thickness in level heights; ``beta``: bundling strength
    (0 straight, 1 fully bundled); ``window_a`` / ``window_b``: focus windows (µs);
    ``align_a``: a call of A whose matches B's focus window is set on (IV-E; instead of
    ``window_b``); ``thread_a`` / ``thread_b``: the thread shown on each side (default: the
    thread that does the work, `thread_work.working_thread`: a pool's busiest worker, not its
    waiting main).  ``fold``, ``hide``, ``hide_modules``, ``highlight``: as in the icicle
    (`IcicleParams`), on both sides; hidden calls keep their matches (the comparison is of
    the whole runs), a match of a hidden call starts at the box that now shows it.
    ``tube_partners``: a tube for each call's best ``tube_partners`` matches, both ways (the
    comparison keeps ``top_k``; with equally similar calls, e.g. the steps of a training
    loop, the second partner only crosses the picture).  ``brush_a`` / ``brush_b``: a call
    (index or function name) whose stack's groups keep their colour while every other tube
    turns grey (IV-E).  ``tau`` is the comparison's matching threshold (the layout draws a
    comparison already made).  ``cutaway``: ``a:N`` or ``b:N``, what stands between the camera
    and call N of trace A or B is removed (`layout.cutaway.compare_cutaway`).  Every field is
    declared once in `COMPARE`.
    """

    def check_together(self) -> None:
        if self.align_a is not None and self.window_b is not None:
            raise ValueError("align_a sets B's focus window: give either align_a or window_b, not both")

    def side_params(self, side: str):
        """The icicle stages' parameters for one side."""
        from .icicle import IcicleParams

        thread = self.thread_a if side == "a" else self.thread_b
        return IcicleParams(
            threads=None if thread is None else [thread], time_window=self.window_a if side == "a" else self.window_b,
            pack_threads=self.pack_threads,
            fold=self.fold, hide=list(self.hide), hide_modules=list(self.hide_modules),
            highlight=list(self.highlight), resolution=self.resolution, cluster_px=self.cluster_px, label_px=self.label_px,
            label_min_px=self.label_min_px, max_labels=self.max_labels, show_labels=self.show_labels,
            time_length=self.time_length, lane_depth=self.lane_depth, azimuth=self.azimuth,
            elevation=self.elevation, lens_mm=self.lens_mm, orthographic=self.orthographic).validate()
