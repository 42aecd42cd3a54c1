"""V8's tick log, preprocessed (``node --prof`` then ``node --prof-process --preprocess
isolate*.log > profile.v8log.json``) → a timed `Trace`, read as speedscope's ``v8proflog.ts``
reads it.

The document: ``code`` (every code object V8 logged: ``name``, ``type`` CPP / SHARED_LIB / JS /
CODE, a ``kind`` for CODE), ``ticks`` (a sample each: ``tm``, µs since the process started,
``vm`` state, and ``s``, the stack), ``functions`` and ``scripts`` (not needed).  A tick's ``s``
holds pairs; the stack is every second entry from the one before last down to the first
(speedscope: "the JavaScript stack and the parallel C++ stack interleaved"), root first, -1
entries skipped.  An entry is a ``code`` index, or past the end of ``code`` a raw address
(named ``0x…`` as speedscope names it).  Frames are named as speedscope names them: a JS code
``name file:line:col`` is the function ``name`` in ``file`` at ``line`` (``(anonymous
script.js:line)`` without a name; the file may carry a scheme, ``node:internal/…``,
``file:///…``, which speedscope's pattern leaves whole); ``(LIB) path`` for a shared library,
``(builtin) …``, ``(bytecode) ~…``, ``(stub) …``, ``(IC) …``, ``(regexp) …`` by the kind of
other code.  A C++ symbol keeps its demangled name as it is (speedscope prefixes ``(c++)``,
which would hide its namespaces from `tracevis3d.names`); the ``t``/``T`` of an ``nm`` line
before it is dropped.

Time: ticks are sorted by ``tm``; each is a sample at its time lasting until the next
(`stacks.timed_trace`, speedscope's time-ordered view; speedscope weighs a tick by the gap
before it instead, which shifts every sample by one).  Errors name the file and the JSON path
(``ticks[17].s[3]``).
"""
from __future__ import annotations

import itertools
import operator
import re

import numpy as np

from ..filenumbers import read_line
from .limits import resolve_limits
from .profile_json import KeyedFrames, fail, kind_of, need_dict, need_list, parse_json
from .stacks import StackProfile, source_name, timed_trace

__all__ = ["load_v8log_json", "frame_of_code"]

#: speedscope's pattern of a JS code name, its file widened to one with a scheme (``node:``, ``file:``)
_JS_NAME = re.compile(r"^([a-zA-Z0-9._\-$]*) ([a-zA-Z0-9.\-_/$:]*):([0-9]+):([0-9]+)$")
_NM_PREFIX = re.compile(r"^[tT] ")
_CODE_PREFIX = {"LoadIC": "(IC) ", "StoreIC": "(IC) ", "KeyedStoreIC": "(IC) ", "KeyedLoadIC": "(IC) ",
                "LoadGlobalIC": "(IC) ", "Handler": "(IC) ", "BytecodeHandler": "(bytecode) ~", "Stub": "(stub) ",
                "Builtin": "(builtin) ", "RegExp": "(regexp) "}


def frame_of_code(code) -> tuple:
    """(key, name, file, line) of a ``code`` entry, as speedscope's ``codeToFrameInfo`` makes
    them (module docstring; a C++ name without the ``(c++)`` prefix)."""
    if not isinstance(code, dict) or not code.get("type"):
        return ("(unknown type)", "(unknown type)", "", -1)
    name = code.get("name")
    name = name if isinstance(name, str) else str(name)
    typ = code.get("type")
    if typ == "CPP":
        name = _NM_PREFIX.sub("", name)
    elif typ == "SHARED_LIB":
        name = "(LIB) " + name
    elif typ == "JS":
        m = _JS_NAME.match(name)
        if m:
            file, line = m.group(2), read_line(m.group(3))  # past int32 (or 5,000 digits): no line
            func = m.group(1) or (f"(anonymous {file.split('/')[-1]}:{line})" if file else "(anonymous)")
            return (name, func, file or "(unknown file)", line)
    elif typ == "CODE":
        name = _CODE_PREFIX.get(code.get("kind"), "") + name
    else:
        name = f"({typ}) {name}"
    return (name, name, "", -1)


def _ticks(ticks: list, source: str) -> tuple:
    """(tm, flat s entries, offsets) of every tick, in C-level passes; a bad tick is located
    (only then walked) and named."""
    n = len(ticks)
    try:
        tm = np.fromiter(map(operator.itemgetter("tm"), ticks), np.float64, n)
        ss = list(map(operator.itemgetter("s"), ticks))
        if not set(map(type, ss)) <= {list}:
            raise TypeError
        lens = np.fromiter(map(len, ss), np.int64, n)
        flat_list = list(itertools.chain.from_iterable(ss))
        if not set(map(type, flat_list)) <= {int}:
            raise TypeError
        flat = np.array(flat_list, np.int64) if flat_list else np.zeros(0, np.int64)
    except (KeyError, TypeError, ValueError, OverflowError):
        _locate_bad_tick(ticks, source)
        raise fail(source, "ticks", "cannot read its ticks") from None
    del flat_list
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    return tm, flat, offsets


