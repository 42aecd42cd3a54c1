"""V8's sampled JavaScript stacks in a Chrome trace: ``Profile`` and ``ProfileChunk`` events
(phase ``P``), as Chrome DevTools' Performance panel records them and Chromium writes with the
``disabled-by-default-v8.cpu_profiler`` category (and the older form, 2016-2017: one instant
``CpuProfile`` event holding a whole profile, ``args.data.cpuProfile`` with its ``startTime``).

A profile is keyed by its process and ``id``.  Its ``Profile`` event stands on the thread it
samples and gives ``args.data.startTime`` (µs, the trace clock); its ``ProfileChunk`` events (on
V8's profiler thread, in file order) bring ``args.data.cpuProfile.nodes`` (``id``, ``parent``,
``callFrame``: ``functionName``, ``url``, ``lineNumber`` 0-based), ``cpuProfile.samples`` (the
leaf node of each sample) and ``timeDeltas`` (µs from the previous sample; the first from
``startTime``).  Nodes accumulate over the chunks; older profiles give ``children`` lists
instead of ``parent`` links.

Samples become calls by the flame chart's reading (`kernels.chrome_tree.expand_samples`, as the
``samples``/``stackFrames`` form): a frame runs from the first sample whose stack holds it to
the first that does not.  ``(root)`` is no frame; ``(idle)`` and ``(program)`` (V8 outside
JavaScript: the browser's own work, which the trace's events show) are empty stacks, except a
lone ``(program)`` sample inside a stack, and ``(garbage collector)`` stands on the stack it
interrupted, as DevTools reads them (`sample_leaves`); the last sample lasts the profile's
median interval.  Samples are taken in time order (a delta may be
negative).  Each profile's calls go on a lane of their own, "<thread> (JS)", in the
sampled thread's process: the trace's own events on that thread keep theirs, and sampled
intervals need not nest with them.

Every profile event is parsed by orjson (they are few: one a ~100 ms of sampling); what does
not fit the form above is left out and counted (``js_profile`` repair), never guessed.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import jsonevent as jev
from ..kernels.tree import nest_sorted_intervals, preorder_sort
from ..names import intern_all

PROFILE_EVENTS = ("Profile", "ProfileChunk", "CpuProfile")
#: a whole profile in one event (DevTools traces of 2016-2017: an instant ``CpuProfile``) may be this
#: many times the size of a chunk
WHOLE_PROFILE_BYTES_FACTOR = 32
#: V8's pseudo frames that are no JavaScript running (an empty stack); ``(root)`` is every stack's root
NOT_JS = frozenset(("(idle)", "(program)"))
ROOT = "(root)"
#: profiles read from one trace (a browser profiles a thread each: a page and its workers); the
#: events of more are left out, counted (each profile holds a few tables: a flood of ids is no trace)
MAX_PROFILES = 10_000
#: the lane of a profile's calls
LANE_SUFFIX = " (JS)"
REPAIRS = {
    "js_profile": "V8 profile event (Profile/ProfileChunk) not of the documented form: left out what did not fit",
    "js_profile_no_start": "V8 profile chunks without their Profile event (no startTime): timed from the first "
                           "chunk's ts",
}


@dataclass
class _Profile:
    pid: int
    tid: int | None = None  # the sampled thread (the Profile event's), None when unknown
    start: float | None = None  # startTime, µs
    first_chunk_ts: float | None = None
    first_row: int = -1
    node_index: dict = field(default_factory=dict)  # node id -> index
    node_parent_id: list = field(default_factory=list)  # parent id, None for none
    node_frame: list = field(default_factory=list)  # (name, url, line) per node
    samples: list = field(default_factory=list)  # node ids, an int64 array a chunk
    deltas: list = field(default_factory=list)  # µs, a float64 array a chunk
    children: list = field(default_factory=list)  # (parent id, child id) of the older form


def _num(v) -> bool:
    """A finite JSON number (not a bool; an int past a float's range is none)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _int_array(v):
    """``v`` (a list from JSON) as int64 when every item is an int (not a bool), else None."""
    a = np.asarray(v) if len(v) else np.zeros(0, np.int64)
    return a.astype(np.int64) if a.ndim == 1 and a.dtype.kind in "iu" and (a.dtype.kind == "i" or a.max() < 2 ** 62) \
        else None


def _finite_array(v):
    """``v`` as float64 when every item is a finite number (not a bool), else None."""
    a = np.asarray(v) if len(v) else np.zeros(0, np.float64)
    if a.ndim != 1 or a.dtype.kind not in "iuf":
        return None
    a = a.astype(np.float64)
    return a if np.isfinite(a).all() else None


def _parse(raw: bytes):
    import orjson

    try:
        return orjson.loads(raw)
    except Exception:  # a lone surrogate, bytes not UTF-8: Python's parser takes them
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return None


def _add_nodes(p: _Profile, nodes, text, bad) -> None:
    if not isinstance(nodes, list):
        bad()
        return
    for nd in nodes:
        if not isinstance(nd, dict) or not isinstance(nd.get("id"), int) or isinstance(nd.get("id"), bool):
            bad()
            continue
        nid = nd["id"]
        cf = nd.get("callFrame") if isinstance(nd.get("callFrame"), dict) else {}
        name = cf.get("functionName") if isinstance(cf.get("functionName"), str) else ""
        url = cf.get("url") if isinstance(cf.get("url"), str) else ""
        line = cf.get("lineNumber")
        line = int(line) + 1 if _num(line) and 0 <= line < 2 ** 31 - 1 else -1
        parent = nd.get("parent")
        parent = parent if isinstance(parent, int) and not isinstance(parent, bool) else None
        if nid in p.node_index:  # a node sent again: the first stays
            continue
        p.node_index[nid] = len(p.node_frame)
        p.node_parent_id.append(parent)
        p.node_frame.append((text(name) or "(anonymous)", text(url), line))
        kids = nd.get("children")
        if isinstance(kids, list):  # the older form: children, not parent links
            p.children.extend((nid, c) for c in kids if isinstance(c, int) and not isinstance(c, bool))


def _add_samples(p: _Profile, samples: list, deltas: list, bad) -> int:
    """Append a chunk's ``samples`` (node ids) and ``timeDeltas`` (µs) to ``p`` as int64 / float64
    arrays (not lists of Python ints: 8 bytes a sample); ``bad()`` once for lists of unequal
    length (the shorter length is kept) and once for items that are no node id or no finite
    number (a sample without a node id keeps its time, the deltas run on, as an empty stack; a
    delta that is no number is 0).  Returns the samples added."""
    m = min(len(samples), len(deltas))
    if len(samples) != len(deltas):
        bad()
    s_arr, d_arr = _int_array(samples[:m]), _finite_array(deltas[:m])
    if s_arr is None or d_arr is None:
        bad()
        if s_arr is None:
            s_arr = np.array([s if isinstance(s, int) and not isinstance(s, bool) and abs(s) < 2 ** 62 else -1
                              for s in samples[:m]], np.int64)
        if d_arr is None:
            d_arr = np.array([float(d) if _num(d) else 0.0 for d in deltas[:m]], np.float64)
    p.samples.append(s_arr)
    p.deltas.append(d_arr)
    return m


def read_profiles(buf, ii, ss, rows, key_id, key_pid, key_tid, text, max_bytes: int = 1 << 20) -> tuple:
    """The profiles of the ``P`` event rows ``rows`` (their bytes at ``ii[r, I_EV_OFF]``, length
    ``ss[r, S_EV_LEN]``; ``key_id[r]``: the event's thread key, ``key_pid``/``key_tid``: a key's
    process and thread; ``text``: a name's cleaning).  Returns (profiles in order of first
    appearance, the number of ``P`` events that are not profile events (samples of other kinds:
    skipped, as before), repairs as (code, count, first row)).  An event longer than
    ``max_bytes`` (the limit of an event's args) is left out, counted as a ``js_profile`` repair:
    its Python objects would take ~10 times its bytes (V8 writes chunks of ~100 samples)."""
    profiles: dict = {}
    other = 0
    bad = {"n": 0, "first": None}
    cur_row = [-1]

    def note_bad():
        bad["n"] += 1
        if bad["first"] is None:
            bad["first"] = cur_row[0]

    for r in rows.tolist():
        cur_row[0] = r
        off, ln = int(ii[r, jev.I_EV_OFF]), int(ss[r, jev.S_EV_LEN])
        whole = ss[r, jev.S_PH] != ord("P")  # an instant: the older form, a whole profile in one event
        if ln > (WHOLE_PROFILE_BYTES_FACTOR * max_bytes if whole else max_bytes):
            note_bad()
            continue
        ev = _parse(bytes(buf[off: off + ln]))
        if not isinstance(ev, dict) or ev.get("name") not in PROFILE_EVENTS:
            other += 1
            continue
        k = int(key_id[r])
        pid = int(key_pid[k])
        pkey = (pid, f"CpuProfile@{r}") if whole else (pid, str(ev.get("id")))
        p = profiles.get(pkey)
        if p is None:
            if len(profiles) >= MAX_PROFILES:
                note_bad()
                continue
            p = profiles[pkey] = _Profile(pid=pid, first_row=r)
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        data = args.get("data") if isinstance(args.get("data"), dict) else None
        if data is None:
            note_bad()
            continue
        if ev["name"] in ("Profile", "CpuProfile"):
            p.tid = int(key_tid[k])
            cpu_ = data.get("cpuProfile") if isinstance(data.get("cpuProfile"), dict) else {}
            if _num(data.get("startTime")):
                p.start = float(data["startTime"])
            elif _num(cpu_.get("startTime")):  # the older form keeps it in the profile
                p.start = float(cpu_["startTime"])
            elif _num(ev.get("ts")):
                p.start = float(ev["ts"])
        elif p.first_chunk_ts is None and _num(ev.get("ts")):
            p.first_chunk_ts = float(ev["ts"])
        cpu = data.get("cpuProfile")
        if cpu is None:
            continue
        if not isinstance(cpu, dict):
            note_bad()
            continue
        if "nodes" in cpu:
            _add_nodes(p, cpu["nodes"], text, note_bad)
        samples, deltas = cpu.get("samples", []), data.get("timeDeltas", cpu.get("timeDeltas", []))
        if not isinstance(samples, list) or not isinstance(deltas, list):
            note_bad()
            continue
        _add_samples(p, samples, deltas, note_bad)
    reps = [("js_profile", bad["n"], bad["first"])]
    no_start = [p for p in profiles.values() if p.start is None and any(a.size for a in p.samples)]
    reps.append(("js_profile_no_start", len(no_start), no_start[0].first_row if no_start else None))
    return list(profiles.values()), other, reps


GC = "(garbage collector)"


def sample_leaves(raw: np.ndarray, parent: np.ndarray, names: list) -> tuple:
    """The leaf node each sample (in time order) stands for, by the rules of DevTools' CPU
    profile model: ``(root)``, ``(idle)``, an unknown node: an empty stack (-1); a lone
    ``(program)`` sample between two JavaScript stacks with the same bottom frame takes the
    previous sample's stack (the sampler failed to walk the stack: "fixMissingSamples"), other
    ``(program)`` samples are empty; ``(garbage collector)`` samples stand on top of the stack
    of the last sample before them that is no GC sample (V8 reports GC under the root: without
    this every collection cut every open frame in two).  ``parent``: the nodes' parents
    (``(root)`` already cut off).  Returns (leaf per sample, the parents of the GC nodes to
    append: one per stack a collection interrupted; leaf n + k is the k-th)."""
    n_nodes, n = parent.size, raw.size
    kind_of = np.array([0 if nm in (ROOT, "(idle)") else 1 if nm == "(program)" else 2 if nm == GC else 3
                        for nm in names], np.int8) if n_nodes else np.zeros(0, np.int8)
    kind = np.where(raw >= 0, kind_of[np.maximum(raw, 0)] if n_nodes else 0, 0)  # 0 empty, 1 program, 2 GC, 3 JS
    bottom = np.where(parent >= 0, parent, np.arange(n_nodes))  # each node's top-level frame: pointer jumping
    for _ in range(int(n_nodes).bit_length() + 1):  # (a parent cycle just stops somewhere in the cycle)
        nxt = bottom[bottom]
        if np.array_equal(nxt, bottom):
            break
        bottom = nxt
    leaf = np.where(kind == 3, raw, -1)
    if n > 2:
        mid = np.arange(1, n - 1)
        lone = (kind[mid] == 1) & (kind[mid - 1] == 3) & (kind[mid + 1] == 3)
        lone &= bottom[np.maximum(raw[mid - 1], 0)] == bottom[np.maximum(raw[mid + 1], 0)]
        leaf[mid[lone]] = raw[mid[lone] - 1]
    is_gc = kind == 2
    gc_parent = np.zeros(0, np.int64)
    if is_gc.any():
        last = np.maximum.accumulate(np.where(~is_gc, np.arange(n), -1))  # the last non-GC sample at or before
        under = np.where(last >= 0, leaf[np.maximum(last, 0)], -1)
        on_stack = is_gc & (under >= 0)
        gc_parent, slot = np.unique(under[on_stack], return_inverse=True)
        leaf[on_stack] = n_nodes + slot
        leaf[is_gc & ~on_stack] = raw[is_gc & ~on_stack]  # after an empty stack: GC alone
    return leaf, gc_parent.astype(np.int64)


def profile_calls(profiles: list, max_abs_time: float, max_stack_depth: int, max_calls: int) -> dict | None:
    """The calls of ``profiles`` (`read_profiles`), by the flame chart's reading (module
    docstring).  Returns None when no profile has a sample, else a dict of arrays: ``start``,
    ``end`` (absolute µs), ``lane`` (index into ``lanes``), ``frame`` (index into ``frames``:
    (name, url, line)), ``parent``, ``depth``, ``end_index`` (per-lane pre-order, indices into
    these calls), ``lanes`` [(pid, sampled tid or None, samples, median interval µs)], and the
    repair counts ``cycles``, ``deep``."""
    f_parent_all, s_lane, s_ts, s_node, frames, lanes = [], [], [], [], [], []
    frame_index: dict = {}
    node_frame_all = []
    base = 0
    for p in profiles:
        samples = np.concatenate(p.samples) if p.samples else np.zeros(0, np.int64)
        if not samples.size:
            continue
        n_nodes = len(p.node_frame)
        parent = np.full(n_nodes, -1, np.int64)
        for j, pid_ in enumerate(p.node_parent_id):
            if pid_ is not None and pid_ in p.node_index:
                parent[j] = p.node_index[pid_]
        for a, c in p.children:
            if a in p.node_index and c in p.node_index:
                parent[p.node_index[c]] = p.node_index[a]
        names = [f[0] for f in p.node_frame]
        is_root = np.array([nm == ROOT for nm in names], bool)
        parent = np.where((parent >= 0) & is_root[np.maximum(parent, 0)], -1, parent)  # (root) is no frame
        ids = np.fromiter(p.node_index.keys(), np.int64, len(p.node_index))
        at = np.fromiter(p.node_index.values(), np.int64, len(p.node_index))
        o_ids = np.argsort(ids)
        ids, at = ids[o_ids], at[o_ids]
        pos_ = np.minimum(np.searchsorted(ids, samples), max(ids.size - 1, 0))
        raw = np.where((ids.size > 0) & (ids[pos_] == samples), at[pos_], -1) if ids.size else \
            np.full(samples.size, -1, np.int64)
        start = p.start if p.start is not None else (p.first_chunk_ts if p.first_chunk_ts is not None else 0.0)
        t = start + np.cumsum(np.concatenate(p.deltas))
        pos = np.diff(t)
        step = float(np.median(pos[pos > 0])) if (pos > 0).any() else 0.0
        o = np.argsort(t, kind="stable")  # a delta may be negative: time order
        t, raw = t[o], raw[o]
        keep = np.abs(t) <= max_abs_time
        t, raw = t[keep], raw[keep]
        if not t.size:
            continue
        leaf, gc_parent = sample_leaves(raw, parent, names)
        node_frames = p.node_frame
        if gc_parent.size:  # GC on top of the stack it interrupted: a node of its own per stack
            parent = np.concatenate([parent, gc_parent])
            node_frames = node_frames + [p.node_frame[names.index(GC)]] * gc_parent.size
            n_nodes = parent.size
        # the last sample lasts one interval: an empty stack after it closes every frame
        t = np.append(t, t[-1] + step)
        leaf = np.append(leaf, -1)
        lane = len(lanes)
        lanes.append((p.pid, p.tid, int(t.size - 1), step))
        f_parent_all.append(np.where(parent >= 0, parent + base, -1))
        # nodes of one frame (name, url, line) share a function
        node_frame_all.append(np.array(intern_all(node_frames, frame_index, frames), np.int64))
        s_lane.append(np.full(t.size, lane, np.int64))
        s_ts.append(t)
        s_node.append(np.where(leaf >= 0, leaf + base, -1))
        base += n_nodes
    if not lanes:
        return None
    f_parent = np.concatenate(f_parent_all)
    f_parent, f_depth, n_cyc, n_deep = ct.frame_depths(f_parent, max_stack_depth)
    c_node, c_start, c_end, c_lane, status = ct.expand_samples(
        np.concatenate(s_lane), np.concatenate(s_ts), np.concatenate(s_node), f_parent, f_depth, max_calls)
    if status < 0:
        raise ValueError(f"more than {max_calls} calls")
    keep = c_end > c_start  # frames opened and closed at one time (samples at equal times) are no calls
    c_node, c_start, c_end, c_lane = c_node[keep], c_start[keep], c_end[keep], c_lane[keep]
    order = preorder_sort(c_lane, c_start, c_end, np.arange(c_lane.size), len(lanes))
    c_node, c_start, c_end, c_lane = c_node[order], c_start[order], c_end[order], c_lane[order]
    parent, depth, end_index, c_end, _ = nest_sorted_intervals(c_lane, c_start, c_end)
    return {"start": c_start, "end": c_end, "lane": c_lane.astype(np.int32),
            "frame": np.concatenate(node_frame_all)[c_node], "parent": parent, "depth": depth,
            "end_index": end_index, "lanes": lanes, "frames": frames, "cycles": n_cyc, "deep": n_deep}


def with_profile_lanes(trace, calls: dict, t0: float, kind_rules=None, sampled_names: dict | None = None):
    """``trace`` with the calls of `profile_calls` appended, each profile's on a thread of its own
    after the trace's threads: "<sampled thread> (JS)" in the sampled thread's process
    (tid -1, -2, ...: no real thread has it), its functions added to the function table (name,
    script URL, line; category "js-sample").  Times on the trace's clock (``t0``: its origin).
    ``sampled_names``: (pid, tid) → a thread's name from the metadata, for a sampled thread that
    has no lane of its own in ``trace`` (a worker without trace events)."""
    import dataclasses

    from ..kinds import classify_functions
    from ..names import parse_function_name

    n0, nt0, nf0 = len(trace), trace.n_threads, trace.n_functions
    frames = calls["frames"]
    parsed = [parse_function_name(nm, file=url, line=line) for nm, url, line in frames]
    names = [nm for nm, _, _ in frames]
    f_kind = classify_functions(names, kind_rules) if names else np.zeros(0, np.uint8)
    frame = calls["frame"]
    t_pid, t_tid, t_names, t_proc, t_sort = [], [], [], [], []
    pids = trace.thread_pid.tolist()
    tids = trace.thread_tid.tolist()
    lanes_meta = []
    for k, (pid, tid, n_samples, step) in enumerate(calls["lanes"]):
        same = [j for j in range(nt0) if pids[j] == pid and tids[j] == tid] if tid is not None else []
        of_pid = [j for j in range(nt0) if pids[j] == pid]
        sampled = trace.thread_names[same[0]] if same else (sampled_names or {}).get((pid, tid)) or (
            str(tid) if tid is not None else f"V8 profile {k + 1}")
        t_pid.append(pid)
        t_tid.append(-(k + 1))
        t_names.append(sampled + LANE_SUFFIX)
        t_proc.append(trace.process_names[of_pid[0]] if of_pid else str(pid))
        t_sort.append(int(trace.thread_sort[same[0]]) if same else 0)
        lanes_meta.append({"thread": sampled + LANE_SUFFIX, "sampled_thread": sampled, "pid": pid,
                           "samples": n_samples, "interval_us": step,
                           "calls": int((calls["lane"] == k).sum())})
    m = frame.size
    par = calls["parent"]
    meta = dict(trace.meta)
    meta["js_profiles"] = lanes_meta
    return dataclasses.replace(
        trace,
        func=np.concatenate([trace.func, (nf0 + frame).astype(np.int32)]),
        start=np.concatenate([trace.start, calls["start"] - t0]),
        end=np.concatenate([trace.end, calls["end"] - t0]),
        depth=np.concatenate([trace.depth, calls["depth"].astype(np.int32)]),
        parent=np.concatenate([trace.parent, np.where(par >= 0, par + n0, -1).astype(np.int32)]),
        end_index=np.concatenate([trace.end_index, (calls["end_index"] + n0).astype(np.int32)]),
        thread=np.concatenate([trace.thread, (nt0 + calls["lane"]).astype(np.int32)]),
        kind=np.concatenate([trace.kind, f_kind[frame].astype(np.uint8)]),
        obj_ptr=np.concatenate([trace.obj_ptr, np.full(m, trace.obj_ptr[-1], np.int64)]),
        function_names=list(trace.function_names) + names,
        function_files=list(trace.function_files) + [p.file for p in parsed],
        function_lines=np.concatenate([trace.function_lines, np.array([p.line for p in parsed], np.int32)]),
        function_cats=list(trace.function_cats) + ["js-sample"] * len(frames),
        function_paths=list(trace.function_paths) + [p.path for p in parsed],
        thread_pid=np.concatenate([trace.thread_pid, np.array(t_pid, np.int64)]),
        thread_tid=np.concatenate([trace.thread_tid, np.array(t_tid, np.int64)]),
        thread_names=list(trace.thread_names) + t_names,
        thread_sort=np.concatenate([trace.thread_sort, np.array(t_sort, np.int32)]),
        process_names=list(trace.process_names) + t_proc,
        meta=meta,
    )


def load_cpuprofile(data, source: str, lim):
    """A V8 ``.cpuprofile`` (``{"nodes": [...], "startTime", "endTime", "samples": [...],
    "timeDeltas": [...]}``: what ``node --cpu-prof`` and DevTools' JavaScript profiler save) as
    a Trace of one lane, "main (JS)", by the same reading as a trace's profile events (module
    docstring).  Errors name the file: not JSON, not of that form, no sample."""
    from ..model import Trace, TraceFormatError

    doc = _parse(bytes(data))
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise TraceFormatError(f"{source}: a V8 .cpuprofile (it starts with a 'nodes' list) that Python's json "
                               f"cannot read: cut short or not JSON ({len(data)} bytes)")
    p = _Profile(pid=0, tid=0, first_row=0)
    bad = {"n": 0}

    def note_bad():
        bad["n"] += 1

    text = lambda s: s[:lim.max_name_chars] if isinstance(s, str) else ""  # noqa: E731
    _add_nodes(p, doc["nodes"], text, note_bad)
    samples, deltas = doc.get("samples"), doc.get("timeDeltas")
    if not isinstance(samples, list) or not isinstance(deltas, list) or not samples:
        raise TraceFormatError(f"{source}: a V8 .cpuprofile without samples: 'samples' and 'timeDeltas' must be "
                               f"lists of the sampled nodes and the µs between samples")
    m = _add_samples(p, samples, deltas, note_bad)
    p.start = float(doc["startTime"]) if _num(doc.get("startTime")) else 0.0
    try:
        calls = profile_calls([p], lim.max_abs_time, lim.max_stack_depth, lim.sample_calls(len(data)))
    except ValueError as e:
        raise TraceFormatError(f"{source}: its {m} samples (from byte 0) expand to {e} (stacks that change by "
                               f"many frames from sample to sample; sample_bytes_per_call= or max_events= to "
                               f"allow more)") from None
    if calls is None or not calls["start"].size:
        raise TraceFormatError(f"{source}: its {m} samples hold no JavaScript (only (idle)/(program)/(root))")
    base = Trace(func=np.zeros(0, np.int32), start=np.zeros(0), end=np.zeros(0), depth=np.zeros(0, np.int32),
                 parent=np.zeros(0, np.int32), end_index=np.zeros(0, np.int32), thread=np.zeros(0, np.int32),
                 kind=np.zeros(0, np.uint8), obj_ptr=np.zeros(1, np.int64), obj_ids=np.zeros(0, np.int32),
                 function_names=[], function_files=[], function_lines=np.zeros(0, np.int32), function_cats=[],
                 function_paths=[], thread_pid=np.zeros(0, np.int64), thread_tid=np.zeros(0, np.int64),
                 thread_names=[], thread_sort=np.zeros(0, np.int32), process_names=[],
                 meta={"source": source, "format": "v8-cpuprofile", "time_unit": "us"})
    t0 = float(calls["start"].min())
    trace = with_profile_lanes(base, calls, t0)
    name = os.path.basename(source).split(".")[0] or "profile"
    repairs = {}
    if bad["n"]:
        repairs["js_profile"] = {"count": bad["n"], "first": "the document", "action": REPAIRS["js_profile"]}
    trace.thread_names[0] = "main" + LANE_SUFFIX
    trace.process_names[0] = name
    trace.meta.update(clock_origin=t0, repairs=repairs, skipped={}, n_samples=m)
    return trace
