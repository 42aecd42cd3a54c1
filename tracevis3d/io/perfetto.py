"""Perfetto protobuf trace (``.perfetto-trace``, ``.pftrace``, ``.pb``) → Trace.

What Chrome, Android and the Perfetto SDK write.  The bytes are walked once by a numba scanner
of the protobuf wire format (`tracevis3d.kernels.protoscan`): one row of int64 columns per
TrackEvent, tables of track descriptors, clock snapshots, flows, extra counter values, byte
spans of the strings, the debug annotations as JSON -- no Python object per event, and no
protobuf library (Blender has none).  The rest is numpy and the kernels the Chrome reader uses
(`chrome_tree.match_begin_end`, `nesting.sort_and_nest`, `tree.nest_sorted_intervals`).

Semantics are trace processor's (Perfetto's own importer; the scanner's docstring lists what
it follows of a packet):

* times: each clock converted to the trace clock (the ClockSnapshots' ``primary_trace_clock``,
  else BOOTTIME when a snapshot has it, else the clock most events use) through the snapshots,
  hop by hop, each value by the snapshot at or before it (``clock_tracker.cc``); a clock no
  snapshot relates is dropped (``clock_unrelated``).  The Trace's times are µs from the earliest
  event, ``meta["clock_origin"]`` that event's absolute µs on the trace clock;
* tracks (``TrackDescriptor``): a track with a ``thread`` is that thread's (pid, tid): its
  slices are the thread's calls (BEGIN/END paired on the thread as Chrome's B/E, END closing the
  innermost open slice; legacy X complete events), its instants thread instants.  Every other
  track -- a process's, a child of a thread or of a process, one with no parent, one no
  descriptor describes -- holds async slices (the ``async_*`` tables: one async track each,
  named by the track) and process (or global) instants; a counter track (``CounterDescriptor``)
  holds counter samples.  The thread and process of a track come from its ``parent_uuid`` chain
  (cycles cut); names from the descriptors (the last non-empty one), ``chrome_process``'
  type, the command line, else the pid/tid;
* counters: ``counter_value`` / ``double_counter_value`` of TYPE_COUNTER events and the
  ``extra_counter_values`` of any event, times ``unit_multiplier``, summed when
  ``is_incremental``; one counter (one series "value") per counter track;
* flows: ``flow_ids`` continue a flow from the previous event with that id to this one,
  ``terminating_flow_ids`` end it there (``flow_tracker.cc``; legacy ``bind_id`` flows by their
  direction, ids of their own); a flow point on a thread instant binds to the call around it;
* args: the debug annotations of a slice's BEGIN, as JSON (`kernels.perfetto_args`; trace
  processor also adds its END's: not here);
* legacy events (``legacy_event``): B/E/X, instants (I/i/R with their scope), async b/e/S/F/n
  with ids (tracks per category, id and scope, as the Chrome reader's); ``chrome_events``'
  ``legacy_json_trace`` (JSON inside the proto) goes to the Chrome JSON reader and its calls,
  instants, counters, async slices and flows join the trace.

Not read: compressed packet bundles, ChromeTraceEvent protos, typed Chrome payloads
(``task_execution``, ``log_message``, ... : no args from them), TYPE_STATE events, CPU
scheduling and everything outside track events.  Every repair is counted in
``meta["repairs"]`` (`perfetto_text.REPAIRS`) and warned once.
"""
from __future__ import annotations

import os
import warnings
from typing import Iterable

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import jsonspans as jsp
from ..kernels import jsonvalid as jv
from ..kernels import perfetto_tracks as pt
from ..kernels import perfetto_layout as pl
from ..kernels.perfetto_args import splice_doubles
from ..kernels.protoscan import scan_trace
from ..kernels.tree import group_by_key, nest_sorted_intervals
from ..kinds import KIND_OTHER, MAX_OBJECTS_PER_CALL, classify_functions, objects_from_args, objects_from_names, \
    working_waits
from ..model import Trace, TraceFormatError, TraceWarning
from ..names import parse_function_name
from .chrome_side import by_key_then_time
from .limits import Limits, resolve_limits
from .nesting import sort_and_nest
from .perfetto_side import async_tables, counter_tables, flow_tables, instant_tables, json_in_proto
from .perfetto_text import SCAN_REPAIRS, Repairs, SpanText, packet_at, scan_error
from .perfetto_tracks import Tracks

