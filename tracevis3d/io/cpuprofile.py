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

from .chrome_profile import (BAD_PARENT, GC, LANE_SUFFIX, REPAIRS, ROOT, NodeArrays, _add_nodes, _add_samples,
                             _add_tree, _num, _parse_why, _Profile, name_kinds, profile_trace)
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


def _scanned(data, lim):
    """(profile, samples, 1 when the samples and deltas differ in length else 0) of the
    ``.cpuprofile`` ``data`` read by `kernels.cpuprofile_scan` (its node table in arrays,
    `chrome_profile.NodeArrays`: Python touches each distinct string and frame once, no node),
    or None for a file that reader hands back (another form, or anything it does not take
    exactly as `_cpuprofile_doc` would): `_cpuprofile_doc` reads it."""
    import orjson

    from ..kernels.cpuprofile_scan import OK, control_bytes, scan_cpuprofile, utf8_ok
    from ..kernels.gamma import process_hash_seed

    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    buf = np.ascontiguousarray(buf)
    if not utf8_ok(buf):
        return None
    res = scan_cpuprofile(buf, process_hash_seed(), bool(control_bytes(buf)))
    if res[0] != OK:
        return None
    _, ids, p_kind, p_id, node_key, pairs, s_off, s_len, s_esc, k_name, k_url, k_line, k_col, samples, deltas, \
        t0, t1, increasing = res
    if not increasing and ids.size > 1:  # a node sent twice is left out field by field (the first stays)
        sorted_ids = np.sort(ids)
        if (sorted_ids[1:] == sorted_ids[:-1]).any():
            return None
    start = 0.0
    if t0 >= 0:  # startTime: an integer of at most 18 digits (else read field by field)
        text = bytes(buf[t0:t1])
        if not text.lstrip(b"-").isdigit() or len(text.lstrip(b"-")) > 18:
            return None
        start = float(int(text))
    # the distinct strings, decoded and cleaned as `_add_nodes` cleans them; equal ones made one
    cut = FrameTable(lim.max_name_chars)._clean
    canon: dict = {}
    sid = []
    for off, ln, esc in zip(s_off.tolist(), s_len.tolist(), s_esc.tolist()):
        raw = bytes(buf[off: off + ln])
        try:
            s = orjson.loads(b'"' + raw + b'"') if esc else raw.decode("utf-8")
        except (orjson.JSONDecodeError, UnicodeDecodeError):
            return None
        sid.append(canon.setdefault(cut(s), len(canon)))
    strings = list(canon)
    keys: dict = {}  # (name, url, line, column) → frame key, in order of first appearance
    key_c = np.array([keys.setdefault((sid[a], sid[b], ln, col), len(keys))
                      for a, b, ln, col in zip(k_name.tolist(), k_url.tolist(), k_line.tolist(), k_col.tolist())],
                     np.int64)
    node_c = key_c[node_key] if node_key.size else node_key
    key_list = list(keys)
    name_of_key = np.array([a for a, _, _, _ in key_list], np.int64)
    node_name = name_of_key[node_c] if node_c.size else node_c
    p = _Profile(pid=0, tid=0, first_row=0)

    def frames_of(frames):
        """Each node's frame, the profile's distinct frames added to ``frames`` (`ColumnFrames.add_all`)."""
        fid = np.array(frames.add_all([(strings[a], strings[b], ln, col) for a, b, ln, col in key_list]), np.int64)
        return fid[node_c] if node_c.size else node_c

    p.nodes = NodeArrays(
        ids=ids, par_ids=np.where(p_kind == 1, p_id, BAD_PARENT), given=p_kind == 1,
        is_root=np.array([s == ROOT for s in strings], bool)[node_name] if ids.size else np.zeros(0, bool),
        kind_of=name_kinds(strings)[node_name] if ids.size else np.zeros(0, np.int8),
        pairs=pairs if pairs.size else None, frames=frames_of, gc_node=lambda: int(np.flatnonzero(
            node_name == strings.index(GC))[0]))
    m = min(samples.size, deltas.size)
    p.samples.append(samples[:m])
    p.deltas.append(deltas[:m].astype(np.float64))
    p.start = start
    return p, m, int(samples.size != deltas.size)


def load_cpuprofile(data, source: str = "<bytes>", limits=None, *, kind_rules=None, warn: bool = True, **_options):
    """A V8 ``.cpuprofile`` of either form (module docstring) as a Trace of one lane, "main (JS)",
    by the same reading as a trace's profile events.  Errors name the file and say what is
    wrong: not JSON, not of either form, no sample, nothing but (idle)/(program)/(root), more
    calls than ``limits.sample_calls`` allows."""
    from ..model import TraceFormatError, TraceWarning
    from .limits import resolve_limits

    lim = resolve_limits(limits)

    scanned = _scanned(data, lim)  # the byte-level reader, else (a form it does not take) field by field
    if scanned is not None:
        p, m, n_bad = scanned
        form = "nodes"
    else:
        doc, why = _parse_why(bytes(data))
        if doc is None:
            raise TraceFormatError(f"{source}: a V8 .cpuprofile that cannot be read as JSON: cut short or not JSON "
                                   f"({len(data)} bytes; {why})")
        if not isinstance(doc, dict) or not (isinstance(doc.get("nodes"), list) or
                                             ("nodes" not in doc and isinstance(doc.get("head"), dict))):
            what = f"keys {sorted(doc)[:8]}" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
            raise TraceFormatError(f"{source}: not a V8 .cpuprofile: it needs a 'nodes' list (or, in the old form, "
                                   f"a 'head' node tree) at the top level; found {what}")
        p = _Profile(pid=0, tid=0, first_row=0)
        bad = {"n": 0}

        def note_bad():
            bad["n"] += 1

        cut = FrameTable(lim.max_name_chars)._clean  # long names cut with a hash: distinct ones stay distinct
        m = _cpuprofile_doc(doc, p, cut, note_bad, source)
        n_bad = bad["n"]
        form = "nodes" if "nodes" in doc else "head"
    trace, lanes, reps = profile_trace([p], source=source, limits=lim, input_bytes=len(data), kind_rules=kind_rules)
    if trace is None:
        lost = {code: c for code, c, _ in reps if c}
        raise TraceFormatError(f"{source}: its {m} samples hold no JavaScript (only (idle)/(program)/(root)"
                               f"{', or nodes and times that could not be read: ' + str(lost) if lost else ''})")
    actions = {**REPAIRS, "frame_cycle": "node parents that form a cycle: cut where it closes",
               "deep_stack": "a stack deeper than max_stack_depth: cut there (max_stack_depth= to allow more)"}
    repairs: dict = {}
    for code, count in [("js_profile", n_bad)] + [(code, c) for code, c, _ in reps]:
        if count:
            r = repairs.setdefault(code, {"count": 0, "first": "the document", "action": actions[code]})
            r["count"] += int(count)
    name = os.path.basename(source).split(".")[0] or "profile"
    trace.thread_names[0] = "main" + LANE_SUFFIX
    trace.process_names[0] = name
    pid, tid, n_samples, step = lanes[0]
    trace.meta.update(format="v8-cpuprofile", source=source, repairs=repairs, skipped={}, n_samples=m,
                      cpuprofile_form=form,
                      js_profiles=[{"thread": "main" + LANE_SUFFIX, "sampled_thread": "main", "pid": pid,
                                    "samples": n_samples, "interval_us": step, "calls": len(trace)}])
    if warn:
        for code, r in repairs.items():
            warnings.warn(TraceWarning(f"{source}: {r['count']} × {code}: {r['action']}"), stacklevel=3)
    return trace
