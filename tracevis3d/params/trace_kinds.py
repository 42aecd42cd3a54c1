"""Sorts of parameter values about a trace (`tracevis3d.params.kinds` has the general ones
and the conventions): threads, calls, time windows, the fold rule, the lane order, the
image size."""
from __future__ import annotations

import math
import re

import numpy as np

from .kinds import Kind, Text, is_int, prop, thread_word, split_words, parse_fold, parse_time

class Threads(Kind):
    """Threads by index or name: a list (``optional``: None means all); on the command line
    repeatable and comma-separated (T1,T2 or --x T1 --x T2)."""

    metavar = "T1,T2,..."
    repeat = True

    def __init__(self, optional=True):
        self.optional = optional
        self.annotation = (list[int | str] | None) if optional else list[int | str]

    def check(self, v, name):
        if v is None:
            return None if self.optional else []
        if isinstance(v, (str, int, np.integer)):
            v = [v]
        try:
            out = [int(t) if is_int(t) else t for t in v]
        except TypeError:
            raise ValueError(f"{name} must be a list of thread names or indices, got {v!r}") from None
        for t in out:
            if not (isinstance(t, str) or (isinstance(t, int) and t >= 0)):
                raise ValueError(f"{name}: a thread is a name or an index >= 0, got {t!r}")
        return out if (out or not self.optional) else None

    def to_json(self, v):
        return None if v is None else list(v)

    def parse(self, word):
        items = [thread_word(t) for t in word.split(",") if t.strip()]
        if not items:
            raise ValueError(f"threads must be a list T1,T2,..., got {word!r}")
        return items

    def text(self, v):
        return "all" if v is None else ",".join(str(t) for t in v) or "none"

    def props(self, p):
        return [prop(p.name, "String", p, default="",
                      description=f"{p.help}: names or indices separated by ','")]

    def from_props(self, p, get):
        items = [thread_word(t) for t in split_words(get(p.name), ",")]
        return items if items else (None if self.optional else [])

    def to_props(self, p, v, put):
        put(p.name, ", ".join(str(t) for t in (v or [])))


class Thread(Kind):
    """One thread by index or name; None: the view's choice (``default_text``)."""

    metavar = "THREAD"
    annotation = int | str | None

    def check(self, v, name):
        if v is None or isinstance(v, str) or (is_int(v) and v >= 0):
            return int(v) if is_int(v) else v
        raise ValueError(f"{name}: a thread is a name or an index >= 0, got {v!r}")

    def parse(self, word):
        return thread_word(word)

    def props(self, p):
        return [prop(p.name, "String", p, default="")]

    def from_props(self, p, get):
        items = split_words(get(p.name), ",")
        if len(items) > 1:
            raise ValueError(f"{p.label}: one thread, got {len(items)} ({get(p.name)!r})")
        return thread_word(items[0]) if items else None

    def to_props(self, p, v, put):
        put(p.name, "" if v is None else str(v))


class CallRef(Thread):
    """A call: its index, or a function name (its longest call), resolved against the trace
    by the view; None: no call."""

    metavar = "CALL"

    def check(self, v, name):
        if v is None or isinstance(v, str) or (is_int(v) and v >= 0):
            return int(v) if is_int(v) else (v.strip() or None if isinstance(v, str) else v)
        raise ValueError(f"{name}: a call is an index >= 0 or a function name, got {v!r}")


class Calls(Kind):
    """Call indices (>= 0), sorted and unique; a hidden text field in Blender."""

    metavar = "CALL"
    repeat = True
    annotation = list[int]

    def check(self, v, name):
        try:
            out = sorted({int(c) for c in (v or [])})
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a list of call indices, got {v!r}") from None
        if any(c < 0 for c in out):
            raise ValueError(f"{name}: call indices must be >= 0, got {v!r}")
        return out

    def to_json(self, v):
        return [int(c) for c in v]

    def parse(self, word):
        try:
            c = int(word)
        except ValueError:
            raise ValueError(f"a call is an index, got {word!r}") from None
        if c < 0:
            raise ValueError(f"a call index must be >= 0, got {word!r}")
        return c

    def text(self, v):
        return "none" if not v else ",".join(map(str, v))

    def props(self, p):
        return [prop(p.name, "String", p, default="", options={"HIDDEN"})]

    def from_props(self, p, get):
        return [int(x) for x in split_words(get(p.name), ",") if x.isdigit()]

    def to_props(self, p, v, put):
        put(p.name, ",".join(str(int(c)) for c in (v or [])))


