"""The memory view's parameters (`MemoryParams`, issue 71): the schema and the object
`layout.memory.memory_layout` takes."""
from __future__ import annotations

from . import shared as S
from .core import Param, Params, Schema
from .icicle import ICICLE
from .kinds import Choice, Number, Text
from .render import Path

GROUP_ITEMS = (("site", "Call site", "One band per allocation site: the frame that called the allocator"),
               ("module", "Module", "One band per module of the allocation site"),
               ("range", "Range", "One band per allocated range (Memcov Viz's Gantt charts)"))
CALLS_VIEW_ITEMS = (("icicle", "Icicle", "The call trace's whole icicle above the bands, on their time axis"),
                    ("strip", "Strip", "Only the six outermost call levels of the busiest thread above the bands"))
#: the panel's box and the command's option group of the icicle's own options (`CALLS_ICICLE`)
CALLS_GROUP = "calls above (with --trace)"
#: render-icicle's options a presenter sets for the icicle above the bands (``calls_view`` icicle):
#: its declarations in `ICICLE`, taken as they are (only their group is the memory view's).  The
#: icicle's others are the figure's (resolution, text size, labels, legend, title, camera: the memory
#: view's own), its window (the capture's span), or would not fit one time axis above the bands
#: (merged stacks, counter tracks, flows, instants and async slices, the cut-away, the detail inset)
CALLS_ICICLE = ("color_by", "fold", "max_depth", "hide", "hide_modules", "hide_utilities", "collapse_patterns",
                "expand", "highlight", "threads", "thread_order", "pack_threads", "max_lanes", "extrude_measure",
                "cluster_px", "label_min_px", "max_callouts", "max_colors")
MEMORY = Schema("memory", [
    Param("group_by", Choice(GROUP_ITEMS), "site", group=S.SHOW, label="Group by",
          help="a band per allocation site (the frame that called the allocator), per module, or per range"),
    Param("bins", Number(16, 4000, integer=True), 480, group=S.SHOW, label="Time bins",
          help="columns the run is cut into along the time axis (depth into the picture: allocations per second)"),
    Param("min_band_px", Number(0.5, 100.0), 1.5, group=S.LOOK, unit="px", label="Thinnest band",
          help="bands thinner than this many pixels at their thickest are merged with their thin neighbours into "
               "grey aggregates (Memcov Viz)"),
    Param("calls_trace", Path(metavar="TRACE"), None, group=S.SHOW, flag="--trace", label="Calls trace",
          default_text="none",
          help="a call trace of the same run (py-spy record --format chrometrace -- python -m memray run ...): "
               "its calls drawn above the bands on the capture's clock"),
    Param("calls_view", Choice(CALLS_VIEW_ITEMS), "icicle", group=S.SHOW, label="Calls above",
          help="with a call trace of the same run: its whole icicle above the bands (folded, merged under a pixel, "
               "named, with callouts, as render-icicle draws it), or only a strip of the busiest thread's six "
               "outermost levels (a cheap layout: the live view's many rebuilds, a figure about memory first)"),
    Param("calls_share", Number(0.2, 0.8), 0.5, group=S.SHOW, label="Icicle share",
          help="with calls_view icicle: the share of the figure's height the icicle takes; the bands take the rest"),
    S.RESOLUTION, S.LABEL_PX,
    S.MAX_LABELS.but(default=40, help="names on the N largest bands that have room for them"),
    S.SHOW_LABELS, S.SHOW_LEGEND, S.SHOW_TITLE, S.TITLE,
    S.AZIMUTH.but(default=0.0), S.ELEVATION.but(default=10.0),
    *(ICICLE[name].but(group=CALLS_GROUP) for name in CALLS_ICICLE),
], doc="Memory over time (Memcov Viz in 3D): every allocation site a band whose thickness is the bytes it holds, "
       "stacked, time along x; thin bands merged into grey aggregates.")


class MemoryParams(Params, schema=MEMORY):
    """Parameters of `memory_layout`.  ``group_by``: ``site``, ``module`` or ``range``;
    ``bins``: time columns; ``min_band_px``: Memcov's
    threshold under which bands are merged into grey aggregates; the fields of `CALLS_ICICLE`:
    render-icicle's for the icicle above the bands (`layout.memory_calls.icicle_params_of`).
    Every field is declared once (`MEMORY`, the icicle's in `ICICLE`)."""


#: render-memory's live mode (issue 71): the memory view of a program run with
#: ``python -m memray run --live-remote --live-port PORT program.py``, rebuilt as it runs
#: (`blender.live_memory.LiveMemoryView`), the last figure rendered once the program ended
MEMORY_LIVE = Schema("memory_live", [
    Param("live_port", Number(1, 65535, integer=True, optional=True, metavar="PORT"), None, group="live",
          default_text="none (read CAPTURE)",
          help="instead of a capture file: connect to memray's live tracker at 127.0.0.1:PORT (python -m memray run "
               "--live-remote --live-port PORT program.py), grow the figure as the program runs and render it when "
               "the program has ended"),
    Param("live_seconds", Number(1.0, 86400.0, metavar="S"), 600.0, group="live", unit="s",
          help="with --live-port: stop watching after S seconds even if the program still runs (exit 1)"),
    Param("live_calls", Text(metavar="ENDPOINT"), None, group="live", default_text="none",
          help="with --live-port: also listen at this ZeroMQ endpoint for the program's live call feed (python -m "
               "tracevis3d.live run --endpoint ENDPOINT ...) and draw its calls above the bands, aligned on the wall "
               "clocks"),
    Param("live_frames", Path(metavar="FOLDER"), None, group="live", default_text="none",
          help="with --live-port: also render each rebuilt figure into FOLDER (frame_00000.png, ...)"),
    Param("rebuild_seconds", Number(0.05, 3600.0, metavar="S"), 1.0, group="live", unit="s",
          help="with --live-port: the shortest time between two rebuilds (longer when a rebuild takes longer: at "
               "most half the time is spent rebuilding)"),
], doc="render-memory --live-port: memray's live mode.")
