"""The Perfetto protobuf reader (`tracevis3d.io.perfetto`, kernels `protoscan`, `perfetto_wire`,
`perfetto_args`, `perfetto_tracks`).

Its twin is `_twin`: the same semantics (trace processor's, see the reader's docstring) written
over the ``perfetto`` package's protobuf decode (``perfetto_trace_pb2``), one Python object per
packet; the reader must give the same slices, names, threads, instants, counters, flows, async
slices and args.  Traces come from `tools/record_perfetto.py` (SDK-shaped, written with
perfetto_trace_pb2; Chromium, recorded), the hostile ones from `hostile_perfetto.py`.
"""
from __future__ import annotations

import bisect
import gzip
import json
import math
import pathlib
import re
import struct
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import load_bytes
from tracevis3d.io.formats import Head, detect
from tracevis3d.model import TraceFormatError, TraceWarning

import hostile_perfetto as hp

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "perfetto"
CHROMIUM = DATA / "chromium_startup.pftrace.gz"


def _pb():
    return pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                               reason="the perfetto package (requirements-dev.txt) writes and decodes the twin's traces")


def _sdk(*a, **k) -> bytes:
    _pb()
    from tools.record_perfetto import sdk_like_trace

    return sdk_like_trace(*a, **k)


def _load(data: bytes, source: str = "t.pftrace", **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tr = load_bytes(data, source=source, **kw)
    return tr, [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]


# ================================================================================= the twin
class _Seq:
    def __init__(self):
        self.valid = False
        self.interned: dict = {}
        self.defaults = None
        self.leg = None  # (pid, tid) of the sequence's thread descriptor
        self.leg_ts = 0


def _annotation(a, interned) -> tuple:
    """(key, value) of a DebugAnnotation, as `kernels.perfetto_args` writes it."""
    key = a.name if a.HasField("name") else interned.get((3, a.name_iid), "") if a.HasField("name_iid") else ""
    return key, _value(a, interned)


def _value(a, interned):
    if len(a.dict_entries):
        return dict(_annotation(e, interned) for e in a.dict_entries)
    if len(a.array_values):
        return [_value(e, interned) for e in a.array_values]
    which = a.WhichOneof("value")
    if which == "nested_value":
        return _nested(a.nested_value)
    if which == "pointer_value":
        return f"0x{a.pointer_value:x}"
    if which == "string_value_iid":
        s = interned.get((5, a.string_value_iid))
        return None if s is None else s
    if which == "legacy_json_value":
        return json.loads(a.legacy_json_value)
    if which == "double_value":
        return a.double_value if math.isfinite(a.double_value) else None
    if which is None:
        return "<proto>" if a.HasField("proto_value") else None
    return getattr(a, which)


def _nested(n):
    if n.nested_type == 1:
        return {k: _nested(v) for k, v in zip(n.dict_keys, n.dict_values)}
    if n.nested_type == 2:
        return [_nested(v) for v in n.array_values]
    for f in ("int_value", "double_value", "bool_value", "string_value"):
        if n.HasField(f):
            return getattr(n, f)
    return None


class _Converter:
    """ns on a clock → the trace clock (the reader's rule: the shortest chain of clocks two snapshots
    share, each hop by the last snapshot at or before the value); None when unrelated."""

    def __init__(self, snaps, primary):
        self.snaps, self.primary, self.paths = snaps, primary, {}
        self.adj: dict = {}
        for s in snaps:
            for a in s:
                self.adj.setdefault(a, set()).update(b for b in s if b != a)

    def path(self, key):
        if key not in self.paths:
            prev = {key: None}
            todo = [key]
            while todo and self.primary not in prev:
                nxt = []
                for a in todo:
                    for b in sorted(self.adj.get(a, ()), key=str):
                        if b not in prev:
                            prev[b] = a
                            nxt.append(b)
                todo = nxt
            path = None
            if self.primary in prev:
                path = [self.primary]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path = path[::-1]
                path = [(a, b, sorted((s[a], s[b]) for s in self.snaps if a in s and b in s))
                        for a, b in zip(path[:-1], path[1:])]
            self.paths[key] = path
        return self.paths[key]

    def __call__(self, key, v):
        if key in (0, self.primary):
            return v
        path = self.path(key)
        if path is None:
            return None
        for a, b, pairs in path:
            xs = [x for x, _ in pairs]
            k = max(bisect.bisect_right(xs, v) - 1, 0)
            v = pairs[k][1] + (v - pairs[k][0])
        return v


def _twin(data: bytes) -> dict:
    """The trace's slices, instants, counters, flows, async slices, args and names, decoded with
    perfetto_trace_pb2 and the reader's semantics written plainly (per packet, per event)."""
    pb = _pb()
    trace = pb.Trace.FromString(data)
    seqs: dict = {}
    clocks: dict = {}
    snaps: list = []
    primary, boot, tfile = None, False, False
    evs: list = []
    descs: dict = {}  # uuid -> descriptor (the last)
    names_of: dict = {}  # uuid -> the last non-empty name
    thread_names: dict = {}  # (pid, tid) -> last non-empty
    proc_names: dict = {}
    for row, pk in enumerate(trace.packet):
        seq = pk.trusted_packet_sequence_id if pk.HasField("trusted_packet_sequence_id") else None
        st = seqs.setdefault(seq, _Seq()) if seq is not None else None
        if st is not None:
            if pk.incremental_state_cleared or pk.sequence_flags & 1:
                st.valid, st.interned, st.defaults = True, {}, None
            elif pk.previous_packet_dropped:
                st.valid, st.leg = False, None
            if pk.HasField("trace_packet_defaults"):
                st.defaults = pk.trace_packet_defaults
        valid = st is not None and st.valid
        if pk.HasField("interned_data") and valid:
            idt = pk.interned_data
            for kind, items in ((1, idt.event_categories), (2, idt.event_names), (3, idt.debug_annotation_names)):
                for it in items:
                    st.interned[(kind, it.iid)] = it.name
            for it in idt.debug_annotation_string_values:
                st.interned[(5, it.iid)] = it.str.decode()
            for it in idt.source_locations:
                st.interned[(4, it.iid)] = (it.file_name, it.line_number)
        if pk.HasField("clock_snapshot"):
            snap = {}
            for c in pk.clock_snapshot.clocks:
                mult = c.unit_multiplier_ns or 1
                key = c.clock_id
                if 64 <= c.clock_id < 128:
                    if seq is None:
                        continue
                    key = ("seq", seq, c.clock_id)
                    clocks[key] = [c.timestamp, mult, c.is_incremental]
                boot |= c.clock_id == 6
                tfile |= c.clock_id == 11
                snap[key] = c.timestamp * mult
            snaps.append(snap)
            if pk.clock_snapshot.primary_trace_clock:
                primary = pk.clock_snapshot.primary_trace_clock
            continue
        if pk.sequence_flags & 2 and not valid:
            continue
        if pk.HasField("thread_descriptor"):
            t = pk.thread_descriptor
            if valid:
                st.leg, st.leg_ts = (t.pid, t.tid), t.reference_timestamp_us * 1000
            if t.thread_name:
                thread_names[(t.pid, t.tid)] = t.thread_name
        if pk.HasField("process_descriptor") and pk.process_descriptor.process_name:
            proc_names[pk.process_descriptor.pid] = pk.process_descriptor.process_name
        clk, ns = None, None
        if pk.HasField("timestamp"):
            cid = pk.timestamp_clock_id or (st.defaults.timestamp_clock_id if st is not None and st.defaults else 0)
            if 64 <= cid < 128:
                c = clocks.get(("seq", seq, cid))
                if c is not None:
                    if c[2]:
                        c[0] += pk.timestamp
                        ns = c[0] * c[1]
                    else:
                        ns = pk.timestamp * c[1]
                    clk = ("seq", seq, cid)
            else:
                clk, ns = cid, pk.timestamp
        if pk.HasField("track_descriptor"):
            d = pk.track_descriptor
            descs[d.uuid] = d
            if d.name or d.static_name:
                names_of[d.uuid] = d.name or d.static_name
            if d.HasField("thread"):
                if valid:
                    st.leg, st.leg_ts = (d.thread.pid, d.thread.tid), d.thread.reference_timestamp_us * 1000
                if d.thread.thread_name:
                    thread_names[(d.thread.pid, d.thread.tid)] = d.thread.thread_name
            if d.HasField("process") and d.process.process_name:
                proc_names[d.process.pid] = d.process.process_name
        if not pk.HasField("track_event") or seq is None:
            continue
        e = pk.track_event
        lg = e.legacy_event if e.HasField("legacy_event") else None
        etype = e.type if e.type else {66: 1, 69: 2, 88: 10, 73: 3, 105: 3, 82: 3}.get(lg.phase if lg else 0, 0)
        if etype not in (1, 2, 3, 4, 10):
            continue
        if e.HasField("timestamp_delta_us"):
            if st.leg is None:
                continue
            st.leg_ts += e.timestamp_delta_us * 1000
            clk, ns = 3, st.leg_ts
        elif e.timestamp_absolute_us:
            clk, ns = 3, e.timestamp_absolute_us * 1000
        if ns is None or ns < 0:
            continue
        it = st.interned
        if e.HasField("track_uuid"):
            track = ("uuid", e.track_uuid)
        elif st.defaults is not None and st.defaults.track_event_defaults.HasField("track_uuid"):
            track = ("uuid", st.defaults.track_event_defaults.track_uuid)
        elif etype == 4:
            continue
        elif lg is not None and lg.HasField("tid_override"):
            track = ("thread", lg.pid_override if lg.HasField("pid_override") else st.leg[0], lg.tid_override)
        elif st.leg is not None:
            track = ("thread",) + st.leg
        else:
            track = ("uuid", 0)
        which = e.WhichOneof("name_field")
        name = e.name if which == "name" else it.get((2, e.name_iid), "(unknown name)") if which == "name_iid" \
            else it.get((2, lg.name_iid), "(unknown name)") if lg is not None and lg.name_iid else "(unnamed)"
        cat = it.get((1, e.category_iids[0]), "") if len(e.category_iids) else (e.categories[0] if e.categories
                                                                                 else "")
        value = None
        if etype == 4:
            which_v = e.WhichOneof("counter_value_field")
            if which_v is None:
                continue
            value = float(getattr(e, which_v))
        extra = []
        for vals, uu, du in ((e.extra_counter_values, e.extra_counter_track_uuids, "extra_counter_track_uuids"),
                             (e.extra_double_counter_values, e.extra_double_counter_track_uuids,
                              "extra_double_counter_track_uuids")):
            uu = list(uu) or (list(getattr(st.defaults.track_event_defaults, du)) if st.defaults else [])
            extra += [(u, float(v)) for u, v in zip(uu, vals)]
        flows = [(0, f, False) for f in list(e.flow_ids) + list(e.flow_ids_old)]
        flows += [(0, f, True) for f in list(e.terminating_flow_ids) + list(e.terminating_flow_ids_old)]
        if lg is not None and lg.bind_id and lg.flow_direction in (1, 2, 3):
            flows.append((1, lg.bind_id, lg.flow_direction == 1))
        args = dict(_annotation(a, it) for a in e.debug_annotations) if len(e.debug_annotations) else None
        dur = max(lg.duration_us, 0) * 1000 if lg is not None and etype == 10 else 0
        iscope = lg.instant_event_scope if lg is not None else 0
        evs.append(dict(row=row, clk=clk, ns=ns, type=etype, track=track, name=name, cat=cat, value=value,
                        extra=extra, flows=flows, args=args, dur=dur, iscope=iscope))
    if primary is None:
        if boot and not tfile:
            primary = 6
        else:
            keys = [ev["clk"] for ev in evs if ev["clk"] != 0]
            primary = max(set(keys), key=keys.count) if keys else 0
    out = [ev for ev in evs if ev["clk"] is not None]
    convert = _Converter(snaps, primary)
    for ev in out:
        ev["ns"] = convert(ev["clk"], ev["ns"])
    out = [ev for ev in out if ev["ns"] is not None]
    return _assemble(out, descs, names_of, thread_names, proc_names)


def _track_info(descs):
    """uuid -> (kind, pid, thread key or None) up the parent chain (cycles cut as the reader)."""
    info = {}
    for u, d in descs.items():
        kind = "thread" if d.HasField("thread") else "counter" if d.HasField("counter") else \
            "process" if d.HasField("process") else "plain"
        seen = set()
        x, pid, thr = u, None, None
        while x in descs and x not in seen:
            seen.add(x)
            dx = descs[x]
            if dx.HasField("thread"):
                thr = thr or (dx.thread.pid, dx.thread.tid)
                pid = dx.thread.pid if pid is None else pid
            elif dx.HasField("process") and pid is None:
                pid = dx.process.pid
            x = dx.parent_uuid if dx.HasField("parent_uuid") else None
        info[u] = (kind, pid, thr if kind == "thread" else None)
    return info


def _stack_match(items, last_ts):
    """BEGIN/END (sorted by (key, ns, row)) → intervals (key, start, end, begin event), END closing the
    innermost; an END with nothing open waits for a BEGIN at its timestamp (as the Chrome reader);
    unclosed BEGINs end at their key's last timestamp."""
    out = []
    by_key: dict = {}
    for ev in items:
        by_key.setdefault(ev["key"], []).append(ev)
    for key, evs in by_key.items():
        stack, pending = [], []
        for ev in evs:
            if pending and pending[0] != ev["ns"]:
                pending = []
            if ev["type"] in (1, 11):
                if pending:
                    pending.pop()
                    out.append((key, ev["ns"], ev["ns"], ev))
                else:
                    stack.append(ev)
            elif stack:
                b = stack.pop()
                out.append((key, b["ns"], max(ev["ns"], b["ns"]), b))
            else:
                if not pending:
                    pending = [ev["ns"]]
                pending.append(ev)
        for b in stack:
            out.append((key, b["ns"], max(last_ts[key], b["ns"]), b))
    return out


def _nest(slices):
    """(key, start, end, ev) → the same with depth and the end clipped to the parent's, in the
    reader's pre-order (start, -end, file order)."""
    out = []
    slices = sorted(slices, key=lambda s: (s[0], s[1], -s[2], s[3]["row"], s[3]["seq"]))
    stack = []
    cur = None
    for key, a, b, ev in slices:
        if key != cur:
            stack, cur = [], key
        while stack and stack[-1][1] <= a:
            stack.pop()
        if stack:
            b = min(b, stack[-1][1])
        out.append([key, a, b, ev, len(stack)])
        stack.append((a, b))
    return out


def _assemble(evs, descs, names_of, thread_names, proc_names) -> dict:
    info = _track_info(descs)
    for k, ev in enumerate(evs):
        ev["seq"] = k
        t = ev["track"]
        ev["thread"] = (t[1], t[2]) if t[0] == "thread" else (info.get(t[1], ("plain", None, None))[2])
        ev["pid"] = t[1] if t[0] == "thread" else info.get(t[1], ("plain", None, None))[1]
    t0 = min(ev["ns"] for ev in evs)
    on_thread = [ev for ev in evs if ev["thread"] is not None]
    last = {}  # per track (each a stack of its own)
    for ev in on_thread:
        last[ev["track"]] = max(last.get(ev["track"], -math.inf), ev["ns"] + ev["dur"])
    be = sorted((dict(ev, key=ev["track"]) for ev in on_thread if ev["type"] in (1, 2)),
                key=lambda ev: (str(ev["key"]), ev["ns"], ev["row"]))
    sl = [(ev["thread"], a, b, ev) for _, a, b, ev in _stack_match(be, last)]
    sl += [(ev["thread"], ev["ns"], ev["ns"] + ev["dur"], ev) for ev in on_thread if ev["type"] == 10]
    calls = _nest(sl)
    calls_out = sorted((k, a - t0, b - t0, ev["name"], d) for k, a, b, ev, d in calls)
    by_row = {c[3]["row"]: (c[0], c[1] - t0, c[3]["name"]) for c in calls}
    args = {(c[0], c[1] - t0, c[3]["name"]): c[3]["args"] for c in calls if c[3]["args"] is not None}
    # instants: thread ones, process and global ones
    inst = []
    for ev in evs:
        if ev["type"] != 3:
            continue
        scope = "t" if ev["thread"] is not None and ev["iscope"] not in (1, 2) else \
            "g" if ev["iscope"] == 1 or ev["pid"] is None else "p"
        inst.append((scope, ev["ns"] - t0, ev["name"]))
    # counters
    series: dict = {}
    for ev in evs:
        pts = []
        if ev["type"] == 4 and ev["track"][0] == "uuid":
            pts.append((ev["track"][1], ev["value"]))
        pts += ev["extra"]
        for u, v in pts:
            d = descs.get(u)
            if d is None or not d.HasField("counter"):
                continue
            series.setdefault(u, []).append((ev["ns"] - t0, ev["row"], v * (d.counter.unit_multiplier or 1)))
    counters = {}
    for u, pts in series.items():
        pts.sort()
        vals = [p[2] for p in pts]
        if descs[u].counter.is_incremental:
            vals = list(np.cumsum(vals))
        counters[u] = [(p[0], v) for p, v in zip(pts, vals)]
    # flows
    fpts = []
    for ev in evs:
        for space, fid, term in ev["flows"]:
            fpts.append((space, fid, ev["ns"], ev["row"], term, ev))
    fpts.sort(key=lambda p: p[:4])
    flows = []
    for p, q in zip(fpts, fpts[1:]):
        if p[:2] == q[:2] and not p[4]:
            a, b = _flow_call(p[5], by_row, calls), _flow_call(q[5], by_row, calls)
            if a is not None and b is not None:
                flows.append((a, b))
    # async slices: non-thread tracks
    asy = [dict(ev, key=ev["track"]) for ev in evs if ev["thread"] is None and ev["type"] in (1, 2, 10)]
    alast: dict = {}
    for ev in asy:
        alast[ev["key"]] = max(alast.get(ev["key"], -math.inf), ev["ns"])
    asl = _stack_match(sorted((ev for ev in asy if ev["type"] != 10), key=lambda ev: (str(ev["key"]), ev["ns"],
                                                                                          ev["row"])), alast)
    asl += [(ev["key"], ev["ns"], ev["ns"] + ev["dur"], ev) for ev in asy if ev["type"] == 10]
    async_out = sorted((str(k), a - t0, ev["name"]) for k, a, b, ev in asl)
    threads = {k: thread_names.get(k, str(k[1])) for k in {c[0] for c in calls}}
    return {"calls": calls_out, "args": args, "instants": sorted(inst), "counters": counters, "flows": sorted(flows),
            "async": async_out, "threads": threads, "processes": proc_names, "t0": t0}


def _flow_call(ev, by_row, calls):
    if ev["row"] in by_row:
        return by_row[ev["row"]]
    if ev["type"] == 3 and ev["thread"] is not None:  # the innermost call around the instant
        best = None
        for key, a, b, c_ev, d in calls:
            if key == ev["thread"] and a <= ev["ns"] <= b and (best is None or d > best[4]):
                best = (key, a, b, c_ev, d)
        if best is not None:
            return by_row[best[3]["row"]]
    return None


def _of_trace(tr) -> dict:
    """The reader's Trace in the twin's terms (times in ns from the earliest event)."""
    def ns(t):
        return int(round(float(t) * 1000))

    keys = list(zip(tr.thread_pid.tolist(), tr.thread_tid.tolist()))
    calls = sorted((keys[t], ns(a), ns(b), tr.function_names[f], int(d)) for t, a, b, f, d in
                   zip(tr.thread.tolist(), tr.start.tolist(), tr.end.tolist(), tr.func.tolist(), tr.depth.tolist()))
    call_key = [(keys[t], ns(a), tr.function_names[f]) for t, a, f in
                zip(tr.thread.tolist(), tr.start.tolist(), tr.func.tolist())]
    args = {call_key[int(i)]: tr.args_of(int(i)) for i in tr.args_call.tolist()}
    inst = sorted((chr(s), ns(t), tr.instant_names[n]) for s, t, n in
                  zip(tr.instant_scope.tolist(), tr.instant_ts.tolist(), tr.instant_name.tolist()))
    flows = sorted((call_key[a], call_key[b]) for a, b in zip(tr.flow_from.tolist(), tr.flow_to.tolist()))
    async_out = sorted((ns(a), tr.async_names[n]) for a, n in zip(tr.async_start.tolist(), tr.async_name.tolist()))
    return {"calls": calls, "args": args, "instants": inst, "flows": flows, "async": async_out,
            "threads": dict(zip(keys, tr.thread_names))}


def _assert_twin(data: bytes, tr=None):
    tw = _twin(data)
    tr = tr if tr is not None else _load(data)[0]
    got = _of_trace(tr)
    assert got["calls"] == tw["calls"]
    assert got["instants"] == tw["instants"]
    assert got["flows"] == tw["flows"]
    assert got["async"] == sorted((a, n) for _, a, n in tw["async"])
    assert set(got["args"]) == set(tw["args"])
    for k, v in tw["args"].items():
        assert _same_json(got["args"][k], v), k
    for k, name in tw["threads"].items():
        assert got["threads"][k] == name
    # counters: each track's samples (times, values) in order
    series = {}
    for s, t, v in zip(tr.counter_series.tolist(), tr.counter_ts.tolist(), tr.counter_value.tolist()):
        series.setdefault(s, []).append((int(round(t * 1000)), v))
    mine = sorted(sorted(v) for v in series.values())
    theirs = sorted(sorted(v) for v in tw["counters"].values())
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert [t for t, _ in a] == [t for t, _ in b]
        np.testing.assert_allclose([v for _, v in a], [v for _, v in b], rtol=1e-12)
    return tw, tr


def _same_json(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-15, abs=0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return a == b


# ================================================================================= tests
@pytest.mark.parametrize("clock", ["incremental", "absolute", "legacy"])
def test_sdk_trace_matches_the_twin(clock):
    """An SDK-shaped trace (interned names and categories, incremental state per sequence, the
    sequence clock 64 / absolute BOOTTIME / ThreadDescriptor delta times, counters, flows, debug
    annotations, instants) reads as its protobuf decode says."""
    data = _sdk(2000, threads=4, processes=2, clock=clock, seed=5)
    tw, tr = _assert_twin(data)
    assert len(tr) == 2000 and tr.n_threads == 4
    assert tr.meta["format"] == "perfetto" and tr.meta["trace_clock"] == "BOOTTIME"
    assert sorted(set(tr.thread_names)) == [f"worker-{k}" for k in range(4)]
    assert sorted(set(tr.process_names)) == ["proc100", "proc101"]
    assert set(tr.function_cats) <= {"cat_a", "cat_b", "cat_c"}
    assert tr.flow_id.size > 50 and tr.counter_ts.size > 0 and tr.instant_ts.size == 80
    assert tr.counter_names == ["counter0", "counter1"] and tr.series_units == ["bytes", "count"]
    assert tr.args_call.size > 0 and tr.meta["repairs"] == {}
    first = tr.args_of(int(tr.args_call[0]))
    assert first["nested"] == {"ok": True, "list": [1, 2]} and first["label"].startswith('item "')


def test_the_three_clock_forms_give_the_same_trace():
    """The same timeline written on the incremental clock (ns deltas), as absolute BOOTTIME ns and
    as legacy µs deltas on MONOTONIC (converted through the clock snapshot) is one trace: the
    same calls at the same times (the legacy form is µs, so its times are whole µs)."""
    a = _load(_sdk(600, threads=2, clock="incremental", seed=9))[0]
    b = _load(_sdk(600, threads=2, clock="absolute", seed=9))[0]
    c = _load(_sdk(600, threads=2, clock="legacy", seed=9))[0]
    assert a.meta["clock_origin"] == b.meta["clock_origin"]
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.end, b.end)
    assert a.function_names == b.function_names == c.function_names
    assert abs(c.meta["clock_origin"] - a.meta["clock_origin"]) < 1.0
    np.testing.assert_allclose(c.start + c.meta["clock_origin"], a.start + a.meta["clock_origin"], atol=1.0)


def test_chromium_trace_matches_the_twin_and_has_everything():
    """The shipped Chromium start-up trace (proto, recorded by tools/record_perfetto.py): as the
    twin reads it, with its threads and processes named, calls, thread instants, counters (thread
    time on every event, memory tracker counters), flows and async slices."""
    data = gzip.decompress(CHROMIUM.read_bytes())
    tw, tr = _assert_twin(data)
    assert len(tr) > 1000 and tr.n_threads > 20
    assert "CrBrowserMain" in tr.thread_names and "CrRendererMain" in tr.thread_names
    assert {"Browser", "Renderer", "GPU Process"} <= set(tr.process_names)
    assert tr.counter_ts.size > 0 and tr.flow_id.size > 0 and tr.async_start.size > 0
    assert tr.instant_ts.size > 0 and tr.args_call.size > 0
    assert tr.meta["trace_clock"] == "MONOTONIC"


def test_chromium_file_loads_through_tracevis3d_load(tmp_path):
    """A gzipped .pftrace is sniffed as Perfetto (gzip inflated first) and loaded by tracevis3d.load."""
    p = tmp_path / "t.pftrace.gz"
    p.write_bytes(CHROMIUM.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        tr = tracevis3d.load(p)
    assert tr.meta["format"] == "perfetto" and tr.meta["format_title"] == "Perfetto protobuf trace"
    assert len(tr) > 1000
    raw = tmp_path / "t.perfetto-trace"
    raw.write_bytes(gzip.decompress(CHROMIUM.read_bytes()))
    assert detect(Head(raw.read_bytes()[:1 << 20])).key == "perfetto"


@pytest.mark.parametrize("name, make, expected", hp.CASES, ids=[c[0] for c in hp.CASES])
def test_hostile(name, make, expected):
    """Each hostile case (tests/support/hostile_perfetto.py) is refused in one line naming the file and the
    byte, or loads with the repair it names."""
    said = hp.outcome(make())
    assert "\n" not in said and "Traceback" not in said
    assert re.search(expected, said), said


def test_errors_name_the_file_and_byte():
    with pytest.raises(TraceFormatError, match=r"^x\.pftrace: damaged or not a Perfetto protobuf trace: a field "
                                               r"numbered 0 at byte 2 \(in a TracePacket"):
        load_bytes(hp.fb(1, b"\x00\x00"), source="x.pftrace", format="perfetto")
    with pytest.raises(TraceFormatError, match=r"more than 2 events .*byte \d+.*max_events="):
        load_bytes(hp.good(3), source="x.pftrace", max_events=2)
    with pytest.raises(TraceFormatError, match=r"no slices, instants, counter values or async slices"):
        load_bytes(hp.head(), source="x.pftrace")


def test_incremental_state_and_interning():
    """Interned names belong to their sequence's generation: a clear (SEQ_INCREMENTAL_STATE_CLEARED)
    forgets them; packets that need the state while it is lost (previous_packet_dropped) are
    skipped, a repair; interned data arriving after the event in the packet still names it."""
    names = hp.fb(2, hp.fv(1, 1) + hp.fb(2, b"first"))
    data = hp.head() + hp.event(1000, 1, name_iid=1, interned=names) + hp.event(2000, 2)
    lost = hp.packet(hp.fv(10, hp.SEQ), hp.fv(42, 1))  # previous_packet_dropped
    data += lost + hp.event(3000, 1, name_iid=1) + hp.event(4000, 2)  # skipped: the state is invalid
    cleared = hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 1), hp.fb(59, hp.fb(11, hp.fv(11, hp.THREAD_UUID))))
    data += cleared + hp.event(5000, 1, name_iid=1) + hp.event(6000, 2)  # a new generation: iid 1 unknown
    tr, said = _load(data)
    assert sorted(tr.function_names) == ["(unknown name)", "first"]
    assert any("need their sequence's incremental state" in s for s in said)
    assert any("never interned" in s for s in said)


