"""A V8 ``.cpuprofile`` file (what ``node --cpu-prof`` and DevTools' JavaScript profiler save), of
either form: the new one (``nodes`` with ``parent``/``children`` ids, ``samples``, ``timeDeltas``
in µs, ``startTime``) and the old one of Node ≤ 10 and Chrome ≤ 58 (a ``head`` node tree,
``startTime`` in seconds, ``timestamps`` in µs or ``timeDeltas``).  Read by the same rules as a
Chrome trace's profile events (`io.chrome_profile`: DevTools' reading of ``(idle)``,
``(program)``, ``(garbage collector)``; the stack builder of `io.stacks`) into one lane,
"main (JS)".
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from .chrome_profile import (LANE_SUFFIX, REPAIRS, _add_nodes, _add_samples, _add_tree, _num, _parse_why,
                             _Profile, profile_trace)
from .stacks import FrameTable


def _cpuprofile_doc(doc, p: _Profile, text, bad, source: str) -> int:
    """Read a .cpuprofile document (either form) into ``p``; returns its samples."""
    from ..model import TraceFormatError

    old = "nodes" not in doc
    if old:
        _add_tree(p, doc["head"], text, bad)
    else:
        _add_nodes(p, doc["nodes"], text, bad)
    samples = doc.get("samples")
    stamps = doc.get("timestamps") if old else None
    deltas = doc.get("timeDeltas")
    times = stamps if isinstance(stamps, list) and stamps else deltas
    if not isinstance(samples, list) or not samples or not isinstance(times, list):
        need = "'timestamps' (or 'timeDeltas')" if old else "'timeDeltas'"
        raise TraceFormatError(f"{source}: a V8 .cpuprofile without samples: 'samples' and {need} must be lists "
                               f"of the sampled nodes and of their times in µs")
    m = _add_samples(p, samples, times, bad, math.nan if times is stamps else 0.0)
    start = doc.get("startTime")
    if times is stamps:  # absolute µs: the samples' own times
        p.times = np.concatenate(p.deltas)
        p.deltas = []
    elif _num(start):
        p.start = float(start) * (1e6 if old else 1.0)  # the old form counts seconds
    else:
        p.start = 0.0
    return m


def load_cpuprofile(data, source: str, lim, *, kind_rules=None, warn: bool = True, **_options):
    """A V8 ``.cpuprofile`` of either form (module docstring) as a Trace of one lane, "main (JS)",
    by the same reading as a trace's profile events.  Errors name the file and say what is
    wrong: not JSON, not of either form, no sample, nothing but (idle)/(program)/(root), more
    calls than ``lim.sample_calls`` allows."""
    from ..model import TraceFormatError, TraceWarning

    doc, why = _parse_why(bytes(data))
    if doc is None:
        raise TraceFormatError(f"{source}: a V8 .cpuprofile that cannot be read as JSON: cut short or not JSON "
                               f"({len(data)} bytes; {why})")
    if not isinstance(doc, dict) or not (isinstance(doc.get("nodes"), list) or
                                         ("nodes" not in doc and isinstance(doc.get("head"), dict))):
        what = f"keys {sorted(doc)[:8]}" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise TraceFormatError(f"{source}: not a V8 .cpuprofile: it needs a 'nodes' list (or, in the old form, a "
                               f"'head' node tree) at the top level; found {what}")
    p = _Profile(pid=0, tid=0, first_row=0)
    bad = {"n": 0}

    def note_bad():
        bad["n"] += 1

    cut = FrameTable(lim.max_name_chars)._clean  # long names cut with a hash: distinct ones stay distinct
    m = _cpuprofile_doc(doc, p, cut, note_bad, source)
    trace, lanes, reps = profile_trace([p], source=source, limits=lim, input_bytes=len(data), kind_rules=kind_rules)
    if trace is None:
        lost = {code: c for code, c, _ in reps if c}
        raise TraceFormatError(f"{source}: its {m} samples hold no JavaScript (only (idle)/(program)/(root)"
                               f"{', or nodes and times that could not be read: ' + str(lost) if lost else ''})")
    actions = {**REPAIRS, "frame_cycle": "node parents that form a cycle: cut where it closes",
               "deep_stack": "a stack deeper than max_stack_depth: cut there (max_stack_depth= to allow more)"}
    repairs: dict = {}
    for code, count in [("js_profile", bad["n"])] + [(code, c) for code, c, _ in reps]:
        if count:
            r = repairs.setdefault(code, {"count": 0, "first": "the document", "action": actions[code]})
            r["count"] += int(count)
    name = os.path.basename(source).split(".")[0] or "profile"
    trace.thread_names[0] = "main" + LANE_SUFFIX
    trace.process_names[0] = name
    pid, tid, n_samples, step = lanes[0]
    trace.meta.update(format="v8-cpuprofile", source=source, repairs=repairs, skipped={}, n_samples=m,
                      cpuprofile_form="nodes" if "nodes" in doc else "head",
                      js_profiles=[{"thread": "main" + LANE_SUFFIX, "sampled_thread": "main", "pid": pid,
                                    "samples": n_samples, "interval_us": step, "calls": len(trace)}])
    if warn:
        for code, r in repairs.items():
            warnings.warn(TraceWarning(f"{source}: {r['count']} × {code}: {r['action']}"), stacklevel=3)
    return trace
