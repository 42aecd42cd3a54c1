"""What the readers of JSON profiles share (speedscope, Firefox, stackprof, Safari, GHC, V8 heap
profiles): parsing the document once, reading its columns into numpy arrays, and errors that
name the file and the place in the document.

A place is a JSON path (``profiles[2].samples[17]``) or, for a document that does not parse,
orjson's line, column and character offset.  Columns are read in one numpy call each
(``np.array`` on the parsed list); only when that fails is the list walked, to say where.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

from ..model import TraceFormatError
from .stacks import FrameTable

__all__ = ["parse_json", "parse_json_columns", "NumberColumn", "is_list", "fail", "kind_of", "need_dict", "need_list",
           "gather", "int_column", "float_column", "KeyedFrames", "Tree", "finite_number", "end_to_end", "add_instants",
           "clean_name"]

_BOM = b"\xef\xbb\xbf"


def fail(source: str, where: str, what: str):
    """A `TraceFormatError` naming the file, the place and the problem, in one line."""
    what = " ".join(str(what).split())
    return TraceFormatError(f"{source}: {where}: {what}" if where else f"{source}: {what}")


def kind_of(v) -> str:
    """The JSON kind of a parsed value, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def parse_json(data, source: str):
    """The parsed document (orjson; a UTF-8 byte order mark is skipped).  A document that does
    not parse (cut short, bad syntax, nested deeper than orjson's 1024 levels, invalid UTF-8)
    raises `TraceFormatError` with orjson's line, column and character offset."""
    import orjson

    buf = data if isinstance(data, (bytes, bytearray, memoryview)) else memoryview(data)
    if bytes(buf[:3]) == _BOM:
        buf = memoryview(buf)[3:]
    try:
        return orjson.loads(buf)
    except orjson.JSONDecodeError as e:
        raise fail(source, "", f"not valid JSON: {e}") from None
    except (TypeError, ValueError, MemoryError) as e:  # a buffer orjson cannot take
        raise fail(source, "", f"not readable as JSON: {e}") from None


class NumberColumn:
    """A long JSON array of numbers and nulls read from the bytes into numpy
    (`parse_json_columns`), standing where the parsed list would stand.  `int_column` and
    `float_column` take it as they take that list and give the same array (or the same
    error); `tolist` is the list orjson would have made.  ``value``: per element the int64 of
    an integer, the bits of the float64 of a number with a fraction or an exponent, 0 for a
    null, as ``kind`` says (`INT`, `FLOAT`, `NULL`)."""

    __slots__ = ("value", "kind", "has_int", "has_float", "has_null")
    #: the element kinds of ``kind`` (`kernels.jsoncolumns`' K_INT, K_FLOAT, K_NULL)
    INT, FLOAT, NULL = 0, 1, 2

    def __init__(self, value: np.ndarray, kind: np.ndarray):
        self.value, self.kind = value, kind
        present = np.bincount(kind, minlength=3) if kind.size else np.zeros(3, np.int64)
        self.has_int, self.has_float, self.has_null = (bool(x) for x in present[:3])

    def __len__(self) -> int:
        return int(self.kind.size)

    def as_int64(self, null):
        """The integers as int64, a null as ``null``; None when a number has a fraction or an
        exponent, or when there is a null and ``null`` is None (the list's path decides)."""
        if self.has_float or (self.has_null and null is None):
            return None
        if not self.has_null:
            return self.value
        return np.where(self.kind == self.NULL, np.int64(null), self.value)

    def as_float64(self) -> np.ndarray:
        """Every element as float64 (an integer converted, as numpy converts a Python int), NaN
        for a null."""
        if not (self.has_int or self.has_null):
            return self.value.view(np.float64)
        out = self.value.astype(np.float64)
        if self.has_float:
            f = self.kind == self.FLOAT
            out[f] = self.value[f].view(np.float64)
        if self.has_null:
            out[self.kind == self.NULL] = np.nan
        return out

    def tolist(self) -> list:
        """The elements as orjson parses them: int, float or None."""
        fl = self.value.view(np.float64).tolist()
        return [None if k == 2 else (i if k == 0 else f) for k, i, f in zip(self.kind.tolist(), self.value.tolist(), fl)]

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.tolist()[i]
        k = int(self.kind[i])
        return None if k == self.NULL else (int(self.value[i]) if k == self.INT else
                                            float(self.value[i:i + 1].view(np.float64)[0]))


def is_list(v) -> bool:
    """A parsed JSON array: a list, or a `NumberColumn`."""
    return isinstance(v, (list, NumberColumn))