def test_counters_incremental_and_multiplied():
    """A counter track's values times its unit_multiplier, summed when is_incremental (thread time
    as Chrome writes it: extra_counter_values with the defaults' uuids)."""
    ctr = hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 2),
                    hp.fb(60, hp.fv(1, 50) + hp.fv(5, hp.THREAD_UUID) + hp.fb(8, hp.fv(1, 1) + hp.fv(4, 1000) +
                                                                               hp.fv(5, 1))))
    defaults = hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 2),
                         hp.fb(59, hp.fb(11, hp.fv(11, hp.THREAD_UUID) + hp.fv(31, 50))))
    data = hp.head() + ctr + defaults
    data += hp.event(1000, 1, b"a", extra=hp.fv(12, 5)) + hp.event(2000, 2, extra=hp.fv(12, 7))
    tr, said = _load(data)
    assert tr.counter_names == ["thread_time (tid 2)"]
    assert tr.counter_value.tolist() == [5000.0, 12000.0]


def test_legacy_events():
    """Legacy events: X with a duration, B/E, instants with their scope, async b/e with an id (a track
    per category and id), on the sequence's ThreadDescriptor thread."""
    td = hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 1))
    td += hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 2), hp.fb(44, hp.fv(1, 5) + hp.fv(2, 6) + hp.fb(5, b"legacy")))

    def leg(us, phase, name, extra=b""):
        return hp.packet(hp.fv(8, us * 1000), hp.fv(10, hp.SEQ), hp.fv(13, 2),
                         hp.fb(11, hp.fb(23, name) + hp.fb(22, b"c") + hp.fb(6, hp.fv(2, ord(phase)) + extra)))

    data = td + leg(1000, "X", b"complete", hp.fv(3, 5)) + leg(1001, "B", b"inner") + leg(1003, "E", b"")
    data += leg(1002, "i", b"glob", hp.fv(14, 1)) + leg(1002, "I", b"thr")
    data += leg(1000, "b", b"job", hp.fv(6, 77)) + leg(1004, "e", b"job", hp.fv(6, 77))
    tr, said = _load(data)
    assert tr.thread_names == ["legacy"] and tr.thread_pid.tolist() == [5]
    assert [tr.function_names[f] for f in tr.func] == ["complete", "inner"]
    assert tr.end.tolist() == [5.0, 3.0] and tr.depth.tolist() == [0, 1]
    assert sorted(zip(map(chr, tr.instant_scope), [tr.instant_names[n] for n in tr.instant_name])) == \
        [("g", "glob"), ("t", "thr")]
    assert tr.async_start.tolist() == [0.0] and tr.async_end.tolist() == [4.0]
    assert tr.async_track_cats == ["c"] and tr.async_track_ids == ["0x4d"]