__all__ = ["load_perfetto"]

#: JSON of debug annotations a file may make, in all, per byte of it (plus `ARGS_SLACK`): an
#: interned name referenced by many annotations writes its bytes each time
ARGS_PER_BYTE = 8
ARGS_SLACK = 64 << 20
#: µs a track's time may step back in the file without a repair: Chrome writes a sequence's events
#: on its µs incremental clock and on MONOTONIC ns, so its µs rounding steps back by < 1 µs
BACKWARDS_TOLERANCE = 1.0


def load_perfetto(data, source: str = "<bytes>", *, keep_args: bool = True, kind_rules: Iterable | None = None,
                  overlap: str = "clip", warn: bool = True, limits: Limits | None = None, **limit_options) -> Trace:
    """Read the Perfetto protobuf trace ``data`` (bytes or any buffer; gzip already inflated) into
    a checked `Trace` (see the module docstring).  ``overlap``: "clip" (default) clips a slice
    that sticks out of its enclosing one, "drop" drops it.  ``kind_rules``: `tracevis3d.kinds`.
    Limits (``max_events=``, ...; or ``limits=``): `tracevis3d.io.limits`.  Raises
    `TraceFormatError` naming ``source``, the byte and the problem.

    The stages: scan the packets (`protoscan.scan_trace`, `_scan_repairs`), put the events on the
    trace clock (`_event_times`), key the tracks and threads (`Tracks`), pair and nest the slices
    of thread tracks into calls (`_thread_calls`, `_nest_calls`), the function table and args
    (`_function_table`, `_checked_args`), then the instants, counters, async slices and flows."""
    if overlap not in ("clip", "drop"):
        raise ValueError(f"overlap must be 'clip' or 'drop', got {overlap!r}")
    lim = resolve_limits(limits, limit_options)
    if limit_options:
        raise TypeError(f"load_perfetto() got unexpected keyword arguments {sorted(limit_options)}")
    buf = data if isinstance(data, np.ndarray) else np.frombuffer(data, np.uint8)
    buf = buf.reshape(-1).view(np.uint8)
    n = int(buf.shape[0])
    if n == 0:
        raise TraceFormatError(f"{source}: empty file (0 bytes): no Perfetto trace packets")
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    (info, ev, evv, ax, fl, xc, xcv, td, cs, sp_off, sp_len, sl, ab, aptr, fix_pos, fix_val, js, sq, rep_n,
     rep_at) = scan_trace(buf, lim.max_events, seed, lim.max_args_nesting, lim.max_args_bytes,
                             ARGS_PER_BYTE * n + ARGS_SLACK)
    rep = _scan_repairs(source, n, info, rep_n, rep_at, lim)
    text = SpanText(buf, sp_off, sp_len, lim.max_name_chars, seed)
    skipped = {}
    if info[pl.I_N_SKIP_TYPE]:
        skipped["other event types (TYPE_STATE, ...)"] = int(info[pl.I_N_SKIP_TYPE])
    if info[pl.I_N_SKIP_PHASE]:
        skipped["legacy events of other phases (C, s/t/f, M, ...)"] = int(info[pl.I_N_SKIP_PHASE])
    clocks = Clocks(cs, info, ev[pl.C_CLK], seed)
    ok, t0_ns, t_us, dur_us = _event_times(ev, ax, clocks, rep, lim)
    bits = ev[pl.C_BITS]
    etype = bits & 15
    tracks = Tracks(buf, ev, ax, td, text, rep, seed, ok)

    # ---- calls: the slices of thread tracks
    c_row, c_start, c_end = _thread_calls(ev, tracks, ok, etype, t_us, dur_us, rep)
    c_key = tracks.thread_key[c_row]
    # the thread table: threads with calls or thread instants
    inst_t = np.flatnonzero(ok & (tracks.thread_key >= 0) & (etype == pl.T_INSTANT))
    inst_scope = (bits[inst_t] >> pl.B_ISCOPE) & 3
    inst_on_thread = (inst_scope != 1) & (inst_scope != 2)  # legacy global / process instants: not the thread's
    used = np.zeros(tracks.n_thread_keys, bool)
    used[c_key] = True
    i_key = tracks.thread_key[inst_t[inst_on_thread]]
    used[i_key] = True
    n_keys = tracks.n_thread_keys  # lanes past max_lanes_read: the threads of the fewest events share one
    weight = np.bincount(c_key, minlength=n_keys)[:n_keys] + np.bincount(i_key, minlength=n_keys)[:n_keys]
    rank, threads = tracks.thread_table(used, weight, lim.max_lanes_read, rep)
    n_threads = len(threads["names"])
    c_row, c_start, c_end, c_thread, parent, depth, end_index = _nest_calls(
        ev, rep, overlap, n_threads, c_row, c_start, c_end, rank[c_key].astype(np.int32))
    aux = ev[pl.C_AUX]
    c_src = np.where(aux[c_row] >= 0, ax[pl.AX_SRC, np.maximum(aux[c_row], 0)] if ax.shape[1] else -1, -1)
    func, function_names, function_cats, files, lines, parsed = _function_table(
        text, ev[pl.C_NAME, c_row], ev[pl.C_CAT, c_row], c_src, sl)

    # ---- args: the BEGIN's debug annotations, as JSON
    blob, bptr = _args_blob(ab, aptr, fix_pos, fix_val)
    c_args = ev[pl.C_ARGS, c_row]
    a_calls = _checked_args(ev, rep, lim, c_row, c_args, blob, bptr)
    # ---- kinds and objects (as the Chrome reader: names, and the args of the sync calls)
    fkind = classify_functions(function_names, kind_rules)
    kind = fkind[func] if func.size else np.zeros(0, np.uint8)
    kind[working_waits(kind, c_start, c_end, end_index)] = KIND_OTHER
    obj_ptr, obj_ids, object_names = _objects(function_names, func, kind, a_calls, c_args, blob, bptr, text)
    if keep_args and a_calls.size:
        e = c_args[a_calls]
        args_blob, args_ptr = jsp.gather_spans(blob, bptr[e], bptr[e + 1] - bptr[e])
        args_call = a_calls.astype(np.int32)
    else:
        args_blob, args_ptr, args_call = np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.int32)

    # ---- what else the trace carries
    thread_ranges = np.searchsorted(c_thread, np.arange(n_threads + 1))
    inst = instant_tables(ev, bits, ok, t_us, tracks, rank, text)
    counters = counter_tables(ev, evv, xc, xcv, ok, t_us, tracks, rep)
    asyncs = async_tables(ev, bits, ok, t_us, dur_us, tracks, rep, text)
    flows = flow_tables(ev, fl, ok, t_us, tracks, rank, c_row, c_start, c_end, parent, thread_ranges, rep)
    if not c_row.size and not inst["instant_ts"].size and not counters["counter_ts"].size \
            and not asyncs["async_start"].size:
        raise TraceFormatError(
            f"{source}: no slices, instants, counter values or async slices: nothing to show ({int(info[pl.I_PACKETS])}"
            f" packets, {ev.shape[1]} track events; repairs: {', '.join(rep.items) or 'none'})")
    rep.add("bad_utf8", text.n_bad, text.first_bad)
    rep.add("long_name", text.text.n_long, text.text.first_long or "")
    meta = {
        "source": source,
        "format": "perfetto",
        "clock_origin": t0_ns / 1000.0,
        "time_unit": "us",
        "trace_clock": clocks.name,
        "n_packets": int(info[pl.I_PACKETS]),
        "n_events": int(ev.shape[1]),
        "n_bytes": n,
        "n_sequences": int(sq.shape[1]),
        "repairs": rep.items,
        "skipped": skipped,
    }
    trace = Trace(
        func=func.astype(np.int32), start=np.ascontiguousarray(c_start, np.float64),
        end=np.ascontiguousarray(c_end, np.float64), depth=depth, parent=parent, end_index=end_index,
        thread=c_thread, kind=np.ascontiguousarray(kind, np.uint8), obj_ptr=obj_ptr, obj_ids=obj_ids,
        function_names=function_names, function_files=files, function_lines=np.array(lines, np.int32),
        function_cats=function_cats, function_paths=[p.path for p in parsed],
        thread_pid=threads["pid"], thread_tid=threads["tid"], thread_names=threads["names"],
        thread_sort=threads["sort"], process_names=threads["process_names"], object_names=object_names,
        args_call=args_call, args_ptr=args_ptr.astype(np.int64), args_blob=args_blob, meta=meta,
        **inst, **flows, **counters, **asyncs)
    trace.check()
    if js.shape[1]:  # JSON inside the proto: the Chrome reader's trace of it, joined
        trace = json_in_proto(trace, buf, js, source, lim, rep, kind_rules, overlap,
                              lambda v: _or_same(clocks.to_trace(pl.CLK_MONOTONIC, v), v))
    if warn:
        for code, it in rep.items.items():
            warnings.warn(f"{source}: {it['count']} × {it['action']}; first: {it['first']}", TraceWarning,
                          stacklevel=3)
    return trace


