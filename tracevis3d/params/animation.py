"""The parameters of an animation (``render-animation``, the panel's Animate section):
what moves (kind), how long, how fast, which frames, and where the frames go.  The view's
own parameters come from its schema (`icicle`), the render's from `render` (less its
image ``output``, which here is a folder or a video)."""
from __future__ import annotations

import os
import re

from .core import Param, Schema
from .kinds import Choice, Kind, Number, prop
from .render import RENDER
from .trace_kinds import Window

ANIMATE = "animation"


def _view_items() -> tuple:
    """``--view``'s choices: auto, then every view the registry says can be animated (`tracevis3d.views`)."""
    from ..views import views

    return (("auto", "Automatic", "The icicle of one trace, the comparison of two"),
            *((v.name, v.title, v.summary) for v in views(animated=True)))


VIEW_ITEMS = _view_items()
KIND_ITEMS = (
    ("auto", "Automatic", "Growth of an icicle, reveal of a comparison, hand-offs of the thread view, "
                          "turntable of the cone tree"),
    ("growth", "Growth", "Calls appear when their start is reached and grow to their end; a 'now' line and a clock"),
    ("flythrough", "Fly-through", "The camera flies along the time axis, slower where the most happens"),
    ("turntable", "Turntable", "One full orbit around the figure, kept framed"),
    ("reveal", "Reveal", "A comparison's tubes appear one after another, each growing from A to B"),
    ("handoffs", "Hand-offs", "The thread view's curves from waits to releases appear at their times"),
)
REVEAL_ITEMS = (("time", "Time", "By the A end's place on the time axis, left to right"),
                ("change", "Change", "The largest change of duration (B against A) first"),
                ("similarity", "Similarity", "The most similar matches first"))
EASE_ITEMS = (("linear", "Linear", "Trace time runs at a constant speed"),
              ("eased", "Eased", "Trace time starts and ends slowly (smoothstep 3u² − 2u³)"))
#: video containers by extension (`blender.render.VIDEO_FORMATS` writes them)
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".mov", ".webm")
_FRAMES = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def parse_frames(word):
    """"A-B" (or "A") → (A, B) with 1 <= A <= B; None stays None; ValueError otherwise."""
    if word is None:
        return None
    if isinstance(word, (tuple, list)) and len(word) == 2:
        a, b = int(word[0]), int(word[1])
    else:
        m = _FRAMES.match(str(word))
        if not m:
            raise ValueError(f"frames must be a range like 1-120 or one frame like 7, got {word!r}")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
    if a < 1 or b < a:
        raise ValueError(f"frames {a}-{b}: the range must start at 1 or later and not end before it starts")
    return (a, b)


class FrameRange(Kind):
    """A range of scene frames "A-B" (inclusive, from 1); None: every frame."""

    metavar = "A-B"
    annotation = tuple | None

    def check(self, v, name):
        try:
            return parse_frames(v)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None

    def parse(self, word):
        return parse_frames(word)

    def text(self, v):
        return "all" if v is None else f"{v[0]}-{v[1]}"

    def to_json(self, v):
        return None if v is None else list(v)

    def from_json(self, v):
        return parse_frames(v)


class Target(Kind):
    """Where the frames go: a video file (its extension names the container) or a folder."""

    metavar = "OUT"
    annotation = str | None

    def check(self, v, name):
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{name} must be a path, got {v!r}")
        return v


#: ``--zoom-window auto``: the busiest window this many times narrower than the figure (the zoom
#: tests' windows, >= 100x: `layout.fly_levels.auto_window`)
ZOOM_AUTO_MAGNIFICATION = 128.0
AUTO_WINDOW = "auto"
ZOOM_MODE_ITEMS = (("off", "Off", "The fly-through's own path"),
                   ("auto", "Busiest", f"The window {ZOOM_AUTO_MAGNIFICATION:g}x narrower than the figure in which "
                                       "the most calls start"),
                   ("window", "Window", "The window given by From and To"))


class ZoomWindow(Window):
    """A window to fly into: (t0, t1) µs as `Window`, or "auto" (`ZOOM_AUTO_MAGNIFICATION`);
    in Blender a choice ``<name>_mode`` (off, auto, window) before From and To."""

    metavar = "{T0:T1,auto}"
    annotation = tuple[float, float] | str | None

    def check(self, v, name):
        return AUTO_WINDOW if isinstance(v, str) and v.strip().lower() == AUTO_WINDOW else super().check(v, name)

    def to_json(self, v):
        return v if v == AUTO_WINDOW else super().to_json(v)

    def from_json(self, v):
        return v if v == AUTO_WINDOW else super().from_json(v)

    def parse(self, word):
        if word.strip().lower() == AUTO_WINDOW:
            return AUTO_WINDOW
        try:
            return super().parse(word)
        except ValueError as e:
            raise ValueError(f"{e} or auto") from None

    def text(self, v):
        return v if v == AUTO_WINDOW else super().text(v)

    def props(self, p):
        return [prop(f"{p.name}_mode", "Enum", p, items=ZOOM_MODE_ITEMS, default="off",
                      description=f"{p.help} (Off: {p.default_text or 'none'})")] + super().props(p)[1:]

    def from_props(self, p, get):
        mode = get(f"{p.name}_mode")
        if mode == "off":
            return None
        if mode == AUTO_WINDOW:
            return AUTO_WINDOW
        return super().from_props(p, lambda name: True if name == f"use_{p.name}" else get(name))

    def to_props(self, p, v, put):
        put(f"{p.name}_mode", "off" if v is None else AUTO_WINDOW if v == AUTO_WINDOW else "window")
        if v is not None and v != AUTO_WINDOW:
            super().to_props(p, v, lambda name, x: None if name == f"use_{p.name}" else put(name, x))