def test_json_in_proto_joins():
    """chrome_events' legacy_json_trace (JSON inside the proto) is read by the Chrome reader and its
    calls join the proto's on the same clock (MONOTONIC here, the trace clock)."""
    js = b'{"ph":"X","name":"from_json","pid":1,"tid":2,"ts":2,"dur":1},'
    bundle = hp.packet(hp.fb(5, hp.fb(5, hp.fv(1, 0) + hp.fb(2, js))))
    data = hp.good(1) + bundle
    tr, said = _load(data)
    assert sorted(tr.function_names) == ["from_json", "work"]
    assert tr.n_threads == 1 and len(tr) == 2


def test_options_keep_args_and_overlap():
    data = _sdk(300, threads=2, seed=2)
    assert _load(data, keep_args=False)[0].args_call.size == 0
    over = hp.head() + hp.packet(hp.fv(10, hp.SEQ), hp.fv(13, 2),
                                 hp.fb(60, hp.fv(1, 11) + hp.fb(4, hp.fv(1, 1) + hp.fv(2, 2))))
    over += hp.event(1000, 1, b"a") + hp.event(1500, 1, b"b", extra=hp.fv(11, 11))
    over += hp.event(2000, 2) + hp.event(2500, 2, extra=hp.fv(11, 11))  # b sticks out of a (two tracks, one thread)
    clip, said = _load(over)
    assert clip.end.tolist() == [1.0, 1.0] and any("clipped" in s for s in said)
    drop, said = _load(over, overlap="drop")
    assert len(drop) == 1 and any("dropped it" in s for s in said)