def _scan_repairs(source: str, n: int, info, rep_n, rep_at, lim: Limits) -> Repairs:
    """The scan's outcome: its `TraceFormatError` when it failed or found no complete packet, else
    a `Repairs` holding what it repaired (a file cut short, `SCAN_REPAIRS`)."""
    if info[pl.I_STATUS] < 0:
        raise scan_error(source, info, n, lim.max_events)
    rep = Repairs()
    trunc = int(info[pl.I_TRUNC_POS])
    if trunc >= 0:
        if info[pl.I_PACKETS] == 0:
            raise TraceFormatError(f"{source}: cut short: the first packet (at byte {trunc}) runs past the end of "
                                   f"the file ({n} bytes), no complete packet")
        rep.add("truncated", 1, f"the packet at byte {trunc} of {n}")
    for code, key in SCAN_REPAIRS.items():
        rep.add(key, int(rep_n[code]), packet_at(rep_at[code]) if rep_at[code] >= 0 else "")
    return rep


def _event_times(ev, ax, clocks: "Clocks", rep: Repairs, lim: Limits):
    """The events' times on the trace clock: (which events' clock converts and whose time is in
    range (``bad_time``), the origin in ns: the earliest event kept, each event's time in µs from
    it, each legacy X event's duration in µs (negative ones 0: ``negative_dur``; 0 for others))."""
    t_ns, ok = clocks.events(ev[pl.C_CLK], ev[pl.C_TS], rep, ev[pl.C_OFF])
    if lim.max_abs_time < 1e21:
        far = ok & (np.abs(t_ns.astype(np.float64)) / 1000.0 > lim.max_abs_time)
        if far.any():
            rep.add("bad_time", int(far.sum()), packet_at(ev[pl.C_OFF, np.flatnonzero(far)[0]]))
            ok &= ~far
    etype = ev[pl.C_BITS] & 15
    # legacy X durations (ns), read where the event has an aux row
    dur_ns = np.full(ev.shape[1], -1, np.int64)
    aux = ev[pl.C_AUX]
    has_aux = np.flatnonzero(aux >= 0)
    if has_aux.size:
        dur_ns[has_aux] = ax[pl.AX_DUR, aux[has_aux]]
    neg = (etype == pl.T_COMPLETE) & ok & (dur_ns < 0)
    rep.add("negative_dur", int(neg.sum()), packet_at(ev[pl.C_OFF, np.flatnonzero(neg)[0]]) if neg.any() else "")
    dur_ns[neg] = 0
    t0_ns = int(t_ns[ok].min()) if ok.any() else 0
    ends = ok & (etype == pl.T_COMPLETE)
    t_us = (t_ns - t0_ns).astype(np.float64) / 1000.0
    dur_us = np.where(ends, dur_ns, 0).astype(np.float64) / 1000.0
    return ok, t0_ns, t_us, dur_us


