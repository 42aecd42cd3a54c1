"""GHC's JSON profiling report (``+RTS -pj``: ``PROGRAM.prof`` in JSON).

The file (the GHC User's Guide, "JSON profile format"): ``cost_centres`` (``id``, ``label``,
``module``, ``src_loc``) and ``profile``, the cost-centre stack tree (each node a cost centre
``id`` with its ``entries``, ``ticks`` and ``alloc`` (bytes), and ``children``).  It is an
aggregate, not a timeline: the tree is merged (`stacks.merged_trace`, speedscope's Left Heavy),
each node as wide as its ``ticks`` plus its children's, x in "ticks"; ``measure="alloc"``
weighs by allocation instead (x in "bytes").  speedscope (``haskell.ts``) shows both, as two
profiles named "PROGRAM time" and "PROGRAM allocation"; a frame is "MODULE.LABEL" with the
``src_loc`` as its file unless it is "<built-in>", "<entire-module>" and the like.
"""
from __future__ import annotations

import numpy as np

from .limits import resolve_limits
from .profile_json import KeyedFrames, Tree, fail, gather, int_column, need_dict, need_list, parse_json
from .stacks import StackProfile, merged_trace

__all__ = ["load_ghc_json", "MEASURES"]

#: measure= → (the node field, the x unit, speedscope's profile name suffix)
MEASURES = {"ticks": ("ticks", "ticks", "time"), "alloc": ("alloc", "bytes", "allocation")}


def load_ghc_json(data, *, source: str = "<ghc>", limits=None, kind_rules=None, warn: bool = True,
                  measure: str = "ticks", **_options):
    """A GHC ``-pj`` report's bytes → `Trace` (module docstring)."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    field, unit, suffix = MEASURES[measure]
    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    centres = need_list(doc.get("cost_centres"), source, "cost_centres")
    by_id: dict = {}
    for i, cc in enumerate(centres):  # the cost centres (the first of an id counts)
        cid = cc.get("id") if isinstance(cc, dict) else None
        if isinstance(cid, bool) or not isinstance(cid, int):
            need_dict(cc, source, f"cost_centres[{i}]")
            raise fail(source, f"cost_centres[{i}].id", "expected an integer id")
        by_id.setdefault(cid, i)
    tree = Tree(doc.get("profile"), source, "profile")
    nodes = tree.nodes
    ids = int_column(gather(nodes, "id", source, "profile nodes"), source, "profile nodes", field=".id")
    weight = gather(nodes, field, source, "profile nodes", required=False)
    ok = np.fromiter(map(_is_number, weight), bool, len(weight))
    if not ok.all():
        k = int(np.argmax(~ok))
        raise fail(source, f"{tree.path(k)}.{field}", f"expected a number ≥ 0, got {weight[k]!r}"[:120])
    w = np.array(weight, dtype=np.float64)
    w[np.isnan(w)] = 0.0  # a node without the field weighs nothing
    big = w > lim.max_abs_time
    if big.any():
        k = int(np.argmax(big))
        raise fail(source, f"{tree.path(k)}.{field}", f"{weight[k]!r} is past the limit of {lim.max_abs_time:g} "
                                                      f"(max_abs_time=)"[:160])
    uniq, inv = np.unique(ids, return_inverse=True)
    frames = KeyedFrames(lim.max_name_chars)
    fmap = np.empty(uniq.size, np.int64)
    for k, cid in enumerate(uniq.tolist()):  # the distinct cost centres of the tree
        i = by_id.get(cid)
        if i is None:
            j = int(np.argmax(inv == k))
            raise fail(source, f"{tree.path(j)}.id", f"cost centre {cid} is not in cost_centres")
        cc = centres[i]
        label, module, loc = cc.get("label"), cc.get("module"), cc.get("src_loc")
        name = f"{module if isinstance(module, str) else ''}.{label if isinstance(label, str) else ''}"
        fmap[k] = frames.add_keyed(cid, name, loc if isinstance(loc, str) and not loc.startswith("<") else "")
    frame = fmap[inv]
    program = doc.get("program") if isinstance(doc.get("program"), str) else "program"
    prof = StackProfile(f"{program} {suffix}", tree.parent, frame, np.arange(len(nodes), dtype=np.int64),
                        sample_weight=w)
    meta = {"ghc_measure": measure, "total_ticks": _count(doc.get("total_ticks")),
            "total_alloc": _count(doc.get("total_alloc")), "tick_interval_us": _count(doc.get("tick_interval"), float),
            "program": program}
    return merged_trace(frames, [prof], unit=unit, source=source, fmt="ghc-json", limits=lim, input_bytes=len(data),
                        kind_rules=kind_rules, meta=meta, warn=warn, cat="haskell")


def _count(x, kind=int):
    """A header number of the report (``total_ticks``, ``total_alloc``: ints; ``tick_interval``:
    a number) as it is when it is one of ``kind`` in [0, 2^62), else None (a list, a string,
    -1, 10^25: not kept in the trace's metadata)."""
    ok = isinstance(x, (int, float) if kind is float else int) and not isinstance(x, bool) and 0 <= x < 2 ** 62
    return x if ok else None


def _is_number(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 and x < 1e300)
