"""Parameters of the icicle figure (`IcicleParams`), shared by the CLI, the panel and scripts.

Every field is JSON-able (`to_dict` / `from_dict`), so a saved .blend and a script reproduce
the same figure.  `validate()` normalises values and raises ValueError naming the field.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field, fields

import numpy as np

EXTRUDE_MEASURES = ("constant", "inclusive", "self", "calls")
COLOR_BY = ("auto", "function", "module", "kind", "depth", "inclusive", "self")
THREAD_ORDERS = ("default", "start", "name", "busy")
_FOLD_RANGE = re.compile(r"^\s*(\d*)\s*:\s*(\d*)\s*$")


def parse_fold(spec) -> tuple:
    """``fold`` → ("auto", ()) | ("none", ()) | ("levels", ((a, b), ...)).

    Level ranges are inclusive, ``A:`` runs to the deepest level, ``:B`` starts at 0.
    """
    if spec is None:
        return ("none", ())
    s = str(spec).strip().lower()
    if s in ("auto", ""):
        return ("auto", ())
    if s in ("none", "off", "no"):
        return ("none", ())
    ranges = []
    for part in s.split(","):
        m = _FOLD_RANGE.match(part)
        if not m or not (m.group(1) or m.group(2)):
            raise ValueError(f"fold must be 'auto', 'none' or level ranges like '3:40' or '3:40,50:', got {spec!r}")
        a = int(m.group(1)) if m.group(1) else 0
        b = int(m.group(2)) if m.group(2) else 2 ** 31 - 1
        if b < a:
            raise ValueError(f"fold range {part.strip()!r} ends before it starts")
        ranges.append((a, b))
    return ("levels", tuple(ranges))


def checked_resolution(resolution) -> tuple:
    """(width, height) as ints within 16..16384 px (ValueError otherwise)."""
    try:
        w, h = (int(x) for x in resolution)
    except (TypeError, ValueError):
        raise ValueError(f"resolution must be (width, height), got {resolution!r}") from None
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise ValueError(f"resolution must be within 16..16384 px, got {w}x{h}")
    return (w, h)


def checked_window(window, name: str = "time_window"):
    """None, or (t0, t1) as finite floats with t0 < t1 (ValueError naming ``name``)."""
    if window is None:
        return None
    try:
        t0, t1 = (float(x) for x in window)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be (t0, t1) in µs, got {window!r}") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise ValueError(f"{name} must have finite t0 < t1, got {window!r}")
    return (t0, t1)


@dataclass
class IcicleParams:
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
      (main thread first, then by first activity), ``start``, ``name``, ``busy`` (most
      busy first), or a list of names/indices shown first in that order.
    - ``label_px``: label text height in pixels at 1080 image lines (scaled with the
      resolution; never below 14 px at 1080 lines).
    - ``title``: None for the automatic title (trace, calls, threads, span), "" for none.
    """

    extrude_measure: str = "self"
    color_by: str = "auto"
    threads: list[int | str] | None = None  # thread indices or names; None = all
    thread_order: str | list[int | str] = "default"  # keyword or list of names/indices
    time_window: tuple[float, float] | None = None  # (t0, t1) µs from the trace origin; None = all
    max_depth: int | None = None  # show stack levels 0..max_depth only; None = all
    fold: str = "auto"
    hide: list[str] = field(default_factory=list)  # regexes on function names
    hide_modules: list[str] = field(default_factory=list)  # dotted module names
    hide_utilities: int = 0  # hide the top N utility routines
    collapse_patterns: bool = False  # repeated subtrees after the first: root call only
    expand: list[int] = field(default_factory=list)  # calls whose filtered children are shown anyway
    highlight: list[str] = field(default_factory=list)  # regexes: other calls are drawn pale
    resolution: tuple[int, int] = (1920, 1080)
    cluster_px: float = 1.0
    label_px: float = 16.0
    label_min_px: float = 0.0  # a box narrower than this gets no label (0: room for 3 characters)
    lane_gap: float | None = None  # extra world gap between lanes; None = automatic
    show_labels: bool = True
    show_legend: bool = True
    show_axes: bool = True  # lane names and the time axis
    show_title: bool = True
    title: str | None = None
    orthographic: bool = False
    max_labels: int = 400
    max_colors: int = 16
    time_length: float = 20.0
    lane_depth: float = 4.0  # the deepest box reaches this many level heights back
    azimuth: float = -5.0
    elevation: float = 15.0
    lens_mm: float = 100.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["resolution"] = list(self.resolution)
        d["time_window"] = None if self.time_window is None else list(self.time_window)
        d["threads"] = None if self.threads is None else list(self.threads)
        d["thread_order"] = self.thread_order if isinstance(self.thread_order, str) else list(self.thread_order)
        d["hide"] = list(self.hide)
        d["hide_modules"] = list(self.hide_modules)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "IcicleParams":
        if not isinstance(d, dict):
            raise ValueError(f"icicle parameters must be a dict, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown icicle parameter(s) {unknown}; known: {sorted(known)}")
        kw = dict(d)
        for name in ("resolution", "time_window"):
            if kw.get(name) is not None:
                kw[name] = tuple(kw[name])
        for name in ("threads", "hide", "hide_modules"):
            if kw.get(name) is not None:
                kw[name] = list(kw[name])
        return cls(**kw).validate()

    def validate(self) -> "IcicleParams":
        if self.extrude_measure not in EXTRUDE_MEASURES:
            raise ValueError(f"extrude_measure must be one of {EXTRUDE_MEASURES}, got {self.extrude_measure!r}")
        if self.color_by not in COLOR_BY:
            raise ValueError(f"color_by must be one of {COLOR_BY}, got {self.color_by!r}")
        self.resolution = checked_resolution(self.resolution)
        self.time_window = checked_window(self.time_window)
        for name in ("cluster_px", "label_min_px", "time_length", "lane_depth"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if not (isinstance(self.label_px, (int, float)) and 14.0 <= self.label_px <= 200.0):
            raise ValueError(f"label_px must be within 14..200 (pixels at 1080 lines), got {self.label_px!r}")
        if self.time_length <= 0 or self.lane_depth <= 0:
            raise ValueError("time_length and lane_depth must be > 0")
        if self.lane_gap is not None and not (math.isfinite(self.lane_gap) and self.lane_gap >= 0):
            raise ValueError(f"lane_gap must be None or >= 0, got {self.lane_gap!r}")
        if self.max_depth is not None and not (isinstance(self.max_depth, (int, np.integer)) and self.max_depth >= 0):
            raise ValueError(f"max_depth must be None or an integer >= 0, got {self.max_depth!r}")
        if not 2 <= int(self.max_colors) <= 64:
            raise ValueError(f"max_colors must be within 2..64, got {self.max_colors!r}")
        if not 0.0 < self.elevation < 89.0:
            raise ValueError(f"elevation must be within (0, 89) degrees, got {self.elevation!r}")
        parse_fold(self.fold)  # raises on a bad spec
        self.fold = str(self.fold).strip().lower() if self.fold is not None else "none"
        if isinstance(self.thread_order, str):
            if self.thread_order not in THREAD_ORDERS:
                raise ValueError(f"thread_order must be one of {THREAD_ORDERS} or a list of threads, "
                                 f"got {self.thread_order!r}")
        else:
            try:
                self.thread_order = list(self.thread_order)
            except TypeError:
                raise ValueError(f"thread_order must be one of {THREAD_ORDERS} or a list of threads, "
                                 f"got {self.thread_order!r}") from None
        for name in ("hide", "hide_modules"):
            v = getattr(self, name)
            if v is None:
                v = []
            if isinstance(v, str):
                v = [v]
            v = [str(x) for x in v]
            setattr(self, name, v)
        from ..analysis.userregex import user_regex

        for name in ("hide", "highlight"):
            v = getattr(self, name)
            v = [] if v is None else [v] if isinstance(v, str) else [str(x) for x in v]
            setattr(self, name, v)
            for rx in v:
                user_regex(rx, name)  # ValueError of one line: bad, or needs backtracking
        try:
            self.expand = sorted({int(c) for c in (self.expand or [])})
        except (TypeError, ValueError):
            raise ValueError(f"expand must be a list of call indices, got {self.expand!r}") from None
        if any(c < 0 for c in self.expand):
            raise ValueError(f"expand: call indices must be >= 0, got {self.expand!r}")
        if isinstance(self.hide_utilities, bool) or not isinstance(self.hide_utilities, (int, np.integer)) \
                or not 0 <= self.hide_utilities <= 10000:
            raise ValueError(f"hide_utilities must be an integer within 0..10000, got {self.hide_utilities!r}")
        self.hide_utilities = int(self.hide_utilities)
        self.collapse_patterns = bool(self.collapse_patterns)
        if self.title is not None and not isinstance(self.title, str):
            raise ValueError(f"title must be a string or None, got {self.title!r}")
        return self