# ---------------------------------------------------------------- kernel twins (pure Python)
def _py_varint(b: bytes, i: int, end: int):
    v, shift = 0, 0
    while True:
        if i >= end:
            return None, -1
        c = b[i]
        i += 1
        if shift < 64:
            v |= (c & 0x7F) << shift
        if c < 0x80:
            v &= (1 << 64) - 1
            return v - (1 << 64) if v >= 1 << 63 else v, i
        shift += 7
        if shift >= 70:
            return None, -2


def test_varint_and_fields_twin():
    from tracevis3d.kernels import perfetto_wire as pw

    rng = np.random.default_rng(3)
    for v in [0, 1, 127, 128, 300, (1 << 63) - 1, -1, -(1 << 63), *rng.integers(-(1 << 62), 1 << 62, 50).tolist()]:
        b = hp.varint(v) + b"\x00"
        buf = np.frombuffer(b, np.uint8)
        assert pw.varint(buf, 0, len(b)) == _py_varint(b, 0, len(b))
    for b in [b"\xff" * 11, b"\xff\xff", b""]:
        buf = np.frombuffer(b + b"\x00", np.uint8)
        assert pw.varint(buf, 0, len(b))[1] == _py_varint(b, 0, len(b))[1]
    rng_b = np.random.default_rng(5)  # the inlined readers read as the others do, on any bytes
    for _ in range(300):
        raw = rng_b.integers(0, 256, int(rng_b.integers(1, 24)), dtype=np.uint8)
        n = raw.size
        assert pw.varint_i(raw, 0, n) == pw.varint(raw, 0, n)
        assert pw.read_tag_i(raw, 0, n) == pw.read_tag(raw, 0, n)
        for wt in (0, 1, 2, 3, 5):
            assert pw.field_end_i(raw, 0, n, wt) == pw.field_end(raw, 0, n, wt)
    msg = hp.fv(1, 5) + hp.fb(2, b"abc") + hp.ff64(3, 9) + hp.fb(4, b"x")
    buf = np.frombuffer(msg, np.uint8)
    assert pw.next_message(buf, 0, len(msg), 4) == (len(msg) - 1, len(msg), len(msg))
    assert pw.next_message(buf, 0, len(msg), 7)[0] == -1
    bad = np.frombuffer(hp.varint(2 << 3 | 2) + hp.varint(10) + b"ab", np.uint8)
    assert pw.next_message(bad, 0, bad.size, 2)[1] == pw.E_PAST_END
    for x in [0.0, -0.0, 1.5, 1e-310, -3.25e300, math.inf, -math.inf, 5e-324, 0.1]:
        bits = struct.unpack("<q", struct.pack("<d", x))[0]
        assert struct.pack("<d", pw.as_double(bits)) == struct.pack("<d", x)
    assert math.isnan(pw.as_double(struct.unpack("<q", struct.pack("<d", math.nan))[0]))


