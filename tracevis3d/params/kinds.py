"""Sorts of parameter values (`tracevis3d.params.core`): each kind checks and normalises a
value (ValueError naming the parameter), writes and reads its JSON, parses a command-line
word, and says which Blender properties hold it and how to read and write them.

Blender properties are described bpy-free, as ``(name, type, options)`` with ``type`` one of
Bool, Int, Float, String, Enum (the arguments of ``bpy.props.<type>Property``); the add-on
makes them in one place.  A property group is reached through ``get(name)`` and
``put(name, value)``, so the conversions are tested without Blender.
"""
from __future__ import annotations

import math
import re

import numpy as np

# ------------------------------------------------------------------ words of the command line
_UNITS = {"": 1.0, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "ns": 1e-3}
_TIME = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(us|µs|ms|ns|s)?\s*")
_FOLD_RANGE = re.compile(r"^\s*(\d*)\s*:\s*(\d*)\s*$")
_MODULE = re.compile(r"[\w<>.-]+")


def parse_time(s: str) -> float:
    """'12ms' -> 12000.0 µs; no unit: µs."""
    m = _TIME.fullmatch(s)
    if not m:
        raise ValueError(f"bad time {s!r} (µs, or with a unit: 12ms, 1.5s)")
    return float(m.group(1)) * _UNITS[m.group(2) or ""]


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


def _thread_word(s):
    """A thread by index (digits) or name."""
    if isinstance(s, str):
        s = s.strip()
        return int(s) if re.fullmatch(r"\d+", s) else s
    return s


def _words(text: str, sep: str) -> list:
    return [w.strip() for w in (text or "").split(sep) if w.strip()]


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _prop(name, type_, p, **kw):
    """A Blender property's description: the parameter's label and help, ``kw`` added."""
    opts = {"name": kw.pop("label", p.label), "description": kw.pop("description", p.help)}
    opts.update(kw)
    return (name, type_, opts)


# ------------------------------------------------------------------ kinds
class Kind:
    """A sort of value.  ``annotation``: its Python type (the dataclass field's);
    ``is_flag``: a switch on the command line; ``repeat``: the option may be given again,
    its values collected."""

    annotation: object = object
    is_flag = False
    repeat = False
    metavar = "VALUE"
    choices = None

    def check(self, v, name: str):
        return v

    def to_json(self, v):
        return v

    def from_json(self, v):
        return v

    def parse(self, word: str):
        """The value of one command-line word (ValueError says what is wrong)."""
        return word

    def text(self, v) -> str:
        """A value as a user writes it (help texts, the README)."""
        return "none" if v is None else str(v)

    def range_text(self) -> str:
        return ""

    # Blender
    def props(self, p) -> list:
        return [_prop(p.name, "String", p, default="" if p.default is None else str(p.default))]

    def from_props(self, p, get):
        return get(p.name)

    def to_props(self, p, v, put) -> None:
        put(p.name, v)


class Flag(Kind):
    annotation = bool
    is_flag = True

    def check(self, v, name):
        if isinstance(v, (bool, np.bool_)) or (_is_int(v) and v in (0, 1)):
            return bool(v)
        raise ValueError(f"{name} must be true or false, got {v!r}")

    def text(self, v):
        return "on" if v else "off"

    def props(self, p):
        return [_prop(p.name, "Bool", p, default=bool(p.default))]

    def from_props(self, p, get):
        return bool(get(p.name))