class Window(Kind):
    """A time window (t0, t1) in µs from the trace start, t0 < t1; None: the default's
    ``default_text``.  Command line: T0:T1 with units (0:50ms); Blender: a switch
    ``use_<name>`` and ``<name>_start`` / ``<name>_end`` in µs."""

    metavar = "T0:T1"
    annotation = tuple[float, float] | None

    def check(self, v, name):
        if v is None:
            return None
        try:
            t0, t1 = (float(x) for x in v)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be (t0, t1) in µs, got {v!r}") from None
        if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
            raise ValueError(f"{name} must have finite t0 < t1, got {v!r}")
        return (t0, t1)

    def to_json(self, v):
        return None if v is None else list(v)

    def from_json(self, v):
        return None if v is None else tuple(v) if isinstance(v, (list, tuple)) else v

    def parse(self, word):
        if ":" not in word:
            raise ValueError(f"window must be T0:T1 (µs from the trace start), got {word!r}")
        a, b = word.split(":", 1)
        t0, t1 = parse_time(a), parse_time(b)
        if not t0 < t1:
            raise ValueError(f"window needs T0 < T1, got {word!r}")
        return (t0, t1)

    def text(self, v):
        return "none" if v is None else f"{v[0]:g}:{v[1]:g}"

    def props(self, p):
        return [prop(f"use_{p.name}", "Bool", p, default=False,
                      description=f"{p.help} (off: {p.default_text or 'none'})"),
                prop(f"{p.name}_start", "Float", p, label="From (µs)", default=0.0, min=0.0,
                      description=f"{p.label}: start, µs from the trace start"),
                prop(f"{p.name}_end", "Float", p, label="To (µs)", default=0.0, min=0.0,
                      description=f"{p.label}: end, µs from the trace start")]

    def from_props(self, p, get):
        if not get(f"use_{p.name}"):
            return None
        t0, t1 = float(get(f"{p.name}_start")), float(get(f"{p.name}_end"))
        if not t1 > t0:
            raise ValueError(f"{p.label} is empty: 'To' ({t1:g} µs) must be after 'From' ({t0:g} µs)")
        return (t0, t1)

    def to_props(self, p, v, put):
        put(f"use_{p.name}", v is not None)
        if v is not None:
            put(f"{p.name}_start", float(v[0]))
            put(f"{p.name}_end", float(v[1]))


FOLD_MODES = (
    ("auto", "Automatic", "Fold levels that carry little information (a call whose single child "
                          "covers nearly all of its time; runs of import machinery) into thin bands"),
    ("none", "None", "Every stack level at full height"),
    ("levels", "Levels", "Fold the stack level ranges given below"),
)


class Fold(Kind):
    """The fold rule: ``auto``, ``none`` or level ranges ``A:B[,C:D]`` (`parse_fold`);
    Blender: ``<name>_mode`` (auto, none, levels) and ``<name>_levels``."""

    metavar = "RULE"
    annotation = str

    def check(self, v, name):
        try:
            parse_fold(v)
        except ValueError as e:
            raise ValueError(f"{name}: {e}" if not str(e).startswith("fold") else str(e)) from None
        return "none" if v is None else str(v).strip().lower()

    def parse(self, word):
        parse_fold(word)
        return word.strip().lower()

    def props(self, p):
        return [prop(f"{p.name}_mode", "Enum", p, items=FOLD_MODES, default=parse_fold(p.default)[0]),
                prop(f"{p.name}_levels", "String", p, label="Fold levels", default="",
                      description="Level ranges to fold, inclusive: '3:40' or '3:40, 50:' (A: and :B are open)")]

    def from_props(self, p, get):
        mode = get(f"{p.name}_mode")
        if mode != "levels":
            return mode
        levels = ",".join(split_words(get(f"{p.name}_levels"), ","))
        if not levels:
            raise ValueError("fold 'Levels' needs level ranges such as 3:40 or 3:40, 50:")
        return levels

    def to_props(self, p, v, put):
        mode = parse_fold(v)[0]
        if mode == "levels":
            put(f"{p.name}_levels", str(v))
        put(f"{p.name}_mode", mode)