def test_nearest_marked_twin():
    from tracevis3d.kernels.perfetto_tracks import nearest_marked

    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(1, 40))
        parent = rng.integers(-1, n, n).astype(np.int64)
        marked = rng.random(n) < 0.3
        got, cut = nearest_marked(parent, marked)
        par = parent.copy()
        par[cut] = -1  # the cut links, then a plain walk must agree and terminate
        for i in range(n):
            seen, j, want = set(), i, -1
            while j >= 0:
                assert j not in seen, "a cycle left uncut"
                seen.add(j)
                if marked[j]:
                    want = j
                    break
                j = par[j]
            assert got[i] == want


def test_splice_doubles_twin():
    from tracevis3d.kernels.perfetto_args import splice_doubles

    ab = np.frombuffer(b'{"a":}{"b":,"c":}', np.uint8).copy()
    ptr = np.array([0, 6, 17], np.int64)
    texts = np.array([0.5, 1e22, -2.0]).astype("S32")
    mat = np.frombuffer(texts.tobytes(), np.uint8).reshape(-1, 32)
    out, new_ptr = splice_doubles(ab, ab.size, ptr, np.array([5, 11, 16], np.int64), mat,
                                  np.char.str_len(texts).astype(np.int64))
    assert out.tobytes() == b'{"a":0.5}{"b":1e+22,"c":-2.0}'
    assert new_ptr.tolist() == [0, 9, out.size]


