"""stackprof's JSON (Ruby: ``StackProf.run(mode:, raw: true)`` then ``stackprof --json``, or
``JSON.generate(StackProf.results)``).

The file: ``mode`` (``cpu``, ``wall`` or ``object``), ``interval`` (µs between samples, or
allocations between samples in object mode), ``frames`` (an object keyed by frame id: name,
file, line, and per-frame totals and ``edges``), and, when recorded with ``raw: true``, ``raw``
(``[height, frame ids root first..., count]`` repeated: each distinct consecutive stack and how
many samples it held) and ``raw_timestamp_deltas`` (µs between samples).  They are read as
speedscope's ``stackprof.ts`` reads them:

- the samples of ``raw`` laid end to end, each as long as: in wall mode the sum of its
  samples' ``raw_timestamp_deltas``, in cpu mode ``count × interval`` µs (`stacks.timed_trace`,
  speedscope's Time Order);
- in object mode the weights are allocation counts, not times: the stacks are merged
  (`stacks.merged_trace`, Left Heavy, x in "objects");
- a sample whose stack is "(garbage collection)" alone stands on the previous sample's stack
  (`kernels.stacklists.stackprof_raw`); a frame without a name is "(unknown)".

Without ``raw`` a file holds only each frame's totals and its callees (a call graph, not
stacks): it is refused, saying to record with ``raw: true``.
"""
from __future__ import annotations

import numpy as np

from .limits import resolve_limits
from .profile_json import (KeyedFrames, end_to_end, fail, finite_number, float_column, int_column, need_dict,
                           need_list, parse_json)
from .stacks import StackProfile, merged_trace, timed_trace

__all__ = ["load_stackprof"]

_GC = "(garbage collection)"


def load_stackprof(data, *, source: str = "<stackprof>", limits=None, kind_rules=None, warn: bool = True,
                   **_options):
    """A stackprof JSON file's bytes → `Trace` (module docstring)."""
    from ..kernels import stacklists as sl

    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    mode = doc.get("mode")
    mode = mode if isinstance(mode, str) else "wall"
    fr = need_dict(doc.get("frames"), source, "frames")
    raw = doc.get("raw")
    if raw is None or (isinstance(raw, list) and not raw and fr):
        raise fail(source, "raw", "missing: this stackprof file holds only per-frame totals and callees (a call "
                                  "graph, not stacks); record with StackProf.run(raw: true)")
    raw = int_column(raw, source, "raw")
    frame_pos, offsets, counts, status, at = sl.stackprof_raw(raw)
    if status == sl.RAW_BAD_HEIGHT:
        raise fail(source, f"raw[{at}]", f"{int(raw[at])} is not a stack height or sample count")
    if status == sl.RAW_CUT:
        raise fail(source, f"raw[{at}]", f"a stack of {int(raw[at])} frames runs past the end of raw "
                                         f"({raw.size} values)")
    uniq, inv = np.unique(raw[frame_pos], return_inverse=True)
    frames = KeyedFrames(lim.max_name_chars)
    fmap = np.empty(uniq.size, np.int64)
    gc = np.zeros(uniq.size, bool)
    for k, fid in enumerate(uniq.tolist()):  # the distinct frames the samples use
        f = fr.get(str(fid))
        if f is None:
            j = int(frame_pos[int(np.argmax(inv == k))])
            raise fail(source, f"raw[{j}]", f"frame id {fid} is not in frames")
        need_dict(f, source, f"frames[{str(fid)!r}]")
        name, file, line = f.get("name"), f.get("file"), f.get("line")
        name = name if isinstance(name, str) else ("(unknown)" if name is None else str(name))
        fmap[k] = frames.add_keyed(fid, name, file if isinstance(file, str) else "",
                                   line if isinstance(line, int) and not isinstance(line, bool) else -1)
        gc[k] = name == _GC
    flat = fmap[inv] if inv.size else np.zeros(0, np.int64)
    is_gc = gc[inv] if inv.size else np.zeros(0, bool)
    lens = np.diff(offsets)
    lone = (lens == 1) & is_gc[np.minimum(offsets[:-1], max(flat.size - 1, 0))] if flat.size else lens < 0
    if lone.any():
        flat, offsets = sl.on_previous_stack(flat, offsets, lone)
    parent, frame, stack = sl.stack_paths(flat, offsets)
    interval = finite_number(doc.get("interval"), source, "interval", default=1.0)
    meta = {"stackprof_mode": mode, "stackprof_interval": interval,
            "stackprof_version": doc.get("version") if isinstance(doc.get("version"), (int, float, str)) else None}
    common = dict(source=source, fmt="stackprof", limits=lim, input_bytes=len(data), kind_rules=kind_rules,
                  meta=meta, warn=warn, cat="ruby")
    name = f"stackprof {mode}"
    if mode == "object":
        prof = StackProfile(name, parent, frame, stack, sample_weight=counts.astype(np.float64))
        return merged_trace(frames, [prof], unit="objects", **common)
    if mode == "cpu":
        if interval < 0:
            raise fail(source, "interval", f"{interval:g} µs is not a sampling interval")
        dur = counts * interval
        where = "interval"
    else:
        deltas = float_column(need_list(doc.get("raw_timestamp_deltas"), source, "raw_timestamp_deltas"), source,
                              "raw_timestamp_deltas")
        cum = np.cumsum(counts)
        if cum.size and cum[-1] > deltas.size:
            raise fail(source, "raw_timestamp_deltas", f"{deltas.size} deltas for the {int(cum[-1])} samples of raw")
        d = np.zeros(deltas.size + 1)
        np.cumsum(deltas, out=d[1:])
        dur = d[cum] - d[cum - counts] if cum.size else np.zeros(0)
        where = "raw_timestamp_deltas"
    bad = ~np.isfinite(dur) | (dur < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, where, f"sample {k} of raw lasts {dur[k]:g} µs (speedscope asks for weights ≥ 0)")
    prof = end_to_end(parent, frame, stack, dur.astype(np.float64), 0.0, lim, source, where)
    prof.thread_name = name
    return timed_trace(frames, [prof], **common)