INSET_MODES = (
    ("auto", "Automatic", "Magnify the crowded stretch the figure leaves unnamed, where the frame has room"),
    ("none", "None", "No detail inset"),
    ("window", "Window", "Magnify the time window given below"),
)


class Inset(Kind):
    """The detail inset (`layout.inset`): ``auto``, ``none`` or a window ``T0:T1`` (µs from
    the trace start, or with units, as ``--window``); Blender: ``<name>_mode`` (auto, none,
    window) and ``<name>_start`` / ``<name>_end`` in µs."""

    metavar = "auto|none|T0:T1"
    annotation = str

    def check(self, v, name):
        s = "none" if v is None else str(v).strip().lower()
        if s in ("auto", "none"):
            return s
        try:
            t0, t1 = Window().parse(s)
        except ValueError as e:
            raise ValueError(f"{name} must be auto, none or a window T0:T1, got {v!r} ({e})") from None
        return f"{t0:.17g}:{t1:.17g}"

    def parse(self, word):
        return self.check(word, "inset")

    def props(self, p):
        return [prop(f"{p.name}_mode", "Enum", p, items=INSET_MODES, default=p.default),
                prop(f"{p.name}_start", "Float", p, label="From (µs)", default=0.0, min=0.0,
                      description=f"{p.label}: start, µs from the trace start"),
                prop(f"{p.name}_end", "Float", p, label="To (µs)", default=0.0, min=0.0,
                      description=f"{p.label}: end, µs from the trace start")]

    def from_props(self, p, get):
        mode = get(f"{p.name}_mode")
        if mode != "window":
            return mode
        t0, t1 = float(get(f"{p.name}_start")), float(get(f"{p.name}_end"))
        if not t1 > t0:
            raise ValueError(f"{p.label} is empty: 'To' ({t1:g} µs) must be after 'From' ({t0:g} µs)")
        return f"{t0:.17g}:{t1:.17g}"

    def to_props(self, p, v, put):
        if v in ("auto", "none"):
            put(f"{p.name}_mode", v)
            return
        t0, t1 = Window().parse(v)
        put(f"{p.name}_mode", "window")
        put(f"{p.name}_start", float(t0))
        put(f"{p.name}_end", float(t1))


THREAD_ORDER_ITEMS = (
    ("default", "Default", "Main thread first, then by first activity"),
    ("start", "Start", "By first activity"),
    ("name", "Name", "By thread name"),
    ("busy", "Busiest first", "By the time the thread is busy"),
)
THREAD_ORDERS = tuple(i[0] for i in THREAD_ORDER_ITEMS)


class ThreadOrder(Kind):
    """A keyword (`THREAD_ORDERS`) or a list of threads shown first; Blender: ``<name>``
    (the keywords and "list") and ``<name>_list``."""

    metavar = "ORDER"
    annotation = str | list[int | str]

    def check(self, v, name):
        if isinstance(v, str):
            if v not in THREAD_ORDERS:
                raise ValueError(f"{name} must be one of {THREAD_ORDERS} or a list of threads, got {v!r}")
            return v
        try:
            return [thread_word(t) for t in v]
        except TypeError:
            raise ValueError(f"{name} must be one of {THREAD_ORDERS} or a list of threads, got {v!r}") from None

    def to_json(self, v):
        return v if isinstance(v, str) else list(v)

    def parse(self, word):
        s = word.strip()
        if s in THREAD_ORDERS:
            return s
        items = [thread_word(t) for t in s.split(",") if t.strip()]
        if not items:
            raise ValueError(f"thread order must be one of {', '.join(THREAD_ORDERS)} or a list T1,T2,..., got {word!r}")
        return items

    def text(self, v):
        return v if isinstance(v, str) else ",".join(map(str, v))

    def props(self, p):
        items = THREAD_ORDER_ITEMS + (("list", "These first", "The threads listed below first, the others after them"),)
        return [prop(p.name, "Enum", p, items=items, default=p.default),
                prop(f"{p.name}_list", "String", p, label="First threads", default="",
                      description="Threads shown first, in this order: names or indices separated by ','")]

    def from_props(self, p, get):
        kw = get(p.name)
        if kw != "list":
            return kw
        order = [thread_word(t) for t in split_words(get(f"{p.name}_list"), ",")]
        if not order:
            raise ValueError("thread order 'These first' needs the threads to show first "
                             "(comma-separated names or indices)")
        return order

    def to_props(self, p, v, put):
        if isinstance(v, str):
            put(p.name, v)
        elif v:
            put(f"{p.name}_list", ", ".join(str(t) for t in v))
            put(p.name, "list")


