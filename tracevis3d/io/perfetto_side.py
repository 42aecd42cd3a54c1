"""What a Perfetto trace carries besides calls (`tracevis3d.io.perfetto`): instants, counters,
async slices and flows as the Trace's tables (`model_side`), and the JSON trace inside the
proto (``chrome_events``' ``legacy_json_trace``) read by the Chrome reader and joined.

Semantics in `tracevis3d.io.perfetto`'s docstring; everything here is numpy over the event rows
and the kernels of the Chrome reader (`chrome_tree.match_begin_end`, `tree.preorder_sort`,
`tree.nest_sorted_intervals`).
"""
from __future__ import annotations

import re

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import jsonspans as jsp
from ..kernels import perfetto_tracks as pt
from ..kernels import perfetto_layout as pl
from ..kernels.tree import nest_sorted_intervals, preorder_sort
from ..model import Trace, TraceFormatError
from .chrome_side import by_key_then_time
from .perfetto_text import packet_at

_WHOLE_DOCUMENT = re.compile(rb'\{\s*"(traceEvents|systemTraceEvents|metadata|displayTimeUnit)"')
_ID_KINDS = {1: 1, 2: 3, 3: 2}  # legacy id kind (unscoped, local, global) → async_track_id_kind (id, id2.local, .global)


def instant_tables(ev, bits, ok, t_us, tracks, rank, text) -> dict:
    """The instants: TYPE_INSTANT (and legacy I/i/R) events.  On a thread track a thread instant
    (a legacy one of global or process scope stays so), on another track one of its process (of
    no process: global)."""
    etype = bits & 15
    rows = np.flatnonzero(ok & (etype == pl.T_INSTANT))
    tk = tracks.thread_key[rows]
    iscope = (bits[rows] >> pl.B_ISCOPE) & 3
    on_thread = (tk >= 0) & (iscope != 1) & (iscope != 2)
    thread = np.where(on_thread, rank[np.maximum(tk, 0)], -1).astype(np.int32)
    trk = tracks.track[rows]
    pid = np.where(tk >= 0, tracks.key_pid[np.maximum(tk, 0)] if tracks.key_pid.size else -1,
                   tracks.tr_pid[np.maximum(trk, 0)] if tracks.n_tracks else -1).astype(np.int64)
    scope = np.where(on_thread, ord("t"), np.where((iscope == 1) | (pid < 0), ord("g"), ord("p"))).astype(np.uint8)
    ids, names = text.table(ev[pl.C_NAME, rows], {-1: "(unnamed)", -2: "(unknown name)"})
    return {"instant_ts": t_us[rows].astype(np.float64), "instant_name": ids.astype(np.int32),
            "instant_thread": thread, "instant_scope": scope, "instant_pid": pid, "instant_names": names}


def counter_tables(ev, evv, xc, xcv, ok, t_us, tracks, rep) -> dict:
    """The counters: TYPE_COUNTER values and extra counter values, one counter (one series,
    "value") per counter track, times its ``unit_multiplier``, running sums where it is
    ``is_incremental``; sorted by (series, time)."""
    etype = ev[pl.C_BITS] & 15
    crow = np.flatnonzero(ok & (etype == pl.T_COUNTER))
    xrow = xc[0]
    xkeep = ok[xrow] if xrow.size else np.zeros(0, bool)
    rows = np.concatenate([crow, xrow[xkeep]])
    trk = np.concatenate([tracks.track[crow], tracks.uuid_index(xc[1][xkeep])])
    val = np.concatenate([evv[crow], xcv[xkeep]])
    is_counter = (trk >= 0) & (tracks.tr_kind[np.maximum(trk, 0)] == pl.TK_COUNTER) if tracks.n_tracks else \
        np.zeros(trk.size, bool)
    if (~is_counter).any():
        bad = rows[~is_counter]
        rep.add("counter_not_counter_track", int(bad.size), packet_at(ev[pl.C_OFF, bad.min()]))
        rows, trk, val = rows[is_counter], trk[is_counter], val[is_counter]
    ts = t_us[rows]
    o = by_key_then_time(trk, ts)
    trk, ts, val = trk[o], ts[o], val[o]
    val = val * tracks.tr_cmult[trk]
    if tracks.tr_cincr.any():
        val = pt.running_sums(trk, val, tracks.tr_cincr)
    used = np.unique(trk)
    series = np.searchsorted(used, trk).astype(np.int32)
    names = [tracks.counter_name(int(t)) for t in used.tolist()]
    return {"counter_ts": np.ascontiguousarray(ts, np.float64), "counter_value": np.ascontiguousarray(val, np.float64),
            "counter_series": series, "series_counter": np.arange(used.size, dtype=np.int32),
            "series_pid": tracks.tr_pid[used].astype(np.int64), "series_names": ["value"] * used.size,
            "series_units": [tracks.counter_unit(int(t)) for t in used.tolist()], "counter_names": names}


