"""The parameters every view shares, declared once: each view's schema takes them
as they are, or with its own default or help through `Param.but`, so every view spells
them the same way on the command line, in the panel and in saved scenes."""
from __future__ import annotations

from .core import Param
from .kinds import Flag, Number, Text, Words, module_item, regex_item
from .trace_kinds import Calls, Cutaway, Fold, Inset, Resolution, ThreadOrder, Threads, Window

SHOW, LOOK, CAMERA, OUTPUT = "what to show", "appearance", "camera", "output"

RESOLUTION = Param(
    "resolution", Resolution(), (1920, 1080), group=OUTPUT, label="Resolution",
    help="image size in pixels; also the unit of sub-pixel clustering and label fitting")
FOLD = Param(
    "fold", Fold(), "auto", group=SHOW, label="Fold",
    help="fold stack levels into thin bands: auto (levels that carry little information: a call whose "
         "single child covers nearly all of its time, runs of import machinery), none, or level ranges "
         "A:B[,C:D] (inclusive; A: and :B are open)")
HIDE = Param(
    "hide", Words(regex_item, "; ", "REGEX"), [], group=SHOW, label="Hide functions", default_text="none",
    help="hide calls whose function name matches a regular expression; their children move up")
HIDE_MODULES = Param(
    "hide_modules", Words(module_item, ", ", "MODULE"), [], group=SHOW, label="Hide modules", flag="--hide-module",
    default_text="none", help="hide calls of a module and its submodules (e.g. importlib); their children move up")
HIDE_UTILITIES = Param(
    "hide_utilities", Number(0, 10000, integer=True, soft_max=100), 0, group=SHOW, label="Hide utilities",
    bare=10, default_text="off",
    help="hide the N likeliest utility routines (high fan-in, low fan-out, called from everywhere; "
         "SEAT 2.9.1.2); their children move up and their callers are marked partially expanded "
         "(the option alone: 10)")
COLLAPSE_PATTERNS = Param(
    "collapse_patterns", Flag(), False, group=SHOW, label="Collapse repeats",
    help="draw every repetition of a repeated subtree (4+ calls) after the first as its root call "
         "only, marked partially expanded (SEAT 2.9.1.1)")
EXPAND = Param(
    "expand", Calls(), [], group=SHOW, label="Expanded calls", ui=False, default_text="none",
    help="calls (indices) shown fully expanded: their children hidden by the filters come back")
HIGHLIGHT = Param(
    "highlight", Words(regex_item, "; ", "REGEX"), [], group=LOOK, label="Highlight", default_text="none",
    help="keep the colour of calls whose function name (or module) matches a regular expression; "
         "every other call is drawn pale")
THREADS = Param(
    "threads", Threads(), None, group=SHOW, label="Threads", default_text="all threads",
    aliases=(), help="threads to show, by index or name")
THREAD_ORDER = Param(
    "thread_order", ThreadOrder(), "default", group=SHOW, label="Thread order",
    help="lane order: default (each process's threads together, its main thread first, then by first "
         "activity), start, name, busy "
         "(busiest first), or a list T1,T2,... of threads shown first")
PACK_THREADS = Param(
    "pack_threads", Flag(), True, group=SHOW, label="Pack short threads",
    help="threads of one kind (one process, names that differ only in their numbers: a server's thread per "
         "request) that never run at once share a lane, when there are more than 8 lanes")
MAX_LANES = Param(
    "max_lanes", Number(0, 10000, integer=True), 24, group=SHOW, label="Max lanes",
    help="with more lanes than this (threads after packing) and no threads chosen, draw only the lanes whose threads "
         "work the most (self time under their root calls, waits and I/O left out: an idle message loop does no "
         "work), in their usual order; the title says how many were left out. 0: every lane")
TIME_WINDOW = Param(
    "time_window", Window(), None, group=SHOW, label="Time window", flag="--window", unit="µs",
    default_text="the whole trace",
    help="show only calls overlapping a time window: µs, or with a unit (0:50ms), from the trace start")
MERGE = Param(
    "merge", Flag(), False, group=SHOW, label="Merge stacks",
    help="draw the trace's stacks merged (speedscope's left heavy view, `tracevis3d.merge`): per thread, the calls "
         "with the same path from the root are one, as wide as their summed self time, the heaviest first; x is "
         "then time summed, not a clock (a merged file: pprof, collapsed stacks, callgrind, is drawn merged anyway)")
MAX_DEPTH = Param(
    "max_depth", Number(0, None, integer=True, optional=True, placeholder=20, soft_max=200, metavar="D"), None,
    group=SHOW, label="Max depth", default_text="all levels", help="show stack levels 0..D only (roots are level 0)")

CLUSTER_PX = Param(
    "cluster_px", Number(0.0, 1000.0, soft_max=8.0, metavar="PX"), 1.0, group=LOOK, unit="px",
    label="Cluster below", help="calls narrower than this many pixels merge into lighter cluster boxes")