def _thread_calls(ev, tracks: Tracks, ok, etype, t_us, dur_us, rep: Repairs):
    """The calls of the thread tracks: legacy X events, and BEGIN/END pairs per track (a thread may
    have several: each is a stack of its own; an END with no BEGIN dropped, an unclosed BEGIN closed
    at its track's last time).  Returns (event row, start, end) of each call, X calls first."""
    on_thread = tracks.thread_key >= 0
    be = np.flatnonzero(ok & on_thread & ((etype == pl.T_BEGIN) | (etype == pl.T_END)))
    xr = np.flatnonzero(ok & on_thread & (etype == pl.T_COMPLETE))
    inst_t = np.flatnonzero(ok & on_thread & (etype == pl.T_INSTANT))
    stack = np.where(tracks.track >= 0, tracks.track, tracks.n_tracks + tracks.thread_key)
    n_stacks = tracks.n_tracks + tracks.n_thread_keys
    last = pt.max_per_key(stack[be], t_us[be], n_stacks)
    last = np.maximum(last, pt.max_per_key(stack[xr], t_us[xr] + dur_us[xr], n_stacks))
    last = np.maximum(last, pt.max_per_key(stack[inst_t], t_us[inst_t], n_stacks))
    if be.size:
        key = stack[be]
        nback, first_back = pt.backwards(key, t_us[be], BACKWARDS_TOLERANCE)
        rep.add("out_of_order", nback, packet_at(ev[pl.C_OFF, be[first_back]]) if nback else "")
        o = by_key_then_time(key, t_us[be])
        rows = be[o]
        b_idx, b_start, b_end, wc, wf = ct.match_begin_end(
            stack[rows], t_us[rows], etype[rows] == pl.T_BEGIN, np.full(rows.size, -1, np.int64), last)
        for code, w in (("end_unmatched", ct.W_E_UNMATCHED), ("unclosed", ct.W_UNCLOSED)):
            rep.add(code, int(wc[w]), packet_at(ev[pl.C_OFF, rows[wf[w]]]) if wf[w] >= 0 else "")
        b_rows = rows[b_idx]
    else:
        b_rows = np.zeros(0, np.int64)
        b_start = b_end = np.zeros(0)
    c_row = np.concatenate([xr, b_rows]).astype(np.int64)
    c_start = np.concatenate([t_us[xr], b_start])
    c_end = np.concatenate([t_us[xr] + dur_us[xr], b_end])
    return c_row, c_start, c_end


