"""The cone tree's parameters (`ConeParams`, SEAT 2.4.5): the schema and the object
`cone_layout` takes."""
from __future__ import annotations

from . import shared as S
from .core import Alias, Param, Params, Schema
from .kinds import Choice, Flag, Number
from .trace_kinds import CallRef, Cutaway

ORIENTATION_ITEMS = (("auto", "Auto", "The orientation that shows the tree larger"),
                     ("vertical", "Vertical", "Root on top, children on the base circle below"),
                     ("horizontal", "Horizontal", "Root on the left, the tree grows to the right"))
ORIENTATIONS = tuple(i[0] for i in ORIENTATION_ITEMS)
CONE_COLOR_ITEMS = (("auto", "Automatic", "By module for large traces, by function for small ones"),
                    ("module", "Module", "One colour per module"),
                    ("function", "Function", "One colour per function"),
                    ("kind", "Waits and I/O", "SyncTrace's scheme, as in the icicle"))

CONE = Schema("cone", [
    Param("max_nodes", Number(1, 20000, integer=True), 300, group=S.SHOW, label="Nodes",
          help="calling contexts drawn, the largest by inclusive time (cone trees clutter past ~1000)"),
    S.FOLD.but(help="merge calls away, their children hang from their caller: auto (runtime infrastructure: "
                    "imports, runpy, exec, thread start-up), none, or stack level ranges A:B[,C:D]"),
    Param("fold_recursion", Flag(), True, group=S.SHOW, label="Fold recursion", flag="--no-fold-recursion",
          aliases=(Alias("--expand-recursion", const=False, deprecated=False),),
          help="recursion (direct, or through other calls) is one node, labelled '(N× recursive)' (off, "
               "--expand-recursion: one level per recursive call)"),
    Param("root", CallRef(), None, group=S.SHOW, label="Root", ui=False, default_text="the whole tree",
          help="draw the subtree of one call as the tree, at full detail (an index, or a function name: its longest "
               "call); the panel's Zoom to… on a cone tree lays it out beside the overview"),
    S.EXPAND.but(renamed_from=("expand_calls",)),
    S.PACK_THREADS.but(help="threads of one kind (one process, names that differ only in their numbers: a server's "
                       "thread per request, a pool's workers) are one node, their calling contexts merged "
                       "('36× process_request_thread'), when there are more than 8 threads"),
    S.HIDE, S.HIDE_MODULES, S.HIDE_UTILITIES, S.COLLAPSE_PATTERNS, S.HIGHLIGHT,
    S.CUTAWAY.but(kind=Cutaway(("call",)),
                  help="remove what stands between the camera and the node of a call (call:N: the calling "
                       "context the call belongs to), in the viewport and in renders (an Empty 'TV3D_cutaway' "
                       "that can be moved and animated)"),
    Param("orientation", Choice(ORIENTATION_ITEMS), "auto", label="Orientation",
          help="vertical: root on top; horizontal: root on the left; auto: the one that shows the tree larger"),
    Param("color_by", Choice(CONE_COLOR_ITEMS), "auto", label="Colour by",
          help="node colour: auto (module or function as in the icicle), module, function, kind"),
    S.MAX_COLORS.but(default=12), S.RESOLUTION, S.LABEL_PX,
    S.MAX_LABELS.but(default=60, help="names on the N largest nodes that fit without overlapping"),
    S.SHOW_LABELS, S.SHOW_LEGEND, S.SHOW_TITLE, S.TITLE,
    S.AZIMUTH.but(default=-25.0), S.ELEVATION.but(default=22.0), S.LENS_MM.but(default=60.0),
], doc="The call hierarchy as a 3D cone tree (Robertson et al. 1991): calls merged by their path from the root "
       "(calling contexts), the largest by inclusive time drawn as spheres at the apex of their cone.")


class ConeParams(Params, schema=CONE):
    """Parameters of `cone_layout`.  ``max_nodes``: calling contexts drawn (the largest by
    inclusive time); ``orientation``: ``auto`` (the one that shows the tree larger in the
    frame: deep trees grow to the right), ``vertical`` or ``horizontal``; ``fold``:
    ``auto`` (runtime infrastructure, found by the icicle's rule 1, is merged away: its
    calls' children hang from its caller, so the program's own calling contexts form the
    tree), ``none``, or stack level ranges ``A:B`` merged away;
    ``hide``/``hide_modules``/``hide_utilities``/``collapse_patterns``:
    the filters of `analysis.filters` (as in the icicle); ``color_by``: ``auto``,
    ``module``, ``function``, ``kind``; ``max_labels``: names on the largest nodes;
    ``fold_recursion``: recursion, direct or through other calls, is one node (labelled with
    its depth), not a needle of one level per recursive call; ``highlight``: regexes on function names or
    modules, the nodes of other functions are drawn pale; ``expand``: calls whose nodes are
    fully expanded; ``root``: a call (index, or a function name: its longest call) whose subtree
    is the tree (`transform.subtree_trace`); ``pack_threads``: threads of one kind are one node
    (`layout.select.thread_groups`); ``cutaway``: ``call:N``, what stands between the camera and the sphere of the
    call's calling context is removed (`layout.cutaway.cone_cutaway`).  Every field is declared
    once in `CONE`."""

    def icicle_params(self):
        """The shared stages' view of these parameters (filters, colours, text size)."""
        from .icicle import IcicleParams

        return IcicleParams(hide=list(self.hide), hide_modules=list(self.hide_modules),
                            hide_utilities=int(self.hide_utilities), collapse_patterns=bool(self.collapse_patterns),
                            expand=list(self.expand),  # their children come back in the cone as in the icicle
                            color_by=self.color_by, max_colors=int(self.max_colors), fold=self.fold,
                            resolution=tuple(self.resolution), label_px=float(self.label_px)).validate()