def test_track_kernels_twins():
    """`perfetto_tracks`' small kernels against plain Python: the largest value per key, the steps
    back per key, running sums of incremental keys, the innermost call around a point."""
    from tracevis3d.kernels import perfetto_tracks as pt

    rng = np.random.default_rng(11)
    key = rng.integers(-1, 5, 200)
    val = rng.random(200) * 100
    want = [max([v for k, v in zip(key, val) if k == j], default=-math.inf) for j in range(6)]
    assert pt.max_per_key(key, val, 6).tolist() == want
    k2 = np.maximum(key, 0)
    count, first = pt.backwards(k2, val, 1.0)
    best, n, f = {}, 0, -1
    for i, (k, v) in enumerate(zip(k2.tolist(), val.tolist())):
        if v < best.get(k, -math.inf) - 1.0:
            n += 1
            f = i if f < 0 else f
        else:
            best[k] = max(best.get(k, -math.inf), v)
    assert (count, first) == (n, f)
    sk = np.sort(k2)
    inc = np.array([True, False, True, False, True])
    got = pt.running_sums(sk, val, inc)
    acc = {}
    for i, k in enumerate(sk.tolist()):
        acc[k] = acc.get(k, 0.0) + val[i]
        assert got[i] == pytest.approx(acc[k] if inc[k] else val[i])
    # calls of one thread in pre-order: [0,10] > [1,4] > [2,3], [5,9]; a second thread [0,2]
    start = np.array([0.0, 1.0, 2.0, 5.0, 0.0])
    end = np.array([10.0, 4.0, 3.0, 9.0, 2.0])
    parent = np.array([-1, 0, 1, 0, -1])
    lo, hi = np.array([0, 4]), np.array([4, 5])
    pts = [(0, 2.5, 2), (0, 4.5, 0), (0, 11.0, -1), (1, 1.0, 4), (1, 3.0, -1), (0, 5.0, 3)]
    got = pt.enclosing_calls(start, end, parent, lo, hi, np.array([p[0] for p in pts]), np.array([p[1] for p in pts]))
    assert got.tolist() == [p[2] for p in pts]