def _nest_calls(ev, rep: Repairs, overlap: str, n_threads: int, c_row, c_start, c_end, c_thread):
    """The calls sorted into per-thread pre-order and nested; a slice sticking out of its enclosing
    one clipped (``overlap``) or, with ``overlap="drop"``, dropped (``overlap_dropped``).  Returns
    (row, start, end, thread, parent, depth, end_index) of the calls kept."""
    order, c_thread, c_start, new_end, c_row, parent, depth, end_index, clipped = sort_and_nest(
        c_thread, c_start, c_end, np.arange(c_row.size, dtype=np.int64), c_row, n_threads)
    if clipped.any() and overlap == "drop":
        c_end = c_end[order]  # (unclipped)
        rep.add("overlap_dropped", int(clipped.sum()), _call_at(ev, c_row, clipped))
        for _ in range(64):
            keep = ~clipped
            c_row, c_start, c_end, c_thread = c_row[keep], c_start[keep], c_end[keep], c_thread[keep]
            parent, depth, end_index, new_end, clipped = nest_sorted_intervals(c_thread, c_start, c_end)
            if not clipped.any():
                break
            rep.add("overlap_dropped", int(clipped.sum()))
    if clipped.any():
        rep.add("overlap", int(clipped.sum()), _call_at(ev, c_row, clipped))
    return c_row, c_start, new_end, c_thread, parent, depth, end_index


def _function_table(text: SpanText, c_name_span, c_cat_span, c_src, sl):
    """One function per name, in order of first call: (function of each call, each function's
    name, category, file and line (its source location, else what its name says), parsed name)."""
    name_ids, names = text.table(c_name_span, {-1: "(unnamed)", -2: "(unknown name)"})
    func, fn_name = jsp.renumber_by_first_use(name_ids, max(len(names), 1))
    function_names = [names[k] for k in fn_name.tolist()]
    first = _first_uses(func)
    cat_span = c_cat_span[first]
    cat_ids, cats = text.table(cat_span, {-1: "", -2: ""})
    function_cats = [cats[k] for k in cat_ids.tolist()]
    files, lines = [], []
    for s in c_src[first].tolist():
        if s >= 0 and sl.shape[1]:
            files.append(text.one(int(sl[0, s])))
            lines.append(int(sl[2, s]))
        else:
            files.append("")
            lines.append(-1)
    parsed = [parse_function_name(s) for s in function_names]
    files = [f or p.file for f, p in zip(files, parsed)]
    lines = [ln if ln >= 0 else p.line for ln, p in zip(lines, parsed)]
    return func, function_names, function_cats, files, lines, parsed