def async_tables(ev, bits, ok, t_us, dur_us, tracks, rep, text) -> dict:
    """The async slices: the slices of tracks that are no thread's (one async track each, named by
    the track) and the legacy async events (tracks per process for local ids, category, id and
    scope); BEGIN/END paired per track (END closing the innermost), legacy n/T/p zero-length;
    nested per track, sorted by (track, start)."""
    etype = bits & 15
    n_tr = tracks.n_tracks
    sl_kind = (etype == pl.T_BEGIN) | (etype == pl.T_END) | (etype == pl.T_COMPLETE)
    urows = np.flatnonzero(ok & sl_kind & (tracks.thread_key < 0) & (tracks.track >= 0))
    lrows = np.flatnonzero(ok & (etype >= pl.T_ASYNC_BEGIN) & (etype <= pl.T_ASYNC_INSTANT))
    key = np.concatenate([tracks.track[urows], np.zeros(lrows.size, np.int64)])
    leg_cat = leg_id = leg_scope = leg_pid = None
    if lrows.size:  # legacy tracks: (process of a local id, id kind, id, category, scope)
        aux = ev[pl.C_AUX, lrows]
        idk = (bits[lrows] >> pl.B_IDKIND) & 3
        cat, cats = text.table(ev[pl.C_CAT, lrows], {-1: "", -2: ""})
        scope_sp = np.where(aux >= 0, tracks_aux(ev, lrows, pl.AX_SCOPE, tracks), -1)
        scope, scopes = text.table(scope_sp, {-1: ""})
        tk = tracks.thread_key[lrows]
        pid = np.where(tk >= 0, tracks.key_pid[np.maximum(tk, 0)] if tracks.key_pid.size else -1,
                       tracks.tr_pid[np.maximum(tracks.track[lrows], 0)] if n_tr else -1)
        ids = tracks_aux(ev, lrows, pl.AX_ID, tracks)
        mat = np.stack([np.where(idk == 2, pid, -1), idk, ids, cat.astype(np.int64), scope.astype(np.int64)], 1)
        uniq, inv = np.unique(mat, axis=0, return_inverse=True)
        key[urows.size:] = n_tr + inv.reshape(-1)
        leg_cat = [cats[int(c)] for c in uniq[:, 3].tolist()]
        leg_scope = [scopes[int(c)] for c in uniq[:, 4].tolist()]
        leg_id = [f"0x{int(v) & 0xFFFFFFFFFFFFFFFF:x}" for v in uniq[:, 2].tolist()]
        leg_kind = [_ID_KINDS.get(int(k), 1) for k in uniq[:, 1].tolist()]
        leg_pid = np.where(uniq[:, 0] >= 0, uniq[:, 0], [int(p) for p in
                                                           _first_pid(inv.reshape(-1), pid, uniq.shape[0])])
    rows = np.concatenate([urows, lrows])
    et = etype[rows]
    n_keys = n_tr + (len(leg_cat) if leg_cat is not None else 0)
    is_be = (et == pl.T_BEGIN) | (et == pl.T_END) | (et == pl.T_ASYNC_BEGIN) | (et == pl.T_ASYNC_END)
    be = np.flatnonzero(is_be)
    s_key = [key[~is_be]]
    s_start = [t_us[rows[~is_be]]]
    s_end = [t_us[rows[~is_be]] + np.where(et[~is_be] == pl.T_COMPLETE, dur_us[rows[~is_be]], 0.0)]
    s_row = [rows[~is_be]]
    if be.size:
        last = pt.max_per_key(key, t_us[rows], max(n_keys, 1))
        o = by_key_then_time(key[be], t_us[rows[be]])
        b = be[o]
        is_begin = (et[b] == pl.T_BEGIN) | (et[b] == pl.T_ASYNC_BEGIN)
        b_idx, b_start, b_end, wc, wf = ct.match_begin_end(key[b], t_us[rows[b]], is_begin,
                                                           np.full(b.size, -1, np.int64), last)
        for code, w in (("async_unmatched_end", ct.W_E_UNMATCHED), ("async_unclosed", ct.W_UNCLOSED)):
            rep.add(code, int(wc[w]), packet_at(ev[pl.C_OFF, rows[b[wf[w]]]]) if wf[w] >= 0 else "")
        s_key.append(key[b[b_idx]])
        s_start.append(b_start)
        s_end.append(b_end)
        s_row.append(rows[b[b_idx]])
    a_key = np.concatenate(s_key)
    a_start = np.concatenate(s_start)
    a_end = np.concatenate(s_end)
    a_row = np.concatenate(s_row)
    # the tracks with slices, numbered by their first slice in the file
    used = np.unique(a_key)
    first_row = np.full(max(n_keys, 1), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_row, a_key, a_row)
    used = used[np.argsort(first_row[used], kind="stable")]
    new_of = np.full(max(n_keys, 1), -1, np.int64)
    new_of[used] = np.arange(used.size)
    tr = new_of[a_key].astype(np.int32)
    order = preorder_sort(tr, a_start, a_end, a_row, used.size)
    tr, a_start, a_end, a_row = tr[order], a_start[order], a_end[order], a_row[order]
    _, depth, _, new_end, _ = nest_sorted_intervals(tr, a_start, a_end)
    name_ids, names = text.table(ev[pl.C_NAME, a_row], {-1: "(unnamed)", -2: "(unknown name)"})
    cats, ids, scopes, kinds, pids = [], [], [], [], []
    for k in used.tolist():
        if k < n_tr:
            cats.append(tracks.track_name(k))
            ids.append(f"{int(tracks.tr_uuid[k]) & 0xFFFFFFFFFFFFFFFF}")
            scopes.append("")
            kinds.append(1)
            pids.append(int(tracks.tr_pid[k]))
        else:
            j = k - n_tr
            cats.append(leg_cat[j])
            ids.append(leg_id[j])
            scopes.append(leg_scope[j])
            kinds.append(leg_kind[j])
            pids.append(int(leg_pid[j]))
    return {"async_start": np.ascontiguousarray(a_start, np.float64),
            "async_end": np.ascontiguousarray(np.maximum(new_end, a_start), np.float64),
            "async_name": name_ids.astype(np.int32), "async_track": tr, "async_depth": depth.astype(np.int32),
            "async_names": names, "async_track_pid": np.array(pids, np.int64),
            "async_track_id_kind": np.array(kinds, np.uint8), "async_track_cats": cats, "async_track_ids": ids,
            "async_track_scopes": scopes}