class Resolution(Kind):
    """(width, height) in pixels, 16..16384 each; command line WxH; Blender ``<name>_x``,
    ``<name>_y``."""

    metavar = "WxH"
    annotation = tuple[int, int]

    def check(self, v, name):
        try:
            w, h = (int(x) for x in v)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be (width, height), got {v!r}") from None
        if not (16 <= w <= 16384 and 16 <= h <= 16384):
            raise ValueError(f"{name} must be within 16..16384 px, got {w}x{h}")
        return (w, h)

    def to_json(self, v):
        return list(v)

    def from_json(self, v):
        return tuple(v) if isinstance(v, (list, tuple)) else v

    def parse(self, word):
        m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", word)
        if not m:
            raise ValueError(f"resolution must look like 1920x1080, got {word!r}")
        w, h = int(m.group(1)), int(m.group(2))
        if not (16 <= w <= 16384 and 16 <= h <= 16384):
            raise ValueError(f"resolution must be within 16..16384 px, got {word!r}")
        return (w, h)

    def text(self, v):
        return f"{v[0]}x{v[1]}"

    def range_text(self):
        return "16..16384 each"

    def props(self, p):
        return [prop(f"{p.name}_x", "Int", p, label="Width", default=p.default[0], min=16, max=16384,
                      subtype="PIXEL", description="Figure width in pixels (also the unit of sub-pixel clustering)"),
                prop(f"{p.name}_y", "Int", p, label="Height", default=p.default[1], min=16, max=16384,
                      subtype="PIXEL", description="Figure height in pixels")]

    def from_props(self, p, get):
        return (int(get(f"{p.name}_x")), int(get(f"{p.name}_y")))

    def to_props(self, p, v, put):
        put(f"{p.name}_x", int(v[0]))
        put(f"{p.name}_y", int(v[1]))


#: what each form of a cutaway's target means on the command line (`parse_cutaway`)
CUTAWAY_FORMS = {"call": "call:N (a call index)", "lane": "lane:NAME or lane:N (a thread's lane)",
                 "a": "a:N (call N of trace A)", "b": "b:N (call N of trace B)"}


def cutaway_syntax(forms=("call", "lane")) -> str:
    """The accepted spellings of a view's cutaway, in words."""
    return ", ".join(CUTAWAY_FORMS[f] for f in forms) + ", or none"


def parse_cutaway(text: str | None, forms=("call", "lane")) -> tuple | None:
    """``"call:12"`` → ("call", 12); ``"lane:MainThread"`` / ``"lane:2"`` → ("lane", name or
    index); ``"a:12"`` / ``"b:12"`` → ("a" or "b", 12), call 12 of a comparison's trace A or
    B; None, "" or "none" → None; ValueError otherwise, or for a form not in ``forms`` (the
    ones a view has)."""
    if text is None or not text.strip() or text.strip().lower() == "none":
        return None
    what, _, ref = text.strip().partition(":")
    what, ref = what.strip().lower(), ref.strip()
    if what in forms and what in ("call", "a", "b") and re.fullmatch(r"\d{1,10}", ref):
        return (what, int(ref))
    if what in forms and what == "lane" and ref:
        return ("lane", int(ref) if re.fullmatch(r"\d{1,6}", ref) else ref)
    raise ValueError(f"cutaway must be {cutaway_syntax(forms)}, got {text!r}")


class Cutaway(Text):
    """What a cutaway opens the view onto (`parse_cutaway`): the ``forms`` a view has (a
    call or a lane in the icicle and the thread view, a call in the cone tree, a call of A
    or of B in a comparison)."""

    def __init__(self, forms=("call", "lane")):
        self.forms = tuple(forms)
        super().__init__("|".join({"call": "call:N", "lane": "lane:NAME", "a": "a:N", "b": "b:N"}[f]
                                  for f in self.forms))

    def example(self) -> str:
        """A valid value other than none (tests)."""
        return {"call": "call:3", "lane": "lane:worker-1", "a": "a:3", "b": "b:3"}[self.forms[-1]]

    def check(self, v, name):
        v = super().check(v, name)
        try:
            target = parse_cutaway(v, self.forms)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
        return None if target is None else v.strip()

    def parse(self, word):
        parse_cutaway(word, self.forms)
        return word