def _checked_args(ev, rep: Repairs, lim: Limits, c_row, c_args, blob, bptr):
    """The calls whose args (spans of ``blob``) Python's json reads back within the limits; the
    others are ``bad_args``."""
    a_calls = np.flatnonzero(c_args >= 0)
    if a_calls.size:
        e = c_args[a_calls]
        st = jv.json_spans_status(blob, bptr[e], bptr[e + 1] - bptr[e], lim.max_args_nesting, lim.max_args_bytes)
        bad = st != jv.JSON_OK
        if bad.any():
            rep.add("bad_args", int(bad.sum()), _call_at(ev, c_row, np.isin(np.arange(c_row.size), a_calls[bad])))
            a_calls = a_calls[~bad]
    return a_calls


def _first_uses(ids: np.ndarray) -> np.ndarray:
    """Where each id of ``ids`` (numbered by first use) first comes: where their running maximum
    grows."""
    grows = np.ones(ids.shape[0], bool)
    if ids.size:
        top = np.maximum.accumulate(ids)
        np.greater(top[1:], top[:-1], out=grows[1:])
    return np.flatnonzero(grows)


def _call_at(ev, c_row, mask) -> str:
    """The packet of the first call flagged by ``mask`` (a repair's first occurrence)."""
    k = np.flatnonzero(mask)
    if not k.size or c_row[k[0]] < 0:
        return ""
    return packet_at(ev[pl.C_OFF, c_row[k[0]]])


def _args_blob(ab, aptr, fix_pos, fix_val):
    """The args blob with its doubles written in (numpy's shortest round-trip text, Python's
    ``repr``; NaN and infinities as null) and the entries' starts moved accordingly."""
    if not fix_pos.size:
        return ab, aptr
    texts = fix_val.astype("S32")
    bad = ~np.isfinite(fix_val)
    texts[bad] = b"null"
    lens = np.char.str_len(texts).astype(np.int64)
    mat = np.frombuffer(texts.tobytes(), np.uint8).reshape(-1, 32)
    return splice_doubles(ab, ab.shape[0], aptr, fix_pos, mat, lens)


def _objects(function_names, func, kind, a_calls, c_args, blob, bptr, text):
    """(obj_ptr, obj_ids, object_names): the objects of the synchronisation calls (kind > 0)
    from their names and args (`tracevis3d.kinds`), as the Chrome reader finds them."""
    n = func.shape[0]
    obj_ptr = np.zeros(n + 1, np.int64)
    sync = np.flatnonzero(kind > 0)
    if not sync.size:
        return obj_ptr, np.zeros(0, np.int32), []
    import orjson

    name_objs = objects_from_names(function_names)
    has = np.zeros(n, bool)
    has[a_calls] = True
    object_names: list = []
    index: dict = {}
    counts = np.zeros(n, np.int64)
    ids: list = []
    for i in sync.tolist():
        objs = list(name_objs[func[i]])
        if has[i]:
            e = int(c_args[i])
            try:
                found = objects_from_args(orjson.loads(bytes(blob[bptr[e]: bptr[e + 1]])))
            except Exception:
                found = []
            for o in found:
                o = text.text.clean(o)
                if o not in objs and len(objs) < MAX_OBJECTS_PER_CALL:
                    objs.append(o)
        for o in objs:
            if o not in index:
                index[o] = len(object_names)
                object_names.append(o)
            ids.append(index[o])
        counts[i] = len(objs)
    np.cumsum(counts, out=obj_ptr[1:])
    return obj_ptr, np.asarray(ids, np.int32), object_names