def tracks_aux(ev, rows, col, tracks) -> np.ndarray:
    """Column ``col`` of the aux rows of event ``rows`` (-1 where an event has none)."""
    aux = ev[pl.C_AUX, rows]
    out = np.full(rows.size, -1, np.int64)
    has = aux >= 0
    out[has] = tracks.ax[col, aux[has]]
    return out


def _first_pid(inv, pid, n):
    """The process of the first event of each of ``n`` legacy async tracks."""
    out = np.full(n, -1, np.int64)
    seen = np.zeros(n, bool)
    for k, p in zip(inv.tolist(), pid.tolist()):
        if not seen[k]:
            seen[k] = True
            out[k] = p
    return out


def flow_tables(ev, fl, ok, t_us, tracks, rank, c_row, c_start, c_end, parent, thread_ranges, rep) -> dict:
    """The flows: at each flow point (an event's ``flow_ids`` / ``terminating_flow_ids``, legacy
    ``bind_id``) in time order per id, a link from the previous point of that id unless the
    previous one terminated it (trace processor's FlowTracker).  A point binds to its event's
    call (a thread slice's BEGIN or complete event) or, for a thread instant, the call around it;
    a link with an end that binds to no call is dropped."""
    frow, fid, fkind = fl[pl.FL_ROW], fl[pl.FL_ID], fl[pl.FL_KIND]
    keep = ok[frow] if frow.size else np.zeros(0, bool)
    frow, fid, fkind = frow[keep], fid[keep], fkind[keep]
    empty = {"flow_id": np.zeros(0, np.int64), "flow_from": np.zeros(0, np.int32), "flow_to": np.zeros(0, np.int32),
             "flow_cat": np.zeros(0, np.int32), "flow_cat_names": []}
    if frow.size < 2:
        return empty
    call_of_row = np.full(ev.shape[1], -1, np.int64)
    real = c_row >= 0
    call_of_row[c_row[real]] = np.flatnonzero(real)
    point = call_of_row[frow]
    etype = ev[pl.C_BITS, frow] & 15
    tk = tracks.thread_key[frow]
    inst = (point < 0) & (etype == pl.T_INSTANT) & (tk >= 0)
    if inst.any():
        th = rank[tk[inst]]
        point[inst] = pt.enclosing_calls(c_start, c_end, parent, thread_ranges[:-1], thread_ranges[1:], th,
                                         t_us[frow[inst]])
    space = (fkind >= pl.FK_V1_OUT).astype(np.int64)
    term = (fkind == pl.FK_END) | (fkind == pl.FK_V1_IN)
    o = np.lexsort((frow, t_us[frow], fid, space))
    fid, space, term, point, frow = fid[o], space[o], term[o], point[o], frow[o]
    link = (fid[1:] == fid[:-1]) & (space[1:] == space[:-1]) & ~term[:-1]
    a, b = point[:-1][link], point[1:][link]
    bound = (a >= 0) & (b >= 0)
    if (~bound).any():
        k = np.flatnonzero(link)[np.flatnonzero(~bound)[0]]
        rep.add("flow_unbound", int((~bound).sum()), packet_at(ev[pl.C_OFF, frow[k if point[k] < 0 else k + 1]]))
    ids = fid[:-1][link][bound]
    if not ids.size:
        return empty
    return {"flow_id": ids.astype(np.int64), "flow_from": a[bound].astype(np.int32),
            "flow_to": b[bound].astype(np.int32), "flow_cat": np.zeros(ids.size, np.int32), "flow_cat_names": [""]}