def _locate_bad_tick(ticks: list, source: str):
    for k, t in enumerate(ticks):
        if not isinstance(t, dict):
            raise fail(source, f"ticks[{k}]", f"expected an object, got {kind_of(t)}")
        for key in ("tm", "s"):
            if key not in t:
                raise fail(source, f"ticks[{k}]", f"has no {key!r}")
        tm = t["tm"]
        if isinstance(tm, bool) or not isinstance(tm, (int, float)):
            raise fail(source, f"ticks[{k}].tm", f"expected a time in µs, got {kind_of(tm)}")
        if not isinstance(t["s"], list):
            raise fail(source, f"ticks[{k}].s", f"expected a list of code indices, got {kind_of(t['s'])}")
        for j, x in enumerate(t["s"]):
            if isinstance(x, bool) or not isinstance(x, int):
                raise fail(source, f"ticks[{k}].s[{j}]", f"expected a code index, got {kind_of(x)}")
            if not -(2 ** 63) <= x < 2 ** 63:
                raise fail(source, f"ticks[{k}].s[{j}]", f"{x} is out of range")


def load_v8log_json(data, *, source: str = "<v8log>", limits=None, kind_rules=None, warn: bool = True, **_options):
    """A preprocessed V8 tick log's bytes → `Trace` (module docstring)."""
    from ..kernels import stacklists as sl

    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    for key in ("code", "ticks"):
        if key not in doc:
            raise fail(source, "the document", f"no {key!r}: not a preprocessed V8 log")
    code = need_list(doc["code"], source, "code")
    ticks = need_list(doc["ticks"], source, "ticks")
    if len(ticks) > lim.max_events:
        raise fail(source, "ticks", f"{len(ticks)} ticks, over max_events={lim.max_events}")
    tm, flat, offsets = _ticks(ticks, source)
    bad = ~np.isfinite(tm) | (np.abs(tm) > lim.max_abs_time)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, f"ticks[{k}].tm", f"{tm[k]:g} is not a time within ±{lim.max_abs_time:g} µs")
    n = len(ticks)
    lens = np.diff(offsets)
    tick = np.repeat(np.arange(n, dtype=np.int64), lens)
    j = np.arange(flat.size, dtype=np.int64) - offsets[tick]
    # speedscope: i = len - 2, len - 4, ... 0 (root first); -1 entries are padding
    back = lens[tick] - 2 - j
    keep = (back >= 0) & (back % 2 == 0) & (flat != -1)
    tick, back, ids = tick[keep], back[keep], flat[keep]
    order = np.lexsort((back, tick))  # per tick, root (largest j) first
    tick, ids = tick[order], ids[order]
    counts = np.bincount(tick, minlength=n)
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    depth_of = np.arange(ids.size, dtype=np.int64) - starts[tick]
    deep = depth_of >= lim.max_stack_depth
    n_deep = int(np.count_nonzero(counts > lim.max_stack_depth))
    if n_deep:
        tick, ids = tick[~deep], ids[~deep]
        counts = np.minimum(counts, lim.max_stack_depth)
        np.cumsum(counts, out=starts[1:])
    # frames: a code index, a raw address past the code table, else unknown
    n_code = len(code)
    distinct, inv = np.unique(ids, return_inverse=True)
    frames = KeyedFrames(lim.max_name_chars)
    fid = np.empty(distinct.size, np.int64)
    for k, x in enumerate(distinct.tolist()):  # each distinct code or address once
        if 0 <= x < n_code:
            key, name, file, line = frame_of_code(code[x])
        elif x > n_code:
            key = name = f"0x{x:x}"
            file, line = "", -1
        else:  # speedscope: code[x] is undefined
            key, name, file, line = frame_of_code(None)
        fid[k] = frames.add_keyed(key, name, file, line)
    parent, frame, stack = sl.stack_paths(fid[inv.reshape(-1)] if ids.size else np.zeros(0, np.int64), starts)
    prof = StackProfile(thread_name=source_name(source), stack_parent=parent, stack_frame=frame, sample_stack=stack,
                        sample_time=tm)
    trace = timed_trace(frames, [prof], source=source, fmt="v8log-json", limits=lim,
                        input_bytes=len(data), kind_rules=kind_rules, meta={"n_code": n_code}, warn=warn, cat="js")
    if n_deep:
        from .collapsed import Repairs

        rep = Repairs()
        rep.add("stack_deep", n_deep, "ticks", f"a stack deeper than {lim.max_stack_depth} frames: cut at its root "
                                               f"end's first {lim.max_stack_depth} (max_stack_depth= to allow more)")
        rep.apply(trace, source, warn)
    return trace
