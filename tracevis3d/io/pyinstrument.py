"""pyinstrument's JSON (``pyinstrument -r json``, ``Profiler.output(JSONRenderer())``) → one merged
`Trace`.

The file is pyinstrument's call tree after its processors ran (``start_time``, ``duration``,
``sample_count``, ``cpu_time``, ``root_frame``): each frame has ``function``, ``file_path``,
``line_no``, ``class_name`` (pyinstrument ≥ 4.6), its inclusive ``time`` in seconds and
``children``; ``[self]`` / ``[await]`` children are pyinstrument's own frames for time spent
in the frame itself or awaiting.  There is no timeline (pyinstrument aggregates its samples), so
it is read as an aggregate, like speedscope's readers of call trees: every frame is a stack
whose self weight is its time less its children's (never below 0), laid out Left Heavy
(`stacks.merged_trace`) with x in µs.  A frame is named ``Class.function`` where pyinstrument
knows its class (as its console renderer shows it), with its file and line; frames are told
apart by name, file and line.  The target (``target_description``, or ``program`` before
pyinstrument 4.5) names the lane.  Errors name the file and the JSON path
(``root_frame.children[2].time``).
"""
from __future__ import annotations

import numpy as np

from .limits import resolve_limits
from .profile_json import KeyedFrames, Tree, clean_name, fail, gather, need_dict, parse_json
from .stacks import StackProfile, merged_trace, source_name

__all__ = ["load_pyinstrument"]


def _seconds(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e15


def load_pyinstrument(data, *, source: str = "<pyinstrument>", limits=None, kind_rules=None, warn: bool = True,
                      **_options):
    """pyinstrument JSON bytes → `Trace` (module docstring)."""
    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    if "root_frame" not in doc:
        raise fail(source, "the document", "no 'root_frame': not a pyinstrument JSON profile")
    if doc["root_frame"] is None:
        raise fail(source, "root_frame", "null: pyinstrument recorded no samples")
    tree = Tree(doc["root_frame"], source, "root_frame")
    nodes = tree.nodes
    if len(nodes) > lim.max_events:
        raise fail(source, "root_frame", f"{len(nodes)} frames, over max_events={lim.max_events}")
    times = gather(nodes, "time", source, "root_frame frames", required=False)
    ok = np.fromiter(map(_seconds, times), bool, len(times))
    if not ok.all():
        k = int(np.argmax(~ok))
        raise fail(source, f"{tree.path(k)}.time", f"expected seconds ≥ 0, got {times[k]!r}"[:120])
    total = np.array(times, np.float64) * 1e6
    child_sum = np.bincount(tree.parent[1:], weights=total[1:], minlength=total.size) if total.size > 1 else \
        np.zeros(total.size)
    self_w = np.maximum(total - child_sum, 0.0)
    funcs = gather(nodes, "function", source, "root_frame frames", required=False)
    classes = gather(nodes, "class_name", source, "root_frame frames", required=False)
    files = gather(nodes, "file_path", source, "root_frame frames", required=False)
    lines = gather(nodes, "line_no", source, "root_frame frames", required=False)
    keys = list(map(_key, funcs, classes, files, lines))
    distinct = dict.fromkeys(keys)
    frames = KeyedFrames(lim.max_name_chars)
    for key in distinct:  # the distinct frames
        distinct[key] = frames.add_keyed(key, *key)
    frame = np.fromiter(map(distinct.__getitem__, keys), np.int64, len(keys))
    target = doc.get("target_description", doc.get("program"))
    name = clean_name(target, 200) if isinstance(target, str) and target else source_name(source)
    prof = StackProfile(name, tree.parent, frame, np.arange(len(nodes), dtype=np.int64), sample_weight=self_w)
    meta = {"pyinstrument_duration_s": doc.get("duration") if _seconds(doc.get("duration")) else None,
            "pyinstrument_samples": doc.get("sample_count") if _seconds(doc.get("sample_count")) else None}
    return merged_trace(frames, [prof], unit="µs", source=source, fmt="pyinstrument", limits=lim,
                        input_bytes=len(data), kind_rules=kind_rules, meta=meta, warn=warn, cat="python")


def _key(func, cls, file, line) -> tuple:
    """(name, file, line) of a frame: ``Class.function`` where the class is known."""
    func = func if isinstance(func, str) and func else "(anonymous)"
    name = f"{cls}.{func}" if isinstance(cls, str) and cls and not func.startswith("[") else func
    file = file if isinstance(file, str) else ""
    line = int(line) if isinstance(line, int) and not isinstance(line, bool) and 0 <= line < 2 ** 31 else -1
    return (name, file, line)
