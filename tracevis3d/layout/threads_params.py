"""Parameters of the thread view (SyncTrace IV-B, IV-C as parameters), bpy-free."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .params import checked_resolution, checked_window

THREAD_COLOR_BY = ("kind", "thread", "object")


@dataclass
class ThreadsParams:
    """What the thread view shows and how.

    - ``focus``: the thread (name or index) shown as the straight extruded icicle behind the
      ring and whose sector is enlarged ``focus_scale`` times (Fig. 7); None = the thread
      that waits longest on others;
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
    - ``zero_radius``: radius of level 0 in level widths (room for the curves inside);
    - ``time_window``: (t0, t1) µs; without one, ``window`` says what is shown:
      ``concurrent`` (the span in which two or more of the shown threads are active: where
      threads can wait on each other) or ``all`` (the whole trace);
      ``cluster_px``: calls narrower than this many pixels
      are merged into lighter clusters and their curves into compound curves (IV-B2);
    - ``max_curves``: at most this many single curves (the longest waits), the rest
      are drawn as compound curves;
    - ``highlight_wait``: a wait call (index); in object mode its curves' colours say
      which waits act on the same objects (red), share one (brown) or none (grey), IV-B3;
    - ``highlight``: regexes on function names, as in the icicle: the other calls pale.
    """

    focus: int | str | None = None
    color_by: str = "kind"
    threads: list[int | str] | None = None
    hide_threads: list[int | str] = field(default_factory=list)
    fold: str = "auto"
    hide: list[str] = field(default_factory=list)
    hide_modules: list[str] = field(default_factory=list)
    max_levels: int = 14
    zero_radius: float = 9.0
    focus_scale: float = 2.5
    time_window: tuple[float, float] | None = None
    window: str = "concurrent"
    cluster_px: float = 1.5
    resolution: tuple[int, int] = (1920, 1080)
    label_px: float = 16.0
    show_icicle: bool = True
    show_legend: bool = True
    show_title: bool = True
    show_labels: bool = True
    title: str | None = None
    max_curves: int = 5000
    highlight_wait: int | None = None
    highlight: list[str] = field(default_factory=list)
    elevation: float = 15.0
    azimuth: float = -5.0
    lens_mm: float = 100.0

    def to_dict(self) -> dict:
        return asdict(self)

    def validate(self) -> "ThreadsParams":
        if self.color_by not in THREAD_COLOR_BY:
            raise ValueError(f"color_by must be one of {THREAD_COLOR_BY}, got {self.color_by!r}")
        self.resolution = checked_resolution(self.resolution)
        self.time_window = checked_window(self.time_window)
        if self.window not in ("concurrent", "all"):
            raise ValueError(f"window must be 'concurrent' or 'all', got {self.window!r}")
        if self.highlight_wait is not None and not (isinstance(self.highlight_wait, int) and self.highlight_wait >= 0):
            raise ValueError(f"highlight_wait must be a call index >= 0, got {self.highlight_wait!r}")
        from .params import parse_fold

        parse_fold(self.fold)  # raises on a bad rule
        self.fold = str(self.fold).strip().lower()
        for name in ("hide", "hide_modules", "highlight"):
            v = getattr(self, name)
            setattr(self, name, [] if v is None else [v] if isinstance(v, str) else [str(x) for x in v])
        from ..analysis.userregex import user_regex

        for rx in self.hide + self.highlight:
            user_regex(rx, "hide/highlight")  # ValueError of one line: bad, or needs backtracking
        for name, lo, hi in (("max_levels", 1, 1000), ("max_curves", 0, 10 ** 8)):
            v = getattr(self, name)
            if not (isinstance(v, int) and lo <= v <= hi):
                raise ValueError(f"{name} must be an integer within {lo}..{hi}, got {v!r}")
        for name, lo, hi in (("zero_radius", 1.0, 1000.0), ("focus_scale", 1.0, 50.0), ("cluster_px", 0.0, 100.0),
                             ("label_px", 14.0, 200.0), ("elevation", 1.0, 89.0), ("lens_mm", 10.0, 300.0),
                             ("azimuth", -90.0, 90.0)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"{name} must be a number within {lo}..{hi}, got {v!r}")
        return self