#: arrays shorter than this stay for orjson (`parse_json_columns`)
MIN_COLUMN = 256


def parse_json_columns(data, source: str, min_len: int = MIN_COLUMN):
    """The parsed document, as `parse_json` gives it, except that every flat array of at least
    ``min_len`` numbers and nulls is a `NumberColumn`, read from the bytes in one pass
    (`kernels.jsoncolumns.number_arrays`) instead of by orjson: orjson parses the text with
    those arrays cut out (each replaced by a string no file can hold: it names the column and
    a random key of this call), then the places of those strings are filled in.  A document
    that does not parse is refused as `parse_json` refuses it (the whole text parsed again)."""
    import orjson

    from ..kernels.jsoncolumns import number_arrays

    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    start = 3 if bytes(buf[:3]) == _BOM else 0
    span, first, value, kind = number_arrays(buf, start, int(min_len))
    if not span.shape[0]:
        return parse_json(data, source)
    key = os.urandom(8).hex()
    mark = "\\u0000tv3d-column:" + key + ":"  # JSON text: the escape, six characters
    pieces = []
    at = start
    for k, (a, b) in enumerate(span.tolist()):
        pieces.append(buf[at:a].tobytes())
        pieces.append(f'"{mark}{k}"'.encode())
        at = b
    pieces.append(buf[at:].tobytes())
    try:
        doc = orjson.loads(b"".join(pieces))
    except orjson.JSONDecodeError:
        return parse_json(data, source)  # its error, at its place in the whole text
    del pieces
    prefix = "\x00tv3d-column:" + key + ":"  # what orjson makes of it
    cols = [NumberColumn(value[first[k]:first[k + 1]], kind[first[k]:first[k + 1]]) for k in range(span.shape[0])]
    if isinstance(doc, str) and doc.startswith(prefix):  # the whole document is one
        return cols[int(doc[len(prefix):])]
    _fill_columns(doc, prefix, cols)
    return doc


def _fill_columns(doc, prefix: str, cols: list):
    """Each string ``prefix + k`` in the parsed ``doc`` replaced by ``cols[k]`` (a walk over the
    containers: a list's elements are looked at by type in C first, and only lists that hold
    a string, a list or an object are walked)."""
    todo = [doc]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            for key, x in v.items():
                if isinstance(x, str):
                    if x.startswith(prefix):
                        v[key] = cols[int(x[len(prefix):])]
                elif isinstance(x, (dict, list)):
                    todo.append(x)
        elif v:
            kinds = set(map(type, v))
            if str in kinds:
                for i, x in enumerate(v):
                    if isinstance(x, str) and x.startswith(prefix):
                        v[i] = cols[int(x[len(prefix):])]
            if dict in kinds or list in kinds:
                todo.extend(x for x in v if isinstance(x, (dict, list)))


def need_dict(v, source: str, where: str) -> dict:
    if not isinstance(v, dict):
        raise fail(source, where, f"expected an object, got {kind_of(v)}")
    return v


def need_list(v, source: str, where: str) -> list:
    if not isinstance(v, (list, NumberColumn)):
        raise fail(source, where, f"expected a list, got {kind_of(v)}")
    return v


def gather(items: list, key: str, source: str, where: str, *, required: bool = True) -> list:
    """The field ``key`` of every object of ``items`` (a parsed list), in one C-level pass
    (``map`` over ``itemgetter``); a missing field is an error when ``required``, else None.
    An element that is not an object is an error naming it."""
    from operator import itemgetter, methodcaller

    need_list(items, source, where)
    try:
        return list(map(itemgetter(key) if required else methodcaller("get", key), items))
    except (KeyError, TypeError, AttributeError):
        for i, x in enumerate(items):
            if not isinstance(x, dict):
                raise fail(source, f"{where}[{i}]", f"expected an object, got {kind_of(x)}") from None
            if required and key not in x:
                raise fail(source, f"{where}[{i}]", f"has no {key!r}") from None
        raise fail(source, where, f"cannot read the {key!r} of its elements") from None


def _first_bad(values: list, ok) -> int:
    for i, x in enumerate(values):
        if not ok(x):
            return i
    return -1


def _is_int(x) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())


