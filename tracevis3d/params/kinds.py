"""Sorts of parameter values (`tracevis3d.params.core`): each kind checks and normalises a
value (ValueError naming the parameter), writes and reads its JSON, parses a command-line
word, and says which Blender properties hold it and how to read and write them.

Blender properties are described bpy-free, as ``(name, type, options)`` with ``type`` one of
Bool, Int, Float, String, Enum (the arguments of ``bpy.props.<type>Property``); the add-on
makes them in one place.  A property group is reached through ``get(name)`` and
``put(name, value)``, so the conversions are tested without Blender.  The kinds about a
trace (threads, calls, windows, the fold rule, lane order, image size) are in `trace_kinds`.
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


def thread_word(s):
    """A thread by index (digits) or name."""
    if isinstance(s, str):
        s = s.strip()
        return int(s) if re.fullmatch(r"\d+", s) else s
    return s


def split_words(text: str, sep: str) -> list:
    """The non-empty words of ``text`` split at ``sep``, stripped."""
    return [w.strip() for w in (text or "").split(sep) if w.strip()]


def is_int(v) -> bool:
    """Whether ``v`` is a Python or numpy integer (not a bool)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def prop(name, type_, p, **kw):
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
        """A value as a user writes it (help texts, the option reference)."""
        return "none" if v is None else str(v)

    def range_text(self) -> str:
        return ""

    # Blender
    def props(self, p) -> list:
        return [prop(p.name, "String", p, default="" if p.default is None else str(p.default))]

    def from_props(self, p, get):
        return get(p.name)

    def to_props(self, p, v, put) -> None:
        put(p.name, v)


class Flag(Kind):
    annotation = bool
    is_flag = True

    def check(self, v, name):
        if isinstance(v, (bool, np.bool_)) or (is_int(v) and v in (0, 1)):
            return bool(v)
        raise ValueError(f"{name} must be true or false, got {v!r}")

    def text(self, v):
        return "on" if v else "off"

    def props(self, p):
        return [prop(p.name, "Bool", p, default=bool(p.default))]

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
            if not is_int(v):
                raise self._bad(name, v)
            v = int(v)
        else:
            if not (is_int(v) or isinstance(v, (float, np.floating))) or not math.isfinite(v):
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
        value = prop(p.name, "Int" if self.integer else "Float", p,
                      default=int(default) if self.integer else float(default), **kw)
        if not self.optional:
            return [value]
        switch = prop(f"use_{p.name}", "Bool", p, label=f"Set {p.label.lower()}", default=p.default is not None,
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
        return [prop(p.name, "Enum", p, items=self.items, default=p.default)]


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
        return [prop(p.name, "String", p, default=p.default or "")]

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
        return [prop(p.name, "String", p, default=self.sep.join(p.default or []),
                      description=f"{p.help}; separate several with '{self.sep.strip()}'")]

    def from_props(self, p, get):
        return split_words(get(p.name), self.sep.strip())

    def to_props(self, p, v, put):
        put(p.name, self.sep.join(v or []))


def regex_item(word: str, name):
    """A user regular expression: linear-time (`tracevis3d.userregex`), else ValueError."""
    from ..userregex import check_user_regex, user_regex

    if name is None:
        return check_user_regex(word, "regular expression")
    user_regex(word, name)
    return word


def module_item(word: str, name):
    if not _MODULE.fullmatch(word.strip()):
        raise ValueError(f"{name + ': ' if name else ''}module must be a dotted name like json.encoder, got {word!r}")
    return word.strip()