class Number(Kind):
    """A number within [lo, hi] (``lo_open``/``hi_open``: strictly inside); ``integer``;
    ``optional``: None is allowed (the parameter's ``default_text`` says what it means),
    held in Blender as a switch ``use_<name>`` beside the number (``placeholder`` when
    unset); ``soft_max``: the panel slider's end."""

    metavar = "N"

    def __init__(self, lo=None, hi=None, integer=False, optional=False, lo_open=False, hi_open=False,
                 placeholder=None, soft_max=None, metavar=None):
        self.lo, self.hi, self.integer, self.optional = lo, hi, integer, optional
        self.lo_open, self.hi_open = lo_open, hi_open
        self.placeholder, self.soft_max = placeholder, soft_max
        base = int if integer else float
        self.annotation = (base | None) if optional else base
        if metavar:
            self.metavar = metavar

    def range_text(self):
        if self.lo is None and self.hi is None:
            return ""
        if self.hi is None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.lo is None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        if self.lo_open or self.hi_open:
            return f"strictly between {self.lo:g} and {self.hi:g}" if self.lo_open and self.hi_open else \
                f"{self.lo:g}..{self.hi:g}"
        return f"{self.lo:g}..{self.hi:g}"

    def _bad(self, name, v):
        what = "an integer" if self.integer else "a number"
        rng = self.range_text()
        within = f" within {rng}" if rng and ".." in rng else (f" {rng}" if rng else "")
        return ValueError(f"{name} must be {what}{within}, got {v!r}")

    def check(self, v, name):
        if v is None and self.optional:
            return None
        if self.integer:
            if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
                v = int(v)
            if not _is_int(v):
                raise self._bad(name, v)
            v = int(v)
        else:
            if not (_is_int(v) or isinstance(v, (float, np.floating))) or not math.isfinite(v):
                raise self._bad(name, v)
            v = float(v)
        lo, hi = self.lo, self.hi
        if (lo is not None and (v < lo or (self.lo_open and v == lo))) or \
                (hi is not None and (v > hi or (self.hi_open and v == hi))):
            raise self._bad(name, v)
        return v

    def parse(self, word):
        try:
            return int(word) if self.integer else float(word)
        except ValueError:
            raise ValueError(f"must be {'an integer' if self.integer else 'a number'}, got {word!r}") from None

    def text(self, v):
        return "none" if v is None else f"{v:g}"

    def props(self, p):
        kw = {}
        if self.lo is not None:
            kw["min"] = self.lo
        if self.hi is not None:
            kw["max"] = self.hi
        if self.soft_max is not None:
            kw["soft_max"] = self.soft_max
        default = p.default if p.default is not None else self.placeholder
        if default is None:
            default = self.lo if self.lo is not None else 0
        value = _prop(p.name, "Int" if self.integer else "Float", p,
                      default=int(default) if self.integer else float(default), **kw)
        if not self.optional:
            return [value]
        switch = _prop(f"use_{p.name}", "Bool", p, label=f"Set {p.label.lower()}", default=p.default is not None,
                       description=f"{p.help} (off: {p.default_text or 'automatic'})")
        return [switch, value]

    def from_props(self, p, get):
        if self.optional and not get(f"use_{p.name}"):
            return None
        v = get(p.name)
        if not self.integer:  # single precision: the decimal the user typed, not 0.20000000298
            v = float(f"{float(v):.7g}")
        return v

    def to_props(self, p, v, put):
        if self.optional:
            put(f"use_{p.name}", v is not None)
        if v is not None:
            put(p.name, v)


class Choice(Kind):
    """One of ``items``: (identifier, label, description) each."""

    metavar = None

    def __init__(self, items):
        self.items = tuple(items)
        self.choices = tuple(i[0] for i in self.items)
        self.annotation = str

    def check(self, v, name):
        if v not in self.choices:
            raise ValueError(f"{name} must be one of {', '.join(self.choices)}, got {v!r}")
        return v

    def range_text(self):
        return ", ".join(self.choices)

    def props(self, p):
        return [_prop(p.name, "Enum", p, items=self.items, default=p.default)]


class Text(Kind):
    """Free text; None (the default's ``default_text``) is the empty field in Blender."""

    metavar = "TEXT"
    annotation = str | None

    def __init__(self, metavar: str = "TEXT"):
        self.metavar = metavar

    def check(self, v, name):
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{name} must be a string or None, got {v!r}")
        return v

    def props(self, p):
        return [_prop(p.name, "String", p, default=p.default or "")]

    def from_props(self, p, get):
        v = get(p.name)
        return v if v.strip() else None

    def to_props(self, p, v, put):
        put(p.name, v or "")


class Words(Kind):
    """A list of words, each checked by ``item(word, name)`` (regular expressions, module
    names); repeatable on the command line; one text field in Blender, items separated by
    ``sep``."""

    annotation = list[str]
    repeat = True

    def __init__(self, item, sep: str, metavar: str):
        self.item, self.sep, self.metavar = item, sep, metavar

    def check(self, v, name):
        v = [] if v is None else [v] if isinstance(v, str) else v
        try:
            v = [str(x) for x in v]
        except TypeError:
            raise ValueError(f"{name} must be a list of strings, got {v!r}") from None
        for x in v:
            self.item(x, name)
        return v

    def to_json(self, v):
        return list(v)

    def parse(self, word):
        return self.item(word, None)

    def text(self, v):
        return "none" if not v else self.sep.join(v)

    def props(self, p):
        return [_prop(p.name, "String", p, default=self.sep.join(p.default or []),
                      description=f"{p.help}; separate several with '{self.sep.strip()}'")]

    def from_props(self, p, get):
        return _words(get(p.name), self.sep.strip())

    def to_props(self, p, v, put):
        put(p.name, self.sep.join(v or []))


def regex_item(word: str, name):
    """A user regular expression: linear-time (`analysis.userregex`), else ValueError."""
    from ..analysis.userregex import check_user_regex, user_regex

    if name is None:
        return check_user_regex(word, "regular expression")
    user_regex(word, name)
    return word


def module_item(word: str, name):
    if not _MODULE.fullmatch(word.strip()):
        raise ValueError(f"{name + ': ' if name else ''}module must be a dotted name like json.encoder, got {word!r}")
    return word.strip()


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
            out = [int(t) if _is_int(t) else t for t in v]
        except TypeError:
            raise ValueError(f"{name} must be a list of thread names or indices, got {v!r}") from None
        for t in out:
            if not (isinstance(t, str) or (isinstance(t, int) and t >= 0)):
                raise ValueError(f"{name}: a thread is a name or an index >= 0, got {t!r}")
        return out if (out or not self.optional) else None

    def to_json(self, v):
        return None if v is None else list(v)

    def parse(self, word):
        items = [_thread_word(t) for t in word.split(",") if t.strip()]
        if not items:
            raise ValueError(f"threads must be a list T1,T2,..., got {word!r}")
        return items

    def text(self, v):
        return "all" if v is None else ",".join(str(t) for t in v) or "none"

    def props(self, p):
        return [_prop(p.name, "String", p, default="",
                      description=f"{p.help}: names or indices separated by ','")]

    def from_props(self, p, get):
        items = [_thread_word(t) for t in _words(get(p.name), ",")]
        return items if items else (None if self.optional else [])

    def to_props(self, p, v, put):
        put(p.name, ", ".join(str(t) for t in (v or [])))