def is_video(path: str) -> bool:
    return os.path.splitext(os.fspath(path))[1].lower() in VIDEO_EXTENSIONS


ANIMATION = Schema("animation", [
    Param("output", Target(), None, group=ANIMATE, flag="-o/--output", label="Output",
          default_text="required", ui=False,
          help="a video (.mp4: H.264; .mkv, .mov, .webm) or a folder that gets frame_0001.png, … "
               "numbered by scene frame"),
    Param("view", Choice(VIEW_ITEMS), "auto", group=ANIMATE, label="View", ui=False,
          help="the figure that moves: icicle, threads or cone (one trace), compare (two traces); auto: "
               "icicle for one trace, compare for two"),
    Param("kind", Choice(KIND_ITEMS), "auto", group=ANIMATE, label="Animation",
          help="auto (growth of an icicle, reveal of a comparison, handoffs of the thread view, turntable of "
               "the cone tree), growth (calls appear at their start and grow to their end), flythrough (the camera "
               "along time, slower where the most happens), turntable (one orbit), reveal (a "
               "comparison's tubes appear from A to B) or handoffs (the thread view's wait-to-release "
               "curves appear at their times)"),
    Param("seconds", Number(0.1, 3600.0, metavar="S"), 10.0, group=ANIMATE, unit="s", label="Seconds",
          help="length of the animation"),
    Param("fps", Number(1, 240, integer=True, metavar="F"), 30, group=ANIMATE, label="Frames per second",
          help="frames per second"),
    Param("easing", Choice(EASE_ITEMS), "eased", group=ANIMATE, label="Time mapping",
          help="growth: scene time to trace time, linear or eased (smoothstep: slow at both ends)"),
    Param("reveal_order", Choice(REVEAL_ITEMS), "time", group=ANIMATE, label="Reveal order",
          help="reveal: the order in which the tubes appear: time (A's time axis), change (largest "
               "change of duration first), similarity (most similar first)"),
    Param("zoom_window", ZoomWindow(), None, group=ANIMATE, label="Fly into", flag="--zoom-window", unit="µs",
          default_text="none: the fly-through's own path",
          help="flythrough of an icicle: end on this window (T0:T1, µs or with a unit, from the trace start; at "
               "least 2x narrower than the figure; auto: the window "
               f"{ZOOM_AUTO_MAGNIFICATION:g}x narrower than the figure in which the most calls start), laid out "
               "again at full detail on the way in: nested refined windows built before the frames, each shown "
               "while the camera needs it, so names appear as the camera arrives"),
    Param("zoom_levels", Number(1, 8, integer=True, metavar="K"), 4, group=ANIMATE, label="Refinement levels",
          help="flythrough with --zoom-window: at most this many refined windows along the path (one per 4x of "
               "magnification: 4 take it 100x+; each is a collection of the window's boxes and names)"),
    Param("frames", FrameRange(), None, group=ANIMATE, label="Frames", ui=False, default_text="all",
          help="render only the scene frames A-B (inclusive, from 1): the same pixels as in the whole "
               "render, for render farms"),
], doc="Animations of a figure: growth, fly-through, turntable; a comparison's reveal; the thread view's "
       "hand-offs.")

#: the render options an animation takes: those of a still, less its image file and alpha
ANIMATION_RENDER = Schema("animation render", [p for p in RENDER if p.name not in ("output", "transparent")],
                          doc=RENDER.doc)


def frame_count(seconds: float, fps: int) -> int:
    """Frames of an animation of ``seconds`` at ``fps`` (at least 2)."""
    return max(2, int(round(float(seconds) * int(fps))))


def _only(schema: Schema, view: str, before: list) -> Schema:
    """``schema``'s parameters that none of ``before`` declares (the command line has one
    option per name: a view whose declaration differs uses its own default)."""
    taken = {p.name for b in before for p in b}
    return Schema(f"animation {view}", [p for p in schema if p.name not in taken],
                  doc=f"The {view} view's own options.")


def _view_schemas() -> tuple:
    """The first animated view's schema (the icicle's), then each other's parameters that no
    view before it declares (`_only`), in the registry's order (`tracevis3d.views`)."""
    from ..views import views

    schemas = [v.params_class.SCHEMA for v in views(animated=True)]
    return (schemas[0], *(_only(s, s.view, schemas[:k]) for k, s in enumerate(schemas) if k))


#: the options of the animated views an animation takes: the icicle's, then the options of the
#: others that no view before it declares (comparison, thread view, cone tree); a view whose
#: declaration differs uses its own default for it (`differing`)
ANIMATION_VIEWS = _view_schemas()


def differing(schema: Schema) -> list:
    """Names of ``schema``'s parameters whose option on the animation's command line is
    another view's declaration (left at ``schema``'s defaults)."""
    first: dict = {}
    for s in ANIMATION_VIEWS:
        for p in s:
            first.setdefault(p.name, p)
    return [p.name for p in schema if p.name in first and first[p.name] != p]