# ------------------------------------------------------------------------------ JSON in the proto
def json_in_proto(trace: Trace, buf, js, source: str, lim, rep, kind_rules, overlap, to_trace_ns) -> Trace:
    """``trace`` joined with the Chrome JSON trace that ``chrome_events``' ``legacy_json_trace``
    entries (spans ``js`` of ``buf``, in file order) hold: their texts concatenated (a whole JSON
    trace, or events: the contents of its array), read by the Chrome reader; its times (µs on
    Chrome's MONOTONIC clock) moved to the trace clock by ``to_trace_ns`` (ns → ns)."""
    from .chrome import load_chrome

    data = b"".join(bytes(buf[int(o): int(o) + int(n)]) for o, n in zip(js[0].tolist(), js[1].tolist())).strip()
    if not (data[:1] == b"[" or _WHOLE_DOCUMENT.match(data)):  # events: the array's contents
        data = b"[" + data.rstrip(b",") + b"]"
    try:
        other = load_chrome(data, source=f"{source} (chrome_events JSON)", warn=False, limits=lim,
                            kind_rules=kind_rules, overlap=overlap)
    except TraceFormatError as e:
        rep.add("json_in_proto", 1, str(e)[:300])
        return trace
    for code, it in other.meta.get("repairs", {}).items():
        rep.items.setdefault(f"json: {code}", dict(it))
    o_ns = int(round(float(other.meta.get("clock_origin", 0.0)) * 1000))
    shift_ns = int(to_trace_ns(np.array([o_ns], np.int64))[0]) - int(round(trace.meta["clock_origin"] * 1000))
    return merge_traces(trace, other, shift_ns / 1000.0)