def int_column(values, source: str, where: str, *, lo: int | None = None, hi: int | None = None,
               null: int | None = None, field: str = "") -> np.ndarray:
    """``values`` (a parsed list of integers) as int64.  ``null``: the value a JSON null stands
    for (None: a null is an error).  Values outside [lo, hi) are an error naming the first (as
    ``where[i]`` + ``field``: the list may be one field gathered from a list of objects).  One
    ``np.array`` call; the list is walked only to name a bad element."""
    need_list(values, source, where)
    if isinstance(values, NumberColumn):
        a = values.as_int64(null)
        if a is not None and not (a.size and ((lo is not None and int(a.min()) < lo)
                                              or (hi is not None and int(a.max()) >= hi))):
            return a
        values = values.tolist()  # what the list would have given, error and all
    try:
        if null is None:
            a = np.array(values)
        else:  # one pass, nulls and all: a null is NaN as a float (JSON has no NaN)
            a = np.array(values, dtype=np.float64)
            if a.ndim == 1:
                a[np.isnan(a)] = null
    except (ValueError, TypeError, OverflowError):
        a = None
    if a is not None and a.ndim == 1 and a.dtype.kind == "f":
        ok = np.isfinite(a) & (a == np.floor(a)) & (np.abs(a) < 2.0 ** 62)
        a = a.astype(np.int64) if bool(ok.all()) else None
    if a is not None and a.dtype.kind == "u" and a.size and int(a.max()) >= 2 ** 62:
        a = None
    if a is None or a.ndim != 1 or a.dtype.kind not in "iu":
        i = _first_bad(values, lambda x: _is_int(x) and abs(x) < 2 ** 62 or (x is None and null is not None))
        bad = values[i] if i >= 0 else None
        shown = f" {bad!r}"[:40] if isinstance(bad, (int, float, str)) and not isinstance(bad, bool) else ""
        raise fail(source, f"{where}[{max(i, 0)}]{field}", f"expected an integer, got {kind_of(bad)}{shown}")
    a = a.astype(np.int64, copy=False)
    if a.size and ((lo is not None and int(a.min()) < lo) or (hi is not None and int(a.max()) >= hi)):
        bad = (a < lo) if lo is not None else np.zeros(a.size, bool)
        if hi is not None:
            bad |= a >= hi
        if null is not None:
            bad &= a != null
        if bad.any():
            i = int(np.argmax(bad))
            rng = f"[{lo if lo is not None else '-inf'}, {hi - 1 if hi is not None else 'inf'}]"
            raise fail(source, f"{where}[{i}]{field}", f"{int(a[i])} is out of range {rng}")
    return a