class Clocks:
    """The trace clock and the conversion of every clock to it.  Clock key 0 is the trace clock;
    another clock converts through the snapshots (`cs`: snapshot, clock key, ns) along the
    shortest chain of clocks two snapshots share, each hop by the last snapshot at or before the
    value (the first when none is), as trace processor's ClockTracker.  The trace clock is the
    snapshots' ``primary_trace_clock``, else BOOTTIME when a snapshot holds it (and none
    TRACE_FILE), else the clock most events use (``keys``: the events' clock keys)."""

    def __init__(self, cs, info, keys, seed):
        primary = int(info[pl.I_PRIMARY])
        if primary < 0 and info[pl.I_SNAP_BOOT] and not info[pl.I_SNAP_FILE]:
            primary = pl.CLK_BOOTTIME
        # the events by clock: ids by a hash (few distinct keys among millions of events), then one
        # counting sort
        ids, first = jsp.intern_pairs(keys, np.zeros(keys.shape[0], np.int64), seed) if keys.size else \
            (np.zeros(0, np.int32), np.zeros(0, np.int64))
        self.keys = keys[first]
        self.order, self.ptr = group_by_key(ids, first.size)
        counts = np.diff(self.ptr)
        if primary < 0:
            explicit = self.keys != 0
            primary = int(self.keys[explicit][np.argmax(counts[explicit])]) if explicit.any() else 0
        self.primary = primary
        self.name = _clock_name(primary)
        self.snap, self.ckey, self.cval = cs[0], cs[1], cs[2]
        self.adj: dict = {}
        for snap in np.unique(self.snap).tolist():
            ks = np.unique(self.ckey[self.snap == snap]).tolist()
            for a in ks:
                self.adj.setdefault(a, set()).update(k for k in ks if k != a)

    def to_trace(self, key: int, v: np.ndarray):
        """Values ``v`` (ns on clock ``key``) on the trace clock; None when no snapshot relates them."""
        if key == 0 or key == self.primary:
            return v
        path = _clock_path(self.adj, key, self.primary)
        if path is None:
            return None
        for a, b in zip(path[:-1], path[1:]):
            v = _convert(v, self.snap, self.ckey, self.cval, a, b)
        return v

    def events(self, clk, ts, rep, off):
        """Each event's time in ns on the trace clock and whether its clock converts."""
        out = ts.copy()
        ok = np.ones(ts.shape[0], bool)
        for g, k in enumerate(self.keys.tolist()):
            if k == 0 or k == self.primary:
                continue
            rows = self.order[self.ptr[g]: self.ptr[g + 1]]
            v = self.to_trace(k, out[rows])
            if v is None:
                ok[rows] = False
                rep.add("clock_unrelated", rows.size, f"{rows.size} events on {_clock_name(k)} (the trace clock is "
                                                      f"{self.name}), first {packet_at(off[rows[0]])}")
            else:
                out[rows] = v
        return out, ok


def _or_same(v, same):
    return same if v is None else v


def _clock_path(adj: dict, src: int, dst: int):
    """The shortest chain of clocks from ``src`` to ``dst`` (breadth first), None when none."""
    prev = {src: None}
    todo = [src]
    while todo:
        nxt = []
        for a in todo:
            for b in adj.get(a, ()):
                if b not in prev:
                    prev[b] = a
                    if b == dst:
                        path = [b]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        return path[::-1]
                    nxt.append(b)
        todo = nxt
    return None


def _convert(v, snap, ckey, cval, a, b):
    """Values ``v`` (ns on clock ``a``) on clock ``b``: by the snapshot holding both whose value of
    ``a`` is the last at or before each value (the first snapshot for values before all)."""
    sa = {int(s): int(x) for s, x in zip(snap[ckey == a].tolist(), cval[ckey == a].tolist())}
    pairs = sorted((x, int(y)) for s, y in zip(snap[ckey == b].tolist(), cval[ckey == b].tolist())
                   if (x := sa.get(int(s))) is not None)
    xa = np.array([p[0] for p in pairs], np.int64)
    xb = np.array([p[1] for p in pairs], np.int64)
    k = np.maximum(np.searchsorted(xa, v, side="right") - 1, 0)
    return xb[k] + (v - xa[k])


_CLOCKS = {1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE", 5: "MONOTONIC_RAW",
           6: "BOOTTIME", 9: "TSC", 10: "PERF", 11: "TRACE_FILE"}


def _clock_name(key: int) -> str:
    if key == 0:
        return "trace clock (no clock snapshot)"
    if key >= 256:
        return f"sequence clock {key & 255} of sequence #{(key >> 8) - 1}"
    return _CLOCKS.get(key, f"clock {key}")