LABEL_PX = Param(
    "label_px", Number(14.0, 200.0), 16.0, group=LOOK, unit="px", label="Label size",
    help="label text height in pixels at 1080 image lines, scaled with the resolution")
LABEL_MIN_PX = Param(
    "label_min_px", Number(0.0, 100000.0, soft_max=400.0, metavar="PX"), 0.0, group=LOOK, unit="px",
    label="Label min width", help="boxes narrower than this many pixels get no label; 0: any box with room "
                                  "for 3 characters")
MAX_LABELS = Param("max_labels", Number(0, 100000, integer=True), 400, group=LOOK, label="Max labels",
                   help="at most this many names, the largest calls first")
MAX_CALLOUTS = Param("max_callouts", Number(0, 100, integer=True), 10, group=LOOK, label="Max callouts",
                     help="names for calls too narrow for their own, in the free room above them with a leader "
                          "(the widest first); 0: none")
INSET = Param("inset", Inset(), "auto", group=LOOK, label="Detail inset",
              help="a crowded stretch of one lane magnified in the free room of the frame, named: auto (the "
                   "stretch whose calls the figure leaves unnamed, where there is room), none, or a window "
                   "T0:T1 (as --window)")
MAX_COLORS = Param("max_colors", Number(2, 64, integer=True), 16, group=LOOK, label="Max colours",
                   help="distinct colours before the rest share grey")
SHOW_LABELS = Param("show_labels", Flag(), True, group=LOOK, label="Labels", help="text labels on the boxes")
SHOW_LEGEND = Param("show_legend", Flag(), True, group=LOOK, label="Legend", help="the colour legend")
SHOW_TITLE = Param("show_title", Flag(), True, group=LOOK, label="Title", help="the figure title")
TITLE = Param("title", Text(), None, group=LOOK, label="Title text", default_text="automatic", excludes=("show_title",),
              help="figure title")

ORTHOGRAPHIC = Param("orthographic", Flag(), False, group=CAMERA, label="Orthographic",
                     help="orthographic camera instead of perspective")
AZIMUTH = Param("azimuth", Number(-90.0, 90.0), -5.0, group=CAMERA, unit="°", label="Azimuth",
                help="camera turn about the vertical axis")
ELEVATION = Param("elevation", Number(0.0, 89.0, lo_open=True), 15.0, group=CAMERA, unit="°", label="Elevation",
                  help="camera height above the horizon")
LENS_MM = Param("lens_mm", Number(10.0, 300.0), 100.0, group=CAMERA, unit="mm", label="Lens",
                help="focal length of the perspective camera")
TIME_LENGTH = Param("time_length", Number(0.0, 10000.0, lo_open=True), 20.0, group=CAMERA, label="Time length",
                    help="world length of the time axis")
LANE_DEPTH = Param("lane_depth", Number(0.0, 1000.0, lo_open=True), 4.0, group=CAMERA, label="Lane depth",
                   help="the deepest box reaches this many level heights back")

# what a trace carries besides its calls (`layout.side_tracks`)
COUNTERS = Param(
    "counters", Words(regex_item, "; ", "REGEX"), [], group=SHOW, label="Counters",
    default_text="the ones that vary most",
    help="counter series to draw as tracks under the lanes, by regular expression on 'counter · series' "
         "(e.g. memory)")
MAX_COUNTERS = Param("max_counters", Number(0, 12, integer=True), 3, group=SHOW, label="Max counter tracks",
                     help="at most this many counter tracks (0: none); the others are named in the legend")
SHOW_FLOWS = Param("show_flows", Flag(), True, group=SHOW, label="Flows",
                   help="flow events as arcs from the call that starts them to the call they reach")
CRITICAL_PATH = Param("critical_path", Flag(), False, group=SHOW, label="Critical path",
                      help="light the path that set the wall time (walked back from the end of the run across the "
                           "hand-offs between threads: `tracevis3d.critical_path`) as one ribbon across the lanes, "
                           "its hand-offs as arcs, everything else dimmed; the legend gives its share per thread and "
                           "function")
SHOW_INSTANTS = Param("show_instants", Flag(), True, group=SHOW, label="Instants",
                      help="instant events as thin markers on their lanes")

SHOW_ASYNC = Param("show_async", Flag(), True, group=SHOW, label="Async slices",
                   help="async slices (network requests, tasks) as lanes of their own under the threads")
CUTAWAY = Param(
    "cutaway", Cutaway(), None, group=SHOW, label="Cut away", default_text="none",
    help="remove what stands between the camera and a call (call:N) or a lane (lane:NAME), in the viewport "
         "and in renders (an Empty 'TV3D_cutaway' whose box can be moved, scaled and animated)")


def checked_resolution(resolution) -> tuple:
    """(width, height) as ints within 16..16384 px (ValueError otherwise)."""
    return RESOLUTION.kind.check(resolution, "resolution")


def checked_window(window, name: str = "time_window"):
    """None, or (t0, t1) as finite floats with t0 < t1 (ValueError naming ``name``)."""
    return TIME_WINDOW.kind.check(window, name)