def merge_traces(a: Trace, b: Trace, shift_b: float) -> Trace:
    """One Trace of ``a`` and ``b`` (``b``'s times plus ``shift_b`` µs are on ``a``'s clock): threads
    by (pid, tid), functions by name, calls re-nested per thread, instants, flows, counters and
    async slices of both; the origin moved to the earlier of both.  ``a``'s meta."""
    bs, be = b.start + shift_b, b.end + shift_b
    t0 = min(float(a.start.min()) if len(a) else np.inf, float(bs.min()) if len(b) else np.inf,
             float(a.instant_ts.min()) if a.instant_ts.size else np.inf,
             float(b.instant_ts.min()) + shift_b if b.instant_ts.size else np.inf, 0.0)
    # threads
    keys = {}
    for p, t in zip(a.thread_pid.tolist() + b.thread_pid.tolist(), a.thread_tid.tolist() + b.thread_tid.tolist()):
        keys.setdefault((p, t), len(keys))
    order = sorted(keys, key=lambda k: (k[0], k[1]))
    rank = {k: r for r, k in enumerate(order)}
    ta = np.array([rank[k] for k in zip(a.thread_pid.tolist(), a.thread_tid.tolist())], np.int64)
    tb = np.array([rank[k] for k in zip(b.thread_pid.tolist(), b.thread_tid.tolist())], np.int64)
    names = [""] * len(order)
    pnames = [""] * len(order)
    for tt, tr in ((tb, b), (ta, a)):  # a's names win
        for j, r in enumerate(tt.tolist()):
            names[r] = tr.thread_names[j] or names[r]
            pnames[r] = tr.process_names[j] or pnames[r]
    # functions
    fnames = list(a.function_names)
    findex = {s: k for k, s in enumerate(fnames)}
    fb = np.zeros(len(b.function_names), np.int64)
    files, lines, cats, paths = list(a.function_files), list(a.function_lines), list(a.function_cats), \
        list(a.function_paths)
    for k, s in enumerate(b.function_names):
        if s not in findex:
            findex[s] = len(fnames)
            fnames.append(s)
            files.append(b.function_files[k])
            lines.append(int(b.function_lines[k]))
            cats.append(b.function_cats[k])
            paths.append(b.function_paths[k])
        fb[k] = findex[s]
    # calls
    thread = np.concatenate([ta[a.thread], tb[b.thread]]).astype(np.int32)
    start = np.concatenate([a.start, bs]) - t0
    end = np.concatenate([a.end, be]) - t0
    func = np.concatenate([a.func, fb[b.func]]).astype(np.int32)
    kind = np.concatenate([a.kind, b.kind])
    n_a = len(a)
    order_c = preorder_sort(thread, start, end, np.arange(thread.size, dtype=np.int64), len(order))
    new_pos = np.empty(order_c.size, np.int64)
    new_pos[order_c] = np.arange(order_c.size)
    thread, start, end, func, kind = thread[order_c], start[order_c], end[order_c], func[order_c], kind[order_c]
    parent, depth, end_index, new_end, _ = nest_sorted_intervals(thread, start, end)
    # per-call tables: args and objects follow their calls
    ac = np.concatenate([new_pos[a.args_call], new_pos[n_a + b.args_call]])
    aptr_a, aptr_b = a.args_ptr, b.args_ptr
    spans_off = np.concatenate([aptr_a[:-1], aptr_b[:-1] + a.args_blob.size])
    spans_len = np.concatenate([np.diff(aptr_a), np.diff(aptr_b)])
    blob_all = np.concatenate([a.args_blob, b.args_blob])
    o = np.argsort(ac, kind="stable")
    args_blob, args_ptr = jsp.gather_spans(blob_all, spans_off[o], spans_len[o])
    onames = list(a.object_names)
    oindex = {s: k for k, s in enumerate(onames)}
    ob = np.array([oindex.setdefault(s, len(oindex)) for s in b.object_names], np.int64)
    onames = sorted(oindex, key=oindex.get)
    counts = np.concatenate([np.diff(a.obj_ptr), np.diff(b.obj_ptr)])[order_c]
    lists = [a.obj_ids[a.obj_ptr[i]: a.obj_ptr[i + 1]] if i < n_a else ob[b.obj_ids[b.obj_ptr[i - n_a]:
                                                                                  b.obj_ptr[i - n_a + 1]]]
             for i in order_c[counts > 0].tolist()] if counts.any() else []
    obj_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    obj_ids = np.concatenate(lists).astype(np.int32) if lists else np.zeros(0, np.int32)
    # instants, flows
    inames = list(a.instant_names)
    iidx = {s: k for k, s in enumerate(inames)}
    ib = np.array([iidx.setdefault(s, len(iidx)) for s in b.instant_names], np.int64)
    inames = sorted(iidx, key=iidx.get)
    ithread = np.concatenate([np.where(a.instant_thread >= 0, ta[np.maximum(a.instant_thread, 0)], -1),
                              np.where(b.instant_thread >= 0, tb[np.maximum(b.instant_thread, 0)], -1)])
    side = _merge_side(a, b, shift_b, t0)
    return Trace(
        func=func, start=start, end=np.ascontiguousarray(new_end, np.float64), depth=depth, parent=parent,
        end_index=end_index, thread=thread, kind=kind, obj_ptr=obj_ptr, obj_ids=obj_ids, function_names=fnames,
        function_files=files, function_lines=np.array(lines, np.int32), function_cats=cats, function_paths=paths,
        thread_pid=np.array([k[0] for k in order], np.int64), thread_tid=np.array([k[1] for k in order], np.int64),
        thread_names=names, thread_sort=np.zeros(len(order), np.int32), process_names=pnames, object_names=onames,
        instant_ts=np.concatenate([a.instant_ts, b.instant_ts + shift_b]) - t0,
        instant_name=np.concatenate([a.instant_name, ib[b.instant_name]]).astype(np.int32),
        instant_thread=ithread.astype(np.int32), instant_scope=np.concatenate([a.instant_scope, b.instant_scope]),
        instant_pid=np.concatenate([a.instant_pid, b.instant_pid]), instant_names=inames,
        flow_id=np.concatenate([a.flow_id, b.flow_id]),
        flow_from=np.concatenate([new_pos[a.flow_from], new_pos[n_a + b.flow_from]]).astype(np.int32),
        flow_to=np.concatenate([new_pos[a.flow_to], new_pos[n_a + b.flow_to]]).astype(np.int32),
        flow_cat=np.concatenate([a.flow_cat, b.flow_cat + len(a.flow_cat_names)]).astype(np.int32),
        flow_cat_names=list(a.flow_cat_names) + list(b.flow_cat_names),
        args_call=ac[o].astype(np.int32), args_ptr=args_ptr.astype(np.int64), args_blob=args_blob,
        meta={**a.meta, "clock_origin": a.meta["clock_origin"] + t0, "json_in_proto": b.meta.get("n_events", 0)},
        **side).check()