class Thread(Kind):
    """One thread by index or name; None: the view's choice (``default_text``)."""

    metavar = "THREAD"
    annotation = int | str | None

    def check(self, v, name):
        if v is None or isinstance(v, str) or (_is_int(v) and v >= 0):
            return int(v) if _is_int(v) else v
        raise ValueError(f"{name}: a thread is a name or an index >= 0, got {v!r}")

    def parse(self, word):
        return _thread_word(word)

    def props(self, p):
        return [_prop(p.name, "String", p, default="")]

    def from_props(self, p, get):
        items = _words(get(p.name), ",")
        if len(items) > 1:
            raise ValueError(f"{p.label}: one thread, got {len(items)} ({get(p.name)!r})")
        return _thread_word(items[0]) if items else None

    def to_props(self, p, v, put):
        put(p.name, "" if v is None else str(v))


class CallRef(Thread):
    """A call: its index, or a function name (its longest call), resolved against the trace
    by the view; None: no call."""

    metavar = "CALL"

    def check(self, v, name):
        if v is None or isinstance(v, str) or (_is_int(v) and v >= 0):
            return int(v) if _is_int(v) else (v.strip() or None if isinstance(v, str) else v)
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
        return [_prop(p.name, "String", p, default="", options={"HIDDEN"})]

    def from_props(self, p, get):
        return [int(x) for x in _words(get(p.name), ",") if x.isdigit()]

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
        return [_prop(f"use_{p.name}", "Bool", p, default=False,
                      description=f"{p.help} (off: {p.default_text or 'none'})"),
                _prop(f"{p.name}_start", "Float", p, label="From (µs)", default=0.0, min=0.0,
                      description=f"{p.label}: start, µs from the trace start"),
                _prop(f"{p.name}_end", "Float", p, label="To (µs)", default=0.0, min=0.0,
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
        return [_prop(f"{p.name}_mode", "Enum", p, items=FOLD_MODES, default=parse_fold(p.default)[0]),
                _prop(f"{p.name}_levels", "String", p, label="Fold levels", default="",
                      description="Level ranges to fold, inclusive: '3:40' or '3:40, 50:' (A: and :B are open)")]

    def from_props(self, p, get):
        mode = get(f"{p.name}_mode")
        if mode != "levels":
            return mode
        levels = ",".join(_words(get(f"{p.name}_levels"), ","))
        if not levels:
            raise ValueError("fold 'Levels' needs level ranges such as 3:40 or 3:40, 50:")
        return levels

    def to_props(self, p, v, put):
        mode = parse_fold(v)[0]
        if mode == "levels":
            put(f"{p.name}_levels", str(v))
        put(f"{p.name}_mode", mode)


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
            return [_thread_word(t) for t in v]
        except TypeError:
            raise ValueError(f"{name} must be one of {THREAD_ORDERS} or a list of threads, got {v!r}") from None

    def to_json(self, v):
        return v if isinstance(v, str) else list(v)

    def parse(self, word):
        s = word.strip()
        if s in THREAD_ORDERS:
            return s
        items = [_thread_word(t) for t in s.split(",") if t.strip()]
        if not items:
            raise ValueError(f"thread order must be one of {', '.join(THREAD_ORDERS)} or a list T1,T2,..., got {word!r}")
        return items

    def text(self, v):
        return v if isinstance(v, str) else ",".join(map(str, v))

    def props(self, p):
        items = THREAD_ORDER_ITEMS + (("list", "These first", "The threads listed below first, the others after them"),)
        return [_prop(p.name, "Enum", p, items=items, default=p.default),
                _prop(f"{p.name}_list", "String", p, label="First threads", default="",
                      description="Threads shown first, in this order: names or indices separated by ','")]

    def from_props(self, p, get):
        kw = get(p.name)
        if kw != "list":
            return kw
        order = [_thread_word(t) for t in _words(get(f"{p.name}_list"), ",")]
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
        return [_prop(f"{p.name}_x", "Int", p, label="Width", default=p.default[0], min=16, max=16384,
                      subtype="PIXEL", description="Figure width in pixels (also the unit of sub-pixel clustering)"),
                _prop(f"{p.name}_y", "Int", p, label="Height", default=p.default[1], min=16, max=16384,
                      subtype="PIXEL", description="Figure height in pixels")]

    def from_props(self, p, get):
        return (int(get(f"{p.name}_x")), int(get(f"{p.name}_y")))

    def to_props(self, p, v, put):
        put(f"{p.name}_x", int(v[0]))
        put(f"{p.name}_y", int(v[1]))
