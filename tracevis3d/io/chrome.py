"""Chrome Trace Event JSON → Trace.

What VizTracer, Chrome, Perfetto, PyTorch and JAX write.  The bytes are walked
once by a numba scanner (`tracevis3d.kernels.jsonscan`; one event: `jsonevent`, tokens:
`jsontokens`) that writes per-event fields into flat arrays; strings are interned
(`jsonspans`), args checked (`jsonvalid`); trees are built by numba kernels.  No Python
object is made per event except for the few events that need it (metadata ``M`` events,
numbers outside the exact fast path, args of synchronisation calls).

Supported: object form (``traceEvents``, ``displayTimeUnit``; other keys skipped)
and array form, unterminated arrays and trailing commas; ``B``/``E`` and ``X``
(X sorted by (ts, -dur) per thread); ``M`` process/thread names and sort indices;
several pids/tids (numbers or strings); ``i``/``I``/``R`` instants; ``s``/``t``/``f``
flows with ``bp`` and ``bind_id``/``flow_in``/``flow_out``; counters (``C``) and async
slices (``b e n``, legacy ``S T F``) into the Trace's counter and async arrays
(`chrome_side`); V8's sampled JavaScript stacks (``P`` events ``Profile``/``ProfileChunk``)
as calls on lanes of their own (`chrome_profile`).  Async steps (``p``), other samples (``P``),
object events (``N O D``) and unknown phases are skipped and counted in
``trace.meta['skipped']``.

Repairs (``trace.meta['repairs']``: code → count, first offending event, action),
each also reported once as a `TraceWarning`; see REPAIRS below.

The importer is one pass of stages (scan → decode names → assemble → repair → bind flows; see
`load_chrome`) that share the repair record and the scan's rows (`_Scan`).

Over 600 lines: one format's reader as the stages its loader runs (scan, check, times,
samples, threads, names, rows, X calls, B/E pairing, assembly, nesting, functions, args,
objects, side tables), each a function of a few dozen lines sharing one scan context.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import warnings
from typing import Iterable

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import jsonevent as jev
from ..kernels import jsonrows as jr
from ..kernels import jsonscan as js
from ..kernels import jsonspans as jsp
from ..kernels import jsontokens as jt
from ..kernels import jsonvalid as jv
from ..kernels import sidetables as fs
from ..kernels.tree import nest_sorted_intervals
from ..kinds import MAX_OBJECTS_PER_CALL, classify_functions, objects_from_args, objects_from_names, working_waits
from ..model import KIND_OTHER, Trace, TraceFormatError, TraceWarning
from ..names import parse_function_name, parse_function_names
from . import chrome_profile, chrome_rows, filecopy, hermes
from .limits import DEFAULT_LIMITS, Limits, resolve_limits
from .nesting import sort_and_nest
from .sniff import content_hint
from .chrome_fast import (FAST, SIDE, FastSide, bind_flows, flow_categories, flow_event_buckets, flow_event_calls,
                          flow_order, flow_points)
from .chrome_memdump import DUMP_PHASES, dump_counters
from .chrome_memdump import REPAIRS as DUMP_REPAIRS
from .chrome_memory import MEMORY_EVENT, memory_counters
from .chrome_side import ASYNC_PHASES, SIDE_REPAIRS, counter_fields, counter_samples, series_units_from, side_tracks
from .chrome_writer import COUNTER_UNIT_EVENT

REPAIRS = {
    "truncated": "the event array is not closed (file cut short): kept every complete event",
    "partial_event": "the last event is cut short by the end of the file: dropped it",
    "trailing_data": "data after the end of the JSON document (a second document or garbage): ignored it",
    "e_unmatched": "E event with no open B of that name: dropped it",
    "e_mismatch": "E event whose name is deeper in the stack: also closed the calls opened after it",
    "unclosed": "B event never closed: closed it at the thread's last timestamp",
    "x_overlap": "call overlaps the end of its enclosing call on the same thread: clipped its end to the parent's end",
    "x_overlap_dropped": "call overlaps the end of its enclosing call on the same thread: dropped it",
    "out_of_order": "B/E events not in timestamp order in the file: sorted them (stable)",
    "no_ts": "event without a finite ts (or one beyond the time range: max_abs_time= to widen it): dropped it",
    "no_dur": "X event without dur or tdur: used a duration of 0",
    "negative_dur": "X event with a negative duration: used 0",
    "bad_dur": "X event with a NaN or infinite duration, or one ending beyond the time range: dropped it",
    "bad_utf8": "name is not valid UTF-8 or has a lone surrogate escape: replaced those with U+FFFD",
    "long_name": "name longer than max_name_chars: cut, and a hash of the whole name appended",
    "flow_unbound": "flow event with no call to bind to on its thread: dropped it",
    "bad_number": "a ts/dur value that is not a number: dropped the event",
    "bad_args": "args that Python's json cannot read: dropped them",
    "deep_args": "args nested deeper than max_args_nesting: dropped them",
    "big_args": "args longer than max_args_bytes: dropped them",
    "frame_cycle": "stackFrames parents that form a cycle: cut the cycle (that frame became a root)",
    "deep_stack": "stackFrames chain deeper than max_stack_depth: cut it there",
    "gzip_cut": "the gzip stream is cut short: kept what it inflated to",
    "gzip_corrupt": "the gzip stream is damaged: kept what it inflated to before the damage",
    "gzip_trailing": "bytes after the end of the gzip stream that are no gzip member: ignored them",
    "tracer_overflow": "VizTracer's buffer was full while it recorded (viztracer_metadata.overflow): it kept only the "
                       "calls that ended last, so the calls that ended earlier are missing (record again with a "
                       "larger tracer_entries)",
    **SIDE_REPAIRS,
    **chrome_profile.REPAIRS,
    **DUMP_REPAIRS,
}

_PH = {c: ord(c) for c in "BEXiIRMstfC"}
#: kept for callers that passed it; the limits live in tracevis3d.io.limits
DEFAULT_MAX_EVENTS = DEFAULT_LIMITS.max_events
_SKIPPED_NAMES = {
    "b": "async", "e": "async", "n": "async", "S": "async", "T": "async", "F": "async", "p": "async",
    "C": "counter", "P": "sample", "O": "object", "N": "object", "D": "object", "c": "clock_sync",
    "(": "context", ")": "context", "V": "memory_dump", "v": "memory_dump", "=": "mark", "G": "link",
}
# phases of counters and async slices (io.chrome_side), a table by phase byte: with no calls
# they still make a trace
_SIDE_PHASE = np.zeros(256, bool)
_SIDE_PHASE[np.frombuffer(ASYNC_PHASES, np.uint8)] = True  # counters are the scanner's side rows
#: each phase byte's class for `_rows_by_kind` (`jsonrows.rows_by_phase`)
_PHASE_CLASS = np.zeros(256, np.uint8)
for _c, _cls in (("BE", jr.PC_BE), ("X", jr.PC_X), ("iIR", jr.PC_INSTANT), ("stf", jr.PC_FLOW), ("M", jr.PC_META),
                 (ASYNC_PHASES.decode(), jr.PC_SIDE), ("P", jr.PC_PROFILE)):
    _PHASE_CLASS[np.frombuffer(_c.encode(), np.uint8)] = _cls
del _c, _cls
_FLOW_PHASE = chrome_rows.FLOW_PHASE  # v1 flow events: no name is read
_SURROGATE = re.compile("[\ud800-\udfff]")
# a repair cites side row s (`jsonscan.scan_events`: counters and v1 flow events the fast path did not
# take) as row SIDE + s, a fast event as row FAST + q (`chrome_fast.FastSide.cite`)


class _Repairs:
    def __init__(self, describe):
        self.items: dict = {}
        self.describe = describe

    def add(self, code: str, count: int, first_row: int | None = None, detail: str = ""):
        if count <= 0:
            return
        it = self.items.setdefault(code, {"count": 0, "first": None, "action": REPAIRS[code]})
        it["count"] += int(count)
        if it["first"] is None:
            if first_row is not None and first_row >= 0:
                it["first"] = self.describe(int(first_row))
            elif detail:
                it["first"] = detail


class _Recorded:
    """Repairs noted (``add`` as `_Repairs`') to be added later, in order (`replay`)."""

    def __init__(self):
        self.calls: list = []

    def add(self, *a, **k):
        self.calls.append((a, k))

    def replay(self, rep) -> None:
        for a, k in self.calls:
            rep.add(*a, **k)
        self.calls = []


#: side rows (counter and flow events) from which their samples and chain order are made on a
#: second thread (`_SideJob`) while the call tree is built
PARALLEL_SIDE_ROWS = 1 << 15


class _SideJob:
    """``f(*a)`` from now, and each stage `then` adds once it has ended, on threads of their own
    when ``threaded`` (the kernels release the GIL; a later stage's thread waits for the first's,
    so no thread is left waiting when a stage never comes), else at once.  `first` gives the first
    stage's output (to a later stage); `result` gives every stage's, in the order they were added
    (an exception of a stage is raised there: the later stages' first, in order)."""

    def __init__(self, threaded: bool, f, a):
        self.threaded = threaded
        self.out: list = []
        self.err: list = []
        self.threads: list = []
        self._add(f, a, None)

    def _add(self, f, a, after) -> None:
        k = len(self.out)
        self.out.append(None)
        self.err.append(None)

        def work():
            if after is not None:
                after.join()
            try:
                self.out[k] = f(*a)
            except BaseException as e:  # raised again by result(), never printed by the thread
                self.err[k] = e

        if self.threaded:
            t = threading.Thread(target=work, daemon=True)
            t.start()
            self.threads.append(t)
        else:
            work()

    def then(self, f, a) -> int:
        """Add stage ``f(*a)``; returns its number (for `stage`)."""
        self._add(f, a, self.threads[0] if self.threads else None)
        return len(self.out) - 1

    def stage(self, k: int):
        """Stage ``k``'s output once it has ended; None when it failed."""
        if self.threads:
            self.threads[k].join()
        return self.out[k]

    def result_of(self, k: int):
        """Stage ``k``'s output once it has ended; its exception raised here."""
        if self.threads:
            self.threads[k].join()
        if self.err[k] is not None:
            raise self.err[k]
        return self.out[k]

    def first(self):
        """The first stage's output once it has ended; None when it failed."""
        return self.stage(0)

    def result(self) -> list:
        for t in self.threads:
            t.join()
        for e in self.err[1:] + self.err[:1]:
            if e is not None:
                raise e
        return self.out


class _Text:
    """Strings for the tables: lone surrogates replaced, long ones cut (with a hash)."""

    def __init__(self, max_chars: int):
        self.max_chars = int(max_chars)
        self.raw_limit = 4 * self.max_chars + 16  # bytes of UTF-8 that can hold max_chars characters
        self.n_surrogate = 0
        self.n_long = 0
        self.first_surrogate = self.first_long = None

    def clean(self, s: str, whole=None, where=None) -> str:
        """``s`` made safe; ``whole``: the bytes of the full text when ``s`` is a
        prefix; ``where``: what to cite as the first occurrence of a repair."""
        if not s.isascii() and _SURROGATE.search(s):
            s = _SURROGATE.sub("\ufffd", s)
            self.n_surrogate += 1
            if self.first_surrogate is None:
                self.first_surrogate = where() if callable(where) else where
        if len(s) > self.max_chars or whole is not None:
            h = hashlib.blake2b(whole if whole is not None else s.encode("utf-8", "surrogatepass"),
                                digest_size=4).hexdigest()
            s = s[: self.max_chars] + "…" + h
            self.n_long += 1
            if self.first_long is None:
                self.first_long = where() if callable(where) else where
        return s

    def raw(self, raw: bytes, where=None) -> str:
        """Decoded bytes (invalid UTF-8 replaced), cleaned; ``where``: as `clean`'s."""
        if len(raw) > self.raw_limit:
            return self.clean(bytes(raw[: self.raw_limit]).decode("utf-8", "replace"), whole=raw, where=where)
        return self.clean(bytes(raw).decode("utf-8", "replace"), where=where)

    def value(self, v, where=None) -> str:
        """``str(v)`` of a decoded JSON value, cleaned (long values are cut before str());
        ``where``: as `clean`'s."""
        if isinstance(v, str):
            return self.clean(v, where=where)
        if isinstance(v, (dict, list)):
            import orjson

            try:
                return self.raw(orjson.dumps(v), where)
            except Exception:
                return self.clean(str(v)[: self.raw_limit], where=where)
        return self.clean(str(v), where=where)


def load_chrome(data, source: str = "<bytes>", *, keep_args: bool = True,
                kind_rules: Iterable | None = None, overlap: str = "clip", warn: bool = True,
                limits: Limits | None = None, _compressed_bytes: int | None = None,
                _input_repairs: list | None = None, **limit_options) -> Trace:
    """Parse Chrome Trace Event JSON ``data`` (bytes, or any buffer of bytes) into a `Trace`.

    ``overlap``: "clip" (default) clips a call that sticks out of its enclosing
    call; "drop" drops it instead.  ``kind_rules``: see `tracevis3d.kinds`.
    Limits (``max_events=``, ``max_name_chars=``, ...; or ``limits=``): see
    `tracevis3d.io.limits`.  Raises `TraceFormatError` (naming ``source`` and the
    byte, line:column and event) when the bytes are not a trace, hold no events
    or pass a limit; every repair is counted in ``trace.meta['repairs']`` and
    reported once as a `TraceWarning` with its count and first occurrence.

    The stages, in order: scan the bytes into rows (`_scan_rows`, `_check_scan`), read their
    numbers and the sampled profile (`_event_times`, `_read_samples`), key the threads
    (`_thread_keys`), intern and decode the names (`_intern_names`), assemble the calls (`_x_calls`,
    `_pair_begin_end`, `_assemble_calls`), the thread table (`_thread_table`), sort and nest them,
    repairing overlaps (`_nest_calls`), the function table, args and objects (`_function_table`,
    `_call_args`, `_call_objects`), then bind the flows and read the counters and async slices
    (`_flows_and_side`) that a second thread (`_SideJob`) prepared meanwhile.  The per-row arrays
    are dropped as soon as they are used up (memory, issue 26).
    """
    if overlap not in ("clip", "drop"):
        raise ValueError(f"overlap must be 'clip' or 'drop', got {overlap!r}")
    if kind_rules is not None:  # (read by several stages, one on a second thread: never a spent iterator)
        kind_rules = list(kind_rules)
    lim = resolve_limits(limits, limit_options)
    if limit_options:
        raise TypeError(f"load_chrome() got unexpected keyword arguments {sorted(limit_options)}")
    sc = _Scan(data, source, lim, _compressed_bytes)
    _scan_rows(sc)
    rep = _Repairs(sc.describe)
    for code, count, detail in _input_repairs or ():
        rep.add(code, count, detail=detail)
    _check_scan(sc, rep)
    ts, dur, tdur, v_ts, ff = _event_times(sc, rep)
    ts, dur, tdur = _read_samples(sc, rep, ts, dur, tdur, ff)
    ph = sc.ss.as_dtype(jev.S_PH, np.uint8)  # (a phase is one byte: 10^7 rows in 10 MB, not 40)
    v_ph = sc.vss[:, jev.S_PH]
    v_c_rows = np.flatnonzero(v_ph == _PH["C"])
    v_finite = np.abs(v_ts) <= lim.max_abs_time
    v_is_flow = _FLOW_PHASE[v_ph & 255]
    flow_rows = np.flatnonzero(v_is_flow & v_finite & ((sc.vss[:, jev.S_FLAGS] & jev.FL_ID) != 0))  # side rows
    # a large file read for this load and little read of it later is given back while its names are
    # interned (`_give_back_plan`), and its threads keyed after that (memory: the rows' keys are not
    # held beside the whole file); else the threads are keyed first and the flows ordered meanwhile
    give_back = _give_back_plan(sc, ph)
    if give_back is None:
        keys = _thread_keys(sc)
        side_job = _side_job(sc, keys, v_ts, flow_rows, v_c_rows)
    text = _Text(lim.max_name_chars)
    names, name_id, v_name_id, fast_name_id = _intern_names(sc, rep, ph, v_c_rows, text, give_back)
    if give_back is not None:
        keys = _thread_keys(sc)
        side_job = _side_job(sc, keys, v_ts, flow_rows, v_c_rows)
    # the names parsed (file, line, path: Python, a few µs each) on a second thread while the calls
    # are assembled, sorted and nested, whose numpy passes and kernels release the GIL
    apart = len(names) >= PARALLEL_PARSE_NAMES
    parsing = _SideJob(apart, _parse_names, (names, apart))
    # then each name's kind (`classify_functions`: a name's kind is its own), on that thread too
    parsing.then(classify_functions, (names, kind_rules))
    sc.ii.drop(jev.I_NAME_OFF, jev.I_TID)  # memory (issue 26): the names are interned, the threads keyed
    sc.ss.drop(jev.S_NAME_LEN)
    _release_file(sc, ph, names, keys, give_back)  # the file's bytes given back when little of them is read later
    rows = _rows_by_kind(sc, rep, ph, ts, v_is_flow, v_finite)
    # the counters' samples and the flows' chain order need no call: on a second thread while the
    # call tree is built (their repairs recorded, added where they were; no text decoded there)
    side_rec = _Recorded()
    side_job.then(counter_samples, (sc.buf, sc.vii, sc.vss, v_ts, v_c_rows, v_name_id, lim.max_abs_time, side_rec,
                                    sc.seed, lim.max_args_nesting, SIDE, sc.fast, fast_name_id))
    del v_ph, v_is_flow, ph
    x_at = _as_block(rows.x)  # (a VizTracer trace's X events are one run of rows: read as views, not gathered)
    x_rows, x_len, x_ts = _x_calls(rep, rows.x, sc.ss[x_at, jev.S_FLAGS], dur[x_at], tdur, ts, lim.max_abs_time)
    del dur, tdur, ff
    last_ts = _thread_last_ts(sc, keys, ts, rows.finite_ts, x_rows, x_ts, x_len, v_ts, v_finite)
    rows.finite_ts = None
    be_call_rows, b_start, b_end = _pair_begin_end(sc, rep, rows.be, keys.key_id, ts, name_id, last_ts)
    c_row, c_start, c_end, c_key, c_ord, apart_calls = _assemble_calls(
        sc, rep, keys, ts, (x_rows, x_ts, x_len), (be_call_rows, b_start, b_end))
    del x_rows, x_len, x_ts, be_call_rows, b_start, b_end
    # the times still needed: of instants, flows, counters and async events (memory, issue 26)
    ts = chrome_rows.kept_values(ts, np.union1d(rows.inst, rows.side_all))
    v_c_finite = v_c_rows[v_finite[v_c_rows]]  # counters with a time (side rows)

    # --- threads with calls, 't'-scoped instants or flows; V8's profiles and samples apart as lanes
    inst_scope = sc.ss[rows.inst, jev.S_SCOPE]
    inst_on_thread = (inst_scope != ord("g")) & (inst_scope != ord("p"))
    # each thread key's calls counted once, its indices made numpy's index type once (numpy cast
    # the int32 keys to intp at each of three uses: a marking, this count and the gather of the
    # calls' threads below; 0.13 s of a 10^7-call load)
    c_key = c_key.astype(np.intp)
    calls_of_key = np.bincount(c_key, minlength=keys.n)[:keys.n]
    used = calls_of_key > 0
    used[keys.key_id[rows.inst[inst_on_thread]]] = True
    meta_info = _read_metadata(sc.bytes_at, sc.ii, sc.ss, rows.meta, keys.key_id, keys.key_pid, text, sc.describe)
    skipped = _skipped_dict(sc.skip_counts)
    lanes = _profile_lanes(sc, rep, keys, rows, names, name_id, meta_info, skipped, apart_calls, text, kind_rules)
    inst_key = keys.key_id[rows.inst]
    keys.key_id = None  # memory (issue 26): the rows' thread keys are used up
    n_counters = v_c_finite.size + sc.fast.n_counter_events  # counter events with a time
    _check_calls_or_side(sc, used, rows, n_counters, lanes.js_trace, skipped)
    # events per thread: lanes past the cap
    weight = calls_of_key + np.bincount(inst_key[inst_on_thread], minlength=keys.n)[:keys.n]
    del calls_of_key
    threads = _thread_table(sc, keys, used, meta_info, text, (weight, lim.max_lanes_read, rep))

    # --- sort calls into per-thread pre-order and nest them
    c_thread = threads.rank[c_key]
    del c_key
    # meanwhile the flow events are grouped by their calls' time buckets (`_bucket_flow_events`)
    bucket_stage = side_job.then(_bucket_flow_events, (side_job, threads.rank, c_thread, c_start, threads.n))
    c_row, c_start, c_end, c_thread, c_ord, parent, depth, end_index = _nest_calls(
        sc, rep, overlap, threads.n, c_row, c_start, c_end, c_thread, c_ord)
    # the flow events bound to their calls on a thread of their own once their chain order is
    # known (`_flows_in_order`), while this one names the calls, reads their args and kinds
    thread_ranges = np.searchsorted(c_thread, np.arange(threads.n + 1, dtype=c_thread.dtype))  # (no int64 copy)
    side_job.then(_bind_flow_events, (side_job, bucket_stage, threads.rank, c_start, c_end, parent, thread_ranges))
    # calls expanded from samples (no args, no flows of their own)
    sample_call = c_ord >= sc.ii.shape[0] if sc.sampled else np.zeros(c_row.shape[0], bool)
    t0 = _origin(sc, c_start, lanes, rows, ts, n_counters, v_ts, v_c_finite)

    # --- functions, args, kinds and objects
    func, names, function_names, function_cats, parsed, fn_name_ids = _function_table(sc, c_row, sample_call, names,
                                                                                      name_id, text, parsing)
    has_args = _call_args(sc, rep, c_row, sample_call)
    fkind = _function_kinds(parsing, fn_name_ids, names, kind_rules)
    del fn_name_ids
    kind = fkind[func] if func.size else np.zeros(0, np.uint8)
    kind[working_waits(kind, c_start, c_end, end_index)] = KIND_OTHER  # a wrapper named like a wait
    obj_ptr, obj_ids, object_names = _call_objects(sc, c_row, func, kind, has_args, function_names, text)
    if keep_args and has_args.any():
        a_calls = np.flatnonzero(has_args).astype(np.int32)
        args_blob, args_ptr = jsp.gather_spans(sc.buf, sc.ii[c_row[a_calls], jev.I_ARGS_OFF],
                                               sc.ss[c_row[a_calls], jev.S_ARGS_LEN].astype(np.int64))
    else:
        a_calls = np.zeros(0, np.int32)
        args_blob, args_ptr = np.zeros(0, np.uint8), np.zeros(1, np.int64)
    del has_args

    # --- instants
    i_thread = np.where(inst_on_thread, threads.rank[inst_key], -1).astype(np.int32)
    i_scope = np.where(inst_on_thread, ord("t"), inst_scope).astype(np.uint8)
    i_names_raw = name_id[rows.inst]
    i_uniq, i_inv = (np.unique(i_names_raw, return_inverse=True) if rows.inst.size
                     else (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    instant_names = [names[k] if k >= 0 else "(unnamed)" for k in i_uniq]

    # --- flows, counters and async slices
    flows, side = _flows_and_side(sc, rep, side_job, side_rec, c_row, sample_call, ts, rows, name_id, names, t0,
                                  keys.key_pid[inst_key], meta_info, text)
    del side_job, side_rec
    sc.fast = None  # describe() cites no fast event after this
    # memory (issue 26): the rows and the per-row arrays are done with before the Trace is made (no
    # repair cites an event after this: describe() would find its columns gone)
    instant_ts = (ts[rows.inst] - t0).astype(np.float64)
    sc.ii.drop(*range(jev.N_I))
    sc.ss.drop(*range(jev.N_S))
    sc.vii.drop(*range(jev.N_I))
    sc.vss.drop(*range(jev.N_S))
    del ts, name_id, c_ord, sample_call, v_ts, v_name_id, v_finite, v_c_rows, v_c_finite, fast_name_id
    c_start -= t0  # the calls' times from the origin, in place
    c_end -= t0
    start, end = c_start, c_end
    if not c_row.size and not rows.inst.size and not side["counter_ts"].size and not side["async_start"].size \
            and lanes.js_trace is None:
        raise TraceFormatError(  # counters without a numeric value, async ends alone, ...
            f"{source}: no call events (B/E or X), instants, counter samples or async slices: nothing to show "
            f"({sc.seen} events up to {sc.where(int(sc.info[js.INFO_DOC_END]) - 1)}; skipped: {skipped or 'none'}; "
            f"repairs: {', '.join(rep.items) or 'none'})")
    meta = _trace_meta(sc, rep, t0, c_end, text, skipped)
    trace = Trace(
        func=func, start=start.astype(np.float64, copy=False), end=end.astype(np.float64, copy=False), depth=depth,
        parent=parent, end_index=end_index, thread=c_thread.astype(np.int32, copy=False),
        kind=np.ascontiguousarray(kind, np.uint8),
        obj_ptr=obj_ptr, obj_ids=obj_ids,
        function_names=function_names, function_files=[p.file for p in parsed],
        function_lines=np.array([p.line for p in parsed], np.int32), function_cats=function_cats,
        function_paths=[p.path for p in parsed],
        thread_pid=threads.pid, thread_tid=threads.tid, thread_names=threads.names,
        thread_sort=threads.sort, process_names=threads.process_names, object_names=object_names,
        instant_ts=instant_ts, instant_name=i_inv.astype(np.int32),
        instant_thread=i_thread, instant_scope=i_scope, instant_pid=keys.key_pid[inst_key].astype(np.int64),
        instant_names=instant_names,
        **flows, args_call=a_calls, args_ptr=args_ptr, args_blob=args_blob, meta=meta, **side,
    )
    if lanes.js_trace is not None:
        trace = chrome_profile.with_profile_lanes(trace, lanes.js_trace, t0, lanes.js_lanes, lanes.sampled_names)
        trace.meta["sampling_interval_us"] = lanes.js_trace.meta["sampling_interval_us"]
    if lanes.samples_trace is not None:
        trace = chrome_profile.with_profile_lanes(trace, lanes.samples_trace, t0, lanes.samples_lanes,
                                                  lanes.sampled_names, chrome_profile.SAMPLES_LANE_SUFFIX,
                                                  "sample_lanes")
    if warn:
        for code, it in rep.items.items():
            warnings.warn(f"{source}: {it['count']} × {it['action']}; first: {it['first']}",
                          TraceWarning, stacklevel=3)
    return trace


class _Scan:
    """One file's scan (`_scan_rows`) and how to cite it: the event rows ``ii``/``ss``/``ff`` (the
    sampled profile's samples and stack frames appended past the ``n_event_rows`` events), the side
    rows ``vii``/``vss``/``vff`` (counters and v1 flow events the fast path did not take; a repair
    cites side row s as row SIDE + s), the fast path's events ``fast`` (cited as FAST + q), the scan's
    outcome (``status``, ``err_pos``, ``info``, ``skip_counts``) and the load's settings."""

    def __init__(self, data, source: str, lim: Limits, compressed_bytes: int | None):
        self.buf = np.frombuffer(data, np.uint8)
        self.nbytes = self.buf.shape[0]
        #: the file's copy `load` read, which this load may give back (`_release_file`), and once
        #: it has, the file read again for what is still needed (`filecopy.LateFile`)
        self.copy = filecopy.owned(data) if compressed_bytes is None else None
        self.late = None
        self.part_names = None  # the names interned by the parallel scan's parts (`chrome_rows.PartNames`)
        self.source = source
        self.lim = lim
        self.compressed_bytes = compressed_bytes
        #: what the sampled-profile limit is measured on (`Limits.sample_calls`)
        self.input_bytes = compressed_bytes if compressed_bytes is not None else self.nbytes
        self.max_events = lim.max_events if compressed_bytes is None else lim.events_for_compressed(compressed_bytes)
        self.in_what = " of the decompressed data" if compressed_bytes is not None else ""
        self.seed = int.from_bytes(os.urandom(8), "little") >> 1  # keyed hashing: files cannot pick collisions
        self.sampled = False  # a sampled profile (samples + stackFrames) was read (`_read_samples`)
        self.samples_apart = False  # ... as lanes of their own beside the events' calls
        self.n_samples = 0

    def bytes_at(self, off: int, ln: int) -> bytes:
        """The file's bytes [off, off + ln): from the scanned copy, or once it is given back from the
        file (`filecopy.LateFile`)."""
        if self.late is not None:
            return self.late.read(off, ln)
        return bytes(self.buf[off: off + ln])

    @property
    def reader(self):
        """What `_span_texts` reads spans from: the bytes, or once given back the file."""
        return self.buf if self.late is None else self.late

    def line_col(self, pos: int) -> tuple:
        return jt.line_col(self.buf, pos) if self.late is None else self.late.line_col(pos)

    def where(self, pos: int) -> str:
        pos = int(min(max(pos, 0), self.nbytes))
        line, col = self.line_col(pos)
        return f"byte {pos}{self.in_what} (line {line}, column {col})"

    def snippet(self, pos: int, width: int = 60) -> str:
        a = max(0, pos - width // 3)
        return self.bytes_at(a, width).decode("utf-8", "replace").replace("\n", "\\n")

    def too_many(self) -> str:
        if self.max_events == self.lim.max_events:
            return f"more than {self.max_events} events (max_events= to allow more)"
        return (f"more than {self.max_events} events for {self.compressed_bytes} compressed bytes: a decompression "
                f"bomb? (gzip_bytes_per_event= or max_events= to allow more)")

    def describe(self, row: int) -> str:
        """A repair's first occurrence: the event (or sample, frame) of row ``row``."""
        if FAST <= row < SIDE:
            off, ln, ordn = self.fast.cite(row - FAST)
        else:
            rows_i, rows_s, r = _row_in(row, self.ii, self.ss, self.vii, self.vss)
            off, ln, ordn = int(rows_i[r, jev.I_EV_OFF]), int(rows_s[r, jev.S_EV_LEN]), int(rows_s[r, jev.S_ORD])
        line, col = self.line_col(off)
        text = self.bytes_at(off, min(ln, 160)).decode("utf-8", "replace").replace("\n", " ")
        what = f"event #{ordn}" if row < self.n_event_rows or row >= FAST else "stack sample or frame"
        return f"{what} (byte {off}{self.in_what}, line {line}, column {col}): {text}{'…' if ln > 160 else ''}"

    def position(self, rows, side: bool) -> np.ndarray:
        """Where rows stand in the file's order: events by their byte offset, the samples and
        stack frames (rows past the events) after every event."""
        rows = np.asarray(rows, np.int64)
        if side:
            return self.vii[rows, jev.I_EV_OFF]
        return np.where(rows < self.n_event_rows, self.ii[rows, jev.I_EV_OFF], self.nbytes + rows)

    def earliest(self, row, side_row) -> int | None:
        """The first in the file of an event row and a side row (None: none; -1 also none)."""
        row = None if row is None or row < 0 else int(row)
        side_row = None if side_row is None or side_row < 0 else int(side_row)
        if side_row is None:
            return row
        if row is None or self.position([side_row], True)[0] < self.position([row], False)[0]:
            return SIDE + side_row
        return row


def _scan_rows(sc: _Scan) -> None:
    """Scan the bytes (on two threads for a large file, `_scan_parallel`) into ``sc``'s rows."""
    buf, lim = sc.buf, sc.lim
    scanned = None
    if sc.nbytes >= PARALLEL_SCAN_BYTES:
        # (the names interned in the scan, `chrome_rows.PartNames`, unless the file's copy may be given
        # back while they are interned after it: `_give_back_plan`)
        sc.part_names = None if _copy_releasable(sc) else []
        scanned = _scan_parallel(buf, sc.max_events, lim.max_nesting, sc.seed, lim.max_abs_time,
                                 names_out=sc.part_names)
    if scanned is None:
        cap = _initial_rows(buf, sc.max_events)
        fx = fs.new_fast(max(cap // 4, 64), sc.seed, float(lim.max_abs_time))
        ii, ss, ff, n, status, err_pos, info, skip_counts, vi, vs, vf, nv, fx = js.scan_trace(
            buf, cap, sc.max_events, fx, lim.max_nesting)
        ii, ss, ff = chrome_rows.from_rows(ii, ss, ff, n)
        vii, vss, vff = chrome_rows.from_rows(vi, vs, vf, nv)
        fast_outs = [chrome_rows.FastOut(fx)]
        fast_outs[0].keep(fx)
        del vi, vs, vf, fx
    else:
        ii, ss, ff, n, status, err_pos, info, skip_counts, vii, vss, vff, nv, fast_outs = scanned
    del scanned
    sc.ii, sc.ss, sc.ff, sc.n_event_rows = ii, ss, ff, n
    sc.vii, sc.vss, sc.vff, sc.nv = vii, vss, vff, nv
    sc.status, sc.err_pos, sc.info, sc.skip_counts = status, err_pos, info, skip_counts
    sc.fast = FastSide(buf, fast_outs, sc.seed)  # what the fast path took (counters, flow events)
    sc.seen = int(info[js.INFO_SEEN])


def _check_scan(sc: _Scan, rep: _Repairs) -> None:
    """Raise `TraceFormatError` when the scan failed or found no event; else note the repairs of
    the document itself (cut short, trailing data)."""
    source, where, nbytes, info, seen = sc.source, sc.where, sc.nbytes, sc.info, sc.seen
    if sc.status < 0:
        _raise_scan_error(sc)
    partial = int(info[js.INFO_CUT_EVENT]) if info[js.INFO_CUT_EVENT] >= 0 else None
    if sc.status == jev.TRUNCATED:
        rep.add("truncated", 1, detail=f"end of file at {where(nbytes)} after {seen} complete events")
        if partial is not None:
            rep.add("partial_event", 1, detail=f"event #{seen} at {where(partial)}: "
                                               f"{bytes(sc.buf[partial: partial + 80])!r}")
    else:
        p = jt.first_non_ws(sc.buf, int(info[js.INFO_DOC_END]))
        if p >= 0:
            rep.add("trailing_data", 1, detail=f"{nbytes - p} bytes from {where(p)}: {sc.snippet(p)!r}")
    if sc.n_event_rows == 0 and sc.nv == 0 and not sc.fast.n_events and info[js.INFO_FRAMES] < 0:
        if sc.status == jev.TRUNCATED and seen == 0 and partial is not None:
            raise TraceFormatError(
                f"{source}: the file is cut short at {where(nbytes)} inside the first event, "
                f"which starts at {where(partial)}: no complete event")
        if seen:
            raise TraceFormatError(
                f"{source}: no call events (B/E or X) and no instants: nothing to show "
                f"({seen} events up to {where(int(info[js.INFO_DOC_END]) - 1)}; "
                f"skipped: {_skipped_dict(sc.skip_counts) or 'none'})")
        raise TraceFormatError(
            f"{source}: no trace events: the event array ends at {where(max(int(sc.err_pos), 0))} and is empty"
            if sc.status == jev.OK else
            f"{source}: no trace events: the file ends at {where(nbytes)} before the first one")


def _raise_scan_error(sc: _Scan) -> None:
    """The `TraceFormatError` of a failed scan (``sc.status`` < 0): what failed, where."""
    source, where, nbytes, status, err_pos = sc.source, sc.where, sc.nbytes, sc.status, sc.err_pos
    if status == jev.ERR_NOT_JSON:
        if err_pos >= nbytes:
            raise TraceFormatError(f"{source}: empty file, no trace events (it ends at {where(nbytes)})")
        raise TraceFormatError(
            f"{source}: not a Chrome trace (JSON object or array expected) at {where(err_pos)}: "
            f"{sc.snippet(err_pos)!r}{content_hint(sc.buf[:16])}")
    if status == jev.ERR_NO_EVENTS_KEY:
        if err_pos >= nbytes:
            raise TraceFormatError(
                f"{source}: JSON object without a 'traceEvents' array: the file ends at {where(nbytes)} "
                f"before one")
        raise TraceFormatError(
            f"{source}: JSON object without a 'traceEvents' array (the object ends at {where(err_pos)})")
    what = {jev.ERR_SYNTAX: "invalid JSON", jev.ERR_EVENT_NOT_OBJECT: "an event that is not a JSON object",
            jev.ERR_TOO_DEEP: f"JSON nested deeper than {sc.lim.max_nesting} levels (max_nesting= to allow more)",
            jev.ERR_NO_COMMA: "a ',' missing before this event or key",
            jev.ERR_DUP_EVENTS: "a second 'traceEvents' key",
            jev.ERR_TOO_MANY: sc.too_many()}.get(status, "invalid JSON")
    raise TraceFormatError(
        f"{source}: {what} at {where(err_pos)} in event #{sc.seen}: {sc.snippet(err_pos)!r}"
        f"{content_hint(sc.buf[:16])}")


def _event_times(sc: _Scan, rep: _Repairs):
    """The event rows' ts, dur, tdur and the side rows' ts, the numbers outside the scanner's fast
    path re-parsed (`_reparse_slow_numbers`; a value that is no number is a ``bad_number`` repair).
    Returns (ts, dur, tdur, side ts, the rows' remaining float columns: tdur is written in place)."""
    buf, ii, ss, ff, vii, vss, vff = sc.buf, sc.ii, sc.ss, sc.ff, sc.vii, sc.vss, sc.vff
    sc.ff = None
    ts, dur = ff.take(jev.F_TS), ff.take(jev.F_DUR)
    tdur = ff.column(jev.F_TDUR)  # rarely given: read and written in place, not made whole
    nbad, firsts = _reparse_slow_numbers(buf, ii, ss, ts, dur, tdur)
    v_ts = vff.take(jev.F_TS)  # the side rows' dur and tdur: only re-parsed (a bad one is a repair)
    nbad_v, firsts_v = _reparse_slow_numbers(buf, vii, vss, v_ts, vff.column(jev.F_DUR),
                                             vff.column(jev.F_TDUR))
    # the first bad ts in the file, else the first bad dur, else tdur
    rep.add("bad_number", nbad + nbad_v,
            next((r for r in map(sc.earliest, firsts, firsts_v) if r is not None), None))
    vff.drop(*range(jev.N_F))
    return ts, dur, tdur, v_ts, ff


def _read_samples(sc: _Scan, rep: _Repairs, ts, dur, tdur, ff):
    """A sampled profile (``samples`` + ``stackFrames``): its rows appended to the event rows
    (``sc.ii``, ``sc.ss``; ``sc.sampled``, ``sc.n_samples``), the threads' calls when the events
    hold none, else lanes of their own beside the events' (``sc.samples_apart``).  Returns
    (ts, dur, tdur) of every row."""
    buf, ss, info, max_t = sc.buf, sc.ss, sc.info, sc.lim.max_abs_time
    frames_at, samples_at = int(info[js.INFO_FRAMES]), int(info[js.INFO_SAMPLES])
    sampled = None
    if frames_at >= 0 and samples_at >= 0:
        ph = ss[:, jev.S_PH]
        ok_t = np.isfinite(ts) & (np.abs(ts) <= max_t)
        x_ok = (ph == _PH["X"]) & ok_t
        inst = (ph == _PH["i"]) | (ph == _PH["I"]) | (ph == _PH["R"])
        scope = ss[:, jev.S_SCOPE]
        sc.samples_apart = bool((x_ok | ((ph == _PH["B"]) & ok_t) | (inst & ok_t & (scope != ord("g"))
                                                                     & (scope != ord("p")))).any())
        try:
            sampled = _scan_sampled(buf, samples_at, frames_at, sc.max_events, sc.lim, sc.source, sc.where,
                                    sc.too_many)
        except TraceFormatError as e:
            if not sc.samples_apart:
                raise
            rep.add("samples_unread", 1, detail=str(e).split(": ", 1)[-1])  # the events still load
            sc.samples_apart = False
    elif sc.n_event_rows == 0 and sc.nv == 0 and not sc.fast.n_events:  # (counters alone load: "no calls")
        raise TraceFormatError(f"{sc.source}: no call events, and a 'stackFrames' object without 'samples' "
                               f"(it starts at {sc.where(frames_at)})")
    if sampled is None:
        return ts, dur, tdur
    ii2, ss2, ff2, n_samples = sampled
    ts2, dur2, tdur2 = ff2.take(jev.F_TS), ff2.take(jev.F_DUR), ff2.take(jev.F_TDUR)
    nbad, firsts = _reparse_slow_numbers(buf, ii2, ss2, ts2, dur2, tdur2)
    bad_first = next((r for r in firsts if r is not None), None)
    sc.ii, sc.ss = sc.ii.concat(ii2), sc.ss.concat(ss2)
    sc.sampled, sc.n_samples = True, n_samples
    # (cited after the join: a sample's row follows the events')
    rep.add("bad_number", nbad, None if bad_first is None else bad_first + sc.n_event_rows)
    return np.concatenate([ts, ts2]), np.concatenate([dur, dur2]), np.concatenate([ff.take(jev.F_TDUR), tdur2])


def _side_job(sc: _Scan, keys, v_ts, flow_rows, v_c_rows) -> "_SideJob":
    """The v1 flow events (side rows ``flow_rows``: finite ts and an id; and the fast path's) in
    chain order: they need no call and no name, so on a second thread from here, while the call
    tree is built; the counters' samples follow them there (`_SideJob.then`)."""
    return _SideJob(PARALLEL_SIDE_ROWS <= v_c_rows.size + flow_rows.size + sc.fast.n_events,
                    _flows_in_order, (sc.buf, sc.vii, sc.vss, v_ts, flow_rows, keys.v_key_id, sc.fast,
                                      keys.f_key_id, sc.seed))


class _ThreadKeys:
    """Every (pid, tid) of the file numbered in the order the file first uses it: ``key_id`` of each
    row, ``key_first`` (its first row, -1 for keys only side rows or fast events have),
    ``key_pid``/``key_tid`` of each key, ``v_key_id``/``f_key_id`` of each side row / fast-path key,
    ``side_pos``/``side_row`` (a key's first use by a side row or fast event: offset and row)."""

    def __init__(self, key_id, key_first, key_pid, key_tid, v_key_id, f_key_id, side_pos, side_row):
        self.key_id, self.key_first, self.key_pid, self.key_tid = key_id, key_first, key_pid, key_tid
        self.v_key_id, self.f_key_id, self.side_pos, self.side_row = v_key_id, f_key_id, side_pos, side_row
        self.n = key_pid.shape[0]


def _thread_keys(sc: _Scan) -> _ThreadKeys:
    """The thread keys of the event rows, the side rows and the fast path's, in one numbering."""
    ii = sc.ii
    # (a block of rows at a time: no int64 copy of either column, memory)
    key_id, key_first = chrome_rows.interned_pairs(lambda lo, hi: (ii[lo:hi, jev.I_PID], ii[lo:hi, jev.I_TID]),
                                                   ii.shape[0], sc.seed)
    key_pid, key_tid = ii[key_first, jev.I_PID], ii[key_first, jev.I_TID]  # each thread key's pid, tid
    # the thread keys of the side rows and the fast path's, in the same numbering (keys only they
    # have come after): their first use (side_pos) and its row (side_row)
    v_key_id, f_key_id, side_pos, side_row, key_pid, key_tid = _side_keys(sc.vii, sc.fast, key_pid, key_tid,
                                                                          sc.seed)
    if sc.nv or sc.fast.k_pid.size:  # numbered in the order the file first uses them, as if all were rows
        n_g = key_first.shape[0]
        pos = np.full(key_pid.shape[0], np.iinfo(np.int64).max, np.int64)
        pos[:n_g] = sc.position(key_first, False)
        w = np.flatnonzero(side_pos >= 0)
        pos[w] = np.minimum(pos[w], side_pos[w])
        perm = np.argsort(pos, kind="stable")
        if np.any(perm != np.arange(perm.size)):
            new_of = np.empty(perm.size, np.int32)
            new_of[perm] = np.arange(perm.size, dtype=np.int32)
            key_id, v_key_id, f_key_id = new_of[key_id], new_of[v_key_id], new_of[f_key_id]
            key_pid, key_tid, side_pos, side_row = key_pid[perm], key_tid[perm], side_pos[perm], side_row[perm]
            key_first = np.concatenate([key_first, np.full(perm.size - n_g, -1, key_first.dtype)])[perm]
    return _ThreadKeys(key_id, key_first, key_pid, key_tid, v_key_id, f_key_id, side_pos, side_row)


def _intern_names(sc: _Scan, rep: _Repairs, ph, v_c_rows, text: _Text, give_back=None):
    """The names of the event rows (flows are matched by category and id: not named), of the
    counters (side rows ``v_c_rows`` and the fast path's) in one table, numbered in the order of
    the file, decoded (`_decode_names`); the file's copy given back meanwhile by ``give_back``
    (`_NameGiveBack`, or None).  Returns (names, name id of each row, of each side row, of each
    fast-path name)."""
    buf, ii, ss, vii, vss, fast, seed = sc.buf, sc.ii, sc.ss, sc.vii, sc.vss, sc.fast, sc.seed
    n_event_rows, n_rows = sc.n_event_rows, ii.shape[0]
    if sc.sampled:  # a frame without a name is named by its id
        fr = np.arange(n_event_rows + sc.n_samples, n_rows)
        noname = fr[ss[fr, jev.S_NAME_LEN] < 0]
        ii[noname, jev.I_NAME_OFF] = ii[noname, jev.I_ARGS_OFF]
        ss[noname, jev.S_NAME_LEN] = ss[noname, jev.S_ARGS_LEN]

    def names_of(lo, hi):  # a block of rows (no int64 copy of a whole column: memory)
        name_len = ss[lo:hi, jev.S_NAME_LEN]
        named = name_len >= 0
        ev = min(hi, n_event_rows)
        if ev > lo:  # flows are matched by category and id
            named[: ev - lo] &= ~_FLOW_PHASE[ph[lo:ev] & 255]
        return ii[lo:hi, jev.I_NAME_OFF], np.maximum(name_len, 0).astype(np.int64), named

    merged = None
    if give_back is None and not sc.sampled and sc.part_names and sum(p.n for p in sc.part_names) == n_rows:
        merged = chrome_rows.merged_part_names(buf, sc.part_names, seed)  # (interned as the scan went)
    sc.part_names = None
    name_id, name_first = merged if merged is not None else chrome_rows.interned_spans(buf, names_of, n_rows, seed,
                                                                                       give_back)
    del merged
    # the counters' names (side rows, and the fast path's: a first event of each) in the same table:
    # the names numbered in the order of the file
    cite = name_first
    name_offs, name_lens = ii[name_first, jev.I_NAME_OFF], ss[name_first, jev.S_NAME_LEN].astype(np.int64)
    name_escs = (ss[name_first, jev.S_FLAGS] & jev.FL_NAME_ESC) != 0
    v_name_id = np.full(sc.nv, -1, np.int32)
    vc_named = v_c_rows[vss[v_c_rows, jev.S_NAME_LEN] >= 0]
    n_fn = fast.n_off.size
    fast_name_id = np.zeros(n_fn, np.int32)
    if vc_named.size or n_fn:
        vc_id, vc_first = jsp.intern_spans(buf, vii[vc_named, jev.I_NAME_OFF],
                                           vss[vc_named, jev.S_NAME_LEN].astype(np.int64),
                                           np.ones(vc_named.size, bool), seed)
        vr = vc_named[vc_first]  # a side row of each distinct counter name
        order = np.argsort(np.concatenate([sc.position(name_first, False), sc.position(vr, True), fast.n_ev_off]),
                           kind="stable")
        name_offs = np.concatenate([name_offs, vii[vr, jev.I_NAME_OFF], fast.n_off])[order]
        name_lens = np.concatenate([name_lens, vss[vr, jev.S_NAME_LEN].astype(np.int64), fast.n_len])[order]
        name_escs = np.concatenate([name_escs, (vss[vr, jev.S_FLAGS] & jev.FL_NAME_ESC) != 0, fast.n_esc])[order]
        u_id, u_first = jsp.intern_spans(buf, name_offs, name_lens, np.ones(order.size, bool), seed)
        u_of = np.empty(order.size, np.int32)
        u_of[order] = u_id
        k0, k1 = name_first.shape[0], name_first.shape[0] + vr.size
        if k0:
            name_id = np.where(name_id >= 0, u_of[:k0][np.maximum(name_id, 0)], -1).astype(np.int32)
        v_name_id[vc_named] = u_of[k0:k1][vc_id]
        fast_name_id = u_of[k1:]
        cite = np.concatenate([name_first, SIDE + vr, FAST + np.arange(n_fn, dtype=np.int64)])[order][u_first]
        name_offs, name_lens, name_escs = name_offs[u_first], name_lens[u_first], name_escs[u_first]
        del vc_id, vc_first, vr, order, u_id, u_first, u_of
    names, remap = _decode_names(buf, name_offs, name_lens, name_escs, cite, rep, text, sc.describe)
    if remap.size:
        _renumber(name_id, remap)
        v_name_id = np.where(v_name_id >= 0, remap[np.maximum(v_name_id, 0)], -1).astype(np.int32)
        fast_name_id = remap[fast_name_id].astype(np.int64)
    return names, name_id, v_name_id, fast_name_id


def _renumber(ids, remap) -> None:
    """``ids`` (int32, -1: none) replaced by ``remap[ids]`` in place, a block of rows at a time (no
    whole temporary: 10^7 rows' ids took 75 MB more while they were renumbered); nothing to do
    where ``remap`` is the identity (names that decode alike are rare)."""
    if np.array_equal(remap, np.arange(remap.size)):
        return
    for lo in range(0, ids.size, chrome_rows.INTERN_BLOCK):
        block = ids[lo: lo + chrome_rows.INTERN_BLOCK]
        named = block >= 0
        block[named] = remap[block[named]]


#: a file's copy from this size on is given back once its names are read (`_release_file`)
RELEASE_BYTES = 256 << 20
# phases whose events are read from the bytes after the release point (async events: their ids and
# args; V8's profiles): a file that has them keeps its bytes
_KEEP_BYTES_PHASE = _SIDE_PHASE.copy()
_KEEP_BYTES_PHASE[ord("P")] = True
#: the same phases as single bytes (`_has_phase`)
_KEEP_BYTES_PHASES = [bytes([c]) for c in np.flatnonzero(_KEEP_BYTES_PHASE).tolist()]


def _has_phase(ph, phases: list) -> bool:
    """Whether a row's phase (``ph``: one byte a row) is one of ``phases`` (single bytes): one
    `bytes.find` (memchr) each over a copy of the column's bytes; the lookup of every row's phase
    in a table, then ``any``, took 16-80 ms of a 10^7-call load (numpy's uint8 indices made
    intp first), this 2 ms."""
    column = np.ascontiguousarray(ph, np.uint8).tobytes()
    return any(p in column for p in phases)


def _copy_releasable(sc: _Scan) -> bool:
    """Whether the file's copy is one `load` read for this load and of at least `RELEASE_BYTES`:
    the first condition of `_may_release`, known before the scan."""
    return sc.copy is not None and sc.nbytes >= RELEASE_BYTES


def _may_release(sc: _Scan, ph) -> bool:
    """Whether the file's bytes may be given back once the names are interned (`_release_file`):
    `load` read them for this load (``sc.copy``), they are at least `RELEASE_BYTES`, and what the
    load reads of them after that point is known and small: only call events, instants and
    metadata, no counters, flow events, async events, V8 or sampled profiles, memory dumps, no
    call with args (the names -- no ``CpuProfile``, no ``[memory]`` instants -- are checked once
    interned)."""
    if not _copy_releasable(sc) or sc.sampled or sc.nv or sc.fast.n_events:
        return False
    if _has_phase(ph[: sc.n_event_rows], _KEEP_BYTES_PHASES):
        return False
    if any(int(sc.skip_counts[p]) for p in DUMP_PHASES):
        return False
    with_args = sc.ss.rows_over(jev.S_ARGS_LEN, 2)  # (the M events' args, and any call's)
    return not (with_args.size and np.any((ph[with_args] == _PH["X"]) | (ph[with_args] == _PH["B"])))


def _late_spans(sc: _Scan, rows) -> list:
    """The byte spans read after the release: the events of ``rows`` (M events, those that name a
    thread by a string), the ``displayTimeUnit`` and VizTracer's metadata."""
    spans = list(zip(sc.ii[rows, jev.I_EV_OFF].tolist(), sc.ss[rows, jev.S_EV_LEN].tolist()))
    info = sc.info
    if info[js.INFO_DTU_LEN] >= 0:
        spans.append((int(info[js.INFO_DTU_OFF]), int(info[js.INFO_DTU_LEN])))
    off, end = int(info[js.INFO_VIZ_OFF]), int(info[js.INFO_VIZ_END])
    if off >= 0 and 0 < end - off <= VIZ_METADATA_BYTES:
        spans.append((off, end - off))
    return spans


def _release_file(sc: _Scan, ph, names: list, keys: _ThreadKeys, give_back=None) -> None:
    """Give the file's bytes back (`filecopy.release`) when `_may_release` and the names allow it.
    What is still read -- M events, the events that name a thread by a string, the
    ``displayTimeUnit`` and VizTracer's metadata -- is kept (`filecopy.LateFile.known`); the
    functions' categories and a repair's place (its line, its text) are read again from the file,
    which must not have changed (else the load ends with a `TraceFormatError`).  At 10^7 calls
    the calls are then built in the 1.35 GB the file held.  ``give_back`` (`_NameGiveBack`): most
    of the bytes were given back already while the names were interned; the rest go now, or,
    when a name needs the bytes after all, those given back are read again from the file."""
    if give_back is None and not _may_release(sc, ph):
        return
    if "CpuProfile" in names or MEMORY_EVENT in names:
        if give_back is not None:
            give_back.restore()  # (the file must be the version read: else a TraceFormatError)
            sc.late = None
        return
    n = sc.n_event_rows
    first = keys.key_first[keys.key_first >= 0]
    named_by_string = first[(sc.ss[first, jev.S_FLAGS] & (jev.FL_PID_STR | jev.FL_TID_STR)) != 0]
    spans = _late_spans(sc, np.union1d(np.flatnonzero(ph[:n] == _PH["M"]), named_by_string))
    if give_back is not None:
        known = {span: give_back.known[span] for span in spans}  # (kept before any byte was given back)
        filecopy.release(sc.copy)
        sc.late = filecopy.LateFile(sc.copy.path, sc.copy.stamp, sc.source, known)
        return
    known = {(o, ln): bytes(sc.buf[o: o + ln]) for o, ln in spans}
    if not filecopy.unchanged(sc.copy) or not filecopy.release(sc.copy):
        return  # (a file changed since it was read: its copy is what this load reads)
    sc.late = filecopy.LateFile(sc.copy.path, sc.copy.stamp, sc.source, known)


#: rows naming a thread by a string up to which the file is given back while its names are interned
#: (their events kept first: more, and it is given back after, `_release_file`)
GIVE_BACK_STRING_ROWS = 1 << 16


def _give_back_plan(sc: _Scan, ph):
    """A `_NameGiveBack` when the file's bytes may be given back (`_may_release`) while the names
    are interned: the events read after that (`_late_spans` of the M events and of every event
    that names a thread by a string: a superset of those `_release_file` keeps) copied out first,
    and the file read again for a repair's place meanwhile (``sc.late``).  None: not."""
    if not _may_release(sc, ph):
        return None
    by_string = sc.ss.rows_with_bits(jev.S_FLAGS, jev.FL_PID_STR | jev.FL_TID_STR)
    if by_string.size > GIVE_BACK_STRING_ROWS or not filecopy.unchanged(sc.copy):
        return None
    spans = _late_spans(sc, np.union1d(np.flatnonzero(ph[: sc.n_event_rows] == _PH["M"]), by_string))
    known = {(o, ln): bytes(sc.buf[o: o + ln]) for o, ln in spans}
    sc.late = filecopy.LateFile(sc.copy.path, sc.copy.stamp, sc.source, known)
    return _NameGiveBack(sc, known)


class _NameGiveBack:
    """The file's copy given back a block of rows at a time while the names are interned
    (`chrome_rows.interned_spans`, in the file's order): after a block, the bytes before the next
    row's event (`filecopy.GiveBack.upto`) but the pages of each distinct name's first occurrence,
    which the table compares and `_decode_names` reads.  A block with a name before that point
    (never, from the scanner: checked) has the bytes read again first (`restore`) and ends it.
    ``known``: the spans copied out before (`_give_back_plan`)."""

    def __init__(self, sc: _Scan, known: dict):
        self.sc, self.known = sc, known
        self.gb = filecopy.GiveBack(sc.copy, sc.source)
        self.on = True
        self.nid = 0  # ids of the table whose first spans were looked at
        self.carry = np.zeros(0, np.int64)  # ids whose first spans reach past what was given back

    def before(self, off, valid) -> None:
        if self.on and valid.any() and int(off[valid].min()) < self.gb.done:
            self.restore()
            self.on = False

    def after(self, hi: int, state) -> None:
        if not self.on:
            return
        sc = self.sc
        end = sc.nbytes if hi >= sc.ii.shape[0] else int(sc.ii[hi, jev.I_EV_OFF])
        nid = int(state[5][jr.CNT_IDS])
        ids = np.concatenate([self.carry, np.arange(self.nid, nid, dtype=np.int64)])
        start = state[2][ids]
        stop = start + state[3][ids]
        self.gb.upto(end, start, stop)
        self.carry, self.nid = ids[stop > self.gb.done], nid

    def restore(self) -> None:
        """The bytes given back read again from the file (it must be the version read)."""
        self.gb.restore()
        self.nid, self.carry = 0, np.zeros(0, np.int64)


class _Rows:
    """The rows of each kind with a usable time: ``inst`` (instants), ``meta`` (M events), ``prof``
    (V8's profiles), ``side_all``/``side`` (async events; with a time), ``be`` (B and E), ``x``
    (X); ``finite_ts`` per row (until the threads' last timestamps are taken)."""

    def __init__(self, **rows):
        self.__dict__.update(rows)


def _rows_by_kind(sc: _Scan, rep: _Repairs, ph, ts, v_is_flow, v_finite) -> _Rows:
    """The rows of each kind (`_Rows`), the events without a finite ts counted (``no_ts``), in
    one kernel's two passes (`jsonrows.rows_by_phase`: a dozen numpy passes before, 35 ms of the
    10^6-call sympy trace's 0.63 s steady load here)."""
    n_event_rows = sc.n_event_rows
    kind_rows = n_event_rows if sc.sampled else ph.shape[0]  # (a sampled profile's rows past the events: none)
    (inst, meta, prof, side_all, side, be, x), finite_ts, n_bad, first_bad = jr.rows_by_phase(
        ph, ts, _PHASE_CLASS, kind_rows, n_event_rows, float(sc.lim.max_abs_time))
    # flow events are side rows
    v_bad_ts = np.flatnonzero(v_is_flow & ~v_finite)
    if n_bad or v_bad_ts.size:
        rep.add("no_ts", n_bad + v_bad_ts.size,
                sc.earliest(first_bad if n_bad else None, v_bad_ts[0] if v_bad_ts.size else None))
    return _Rows(inst=inst, meta=meta, prof=prof, side_all=side_all, side=side, be=be, x=x, finite_ts=finite_ts)


def _as_block(rows):
    """``rows`` (ascending, distinct: `_rows_by_kind`'s) as a slice where they are one run of
    consecutive rows, else themselves: the same rows, read from a column as a view (or, from a
    `chrome_rows._Sparse` one, its exceptions found by bisection) instead of gathered."""
    if rows.size and int(rows[-1]) - int(rows[0]) + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def _x_calls(rep: _Repairs, xr, x_flags, xdur, tdur, ts, max_t: float):
    """The X calls of rows ``xr`` (their flags ``x_flags`` and durations ``xdur``): a missing dur
    taken from tdur, else 0 (``no_dur``); negative ones 0; NaN, infinite or ending past
    ``max_t`` dropped (``bad_dur``), checked in one pass (`jsonrows.x_call_times`).  Returns
    (rows, durations, start times)."""
    no_dur_key = np.flatnonzero((x_flags & jev.FL_DUR) == 0)
    if no_dur_key.size:
        xdur[no_dur_key] = tdur[xr[no_dur_key]]
    del no_dur_key
    x_ts, bad_dur, counts, firsts = jr.x_call_times(xr, x_flags, xdur, ts, max_t, jev.FL_DUR, jev.FL_TDUR)
    for code, count, first in zip(("no_dur", "bad_dur", "negative_dur"), counts.tolist(), firsts.tolist()):
        rep.add(code, count, int(xr[first]) if count else None)
    if counts[1]:
        ok = ~bad_dur
        return xr[ok], xdur[ok], x_ts[ok]
    return xr, xdur, x_ts  # (no copies of 10^7 values when every call is good)


def _thread_last_ts(sc: _Scan, keys: _ThreadKeys, ts, finite_ts, x_rows, x_ts, x_len, v_ts, v_finite):
    """Each thread key's last timestamp (for closing unclosed B events): a call's end, else its
    ts; the side rows' and the fast path's times count too."""
    # (samples and stack frames, rows past the events, end nothing; an X call's end is at
    # least its ts: the largest of both, taken in two passes without a copy of every row's time)
    n_event_rows = sc.n_event_rows
    last_ts = np.full(keys.n, -np.inf)
    jr.max_by_key(last_ts, keys.key_id, ts, finite_ts[:n_event_rows])  # (`np.maximum.at` of the rows, in one pass)
    jr.max_by_key_of_rows(last_ts, keys.key_id, x_rows, x_ts, x_len)
    np.maximum.at(last_ts, keys.v_key_id[v_finite], v_ts[v_finite])
    np.maximum.at(last_ts, keys.f_key_id, sc.fast.k_max)
    return last_ts


def _pair_begin_end(sc: _Scan, rep: _Repairs, be_rows, key_id, ts, name_id, last_ts):
    """B/E events paired into calls per thread (`chrome_tree.match_begin_end`), sorted by time
    (stable: ``out_of_order`` counts the E/B events out of order in the file); an E with no open B
    dropped, an E deeper in the stack closing the calls above it, an unclosed B closed at its
    thread's last timestamp.  Returns (the B row, start, end) of each call."""
    if not be_rows.size:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    kk = key_id[be_rows]
    # out of order within a thread (file order): count it
    o = np.argsort(kk, kind="stable")
    k_sorted, t_sorted = kk[o], ts[be_rows][o]
    dec = (k_sorted[1:] == k_sorted[:-1]) & (t_sorted[1:] < t_sorted[:-1])
    if dec.any():
        rep.add("out_of_order", int(dec.sum()), int(be_rows[o[1:][dec][0]]))
    order = np.lexsort((be_rows, ts[be_rows], kk))
    rows = be_rows[order]
    b_idx, b_start, b_end, wc, wf = ct.match_begin_end(
        key_id[rows], ts[rows], sc.ss[rows, jev.S_PH] == _PH["B"], name_id[rows], last_ts)
    for code, w in (("e_mismatch", ct.W_E_MISMATCH), ("e_unmatched", ct.W_E_UNMATCHED),
                    ("unclosed", ct.W_UNCLOSED)):
        rep.add(code, int(wc[w]), int(rows[wf[w]]) if wf[w] >= 0 else None)
    return rows[b_idx], b_start, b_end


def _assemble_calls(sc: _Scan, rep: _Repairs, keys: _ThreadKeys, ts, x_calls, be_calls):
    """The calls: X calls (``x_calls``: rows, start, duration), paired B/E calls (``be_calls``:
    rows, start, end) and a sampled profile's expanded calls (`_sample_calls`) unless they stand
    apart.  Returns (row, start, end, thread key, order of ties, the calls apart or None)."""
    x_rows, x_ts, x_len = x_calls
    be_call_rows, b_start, b_end = be_calls
    key_id, n_event_rows, n_samples, n_rows = keys.key_id, sc.n_event_rows, sc.n_samples, sc.ii.shape[0]
    if be_call_rows.size:
        c_row = np.concatenate([x_rows, be_call_rows]).astype(np.int64, copy=False)
        c_start = np.concatenate([x_ts, b_start])
        c_end = c_start.copy()  # X: start + duration, in place (no temporaries of 10^7 floats)
        c_end[:x_rows.size] += x_len
        c_end[x_rows.size:] = b_end
    else:  # X calls alone (a VizTracer trace): their arrays themselves, no copies (the caller lets them go)
        c_row = x_rows.astype(np.int64, copy=False)
        c_start = x_ts
        c_end = x_ts + x_len
    c_key = key_id[c_row]
    c_ord = c_row  # ties in the pre-order sort: file order
    if not sc.sampled:
        return c_row, c_start, c_end, c_key, c_ord, None
    s_row, s_start, s_end, s_key = _sample_calls(sc.buf, sc.ii, sc.ss, ts, key_id, n_event_rows, n_samples, n_rows,
                                                 sc.seed, sc.lim, sc.lim.sample_calls(sc.input_bytes), rep, sc.source)
    if sc.samples_apart:  # lanes of their own (`chrome_profile.calls_trace`), made once the names are known
        return c_row, c_start, c_end, c_key, c_ord, (
            s_row, s_start, s_end, s_key,
            _sample_intervals(key_id[n_event_rows: n_event_rows + n_samples],
                              ts[n_event_rows: n_event_rows + n_samples], keys.n))
    return (np.concatenate([c_row, s_row]), np.concatenate([c_start, s_start]), np.concatenate([c_end, s_end]),
            np.concatenate([c_key, s_key]), np.concatenate([c_ord, n_rows + np.arange(s_row.shape[0],
                                                                                       dtype=np.int64)]), None)


class _Lanes:
    """Sampled calls shown on lanes of their own beside the calls: V8's profiles (``js_trace``,
    ``js_lanes``) and a sampled profile standing apart (``samples_trace``, ``samples_lanes``);
    ``sampled_names``: the sampled threads' names from the metadata."""

    def __init__(self, js_trace, js_lanes, samples_trace, samples_lanes, sampled_names):
        self.js_trace, self.js_lanes = js_trace, js_lanes
        self.samples_trace, self.samples_lanes = samples_trace, samples_lanes
        self.sampled_names = sampled_names


def _profile_lanes(sc: _Scan, rep: _Repairs, keys: _ThreadKeys, rows: _Rows, names, name_id, meta_info, skipped,
                   apart_calls, text: _Text, kind_rules) -> _Lanes:
    """V8's profiles (``P`` events, or a ``CpuProfile`` instant: `chrome_profile`) and the sampled
    calls apart (`_samples_apart`) as traces of lanes; other samples counted in ``skipped``."""
    prof_rows = rows.prof
    if "CpuProfile" in names:  # the older form: a whole profile in one instant event
        prof_rows = np.union1d(prof_rows, rows.inst[name_id[rows.inst] == names.index("CpuProfile")])
    profiles, n_other_p, p_reps = chrome_profile.read_profiles(sc.buf, sc.ii, sc.ss, prof_rows, keys.key_id,
                                                               keys.key_pid, keys.key_tid, text.clean,
                                                               sc.lim.max_args_bytes)
    for code, count, first in p_reps:
        rep.add(code, count, first)
    if n_other_p:  # samples of other kinds: skipped as before
        skipped["sample"] = skipped.get("sample", 0) + n_other_p
    source = sc.source
    js_trace, js_lanes, js_reps = chrome_profile.profile_trace(
        profiles, source=f"{source}: its V8 profiles (from {sc.describe(int(prof_rows[0]))})" if prof_rows.size
        else source, limits=sc.lim, input_bytes=sc.input_bytes, kind_rules=kind_rules)
    for code, count, first in js_reps:
        rep.add(code, count, first)
    sampled_names = None
    if js_trace is not None or apart_calls is not None:
        # the sampled threads' names from the metadata (a worker sampled but without events of its own)
        sampled_names = {(int(keys.key_pid[k]), int(keys.key_tid[k])): nm
                         for k, nm in meta_info["thread_names"].items()}
    samples_trace = samples_lanes = None
    if apart_calls is not None:
        samples_trace, samples_lanes = _samples_apart(apart_calls, names, name_id, sc.n_event_rows + sc.n_samples,
                                                      sc.ii.shape[0], keys.key_pid, keys.key_tid, kind_rules,
                                                      sc.lim.max_name_chars)
    return _Lanes(js_trace, js_lanes, samples_trace, samples_lanes, sampled_names)


def _check_calls_or_side(sc: _Scan, used, rows: _Rows, n_counters: int, js_trace, skipped) -> None:
    """Raise `TraceFormatError` when no thread has a call or instant and nothing else (counters,
    async slices, instants, V8 profiles) makes a trace."""
    if used.any() or (not sc.sampled and (rows.side.size or n_counters or rows.inst.size or js_trace is not None)):
        return  # calls; or no calls, but counters, async slices or instants: an empty call tree with them
    if sc.sampled:
        raise TraceFormatError(f"{sc.source}: no call events, and its samples/stackFrames give no stacks "
                               f"(samples at {sc.where(int(sc.info[js.INFO_SAMPLES]))})")
    raise TraceFormatError(
        f"{sc.source}: no call events (B/E or X) and no instants: nothing to show "
        f"({sc.seen} events up to {sc.where(int(sc.info[js.INFO_DOC_END]) - 1)}; skipped: {skipped or 'none'})")


class _Threads:
    """The thread table: ``keys`` (thread key of each thread, in display order), ``rank`` (the
    thread of each key, -1 for none), ``pid``, ``tid``, ``names``, ``process_names``, ``sort``."""

    def __init__(self, **cols):
        self.__dict__.update(cols)
        self.n = self.keys.shape[0]


def _thread_table(sc: _Scan, keys: _ThreadKeys, used, meta_info, text: _Text, cap=None) -> _Threads:
    """The threads of the keys ``used``, ordered by process sort index, pid, thread sort index and
    tid; named by their M events, else by their tid and pid as the file writes them.  ``cap``:
    (events per key, max_lanes_read, repairs): past max_lanes_read threads those of the most events
    keep theirs, the others share one lane `lanes.OTHER_LANES`, last (repair ``lanes_capped``)."""
    key_pid, key_tid = keys.key_pid, keys.key_tid
    thread_keys = np.flatnonzero(used)
    merged = thread_keys[:0]
    if cap is not None and thread_keys.size > cap[1]:
        from .lanes import kept_lanes, lanes_capped_action

        keep = kept_lanes(cap[0][thread_keys].astype(np.float64), cap[1] - 1)
        merged, thread_keys = thread_keys[~keep], thread_keys[keep]
        cap[2].add("lanes_capped", merged.size, detail="the whole file")
        cap[2].items["lanes_capped"]["action"] = lanes_capped_action("threads", used.sum(), merged.size, cap[1])
    t_pid = key_pid[thread_keys]
    t_tid = key_tid[thread_keys]
    t_sort = np.array([meta_info["thread_sort"].get(int(k), 0) for k in thread_keys], np.int64)
    p_sort = np.array([meta_info["process_sort"].get(int(p), 0) for p in t_pid], np.int64)
    t_order = np.lexsort((t_tid, t_sort, t_pid, p_sort))
    thread_keys = thread_keys[t_order]
    rank = np.full(keys.n, -1, np.int32)
    rank[thread_keys] = np.arange(thread_keys.shape[0], dtype=np.int32)
    rank[merged] = thread_keys.shape[0]
    first_rows = keys.key_first[thread_keys]  # where each thread's (pid, tid) first appear: a row or a side row
    sp = keys.side_pos[thread_keys]
    if (sp >= 0).any():
        w = np.flatnonzero(sp >= 0)
        side_first = sp[w] < sc.position(first_rows[w], False)
        first_rows[w[side_first]] = keys.side_row[thread_keys][w[side_first]]
    str_ids = _string_ids(sc.bytes_at, sc.ii, sc.ss, sc.vii, sc.vss, first_rows, key_pid[thread_keys],
                          key_tid[thread_keys], text)
    thread_names, process_names = [], []
    for j, k in enumerate(thread_keys):
        p = int(key_pid[k])
        tname = meta_info["thread_names"].get(int(k))
        if not tname and int(key_tid[k]) != p:
            # uftrace names each task by metadata of a "process" whose pid is the task's tid (its
            # events carry pid: the process, tid: the task): on Linux tids and pids share one id
            # space, so a process named by a thread's tid is that thread
            tname = meta_info["process_names"].get(int(key_tid[k]))
        pidtxt, tidtxt = str_ids[j]
        thread_names.append(tname if tname else f"{tidtxt}")
        process_names.append(meta_info["process_names"].get(p) or f"{pidtxt}")
    sort = [meta_info["thread_sort"].get(int(k), 0) for k in thread_keys]
    pid, tid = key_pid[thread_keys].astype(np.int64), key_tid[thread_keys].astype(np.int64)
    if merged.size:  # the lane of the threads past max_lanes_read
        from .lanes import OTHER_LANES

        thread_keys, pid, tid = np.append(thread_keys, -1), np.append(pid, 0), np.append(tid, 0)
        thread_names.append(OTHER_LANES)
        process_names.append("")
        sort.append(0)
    return _Threads(keys=thread_keys, rank=rank, pid=pid, tid=tid, names=thread_names, process_names=process_names,
                    sort=np.array(sort, np.int32))


def _nest_calls(sc: _Scan, rep: _Repairs, overlap: str, n_threads: int, c_row, c_start, c_end, c_thread, c_ord):
    """The calls sorted into per-thread pre-order and nested (`nesting.sort_and_nest`; again
    `nest_sorted_intervals` after each round of drops); a call sticking out of its enclosing call
    clipped (``x_overlap``) or, with ``overlap="drop"``, dropped (``x_overlap_dropped``).  Returns
    (row, start, end, thread, order of ties, parent, depth, end_index) of the calls kept."""
    sampled = sc.sampled
    # (each trace thread's calls sorted, gathered and nested apart: the threads shared by two cores)
    order, c_thread, c_start, new_end, c_row, parent, depth, end_index, clipped = sort_and_nest(
        c_thread, c_start, c_end, c_ord, c_row, n_threads)
    c_ord = c_ord[order] if sampled else c_row
    if clipped.any():
        if overlap == "drop":
            c_end = c_end[order]  # (unclipped)
            rep.add("x_overlap_dropped", int(clipped.sum()), int(c_row[np.flatnonzero(clipped)[0]]))
            for _ in range(64):
                keep = ~clipped
                c_row, c_start, c_end, c_thread = c_row[keep], c_start[keep], c_end[keep], c_thread[keep]
                c_ord = c_ord[keep] if sampled else c_row
                parent, depth, end_index, new_end, clipped = nest_sorted_intervals(c_thread, c_start, c_end)
                if not clipped.any():
                    break
                rep.add("x_overlap_dropped", int(clipped.sum()), None)
        if clipped.any():
            rep.add("x_overlap", int(clipped.sum()), int(c_row[np.flatnonzero(clipped)[0]]))
    return c_row, c_start, new_end, c_thread, c_ord, parent, depth, end_index


def _origin(sc: _Scan, c_start, lanes: _Lanes, rows: _Rows, ts, n_counters: int, v_ts, v_c_finite) -> float:
    """The trace's time origin: its first call, sampled lane call or instant; for a file of
    counters or async slices only, their first time."""
    cands = [c_start.min() if c_start.size else np.inf]
    for lanes_trace in (lanes.js_trace, lanes.samples_trace):
        if lanes_trace is not None and len(lanes_trace):
            cands.append(float(lanes_trace.start.min()) + lanes_trace.meta["clock_origin"])
    if rows.inst.size:
        cands.append(ts[rows.inst].min())
    elif not c_start.size and (rows.side.size or n_counters):  # a file of counters or async slices only
        cands.append(min(ts[rows.side].min() if rows.side.size else np.inf,
                         v_ts[v_c_finite].min() if v_c_finite.size else np.inf, sc.fast.min_counter_ts))
    t0 = float(min(cands))
    return t0 if np.isfinite(t0) else 0.0


#: names from which `_parse_names` runs on a thread of its own (`load_chrome`)
PARALLEL_PARSE_NAMES = 256


#: names `_parse_names` parses on its thread between two hand-overs of the GIL (~0.4 ms of Python)
PARSE_NAMES_BLOCK = 64
#: how long it sleeps at a hand-over: a switch the waiting thread takes at once
PARSE_NAMES_PAUSE_S = 5e-5


def _parse_names(names: list, apart: bool = False) -> list:
    """`parse_function_name` of each name (`parse_function_names`).  ``apart`` (on a thread of its
    own beside the load): the GIL handed over every `PARSE_NAMES_BLOCK` names, not held for
    Python's 5 ms switch interval while the load's numpy and kernel calls wait to get it back
    after each release (the 10^6-call sympy trace's 4,335 names, steady load, medians of 11
    alternated loads in two runs: 0.416 -> 0.369 s and 0.440 -> 0.425 s; parsed on the load's own
    thread 0.387 s in the first)."""
    if not apart:
        return parse_function_names(names)
    out = []
    for a in range(0, len(names), PARSE_NAMES_BLOCK):
        out.extend(parse_function_names(names[a: a + PARSE_NAMES_BLOCK]))
        time.sleep(PARSE_NAMES_PAUSE_S)
    return out


def _function_table(sc: _Scan, c_row, sample_call, names: list, name_id, text: _Text, parsing: _SideJob):
    """The functions, in order of first appearance in call order: (function of each call, the
    names with "(unnamed)" added when a call has none, each function's name, category and
    parsed name: file and line from the name, or from Hermes' locations).  ``parsing``: the
    names parsed (`_parse_names`, on a thread of its own for many names)."""
    buf, ii, ss = sc.buf, sc.ii, sc.ss
    # each call's function and each function's first call, in one pass over the calls' names
    # (at 10^7 calls a gathered name per call, its unnamed substitution and a running maximum
    # to find the first calls were 0.03-0.05 s of numpy passes)
    func, fn_name_ids, first_pos, unnamed = jsp.functions_of_calls(name_id, c_row, len(names))
    if unnamed:
        names = names + ["(unnamed)"]
    function_names = [names[k] for k in fn_name_ids]
    fn_first_row = c_row[first_pos]
    cat_len = ss[fn_first_row, jev.S_CAT_LEN]
    if sc.sampled:
        cat_len = np.where(sample_call[first_pos], -1, cat_len)
    function_cats = _decode_span_list(sc.reader, ii[fn_first_row, jev.I_CAT_OFF], cat_len, text)
    parsed_names = parsing.result_of(0)
    n_parsed = len(parsed_names)
    parsed = [parsed_names[k] if k < n_parsed else parse_function_name(names[k]) for k in fn_name_ids.tolist()]
    if sc.sampled and not sc.samples_apart:  # Hermes' sampled frames name their location
        parsed = [hermes.located(q, nm) for q, nm in zip(parsed, function_names)]
    elif fn_first_row.size:  # Hermes' B/E events carry theirs in their args
        located = hermes.hermes_locations(buf, ii[fn_first_row, jev.I_ARGS_OFF],
                                          ss[fn_first_row, jev.S_ARGS_LEN])
        if located is not None:
            parsed = [parse_function_name(nm, file=u, line=ln) for nm, (u, ln) in zip(function_names, located)]
    return func, names, function_names, function_cats, parsed, fn_name_ids


def _function_kinds(parsing: _SideJob, fn_name_ids, names: list, kind_rules):
    """The kind of each function (its name's ``fn_name_ids``, in ``names``), from the names' kinds
    that ``parsing``'s second stage classified beside the call tree (`classify_functions` of every
    name: the same kinds, a name's kind being its own); the "(unnamed)" that `_function_table` may
    have added past them classified here."""
    name_kind = parsing.result_of(1)
    if len(names) > name_kind.shape[0]:
        name_kind = np.concatenate([name_kind, classify_functions(names[name_kind.shape[0]:], kind_rules)])
    return name_kind[fn_name_ids]


def _call_args(sc: _Scan, rep: _Repairs, c_row, sample_call):
    """Which calls have args that Python's json reads back (the others: ``bad_args``,
    ``deep_args``, ``big_args``); calls expanded from samples have none."""
    buf, ii, ss, lim = sc.buf, sc.ii, sc.ss, sc.lim
    # (the rows with args marked, then read at the calls: no per-call length array, memory)
    has_args = ss.rows_where_over(jev.S_ARGS_LEN, 2, ii.shape[0])[c_row]
    if sc.sampled:
        has_args[sample_call] = False
    if has_args.any():
        a_idx = np.flatnonzero(has_args)
        st = jv.json_spans_status(buf, ii[c_row[a_idx], jev.I_ARGS_OFF],
                                  ss[c_row[a_idx], jev.S_ARGS_LEN].astype(np.int64),
                                  lim.max_args_nesting, lim.max_args_bytes)
        for code, val in (("bad_args", jv.JSON_INVALID), ("deep_args", jv.JSON_TOO_DEEP),
                          ("big_args", jv.JSON_TOO_BIG)):
            hit = a_idx[st == val]
            if hit.size:
                rep.add(code, hit.size, int(c_row[hit[0]]))
        has_args[a_idx[st != jv.JSON_OK]] = False
    return has_args


def _call_objects(sc: _Scan, c_row, func, kind, has_args, function_names: list, text: _Text):
    """The objects of the synchronisation calls (``kind`` > 0), from their function's name and
    their args (`tracevis3d.kinds`).  Returns (obj_ptr, obj_ids, object_names) of the Trace."""
    buf, ii, ss = sc.buf, sc.ii, sc.ss
    object_names: list[str] = []
    obj_index: dict[str, int] = {}
    name_objs = [[text.clean(o) for o in objs] if objs else objs for objs in objects_from_names(function_names)]
    sync_calls = np.flatnonzero(kind > 0)
    if sync_calls.size:  # a call whose name holds no object and that has no args has none: not visited
        named = np.fromiter((bool(objs) for objs in name_objs), bool, len(name_objs))
        sync_calls = sync_calls[has_args[sync_calls] | named[func[sync_calls]]]
    max_chars = text.max_chars
    per_call: dict[int, list[str]] = {}
    if sync_calls.size:
        import orjson

        for i in sync_calls:
            objs = list(name_objs[func[i]])
            if has_args[i]:
                off = int(ii[c_row[i], jev.I_ARGS_OFF])
                try:
                    ln = int(ss[c_row[i], jev.S_ARGS_LEN])
                    found = objects_from_args(orjson.loads(bytes(buf[off: off + ln])))
                except Exception:
                    found = []
                for o in found:
                    if not (len(o) <= max_chars and o.isascii()):
                        o = text.clean(o)
                    if o not in objs and len(objs) < MAX_OBJECTS_PER_CALL:  # both at most 64 long
                        objs.append(o)
            if objs:
                per_call[int(i)] = objs
    obj_ptr = np.zeros(func.shape[0] + 1, np.int64)  # calloc'd: no memory used until written
    obj_list: list[int] = []
    if per_call:
        obj_counts = np.zeros(func.shape[0], np.int64)
        for i in sorted(per_call):
            for o in per_call[i]:
                if o not in obj_index:
                    obj_index[o] = len(object_names)
                    object_names.append(o)
                obj_list.append(obj_index[o])
            obj_counts[i] = len(per_call[i])
        np.cumsum(obj_counts, out=obj_ptr[1:])
    return obj_ptr, np.asarray(obj_list, np.int32), object_names


def _flows_and_side(sc: _Scan, rep: _Repairs, side_job: _SideJob, side_rec: _Recorded, c_row, sample_call, ts,
                    rows: _Rows, name_id, names: list, t0: float, inst_pid, meta_info, text: _Text):
    """The second thread's results (`_SideJob`): the flow events bound to calls (`bind_flows`), and
    the counters' samples with the async slices, PyTorch's memory instants and the units kept in
    M events as the side tables (`chrome_side.side_tracks`).  Returns (the Trace's flow_* columns,
    its side columns)."""
    buf, ii, ss, max_t, nesting = sc.buf, sc.ii, sc.ss, sc.lim.max_abs_time, sc.lim.max_args_nesting
    (f_points, f_order), c_samples, _, f_bound = side_job.result()
    flow_id, flow_from, flow_to, flow_cat = bind_flows(ii, ss, f_points, f_bound, c_row, sample_call, rep, f_order)
    flow_cat, flow_cat_names = flow_categories(buf, f_points, flow_cat, text, _decode_span_list)
    side_rec.replay(rep)
    side = side_tracks(buf, ii, ss, ts, rows.side_all, name_id, names, t0, max_t, rep, text, sc.seed, nesting,
                       counter_fields(buf, c_samples, names, t0, text, nesting))
    side = memory_counters(buf, ii, ss, ts, rows.inst, name_id, names, inst_pid, t0, nesting,
                           side)  # PyTorch's [memory] instants: their totals as counter series
    side = dump_counters(buf, sc.source, sc.lim, sc.skip_counts, t0, side, rep)  # memory-infra dumps' allocators
    series_units_from(side, meta_info["counter_units"])  # the units a writer kept in M events
    flows = dict(flow_id=flow_id, flow_from=flow_from, flow_to=flow_to, flow_cat=flow_cat,
                 flow_cat_names=flow_cat_names)
    return flows, side


def _trace_meta(sc: _Scan, rep: _Repairs, t0: float, c_end, text: _Text, skipped) -> dict:
    """The Trace's meta: source, format, origin, units, sizes, repairs (VizTracer's overflow and
    the names' repairs added here) and skipped events."""
    info = sc.info
    dtu_off = int(info[js.INFO_DTU_OFF])
    complete_from = None
    if _viztracer_overflow(sc.bytes_at, info) and c_end.size:
        complete_from = float(c_end.min())  # the first kept call's end: every call that ended after it is kept
        rep.add("tracer_overflow", 1, detail=f"the calls that ended before {complete_from / 1e6:.6g} s into the trace")
    rep.add("bad_utf8", text.n_surrogate, detail=text.first_surrogate or "")
    rep.add("long_name", text.n_long, detail=text.first_long or "")
    meta = {
        "source": sc.source,
        "format": "chrome-json" if not sc.sampled or sc.samples_apart else "chrome-json-samples",
        "clock_origin": t0,
        "time_unit": "us",
        "display_time_unit": text.raw(sc.bytes_at(dtu_off, int(info[js.INFO_DTU_LEN])))
        if info[js.INFO_DTU_LEN] >= 0 else "",
        "n_events": sc.seen,
        "n_bytes": int(sc.nbytes),
        "repairs": rep.items,
        "skipped": skipped,
    }
    if sc.sampled:
        meta["n_samples"] = int(sc.n_samples)
    if complete_from is not None:
        meta["complete_from"] = complete_from  # µs from the origin: calls that ended before it are missing
    return meta


def _side_keys(vii, fast: FastSide, key_pid, key_tid, seed):
    """The thread keys of the side rows ``vii`` and of the fast path's events (``fast``) in the
    numbering of the event rows' keys (``key_pid``, ``key_tid``: the (pid, tid) of each); a (pid,
    tid) that only they have becomes a new key, after those.  Returns (key of each side row, key
    of each of ``fast``'s keys, where each key is first used by a side row or a fast event (its
    offset, -1 if never) and that row (SIDE + side row, or FAST), key_pid, key_tid) with the new
    keys' pid and tid appended."""
    n_keys = key_pid.shape[0]
    nv = vii.shape[0]
    if nv:
        v_pid, v_tid = vii[:, jev.I_PID], vii[:, jev.I_TID]
        v_key, v_first = jsp.intern_pairs(v_pid, v_tid, seed)
        fp, ft = v_pid[v_first], v_tid[v_first]
    else:
        v_key, v_first = np.zeros(0, np.int32), np.zeros(0, np.int64)
        fp = ft = np.zeros(0, np.int64)
    nvk = v_first.size
    both, _ = jsp.intern_pairs(np.concatenate([key_pid, fp, fast.k_pid]).astype(np.int64),
                               np.concatenate([key_tid, ft, fast.k_tid]).astype(np.int64), seed)
    v_map = both[n_keys:]  # the keys, in order of first use: the event rows' keys keep their numbers
    new = v_map >= n_keys
    n_all = n_keys + int(np.unique(v_map[new]).size)
    key_pid = np.concatenate([key_pid, np.zeros(n_all - n_keys, key_pid.dtype)])
    key_tid = np.concatenate([key_tid, np.zeros(n_all - n_keys, key_tid.dtype)])
    key_pid[v_map[new]] = np.concatenate([fp, fast.k_pid])[new]
    key_tid[v_map[new]] = np.concatenate([ft, fast.k_tid])[new]
    pos = np.full(n_all, np.iinfo(np.int64).max, np.int64)
    row = np.full(n_all, -1, np.int64)
    if nvk:
        v_pos = vii[v_first, jev.I_EV_OFF]
        pos[v_map[:nvk]] = v_pos
        row[v_map[:nvk]] = SIDE + v_first
    if fast.k_pid.size:  # a fast event first where it comes before every side row
        fk = v_map[nvk:]
        earlier = fast.k_off < pos[fk]
        pos[fk[earlier]] = fast.k_off[earlier]
        row[fk[earlier]] = FAST
    pos[row < 0] = -1
    return v_map[:nvk][v_key] if nv else np.zeros(0, np.int32), v_map[nvk:], pos, row, key_pid, key_tid


def _skipped_dict(counts) -> dict:
    """meta['skipped']: events without a row, by kind of phase."""
    out: dict[str, int] = {}
    for c in np.flatnonzero(counts):
        ch = chr(c) if 1 < c < 128 else "?"
        if c == jev.PH_NONE:
            label = "no phase"
        elif c == jev.PH_LONG:
            label = "unknown phase (several characters)"
        else:
            label = _SKIPPED_NAMES.get(ch, f"unknown phase {ch!r}")
        out[label] = out.get(label, 0) + int(counts[c])
    return out


def _initial_rows(buf, max_events: int) -> int:
    """Rows to allocate before the scan: the objects (``{``) in 16 samples of 64 KiB spread
    over the file (a file whose events change kind, calls then counters, is sampled in
    each part), extrapolated with 25 % headroom -- at least one per event, more when args
    hold objects --, never more than one per 64 bytes; the scan doubles them if a file
    holds more."""
    nbytes = buf.shape[0]
    if nbytes == 0:
        return 16
    win = 1 << 16
    starts = np.unique(np.linspace(0, max(nbytes - win, 0), 16).astype(np.int64))
    objs = sampled = 0
    for a in starts.tolist():
        part = buf[a: a + win]
        objs += int(np.count_nonzero(part == ord("{")))
        sampled += part.shape[0]
    est = int((objs + 1) * (nbytes / sampled) * 1.25) + 1024
    return int(max(16, min(est, nbytes // 64 + 16, max_events + 1)))


PARALLEL_SCAN_BYTES = 16 << 20
#: parts of a parallel scan, taken in turn by its two threads (8: a part of side events costs less
#: than a part of calls, and with 4 the thread that took the last one idled 0.09 s at the end of the
#: goal file of bench_side.py; its scan, min of 8: 0.289 s with 4 parts, 0.250 with 8, 0.251 with 12;
#: the calls alone 0.168-0.180 s whatever the number; peak memory within 2 %)
PARALLEL_PARTS = 8
# an array, or an object whose keys before "traceEvents" have scalar values
_SCALAR_KEY = rb'"[^"\\]*"\s*:\s*(?:"[^"\\]*"|[-+0-9.eE]+|true|false|null)\s*,\s*'
_EVENTS_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*(\{\s*(?:' + _SCALAR_KEY + rb')*"traceEvents"\s*:\s*)?\[')
_NEXT_EVENT = re.compile(rb',\s*\{')
_DTU_HEAD = re.compile(rb'"displayTimeUnit"\s*:\s*"([^"\\]*)"')


#: a ``viztracer_metadata`` object longer than this is not read (VizTracer's is a few dozen bytes)
VIZ_METADATA_BYTES = 1 << 16


def _viztracer_overflow(read, info) -> bool:
    """Whether the trace's ``viztracer_metadata`` says VizTracer's ring buffer overflowed (it then
    writes only the last ``tracer_entries`` calls to end: the earlier ones are missing);
    ``read(offset, length)``: the file's bytes (`_Scan.bytes_at`)."""
    off, end = int(info[js.INFO_VIZ_OFF]), int(info[js.INFO_VIZ_END])
    if off < 0 or not 0 < end - off <= VIZ_METADATA_BYTES:
        return False
    try:
        meta = json.loads(read(off, end - off))
    except (ValueError, RecursionError):  # damaged, or nested past Python's json (a hostile file)
        return False
    return isinstance(meta, dict) and meta.get("overflow") is True


def _new_scan_info():
    """A parallel scan's ``info`` (`jsonscan.scan_trace`'s) before anything is noted in it."""
    info = np.zeros(js.N_INFO, np.int64)
    info[js.INFO_DTU_LEN] = -1
    info[js.INFO_SAMPLES] = -1
    info[js.INFO_FRAMES] = -1
    info[js.INFO_VIZ_OFF] = -1
    return info


def _scan_parallel(buf, max_events: int, max_nesting: int, seed: int = 0,
                   max_t: float = DEFAULT_LIMITS.max_abs_time, parts: int | None = None, names_out: list | None = None):
    """Scan the event array on two threads (the kernels release the GIL).

    Only for the common layouts (an array, or an object whose keys before
    ``traceEvents`` all have scalar values).  The array is cut into ``parts`` (`PARALLEL_PARTS`)
    pieces at event boundaries guessed at equal byte distances (``{`` after a ``,``), which
    the two threads take in turn (a part of costly events, counters or flows after calls,
    does not leave one thread idle); a guess is accepted only if the scan of the part before
    it stops exactly there, so a guess inside a string can never be taken.  Anything
    unexpected (a worker that fails included: its exception is kept, never printed) returns
    None: the caller scans sequentially, which is the reference behaviour (and gives the
    canonical error messages).  ``seed``, ``max_t``: of the fast path (`sidetables.new_fast`); its
    outputs come last, a `chrome_rows.FastOut` per part.  ``names_out``: a list, given each part's
    names interned as it was scanned (`chrome_rows.PartNames`) when the scan succeeds.
    """
    m = _EVENTS_HEAD.match(buf[:4096])
    if m is None:
        return None
    start = m.end()
    n = buf.shape[0]
    parts = max(2, int(parts or PARALLEL_PARTS))
    bounds = [start]
    for j in range(1, parts):
        guess = max(start + (n - start) * j // parts, bounds[-1] + 1)
        hit = _NEXT_EVENT.search(buf, guess, min(n, guess + (4 << 20)))
        if hit is None:
            break
        bounds.append(hit.end() - 1)  # the "{" of a guessed event start
    if len(bounds) < 2:
        return None
    stops = bounds[1:] + [-1]
    out: list = [None] * len(bounds)
    todo = iter(range(len(bounds)))  # the parts, taken in turn by the threads (next() holds the GIL)
    last_k = len(bounds) - 1
    tail_out: list = []  # the object form's keys after the array, scanned by the last part's thread

    def work():
        scratch = None  # this thread's buffers, reused by its parts (`chrome_rows.ScanScratch`)
        for k in todo:
            try:
                if scratch is None:
                    scratch = chrome_rows.ScanScratch(max_events, max_nesting)
                out[k] = chrome_rows.scan_part(buf, bounds[k], stops[k], max_events, max_nesting, seed, max_t, scratch,
                                               names_out is not None)
                # the keys after the array (a VizTracer trace's ``file_info``: 8 % of the sympy trace's
                # bytes) scanned right after the last part, while the other thread ends its own: the
                # last part holds the fewest events, as the bounds were guessed over the tail's bytes too
                if k == last_k and m.group(1) is not None and out[k][2] == jev.OK:
                    tail_info = _new_scan_info()
                    tail_out.append((out[k][1], js.scan_object_tail(buf, out[k][1], tail_info, max_nesting)[0],
                                     tail_info))
            except BaseException as e:  # e.g. MemoryError: fall back, never a traceback on stderr
                out[k] = e

    t = threading.Thread(target=work)
    t.start()
    work()
    t.join()
    info = _new_scan_info()
    if not isinstance(out[0], tuple):
        return None
    part0, end0, st0, ep0, seen0 = out[0]
    if st0 < 0:  # the first part starts where the sequential scan does: the same error, no second scan
        info[js.INFO_SEEN] = seen0
        return (*part0.columns(), part0.n, st0, ep0, info, part0.skipped, *part0.columns(side=True), part0.nv,
                [part0.fast])
    seen = 0
    for k, res in enumerate(out):
        if not isinstance(res, tuple):
            return None
        part, end, st, ep, seen_k = res
        last = k == len(out) - 1
        if (not last and (st != jev.SPLIT or end != stops[k])) or (last and st < 0):
            return None
        if k:
            part.add_to_ordinals(seen)
        seen += seen_k
    last_part, end1, st1, ep1, _ = out[-1]
    n_rows = sum(res[0].n for res in out)
    n_side = sum(res[0].nv for res in out)
    if n_rows + n_side + sum(res[0].fast.n for res in out) > max_events:
        return None
    info[js.INFO_DOC_END] = end1
    status = st1
    if m.group(1) is not None and st1 == jev.OK:  # object form: the keys after the array
        if not tail_out or tail_out[0][0] != end1:  # (scanned by the last part's thread: `work`)
            return None
        _, tail, info = tail_out[0]  # (the keys' spans and the document's end noted by that scan)
        if tail < 0:
            return None
        status = tail  # OK, or TRUNCATED like the sequential scan
    info[js.INFO_CUT_EVENT] = ep1 if st1 == jev.TRUNCATED and ep1 < n else -1
    info[js.INFO_SEEN] = seen
    if m.group(1) is not None and info[js.INFO_DTU_LEN] < 0:  # displayTimeUnit before the events
        d = _DTU_HEAD.search(buf, 0, m.end())
        if d is not None:
            info[js.INFO_DTU_OFF], info[js.INFO_DTU_LEN] = d.start(1), d.end(1) - d.start(1)
    skipped = sum(res[0].skipped for res in out)
    if names_out is not None:
        names_out.extend(res[0].names for res in out)
    # (what the parts' scans freed: not held while their columns are joined)
    chrome_rows.release_free_memory(n_rows + n_side)
    columns = part0.columns(*[res[0] for res in out[1:]])
    side = part0.columns(*[res[0] for res in out[1:]], side=True)
    chrome_rows.release_free_memory(n_rows + n_side)
    return (*columns, n_rows, status, ep1, info, skipped, *side, n_side, [res[0].fast for res in out])


def _scan_sampled(buf, samples_at, frames_at, max_events, lim, source, where, too_many):
    """Rows of the ``samples`` array, then of the ``stackFrames`` object (spans mode)."""
    cap = min(max(16, buf.shape[0] // 256), max_events + 1)
    ii1, ss1, ff1, n1, _, st1, ep1 = js.scan_samples(buf, samples_at, cap, max_events, lim.max_nesting)
    if st1 < 0 or st1 == jev.TRUNCATED:
        what = too_many() if st1 == jev.ERR_TOO_MANY else ("the file ends inside it" if st1 == jev.TRUNCATED
                                                          else "invalid JSON or an element that is no object")
        raise TraceFormatError(f"{source}: bad 'samples' array: {what}, at {where(ep1)} (sample #{n1})")
    ii2, ss2, ff2, n2, _, st2, ep2 = js.scan_stack_frames(buf, frames_at, cap, max_events, lim.max_nesting)
    if st2 < 0 or st2 == jev.TRUNCATED:
        what = too_many() if st2 == jev.ERR_TOO_MANY else ("the file ends inside it" if st2 == jev.TRUNCATED
                                                          else "invalid JSON")
        raise TraceFormatError(f"{source}: bad 'stackFrames' object: {what}, at {where(ep2)} (frame #{n2})")
    ii1, ss1, ff1 = chrome_rows.from_rows(ii1, ss1, ff1, n1)
    ii2, ss2, ff2 = chrome_rows.from_rows(ii2, ss2, ff2, n2)
    return ii1.concat(ii2), ss1.concat(ss2), ff1.concat(ff2), n1


def _sample_calls(buf, ii, ss, ts, key_id, r0, n_samples, n_rows, seed, lim, max_calls, rep, source):
    """Calls of a sampled profile (see `chrome_tree.expand_samples`): rows
    [r0, r0 + n_samples) are samples, the rest of [.., n_rows) stack frames.
    Returns (frame row, start, end, thread key) per call, in the order opened."""
    s_rows = np.arange(r0, r0 + n_samples)
    f_rows = np.arange(r0 + n_samples, n_rows)
    # frame ids, parents and sample frames are byte spans: intern them together
    span_off = np.concatenate([ii[f_rows, jev.I_ARGS_OFF], ii[f_rows, jev.I_ID], ii[s_rows, jev.I_ID]])
    span_len = np.concatenate([ss[f_rows, jev.S_ARGS_LEN], ss[f_rows, jev.S_BP], ss[s_rows, jev.S_BP]]).astype(np.int64)
    has = np.concatenate([np.ones(f_rows.size, bool), (ss[f_rows, jev.S_FLAGS] & jev.FL_ID) != 0,
                          (ss[s_rows, jev.S_FLAGS] & jev.FL_ID) != 0])
    sid, _ = jsp.intern_spans(buf, span_off, np.maximum(span_len, 0), has, seed)
    nf = f_rows.size
    frame_of = np.full(int(sid.max()) + 2 if sid.size else 1, -1, np.int64)
    np.maximum.at(frame_of, sid[:nf], np.arange(nf))  # a repeated id: the last frame wins (as a dict)
    par_id = sid[nf: 2 * nf]
    f_parent = np.where(par_id >= 0, frame_of[np.maximum(par_id, 0)], -1)
    s_id = sid[2 * nf:]
    s_frame = np.where(s_id >= 0, frame_of[np.maximum(s_id, 0)], -1)
    f_parent, f_depth, n_cyc, n_deep = ct.frame_depths(f_parent, lim.max_stack_depth)
    rep.add("frame_cycle", n_cyc, detail=f"{n_cyc} frame(s)")
    rep.add("deep_stack", n_deep, detail=f"{n_deep} chain(s) cut at depth {lim.max_stack_depth}")
    s_ts = ts[s_rows]
    ok = ((ss[s_rows, jev.S_FLAGS] & jev.FL_ID) != 0) & np.isfinite(s_ts) & (np.abs(s_ts) <= lim.max_abs_time)
    rows = np.flatnonzero(ok)
    s_key = key_id[s_rows[rows]].astype(np.int64)
    t_rank, t_key = jsp.renumber_by_first_use(s_key, int(key_id.max()) + 1 if key_id.size else 1)
    o = np.lexsort((rows, s_ts[rows], t_rank))
    c_frame, c_start, c_end, c_thread, status = ct.expand_samples(
        t_rank[o].astype(np.int64), s_ts[rows][o], s_frame[rows][o], f_parent, f_depth, max_calls)
    if status < 0:
        raise TraceFormatError(
            f"{source}: its {n_samples} samples expand to more than {max_calls} calls (stacks that change by "
            f"many frames from sample to sample; sample_bytes_per_call= or max_events= to allow more)")
    return f_rows[c_frame], c_start, c_end, t_key[c_thread].astype(np.int64)


def _sample_intervals(s_key, s_ts, n_keys: int):
    """Per thread key: (samples, the median positive step between its samples in µs, 0 for none)."""
    count = np.bincount(s_key, minlength=n_keys)
    step = np.zeros(n_keys)
    ok = np.isfinite(s_ts)
    o = np.lexsort((s_ts[ok], s_key[ok]))
    k, t = s_key[ok][o], s_ts[ok][o]
    d = np.diff(t)
    good = (k[1:] == k[:-1]) & (d > 0)
    gk, gd = k[1:][good], d[good]
    o = np.lexsort((gd, gk))  # each thread's steps in order: its median in the middle of its run
    gk, gd = gk[o], gd[o]
    keys, lo, cnt = np.unique(gk, return_index=True, return_counts=True)
    step[keys] = (gd[lo + (cnt - 1) // 2] + gd[lo + cnt // 2]) / 2
    return count, step


def _samples_apart(calls, names, name_id, f0, n_rows, key_pid, key_tid, kind_rules, max_name_chars):
    """The calls of a trace's ``samples``/``stackFrames`` that stand beside its events
    (`_sample_calls`: ``calls``) as a Trace of lanes, one per sampled thread
    (`chrome_profile.calls_trace`), and the lanes' (pid, tid, samples, interval µs) for
    `chrome_profile.with_profile_lanes`.  Frames (rows ``f0`` … ``n_rows`` - 1) are functions by
    their name."""
    from .stacks import FrameTable

    s_row, s_start, s_end, s_key, (count, step) = calls
    frames = FrameTable(max_name_chars)
    uniq, inv = np.unique(name_id[f0:n_rows], return_inverse=True)
    fid = np.array([frames.add(names[k] if k >= 0 else "(unnamed)") for k in uniq.tolist()], np.int64)
    lane, lane_key = jsp.renumber_by_first_use(s_key, len(key_pid))
    lanes = [(int(key_pid[k]), int(key_tid[k]), int(count[k]), float(step[k])) for k in lane_key.tolist()]
    trace = chrome_profile.calls_trace(frames, fid[inv][s_row - f0] if s_row.size else np.zeros(0, np.int64),
                                       s_start, s_end, lane.astype(np.int64), len(lanes), kind_rules)
    return trace, lanes


def _reparse_slow_numbers(buf, ii, ss, ts, dur, tdur):
    """Numbers outside the scanner's exact fast path (17+ significant digits,
    large exponents, numbers given as strings): the scanner kept their byte
    spans; numpy's C string→float conversion (correctly rounded, as Python's float)
    parses them all at once; only values that are not numbers at all (a
    ``"ts": "abc"``) are looked at one by one, and become NaN.  Returns (count of values that
    are no numbers, the first row holding one in ts, dur and tdur: None where none): a
    ``bad_number`` repair."""
    firsts = [None, None, None]
    slow = ss.rows_with_bits(jev.S_FLAGS, jev.FL_SLOW)
    if not slow.size:
        return 0, firsts
    nbad = 0
    for col, arr in enumerate((ts, dur, tdur)):
        lens = ss[slow, jev.S_NUM_LEN + col]
        have = lens >= 0
        rows = slow[have]
        if not rows.size:
            continue
        o = ii[rows, jev.I_EV_OFF] + ss[rows, jev.S_NUM_REL + col]
        ln = lens[have].astype(np.int64)
        width = int(min(max(int(ln.max()), 1), 64))
        text = jsp.gather_fixed(buf, o, ln, width).view(f"S{width}").ravel()
        try:
            vals = text.astype(np.float64)
            too_long = ln > width
        except ValueError:
            vals = np.full(rows.size, np.nan)
            too_long = np.ones(rows.size, bool)
        for q in np.flatnonzero(too_long):  # rare: not a number, or over 64 bytes
            raw = bytes(buf[o[q]: o[q] + ln[q]])
            try:
                vals[q] = float(raw.strip().decode("ascii"))
            except (ValueError, UnicodeDecodeError):
                vals[q] = np.nan
                nbad += 1
                firsts[col] = int(rows[q]) if firsts[col] is None else firsts[col]
        arr[rows] = vals
    return nbad, firsts


def _span_texts(buf, offs, lens, limit: int):
    """The byte spans ``buf[o:o+ln]`` (at most ``limit`` bytes each), gathered by one
    kernel; returns (decoded list or None, bytes list): the whole blob is decoded
    at once when it is ASCII (the usual case), else each span stays bytes."""
    offs = np.asarray(offs, np.int64)
    lens = np.minimum(np.maximum(np.asarray(lens, np.int64), 0), limit)
    if isinstance(buf, filecopy.LateFile):  # the bytes given back: the spans read from the file
        got = buf.read_many(zip(offs.tolist(), lens.tolist()))
        raw = b"".join(got)
        p = np.concatenate([[0], np.cumsum([len(g) for g in got], dtype=np.int64)]).tolist()
    else:
        blob, ptr = jsp.gather_spans(buf, offs, lens)
        raw = blob.tobytes()
        p = ptr.tolist()
    if raw.isascii():
        txt = raw.decode("ascii")
        return [txt[p[k]: p[k + 1]] for k in range(len(p) - 1)], None
    return None, [raw[p[k]: p[k + 1]] for k in range(len(p) - 1)]


def _decode_names(buf, offs, lens, escs, name_first, rep, text, describe):
    """Decode each distinct name once (id k: the span ``offs[k], lens[k]``, ``escs[k]`` when
    it has escapes, first used by row ``name_first[k]``, which a repair cites); merge
    spellings that decode alike.  Bad UTF-8 and lone surrogate escapes become U+FFFD, long
    names are cut (`_Text`).  Names without escapes come out of one decoded blob (no Python
    work per byte).  Returns (names, the name of each id)."""
    import json

    import orjson

    names: list[str] = []
    canon: dict[str, int] = {}
    remap = np.empty(name_first.shape[0], np.int32)
    bad, bad_first = 0, None
    lens = np.asarray(lens, np.int64)
    escs = np.asarray(escs, bool).tolist()
    decoded, raws = _span_texts(buf, offs, lens, text.raw_limit)
    lens_l = lens.tolist()
    max_chars = text.max_chars
    for k in range(len(lens_l)):
        ln = lens_l[k]
        s = decoded[k] if decoded is not None else None
        if s is None or escs[k] or ln > text.raw_limit:
            r = int(name_first[k])
            off = int(offs[k])
            whole = None
            if ln > text.raw_limit:  # decode a prefix (not cut inside an escape); hash the whole
                whole = buf[off: off + ln]
                cut = text.raw_limit
                back = bytes(buf[off + cut - 12: off + cut]).rfind(b"\\")
                if back >= 0:
                    cut -= 12 - back
                raw = bytes(buf[off: off + cut])
            else:
                raw = raws[k] if raws is not None else bytes(buf[off: off + ln])
            try:
                s = orjson.loads(b'"' + raw + b'"') if escs[k] else raw.decode("utf-8")
                if not isinstance(s, str):
                    s = str(s)
            except Exception:
                s = raw.decode("utf-8", "replace")
                if escs[k]:
                    try:
                        s2 = json.loads('"' + s + '"')
                        s = s2 if isinstance(s2, str) else s
                    except Exception:
                        pass
                bad += 1
                bad_first = r if bad_first is None else bad_first
            n_sur = text.n_surrogate
            s = text.clean(s, whole=whole, where=lambda r=r: describe(r))
            text.n_surrogate = n_sur  # a name's lone surrogates are counted as bad_utf8 above
        elif len(s) > max_chars:
            s = text.clean(s, where=lambda r=int(name_first[k]): describe(r))
        j = canon.get(s)
        if j is None:
            j = canon[s] = len(names)
            names.append(s)
        remap[k] = j
    rep.add("bad_utf8", bad, bad_first)
    return names, remap


def _decode_span_list(buf, offs, lens, text) -> list:
    """Category strings (one per function): decoded with bad UTF-8 replaced, cut."""
    decoded, raws = _span_texts(buf, offs, lens, text.raw_limit)
    lens_l = np.asarray(lens).tolist()
    out = []
    for k, ln in enumerate(lens_l):
        if ln <= 0:
            out.append("")
        elif ln > text.raw_limit:
            off = int(offs[k])
            out.append(text.raw(buf.read(off, ln) if isinstance(buf, filecopy.LateFile) else buf[off: off + ln]))
        elif decoded is not None:
            out.append(decoded[k] if len(decoded[k]) <= text.max_chars else text.clean(decoded[k]))
        else:
            out.append(text.raw(raws[k]))
    return out


def _row_in(row: int, ii, ss, vii, vss) -> tuple:
    """(int columns, int32 columns, row) of a cited row: an event row, or from `SIDE` on a
    side row (``vii, vss``)."""
    return (vii, vss, row - SIDE) if row >= SIDE else (ii, ss, row)


def _string_ids(read, ii, ss, vii, vss, rows, pids, tids, text):
    """(pid text, tid text) of each row (its ``pids``, ``tids``), re-reading string ids from the
    event (``read(offset, length)``: the file's bytes, `_Scan.bytes_at`); rows from `SIDE` on are
    side rows (``vii, vss``)."""
    import orjson

    rows = np.asarray(rows, np.int64)
    is_side = rows >= SIDE
    is_row = rows < FAST  # (a fast event's pid and tid are numbers)
    fls = np.zeros(rows.shape[0], np.int64)
    fls[is_row] = ss[rows[is_row], jev.S_FLAGS]
    fls[is_side] = vss[rows[is_side] - SIDE, jev.S_FLAGS]
    out = []
    for r, fl, p, t in zip(rows.tolist(), fls.tolist(), pids.tolist(), tids.tolist()):
        p, t = str(p), str(t)
        if fl & (jev.FL_PID_STR | jev.FL_TID_STR):
            ri, rs, r = _row_in(r, ii, ss, vii, vss)
            off, ln = int(ri[r, jev.I_EV_OFF]), int(rs[r, jev.S_EV_LEN])
            try:
                ev = orjson.loads(read(off, ln))
                p, t = text.value(ev.get("pid", p)), text.value(ev.get("tid", t))
            except Exception:
                pass
        out.append((p, t))
    return out


def _read_metadata(read, ii, ss, rows, key_id, key_pid, text, describe):
    """M events: process/thread names and sort indices (a few per thread), counter series'
    units (`chrome_writer.COUNTER_UNIT_EVENT`); ``read(offset, length)``: the file's bytes
    (`_Scan.bytes_at`); ``key_pid``: the process of each thread key; ``describe(row)``: an
    event's place, cited by the repair of a name cut."""
    import orjson

    info = {"thread_names": {}, "process_names": {}, "thread_sort": {}, "process_sort": {}, "counter_units": {}}
    for r in rows:
        off, ln = int(ii[r, jev.I_EV_OFF]), int(ss[r, jev.S_EV_LEN])
        raw = read(off, ln)
        try:
            ev = orjson.loads(raw)
        except Exception:
            # orjson refuses a lone surrogate escape and bytes that are not UTF-8: Python's
            # parser takes both (invalid bytes as U+FFFD), and `text.value` repairs the names
            # and cites the event as for any other name (a thread's name was lost, not repaired)
            try:
                ev = json.loads(raw.decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                continue
        if not isinstance(ev, dict):
            continue
        args = ev.get("args") or {}
        if not isinstance(args, dict):
            continue
        nm = ev.get("name")
        cite = lambda r=r: describe(int(r))  # noqa: E731  (called only when a text is repaired)
        if nm == "thread_name" and "name" in args:
            info["thread_names"][int(key_id[r])] = text.value(args["name"], cite)
        elif nm == "process_name" and "name" in args:
            info["process_names"][int(key_pid[key_id[r]])] = text.value(args["name"], cite)
        elif nm == "thread_sort_index" and "sort_index" in args:
            try:
                info["thread_sort"][int(key_id[r])] = _sort_index(args["sort_index"])
            except (TypeError, ValueError, OverflowError):
                pass
        elif nm == COUNTER_UNIT_EVENT and all(isinstance(args.get(k), str) for k in ("counter", "series", "unit")):
            info["counter_units"][(int(key_pid[key_id[r]]), text.value(args["counter"], cite),
                                   text.value(args["series"], cite))] = text.value(args["unit"], cite)
        elif nm == "process_sort_index" and "sort_index" in args:
            try:
                info["process_sort"][int(key_pid[key_id[r]])] = _sort_index(args["sort_index"])
            except (TypeError, ValueError, OverflowError):
                pass
    return info


def _sort_index(v) -> int:
    """A sort index as int32 (what the thread table stores); others are ignored."""
    k = int(v)
    if not -(1 << 31) <= k < (1 << 31):
        raise OverflowError(k)
    return k


def _bucket_flow_events(side_job: _SideJob, rank, call_thread, call_start, n_threads):
    """The v1 flow events grouped by their calls' time buckets (`chrome_fast.flow_event_buckets`)
    while the calls are sorted, from ``side_job``'s first stage (`_flows_in_order`); None when
    that stage failed or the binding will not use them."""
    got = side_job.first()
    return None if got is None else flow_event_buckets(got[0], rank, call_thread, call_start, n_threads)


def _bind_flow_events(side_job: _SideJob, bucket_stage: int, *calls):
    """The calls the v1 flow events bind to (`chrome_fast.flow_event_calls` of ``calls``, with the
    buckets of stage ``bucket_stage``, `_bucket_flow_events`), from ``side_job``'s first stage
    (`_flows_in_order`); None when that stage failed (its error is raised by ``side_job.result()``)."""
    got = side_job.first()
    return None if got is None else flow_event_calls(got[0], *calls, early=side_job.stage(bucket_stage))


def _flows_in_order(buf, vii, vss, v_ts, flow_rows, v_key_id, fast, f_key_id, seed):
    """The v1 flow events (`chrome_fast.flow_points`) and their chain order (`chrome_fast.flow_order`):
    no call is needed, so it runs on a second thread while the call tree is built."""
    pts = flow_points(buf, vii, vss, v_ts, flow_rows, v_key_id, fast, f_key_id, seed)
    return pts, flow_order(pts, seed)
