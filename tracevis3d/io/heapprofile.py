"""V8's sampling heap profile (``.heapprofile``: Chrome DevTools' "Allocation sampling",
``node --heap-prof``).

The file: ``head``, a tree of nodes, each a ``callFrame`` (``functionName``, ``url``,
``lineNumber`` and ``columnNumber``, 0-based), the bytes sampled as allocated there while that
stack was live (``selfSize``) and ``children``; newer files add the samples themselves
(``samples``: size, node id, ordinal), which the ``selfSize`` already sum.  It is an aggregate,
not a timeline: read as speedscope's ``v8heapalloc.ts`` reads it, every node is a stack
(the ``(root)`` node included) weighing its ``selfSize``, merged (`stacks.merged_trace`,
speedscope's Left Heavy) with x in "bytes".  A frame without a name is "(anonymous FILE:LINE)"
(speedscope's naming, with V8's 0-based line); frames are told apart by name, url, line and
column; their lines are stored 1-based.
"""
from __future__ import annotations

import numpy as np

from .limits import resolve_limits
from .profile_json import KeyedFrames, Tree, fail, gather, parse_json
from .stacks import StackProfile, merged_trace

__all__ = ["load_heapprofile"]


def load_heapprofile(data, *, source: str = "<heapprofile>", limits=None, kind_rules=None, warn: bool = True,
                     **_options):
    """A V8 sampling heap profile's bytes → `Trace` (module docstring)."""
    lim = resolve_limits(limits)
    doc = parse_json(data, source)
    if not isinstance(doc, dict) or "head" not in doc:
        raise fail(source, "the document", "no 'head': not a V8 heap profile")
    tree = Tree(doc["head"], source, "head")
    nodes = tree.nodes
    size = gather(nodes, "selfSize", source, "head nodes", required=False)
    ok = np.fromiter(map(_is_size, size), bool, len(size))
    if not ok.all():
        k = int(np.argmax(~ok))
        raise fail(source, f"{tree.path(k)}.selfSize", f"expected a byte count ≥ 0, got {size[k]!r}"[:120])
    w = np.array(size, dtype=np.float64)
    w[np.isnan(w)] = 0.0  # a node without selfSize
    big = w > lim.max_abs_time
    if big.any():
        k = int(np.argmax(big))
        raise fail(source, f"{tree.path(k)}.selfSize", f"expected a byte count ≥ 0 within {lim.max_abs_time:g} "
                                                       f"(max_abs_time=), got {size[k]!r}"[:160])
    cfs = gather(nodes, "callFrame", source, "head nodes", required=False)
    keys = [_key(cf) for cf in cfs]  # a call frame per node
    distinct = dict.fromkeys(keys)
    frames = KeyedFrames(lim.max_name_chars)
    for key in distinct:  # the distinct frames
        name, url, line, col = key
        distinct[key] = frames.add_keyed(key, name, url, line + 1 if line >= 0 else -1)
    frame = np.fromiter(map(distinct.__getitem__, keys), np.int64, len(keys))
    prof = StackProfile("heap", tree.parent, frame, np.arange(len(nodes), dtype=np.int64), sample_weight=w)
    return merged_trace(frames, [prof], unit="bytes", source=source, fmt="heapprofile", limits=lim,
                        input_bytes=len(data), kind_rules=kind_rules, meta={}, warn=warn, cat="js")


def _is_size(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e300)


def _key(cf) -> tuple:
    """(name, url, line, column) of a call frame, named as speedscope names it."""
    if not isinstance(cf, dict):
        return ("(anonymous)", "", -1, -1)
    name, url, line, col = cf.get("functionName"), cf.get("url"), cf.get("lineNumber"), cf.get("columnNumber")
    url = url if isinstance(url, str) else ""
    line = int(line) if isinstance(line, (int, float)) and not isinstance(line, bool) and -1 <= line < 2 ** 31 else -1
    col = int(col) if isinstance(col, (int, float)) and not isinstance(col, bool) and -1 <= col < 2 ** 31 else -1
    if not (isinstance(name, str) and name):
        name = f"(anonymous {url.split('/')[-1]}:{line})" if url else "(anonymous)"
    return (name, url, line, col)