def _merge_side(a: Trace, b: Trace, shift_b: float, t0: float) -> dict:
    """The counters and async slices of ``a`` and ``b`` (b's tables after a's), re-sorted."""
    ns_a = a.series_counter.size
    nt_a = a.async_track_pid.size
    series = np.concatenate([a.counter_series, b.counter_series + ns_a])
    cts = np.concatenate([a.counter_ts, b.counter_ts + shift_b]) - t0
    o = by_key_then_time(series, cts)
    trk = np.concatenate([a.async_track, b.async_track + nt_a])
    ast = np.concatenate([a.async_start, b.async_start + shift_b]) - t0
    q = by_key_then_time(trk, ast)
    n_names = len(a.async_names)
    return {
        "counter_ts": cts[o], "counter_value": np.concatenate([a.counter_value, b.counter_value])[o],
        "counter_series": series[o].astype(np.int32),
        "series_counter": np.concatenate([a.series_counter, b.series_counter + len(a.counter_names)]).astype(np.int32),
        "series_pid": np.concatenate([a.series_pid, b.series_pid]), "series_names": a.series_names + b.series_names,
        "series_units": a.series_units + b.series_units, "counter_names": a.counter_names + b.counter_names,
        "async_start": ast[q], "async_end": (np.concatenate([a.async_end, b.async_end + shift_b]) - t0)[q],
        "async_name": np.concatenate([a.async_name, b.async_name + n_names])[q].astype(np.int32),
        "async_track": trk[q].astype(np.int32), "async_depth": np.concatenate([a.async_depth, b.async_depth])[q],
        "async_names": a.async_names + b.async_names,
        "async_track_pid": np.concatenate([a.async_track_pid, b.async_track_pid]),
        "async_track_id_kind": np.concatenate([a.async_track_id_kind, b.async_track_id_kind]),
        "async_track_cats": a.async_track_cats + b.async_track_cats,
        "async_track_ids": a.async_track_ids + b.async_track_ids,
        "async_track_scopes": a.async_track_scopes + b.async_track_scopes,
    }
