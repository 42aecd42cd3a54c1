"""The thread view's parameters (`ThreadsParams`, SyncTrace IV-B, IV-C): the schema and the
object `threads_layout` takes."""
from __future__ import annotations

from . import shared as S
from .core import Alias, Param, Params, Schema
from .kinds import Choice, Flag, Number
from .trace_kinds import Thread, Threads

THREAD_COLOR_ITEMS = (
    ("kind", "Wait / I/O", "Bars brown/red/green by wait vs I/O share; curves in the waiting thread's colour"),
    ("thread", "Thread", "Bars and curves in thread colours"),
    ("object", "Object", "Curves by object; grey when only one thread ever waited on it"))
THREAD_COLOR_BY = tuple(i[0] for i in THREAD_COLOR_ITEMS)
SPANS = (("concurrent", "Concurrent", "The span in which two or more of the shown threads run at once: "
                                      "where threads can wait on each other"),
         ("all", "Whole trace", "The whole trace"))

THREADS = Schema("threads", [
    Param("focus", Thread(), None, group=S.SHOW, label="Focus", default_text="the thread that waits longest, else the one with most calls",
          help="thread (name or index) shown as the straight icicle behind the ring, its sector enlarged"),
    Param("color_by", Choice(THREAD_COLOR_ITEMS), "kind", label="Colour",
          help="kind: bars by wait/I-O share, curves by waiting thread; thread: thread colours; object: curves "
               "by object, grey when one thread only waited on it"),
    S.THREADS.but(help="threads to show, in ring order (names or indices)"),
    Param("hide_threads", Threads(optional=False), [], group=S.SHOW, label="Hide threads", flag="--hide-thread",
          default_text="none", help="threads to leave out"),
    S.PACK_THREADS.but(help="threads of one kind (one process, names that differ only in their numbers: a "
                            "server's thread per request) that never run at once share a section of the ring, "
                            "when there are more than 8"),
    S.MAX_LANES.but(
                    help="with more sections than this (threads after packing) and no threads chosen, the ring "
                         "shows only those whose threads work the most (self time under their root calls, waits "
                         "and I/O left out) and the focused one; the title says how many were left out. 0: every "
                         "thread"),
    S.FOLD, S.HIDE, S.HIDE_MODULES,
    Param("max_levels", Number(1, 1000, integer=True), 14, group=S.SHOW, unit="levels", label="Levels",
          help="levels each thread's section of the ring may take after folding; deeper stacks are squeezed into them"),
    Param("zero_radius", Number(1.0, 1000.0, metavar="R"), 9.0, group=S.SHOW, label="Zero radius",
          help="radius of stack level 0, in level widths (room for the curves inside; a ring without hand-offs uses less)"),
    Param("focus_scale", Number(1.0, 50.0, metavar="X"), 2.5, group=S.SHOW, label="Focus width",
          help="the focused thread's sector is this many times wider"),
    S.TIME_WINDOW.but(default_text="see --span"),
    Param("window", Choice(SPANS), "concurrent", group=S.SHOW, flag="--span", label="Span",
          aliases=(Alias("--whole", const="all", deprecated=False),),
          help="without a time window, what is shown: concurrent (the span in which two or more of the shown "
               "threads run at once) or all (the whole trace; --whole)"),
    S.CLUSTER_PX.but(default=1.5),
    Param("max_curves", Number(0, 10 ** 8, integer=True), 5000, label="Max curves",
          help="at most this many single curves (the longest waits); the rest are drawn as compound curves"),
    Param("highlight_wait", Number(0, None, integer=True, optional=True, metavar="CALL"), None, label="Highlight wait",
          default_text="none", ui=False,
          help="with colour by object: curves red when their wait acts on the same objects as this wait call, "
               "brown when they share one, grey otherwise"),
    S.CRITICAL_PATH,
    S.SHOW_FLOWS.but(help="flow events as arcs from the call that starts them to the call they reach, on the "
                          "focused icicle and the semicircle"),
    S.CUTAWAY.but(help="remove what stands between the camera and a call (call:N: on the focused icicle or "
                       "the semicircle) or a thread (lane:NAME: its icicle or its section of the semicircle), "
                       "in the viewport and in renders (an Empty 'TV3D_cutaway' that can be moved and animated)"),
    S.HIGHLIGHT, S.RESOLUTION, S.LABEL_PX,
    Param("show_icicle", Flag(), True, label="Focused icicle",
          help="the straight icicle of the focused thread behind the ring"),
    S.SHOW_LEGEND, S.SHOW_TITLE, S.SHOW_LABELS,
    S.MAX_CALLOUTS.but(help="names for the focused icicle's calls too narrow for their own, in the free room above "
                            "them with a leader; 0: none"),
    S.TITLE, S.ELEVATION, S.AZIMUTH, S.LENS_MM,
], doc="Who waits on whom (SyncTrace): every thread a bended icicle on a ring, curves from each wait to the "
       "release that ended it, the focused thread as a straight icicle behind the ring.")


class ThreadsParams(Params, schema=THREADS):
    """What the thread view shows and how.

    - ``focus``: the thread (name or index) shown as the straight extruded icicle behind the
      ring and whose sector is enlarged ``focus_scale`` times (Fig. 7); None = the thread
      that waits longest on others, or without hand-offs the one with the most calls;
    - ``color_by``: ``kind`` (bars brown/red/green by wait vs I/O share, IV-B3; curves in the
      waiting thread's colour), ``thread`` (bars and curves in thread colours), ``object``
      (bars by kind; curves by object, grey when only one thread ever waited on it);
    - ``threads``: threads to show in ring order (names or indices; None = all, default
      order); ``hide_threads``: threads to leave out;
    - ``fold``: the icicle's fold rule for the ring and the icicle on top: ``auto``
      (infrastructure and wrappers in bands, narrow towers squeezed; `layout.fold`),
      ``none``, or level ranges ``A:B[,C:D]``; ``max_levels``: levels each thread's
      section of the ring may take after folding (deeper stacks are squeezed into them);
    - ``hide`` / ``hide_modules``: as in the icicle (regexes, modules; children promoted);
    - ``zero_radius``: radius of level 0 in level widths (room for the curves inside; a ring
      with no hand-off curve shown uses less, `layout.ring.inner_radius`);
    - ``time_window``: (t0, t1) µs; without one, ``window`` says what is shown:
      ``concurrent`` (the span in which two or more of the shown threads are active: where
      threads can wait on each other) or ``all`` (the whole trace);
      ``cluster_px``: calls narrower than this many pixels
      are merged into lighter clusters and their curves into compound curves (IV-B2);
    - ``max_curves``: at most this many single curves (the longest waits), the rest
      are drawn as compound curves;
    - ``highlight_wait``: a wait call (index); in object mode its curves' colours say
      which waits act on the same objects (red), share one (brown) or none (grey), IV-B3;
    - ``highlight``: regexes on function names, as in the icicle: the other calls pale;
    - ``show_flows``: flow events as arcs (`layout.threads_flows`); ``cutaway``: ``call:N``
      (its box on the focused icicle, else its bar on the semicircle) or ``lane:NAME``
      (the focused thread's icicle, or a thread's section), see `layout.cutaway`.
    Every field is declared once in `THREADS`.
    """


#: what the render-threads command adds to the view's parameters
THREADS_COMMAND = Schema("render-threads", [
    Param("summary", Flag(), False, group="output", ui=False, help="also print who waited on whom (text) to stderr")])