def float_column(values, source: str, where: str, *, null: float | None = None, field: str = "") -> np.ndarray:
    """``values`` (a parsed list of numbers) as float64; ``null``: what a JSON null stands for
    (None: an error); errors name ``where[i]`` + ``field``."""
    need_list(values, source, where)
    if isinstance(values, NumberColumn):
        if not values.has_null or null is not None:
            a = values.as_float64()
            return np.where(values.kind == values.NULL, null, a) if values.has_null else a
        values = values.tolist()
    try:
        a = np.array(values, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        a = None
    if a is not None and a.ndim == 1:
        nan = np.isnan(a)
        if nan.any():  # JSON has no NaN: each one was a null
            if null is None:
                i = int(np.argmax(nan))
                raise fail(source, f"{where}[{i}]{field}", "expected a number, got null")
            a[nan] = null
    if a is None or a.ndim != 1 or (a.size and not _all_numbers(values)):
        i = _first_bad(values, lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
                       or (x is None and null is not None))
        bad = values[i] if i >= 0 else None
        raise fail(source, f"{where}[{max(i, 0)}]{field}", f"expected a number, got {kind_of(bad)}")
    return a


def _all_numbers(values: list) -> bool:
    """No string or boolean among ``values`` (numpy converts "1.5" and true silently): a check
    of the types present, by one pass in C over the set of types."""
    kinds = set(map(type, values))
    return not (kinds & {str, bool, list, dict})


def finite_number(v, source: str, where: str, *, default=None, limit: float = 1e300) -> float:
    """A JSON number as a float (``default`` when the value is missing: None); an error for any
    other kind, a value not finite, or past ±``limit``."""
    if v is None and default is not None:
        return float(default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise fail(source, where, f"expected a number, got {kind_of(v)}")
    x = float(v)
    if not np.isfinite(x) or abs(x) > limit:
        raise fail(source, where, f"{v!r} is not a usable number (past ±{limit:g})")
    return x


def clean_name(s, max_chars: int) -> str:
    """A name as text, cut at ``max_chars`` with "…" and a hash of the whole (`FrameTable`'s
    rule, for thread and instant names)."""
    s = s if isinstance(s, str) else ("" if s is None else str(s))
    if len(s) > max_chars:
        s = s[: max_chars - 10] + "…" + hashlib.blake2s(s.encode("utf-8", "replace"), digest_size=4).hexdigest()
    return s


class KeyedFrames(FrameTable):
    """A `FrameTable` whose frames are told apart by the format's own key, as speedscope tells
    them apart (its ``Frame.getOrInsert`` by ``key``): a speedscope file's frame index, a
    Firefox frame's location string, a V8 call frame's name, URL, line and column, a GHC cost
    centre's id.  Two frames with one name, file and line but different keys stay two
    functions (minified scripts hold many on one line, told apart by column)."""

    def __init__(self, max_name_chars: int = 4096):
        super().__init__(max_name_chars)
        self.by_key: dict = {}

    def add_keyed(self, key, name, file="", line=-1) -> int:
        """The id of the frame with ``key``, added (as ``name``, ``file``, ``line``) when new."""
        k = self.by_key.get(key)
        if k is None:
            k = self.by_key[key] = self.append_frame(name, file, line)
            self.index.setdefault((name, file, line), k)
        return k


class Tree:
    """The nodes of a JSON tree (each an object whose ``children`` is a list of nodes), walked
    without recursion: ``nodes[i]``, ``parent[i]`` (-1 for the root; a parent is numbered
    before its children) and `path` (the JSON path of node i, for messages)."""

    def __init__(self, root, source: str, where: str, children: str = "children"):
        self.where, self.children = where, children
        need_dict(root, source, where)
        self.nodes = [root]
        par = self.parent = [-1]
        self.pos = [0]
        todo = [0]
        while todo:
            i = todo.pop()
            kids = self.nodes[i].get(children)
            if kids is None:
                continue
            if not isinstance(kids, list):
                raise fail(source, f"{self.path(i)}.{children}", f"expected a list, got {kind_of(kids)}")
            base = len(self.nodes)
            for j, c in enumerate(kids):
                if not isinstance(c, dict):
                    raise fail(source, f"{self.path(i)}.{children}[{j}]", f"expected an object, got {kind_of(c)}")
            self.nodes.extend(kids)
            par.extend([i] * len(kids))
            self.pos.extend(range(len(kids)))
            todo.extend(range(base + len(kids) - 1, base - 1, -1))
        self.parent = np.array(par, np.int64)

    def path(self, i: int) -> str:
        parts = []
        while i > 0:
            parts.append(f".{self.children}[{self.pos[i]}]")
            i = int(self.parent[i])
        return self.where + "".join(reversed(parts))


def end_to_end(parent: np.ndarray, frame: np.ndarray, stack: np.ndarray, dur_us: np.ndarray, start_us: float,
               lim, source: str, where: str):
    """A `StackProfile` of samples without times laid end to end from ``start_us``, each as
    long as its duration (speedscope's reading of weighted samples,
    ``StackListProfileBuilder.appendSampleWithWeight``): a sample of duration 0 is left out, as
    speedscope skips it, and an empty sample closes the last one where it ends."""
    from .stacks import StackProfile

    on = dur_us > 0
    stack, dur_us = stack[on], dur_us[on]
    t = np.empty(dur_us.size + 1)
    t[0] = start_us
    np.cumsum(dur_us, out=t[1:])
    t[1:] += start_us
    if t.size and abs(t[-1]) > lim.max_abs_time:
        raise fail(source, where, f"the samples add up to {t[-1] - t[0]:g} µs, past the limit of "
                                  f"{lim.max_abs_time:g} µs (max_abs_time=)")
    step = float(np.median(dur_us)) if dur_us.size else 0.0
    return StackProfile("", parent, frame, np.append(stack, -1), sample_time=t,
                        end_time=float(t[-1]) + (step or 1.0), interval_us=step or None)


def add_instants(trace, ts_us: np.ndarray, names: list, name_ids: np.ndarray, threads: np.ndarray):
    """``trace`` (from `stacks.timed_trace`) with instants on threads added: ``ts_us`` on the
    file's clock (µs; the trace's ``clock_origin`` is taken off), ``name_ids`` into ``names``,
    ``threads`` the thread index of each; checked again."""
    if not ts_us.size:
        return trace
    origin = float(trace.meta.get("clock_origin") or 0.0)
    order = np.argsort(ts_us, kind="stable")
    trace.instant_ts = (ts_us[order] - origin).astype(np.float64)
    trace.instant_name = name_ids[order].astype(np.int32)
    trace.instant_thread = threads[order].astype(np.int32)
    trace.instant_scope = np.full(ts_us.size, ord("t"), np.uint8)
    trace.instant_pid = np.asarray(trace.thread_pid, np.int64)[threads[order]]
    trace.instant_names = list(names)
    return trace.check()
