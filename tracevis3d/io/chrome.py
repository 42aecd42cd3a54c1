"""Chrome Trace Event JSON → Trace.

What VizTracer, Chrome, Perfetto, PyTorch and JAX write.  The bytes are walked
once by a numba scanner (`tracevis3d.kernels.jsonscan`) that writes per-event
fields into flat arrays; trees are built by numba kernels.  No Python object is
made per event except for the few events that need it (metadata ``M`` events,
numbers outside the exact fast path, args of synchronisation calls).

Supported: object form (``traceEvents``, ``displayTimeUnit``; other keys skipped)
and array form, unterminated arrays and trailing commas; ``B``/``E`` and ``X``
(X sorted by (ts, -dur) per thread); ``M`` process/thread names and sort indices;
several pids/tids (numbers or strings); ``i``/``I``/``R`` instants; ``s``/``t``/``f``
flows with ``bp`` and ``bind_id``/``flow_in``/``flow_out``.  Async (``b e n S T F p``),
counters (``C``), samples (``P``), object events (``N O D``) and unknown phases
are skipped and counted in ``trace.meta['skipped']``.

Repairs (``trace.meta['repairs']``: code → count, first offending event, action),
each also reported once as a `TraceWarning`; see REPAIRS below.
"""
from __future__ import annotations

import re
import threading
import warnings
from typing import Iterable

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import jsonscan as js
from ..kernels.tree import nest_sorted_intervals, preorder_sort
from ..kinds import classify_functions, objects_from_args, objects_from_name
from ..model import Trace, TraceFormatError, TraceWarning
from ..names import parse_function_name

REPAIRS = {
    "truncated": "the event array is not closed (file cut short): kept every complete event",
    "partial_event": "the last event is cut short by the end of the file: dropped it",
    "e_unmatched": "E event with no open B of that name: dropped it",
    "e_mismatch": "E event whose name is deeper in the stack: also closed the calls opened after it",
    "unclosed": "B event never closed: closed it at the thread's last timestamp",
    "x_overlap": "call overlaps the end of its enclosing call on the same thread: clipped its end to the parent's end",
    "x_overlap_dropped": "call overlaps the end of its enclosing call on the same thread: dropped it",
    "out_of_order": "B/E events not in timestamp order in the file: sorted them (stable)",
    "no_ts": "event without a finite ts: dropped it",
    "no_dur": "X event without dur or tdur: used a duration of 0",
    "negative_dur": "X event with a negative duration: used 0",
    "bad_dur": "X event with a NaN or infinite duration: dropped it",
    "bad_utf8": "name is not valid UTF-8: undecodable bytes replaced with U+FFFD",
    "flow_unbound": "flow event with no call to bind to on its thread: dropped it",
    "bad_number": "a ts/dur value that is not a number: dropped the event",
}

_PH = {c: ord(c) for c in "BEXiIRMstfC"}
DEFAULT_MAX_EVENTS = 100_000_000
_SKIPPED_NAMES = {
    "b": "async", "e": "async", "n": "async", "S": "async", "T": "async", "F": "async", "p": "async",
    "C": "counter", "P": "sample", "O": "object", "N": "object", "D": "object", "c": "clock_sync",
    "(": "context", ")": "context", "V": "memory_dump", "v": "memory_dump", "=": "mark", "G": "link",
}


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


def load_chrome(data: bytes, source: str = "<bytes>", *, keep_args: bool = True,
                kind_rules: Iterable | None = None, overlap: str = "clip", warn: bool = True,
                max_events: int = DEFAULT_MAX_EVENTS, _from_samples: bool = False) -> Trace:
    """Parse Chrome Trace Event JSON ``data`` (bytes) into a `Trace`.

    ``max_events``: refuse files with more events (the scan keeps ~120 bytes per
    event while it builds the tree; this bounds memory on hostile input).
    ``overlap``: "clip" (default) clips a call that sticks out of its enclosing
    call; "drop" drops it instead.  ``kind_rules``: see `tracevis3d.kinds`.
    Raises `TraceFormatError` (naming ``source`` and the byte/line/event) when the
    bytes are not a trace or hold no events.
    """
    if overlap not in ("clip", "drop"):
        raise ValueError(f"overlap must be 'clip' or 'drop', got {overlap!r}")
    buf = np.frombuffer(data, np.uint8)
    nbytes = buf.shape[0]
    scanned = _scan_parallel(buf, data, max_events) if nbytes >= PARALLEL_SCAN_BYTES else None
    if scanned is None:
        scanned = js.scan_trace(buf, min(max(16, nbytes // 96), max_events), max_events)
    ii, ss, ff, n, status, err_pos, dtu_off, dtu_len = scanned
    ii, ss, ff = ii[:n], ss[:n], ff[:n]

    def line_col(pos: int) -> tuple[int, int]:
        pos = min(max(pos, 0), nbytes)
        head = buf[:pos]
        nl = np.flatnonzero(head == 10)
        line = nl.shape[0] + 1
        col = pos - (int(nl[-1]) + 1 if nl.shape[0] else 0) + 1
        return line, col

    def snippet(pos: int, width: int = 60) -> str:
        a = max(0, pos - width // 3)
        return bytes(buf[a: a + width]).decode("utf-8", "replace").replace("\n", "\\n")

    def describe(row: int) -> str:
        off = int(ii[row, js.I_EV_OFF])
        ln = int(ss[row, js.S_EV_LEN])
        line, _ = line_col(off)
        text = bytes(buf[off: off + min(ln, 160)]).decode("utf-8", "replace").replace("\n", " ")
        return f"event #{row} (byte {off}, line {line}): {text}{'…' if ln > 160 else ''}"

    if status < 0:
        line, col = line_col(err_pos)
        if status == js.ERR_NOT_JSON:
            if nbytes == 0 or err_pos >= nbytes:
                raise TraceFormatError(f"{source}: empty file, no trace events")
            raise TraceFormatError(
                f"{source}: not a Chrome trace (JSON object or array expected) at byte {err_pos} "
                f"(line {line}, column {col}): {snippet(err_pos)!r}")
        if status == js.ERR_NO_EVENTS_KEY:
            raise TraceFormatError(f"{source}: JSON object without a 'traceEvents' array")
        what = {js.ERR_SYNTAX: "invalid JSON", js.ERR_EVENT_NOT_OBJECT: "an event that is not a JSON object",
                js.ERR_TOO_DEEP: f"JSON nested deeper than {js.MAX_NESTING} levels",
                js.ERR_TOO_MANY: f"more than {max_events} events (max_events= to allow more)"}.get(status, "invalid JSON")
        raise TraceFormatError(
            f"{source}: {what} at byte {err_pos} (line {line}, column {col}) in event #{n}: {snippet(err_pos)!r}")
    rep = _Repairs(describe)
    if status == js.TRUNCATED:
        rep.add("truncated", 1, detail=f"end of file at byte {nbytes} after {n} complete events")
        tail = bytes(buf[int(ii[n - 1, js.I_EV_OFF]) + int(ss[n - 1, js.S_EV_LEN]):] if n else buf[:]).strip(b" \t\r\n,[]")
        if tail.startswith(b"{") or (n == 0 and b"{" in tail):
            rep.add("partial_event", 1, detail=f"event #{n} at byte {nbytes - len(tail)}: {tail[:80]!r}")
    if n == 0:
        raise TraceFormatError(f"{source}: no trace events (the event array is empty)")

    flags = ss[:, js.S_FLAGS]
    ph = ss[:, js.S_PH]
    ts = ff[:, js.F_TS].copy()
    dur = ff[:, js.F_DUR].copy()
    tdur = ff[:, js.F_TDUR].copy()
    _reparse_slow_numbers(buf, ii, ss, flags, ts, dur, tdur, rep)

    pid = ii[:, js.I_PID]
    tid = ii[:, js.I_TID]
    key_id, key_first = js.intern_pairs(pid, tid)
    name_len = np.maximum(ss[:, js.S_NAME_LEN], 0).astype(np.int64)
    name_id, name_first = js.intern_spans(buf, ii[:, js.I_NAME_OFF], name_len, ss[:, js.S_NAME_LEN] >= 0)
    names, name_id = _decode_names(buf, ii, ss, name_id, name_first, rep)

    is_b, is_e, is_x = ph == _PH["B"], ph == _PH["E"], ph == _PH["X"]
    is_inst = (ph == _PH["i"]) | (ph == _PH["I"]) | (ph == _PH["R"])
    is_flow = (ph == _PH["s"]) | (ph == _PH["t"]) | (ph == _PH["f"])
    is_meta = ph == _PH["M"]
    known = is_b | is_e | is_x | is_inst | is_flow | is_meta
    skipped: dict[str, int] = {}
    if not known.all():
        chars, counts = np.unique(ph[~known], return_counts=True)
        for c, k in zip(chars, counts):
            ch = chr(c) if 0 < c < 128 else "?"
            label = _SKIPPED_NAMES.get(ch, f"unknown phase {ch!r}" if c else "no phase")
            skipped[label] = skipped.get(label, 0) + int(k)

    finite_ts = np.isfinite(ts)
    bad_ts = (is_b | is_e | is_x | is_inst | is_flow) & ~finite_ts
    if bad_ts.any():
        rep.add("no_ts", int(bad_ts.sum()), int(np.flatnonzero(bad_ts)[0]))
    # --- X durations
    has_dur = (flags & js.FL_DUR) != 0
    xdur = np.where(has_dur, dur, tdur)
    no_dur = is_x & finite_ts & ~has_dur & ((flags & js.FL_TDUR) == 0)
    rep.add("no_dur", int(no_dur.sum()), int(np.flatnonzero(no_dur)[0]) if no_dur.any() else None)
    xdur = np.where(no_dur, 0.0, xdur)
    bad_dur = is_x & finite_ts & ~no_dur & ~np.isfinite(xdur)
    rep.add("bad_dur", int(bad_dur.sum()), int(np.flatnonzero(bad_dur)[0]) if bad_dur.any() else None)
    neg = is_x & finite_ts & (xdur < 0)
    rep.add("negative_dur", int(neg.sum()), int(np.flatnonzero(neg)[0]) if neg.any() else None)
    xdur = np.where(neg, 0.0, xdur)
    x_rows = np.flatnonzero(is_x & finite_ts & ~bad_dur)

    # --- thread last timestamps (for closing unclosed B events)
    n_keys = key_first.shape[0]
    ev_end = np.where(is_x & np.isfinite(xdur), ts + np.where(np.isfinite(xdur), xdur, 0), ts)
    last_ts = np.full(n_keys, -np.inf)
    ok_end = finite_ts & np.isfinite(ev_end)
    np.maximum.at(last_ts, key_id[ok_end], ev_end[ok_end])

    # --- B/E pairing
    be_rows = np.flatnonzero((is_b | is_e) & finite_ts)
    if be_rows.size:
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
            key_id[rows], ts[rows], is_b[rows], name_id[rows], last_ts)
        for code, w in (("e_mismatch", ct.W_E_MISMATCH), ("e_unmatched", ct.W_E_UNMATCHED),
                        ("unclosed", ct.W_UNCLOSED)):
            rep.add(code, int(wc[w]), int(rows[wf[w]]) if wf[w] >= 0 else None)
        be_call_rows = rows[b_idx]
    else:
        be_call_rows = np.zeros(0, np.int64)
        b_start = b_end = np.zeros(0)

    c_row = np.concatenate([x_rows, be_call_rows]).astype(np.int64)
    c_start = np.concatenate([ts[x_rows], b_start])
    c_end = np.concatenate([ts[x_rows] + xdur[x_rows], b_end])
    c_key = key_id[c_row]

    # --- thread table: threads with calls, 't'-scoped instants or flows
    inst_rows = np.flatnonzero(is_inst & finite_ts)
    inst_scope = ss[inst_rows, js.S_SCOPE]
    inst_on_thread = (inst_scope != ord("g")) & (inst_scope != ord("p"))
    flow_rows = np.flatnonzero(is_flow & finite_ts & ((flags & js.FL_ID) != 0))
    used = np.zeros(n_keys, bool)
    used[c_key] = True
    used[key_id[inst_rows[inst_on_thread]]] = True
    meta_info = _read_metadata(buf, ii, ss, np.flatnonzero(is_meta), key_id, pid)
    if not used.any():
        if b'"stackFrames"' in data and not _from_samples:
            return _load_with_samples(data, source, keep_args=keep_args, kind_rules=kind_rules,
                                      overlap=overlap, warn=warn)
        raise TraceFormatError(
            f"{source}: no call events (B/E or X) and no instants: nothing to show "
            f"({n} events; skipped: {skipped or 'none'})")
    thread_keys = np.flatnonzero(used)
    t_pid = pid[key_first[thread_keys]]
    t_tid = tid[key_first[thread_keys]]
    t_sort = np.array([meta_info["thread_sort"].get(int(k), 0) for k in thread_keys], np.int64)
    p_sort = np.array([meta_info["process_sort"].get(int(p), 0) for p in t_pid], np.int64)
    t_order = np.lexsort((t_tid, t_sort, t_pid, p_sort))
    thread_keys = thread_keys[t_order]
    rank = np.full(n_keys, -1, np.int32)
    rank[thread_keys] = np.arange(thread_keys.shape[0], dtype=np.int32)
    str_ids = _string_ids(buf, ii, ss, key_first[thread_keys])
    thread_pid = pid[key_first[thread_keys]].astype(np.int64)
    thread_tid = tid[key_first[thread_keys]].astype(np.int64)
    thread_names, process_names = [], []
    for j, k in enumerate(thread_keys):
        p = int(pid[key_first[k]])
        tname = meta_info["thread_names"].get(int(k))
        pidtxt, tidtxt = str_ids[j]
        thread_names.append(tname if tname else f"{tidtxt}")
        process_names.append(meta_info["process_names"].get(p) or f"{pidtxt}")
    thread_sort = np.array([meta_info["thread_sort"].get(int(k), 0) for k in thread_keys], np.int32)

    # --- sort calls into per-thread pre-order and nest them
    c_thread = rank[c_key]
    order = preorder_sort(c_thread, c_start, c_end, c_row, thread_keys.shape[0])
    c_row, c_start, c_end, c_thread = c_row[order], c_start[order], c_end[order], c_thread[order]
    parent, depth, end_index, new_end, clipped = nest_sorted_intervals(c_thread, c_start, c_end)
    if clipped.any():
        if overlap == "drop":
            rep.add("x_overlap_dropped", int(clipped.sum()), int(c_row[np.flatnonzero(clipped)[0]]))
            for _ in range(64):
                keep = ~clipped
                c_row, c_start, c_end, c_thread = c_row[keep], c_start[keep], c_end[keep], c_thread[keep]
                parent, depth, end_index, new_end, clipped = nest_sorted_intervals(c_thread, c_start, c_end)
                if not clipped.any():
                    break
                rep.add("x_overlap_dropped", int(clipped.sum()), None)
        if clipped.any():
            rep.add("x_overlap", int(clipped.sum()), int(c_row[np.flatnonzero(clipped)[0]]))
    c_end = new_end

    # --- origin
    cands = [c_start.min() if c_start.size else np.inf]
    if inst_rows.size:
        cands.append(ts[inst_rows].min())
    t0 = float(min(cands))
    if not np.isfinite(t0):
        t0 = 0.0
    start = c_start - t0
    end = c_end - t0

    # --- function table (in order of first appearance in call order)
    c_name = name_id[c_row]
    unnamed = c_name < 0
    if unnamed.any():
        names = names + ["(unnamed)"]
        c_name = np.where(unnamed, len(names) - 1, c_name)
    func, fn_name_ids = js.renumber_by_first_use(c_name.astype(np.int64), len(names))
    function_names = [names[k] for k in fn_name_ids]
    first_pos = np.zeros(len(function_names), np.int64)
    first_pos[func[::-1]] = np.arange(len(func) - 1, -1, -1)  # first call of each function
    fn_first_row = c_row[first_pos]
    function_cats = _decode_span_list(buf, ii[fn_first_row, js.I_CAT_OFF], ss[fn_first_row, js.S_CAT_LEN])
    parsed = [parse_function_name(s) for s in function_names]

    # --- kinds and objects
    fkind = classify_functions(function_names, kind_rules)
    kind = fkind[func] if func.size else np.zeros(0, np.uint8)
    object_names: list[str] = []
    obj_index: dict[str, int] = {}
    name_objs = [objects_from_name(s) for s in function_names]
    args_len = ss[c_row, js.S_ARGS_LEN].astype(np.int64)
    has_args = args_len > 2
    sync_calls = np.flatnonzero(kind > 0)
    per_call: dict[int, list[str]] = {}
    if sync_calls.size:
        import orjson

        for i in sync_calls:
            objs = list(name_objs[func[i]])
            if has_args[i]:
                off = int(ii[c_row[i], js.I_ARGS_OFF])
                try:
                    objs += [o for o in objects_from_args(orjson.loads(bytes(buf[off: off + args_len[i]])))
                             if o not in objs]
                except Exception:
                    pass
            if objs:
                per_call[int(i)] = objs
    obj_counts = np.zeros(func.shape[0], np.int64)
    obj_list: list[int] = []
    for i in sorted(per_call):
        for o in per_call[i]:
            if o not in obj_index:
                obj_index[o] = len(object_names)
                object_names.append(o)
            obj_list.append(obj_index[o])
        obj_counts[i] = len(per_call[i])
    obj_ptr = np.concatenate([[0], np.cumsum(obj_counts)]).astype(np.int64)
    obj_ids = np.asarray(obj_list, np.int32)

    # --- args (only where present)
    if keep_args and has_args.any():
        a_calls = np.flatnonzero(has_args).astype(np.int32)
        args_blob, args_ptr = js.gather_spans(buf, ii[c_row[a_calls], js.I_ARGS_OFF], args_len[a_calls])
    else:
        a_calls = np.zeros(0, np.int32)
        args_blob, args_ptr = np.zeros(0, np.uint8), np.zeros(1, np.int64)

    # --- instants
    i_thread = np.where(inst_on_thread, rank[key_id[inst_rows]], -1).astype(np.int32)
    i_scope = np.where(inst_on_thread, ord("t"), inst_scope).astype(np.uint8)
    i_names_raw = name_id[inst_rows]
    i_uniq, i_inv = np.unique(i_names_raw, return_inverse=True) if inst_rows.size else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    instant_names = [names[k] if k >= 0 else "(unnamed)" for k in i_uniq]

    # --- flows
    thread_ranges = np.searchsorted(c_thread, np.arange(thread_keys.shape[0] + 1))
    flow_id, flow_from, flow_to = _bind_flows(
        buf, ii, ss, ph, flags, ts, key_id, rank, flow_rows, c_start, c_end, parent,
        thread_ranges, c_row, rep)

    meta = {
        "source": source,
        "format": "chrome-json",
        "clock_origin": t0,
        "time_unit": "us",
        "display_time_unit": bytes(buf[dtu_off: dtu_off + dtu_len]).decode("utf-8", "replace") if dtu_len >= 0 else "",
        "n_events": int(n),
        "n_bytes": int(nbytes),
        "repairs": rep.items,
        "skipped": skipped,
    }
    trace = Trace(
        func=func, start=start.astype(np.float64), end=end.astype(np.float64), depth=depth, parent=parent,
        end_index=end_index, thread=c_thread.astype(np.int32), kind=np.ascontiguousarray(kind, np.uint8),
        obj_ptr=obj_ptr, obj_ids=obj_ids,
        function_names=function_names, function_files=[p.file for p in parsed],
        function_lines=np.array([p.line for p in parsed], np.int32), function_cats=function_cats,
        function_paths=[p.path for p in parsed],
        thread_pid=thread_pid, thread_tid=thread_tid, thread_names=thread_names,
        thread_sort=thread_sort, process_names=process_names, object_names=object_names,
        instant_ts=(ts[inst_rows] - t0).astype(np.float64), instant_name=i_inv.astype(np.int32),
        instant_thread=i_thread, instant_scope=i_scope, instant_names=instant_names,
        flow_id=flow_id, flow_from=flow_from, flow_to=flow_to,
        args_call=a_calls, args_ptr=args_ptr, args_blob=args_blob, meta=meta,
    )
    if warn:
        for code, it in rep.items.items():
            warnings.warn(f"{source}: {it['count']} × {it['action']}; first: {it['first']}",
                          TraceWarning, stacklevel=3)
    return trace


PARALLEL_SCAN_BYTES = 16 << 20
# an array, or an object whose keys before "traceEvents" have scalar values
_SCALAR_KEY = rb'"[^"\\]*"\s*:\s*(?:"[^"\\]*"|[-+0-9.eE]+|true|false|null)\s*,\s*'
_EVENTS_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*(\{\s*(?:' + _SCALAR_KEY + rb')*"traceEvents"\s*:\s*)?\[')
_NEXT_EVENT = re.compile(rb',\s*\{')
_DTU_HEAD = re.compile(rb'"displayTimeUnit"\s*:\s*"([^"\\]*)"')


def _scan_parallel(buf, data: bytes, max_events: int):
    """Scan the event array on two threads (the kernels release the GIL).

    Only for the common layouts (an array, or an object whose keys before
    ``traceEvents`` all have scalar values).  The second half starts at an event boundary guessed near
    the middle (``{`` after a ``,``); the guess is accepted only if the first
    half's scan stops exactly there, so a guess inside a string can never be
    taken.  Anything unexpected returns None: the caller scans sequentially,
    which is the reference behaviour (and gives the canonical error messages).
    """
    m = _EVENTS_HEAD.match(data[:4096])
    if m is None:
        return None
    start = m.end()
    n = len(data)
    mid = n // 2
    hit = _NEXT_EVENT.search(data, mid, min(n, mid + (4 << 20)))
    if hit is None:
        return None
    p = hit.end() - 1  # the "{" of a guessed event start
    cap = max(16, (n // 2) // 96)
    out = [None, None]

    def part(k, i, stop):
        out[k] = js.scan_events_part(buf, i, min(cap, max_events), max_events, stop)

    t = threading.Thread(target=part, args=(1, p, -1))
    t.start()
    part(0, start, p)
    t.join()
    (ii0, ss0, ff0, n0, end0, st0, _), (ii1, ss1, ff1, n1, end1, st1, ep1) = out
    if st0 != js.SPLIT or end0 != p or st1 < 0 or n0 + n1 > max_events:
        return None
    dtu_off, dtu_len = 0, -1
    status = st1
    if m.group(1) is not None and st1 == js.OK:  # object form: the keys after the array
        tail, dtu_off, dtu_len = js.scan_object_tail(buf, end1)
        if tail < 0:
            return None
        status = tail  # OK, or TRUNCATED like the sequential scan
    if m.group(1) is not None and dtu_len < 0:  # displayTimeUnit before the events
        d = _DTU_HEAD.search(data, 0, m.end())
        if d is not None:
            dtu_off, dtu_len = d.start(1), d.end(1) - d.start(1)
    ii = np.concatenate([ii0[:n0], ii1[:n1]])
    ss = np.concatenate([ss0[:n0], ss1[:n1]])
    ff = np.concatenate([ff0[:n0], ff1[:n1]])
    return ii, ss, ff, n0 + n1, status, ep1, dtu_off, dtu_len


def _reparse_slow_numbers(buf, ii, ss, flags, ts, dur, tdur, rep):
    """Numbers outside the scanner's exact fast path (17+ significant digits,
    large exponents, numbers given as strings): the scanner kept their byte
    spans; numpy's C string→float conversion (correctly rounded, as Python's float)
    parses them all at once; only values that are not numbers at all (a
    ``"ts": "abc"``) are looked at one by one, and become NaN."""
    slow = np.flatnonzero(flags & js.FL_SLOW)
    if not slow.size:
        return
    bad_first, nbad = None, 0
    for col, arr in enumerate((ts, dur, tdur)):
        lens = ss[slow, js.S_NUM_LEN + col]
        have = lens >= 0
        rows = slow[have]
        if not rows.size:
            continue
        o = ii[rows, js.I_EV_OFF] + ss[rows, js.S_NUM_REL + col]
        ln = lens[have].astype(np.int64)
        width = int(min(max(int(ln.max()), 1), 64))
        text = js.gather_fixed(buf, o, ln, width).view(f"S{width}").ravel()
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
                bad_first = int(rows[q]) if bad_first is None else bad_first
        arr[rows] = vals
    rep.add("bad_number", nbad, bad_first)


def _decode_names(buf, ii, ss, name_id, name_first, rep):
    """Decode each distinct name once; merge spellings that decode alike."""
    import orjson

    names: list[str] = []
    canon: dict[str, int] = {}
    remap = np.empty(name_first.shape[0], np.int32)
    bad, bad_first = 0, None
    for k, r in enumerate(name_first):
        off, ln = int(ii[r, js.I_NAME_OFF]), int(ss[r, js.S_NAME_LEN])
        raw = bytes(buf[off: off + ln])
        esc = bool(ss[r, js.S_FLAGS] & js.FL_NAME_ESC)
        try:
            s = orjson.loads(b'"' + raw + b'"') if esc else raw.decode("utf-8")
            if not isinstance(s, str):
                s = str(s)
        except Exception:
            s = raw.decode("utf-8", "replace")
            try:
                if esc:
                    import json

                    s = json.loads('"' + s + '"')
            except Exception:
                pass
            bad += 1
            bad_first = int(r) if bad_first is None else bad_first
        if s not in canon:
            canon[s] = len(names)
            names.append(s)
        remap[k] = canon[s]
    rep.add("bad_utf8", bad, bad_first)
    out = np.where(name_id >= 0, remap[np.maximum(name_id, 0)], -1).astype(np.int32) if remap.size else name_id
    return names, out


def _decode_span_list(buf, offs, lens) -> list:
    out = []
    for o, ln in zip(offs, lens):
        out.append(bytes(buf[int(o): int(o) + int(ln)]).decode("utf-8", "replace") if ln > 0 else "")
    return out


def _string_ids(buf, ii, ss, rows):
    """(pid text, tid text) of each row, re-reading string ids from the event."""
    import orjson

    out = []
    for r in rows:
        fl = int(ss[r, js.S_FLAGS])
        p, t = str(int(ii[r, js.I_PID])), str(int(ii[r, js.I_TID]))
        if fl & (js.FL_PID_STR | js.FL_TID_STR):
            off, ln = int(ii[r, js.I_EV_OFF]), int(ss[r, js.S_EV_LEN])
            try:
                ev = orjson.loads(bytes(buf[off: off + ln]))
                p, t = str(ev.get("pid", p)), str(ev.get("tid", t))
            except Exception:
                pass
        out.append((p, t))
    return out


def _read_metadata(buf, ii, ss, rows, key_id, pid):
    """M events: process/thread names and sort indices (a few per thread)."""
    import orjson

    info = {"thread_names": {}, "process_names": {}, "thread_sort": {}, "process_sort": {}}
    for r in rows:
        off, ln = int(ii[r, js.I_EV_OFF]), int(ss[r, js.S_EV_LEN])
        try:
            ev = orjson.loads(bytes(buf[off: off + ln]))
        except Exception:
            continue
        args = ev.get("args") or {}
        if not isinstance(args, dict):
            continue
        nm = ev.get("name")
        if nm == "thread_name" and "name" in args:
            info["thread_names"][int(key_id[r])] = str(args["name"])
        elif nm == "process_name" and "name" in args:
            info["process_names"][int(pid[r])] = str(args["name"])
        elif nm == "thread_sort_index" and "sort_index" in args:
            try:
                info["thread_sort"][int(key_id[r])] = int(args["sort_index"])
            except (TypeError, ValueError):
                pass
        elif nm == "process_sort_index" and "sort_index" in args:
            try:
                info["process_sort"][int(pid[r])] = int(args["sort_index"])
            except (TypeError, ValueError):
                pass
    return info


def _bind_flows(buf, ii, ss, ph, flags, ts, key_id, rank, flow_rows, abs_start, abs_end, parent,
                thread_ranges, c_row, rep):
    """Flow edges (from call, to call): v1 s/t/f chains and v2 bind_id links."""
    ids, froms, tos = [], [], []
    lo = thread_ranges[:-1].astype(np.int64)
    hi = thread_ranges[1:].astype(np.int64)
    if flow_rows.size:
        f_thread = rank[key_id[flow_rows]].astype(np.int64)
        f_ph = ph[flow_rows]
        f_next = (f_ph == ord("f")) & (ss[flow_rows, js.S_BP] != ord("e"))
        bound = ct.bind_flow_points(abs_start, abs_end, parent, lo, hi, f_thread, ts[flow_rows], f_next)
        unb = bound < 0
        rep.add("flow_unbound", int(unb.sum()), int(flow_rows[np.flatnonzero(unb)[0]]) if unb.any() else None)
        cat_len = np.maximum(ss[flow_rows, js.S_CAT_LEN], 0).astype(np.int64)
        cat_id, _ = js.intern_spans(buf, ii[flow_rows, js.I_CAT_OFF], cat_len, np.ones(flow_rows.size, bool))
        fk, _ = js.intern_pairs(cat_id.astype(np.int64), ii[flow_rows, js.I_ID])
        o = np.lexsort((flow_rows, ts[flow_rows], fk))
        fk, f_ph, bound, fid = fk[o], f_ph[o], bound[o], ii[flow_rows[o], js.I_ID]
        same = fk[1:] == fk[:-1]
        src_ok = (f_ph[:-1] == ord("s")) | (f_ph[:-1] == ord("t"))
        dst_ok = (f_ph[1:] == ord("t")) | (f_ph[1:] == ord("f"))
        e = same & src_ok & dst_ok & (bound[:-1] >= 0) & (bound[1:] >= 0)
        ids.append(fid[:-1][e])
        froms.append(bound[:-1][e])
        tos.append(bound[1:][e])
    # v2: X/B events carrying bind_id with flow_out / flow_in
    cf = flags[c_row]
    has_bind = (cf & js.FL_BIND) != 0
    if has_bind.any():
        calls = np.flatnonzero(has_bind)
        b = ii[c_row[calls], js.I_BIND]
        out_ = (cf[calls] & js.FL_FLOW_OUT) != 0
        in_ = (cf[calls] & js.FL_FLOW_IN) != 0
        src: dict[int, int] = {}
        for c, bid in zip(calls[out_], b[out_]):
            src.setdefault(int(bid), int(c))
        for c, bid in zip(calls[in_], b[in_]):
            s = src.get(int(bid))
            if s is not None and s != int(c):
                ids.append(np.array([bid], np.int64))
                froms.append(np.array([s], np.int32))
                tos.append(np.array([c], np.int32))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
    return (np.concatenate(ids).astype(np.int64), np.concatenate(froms).astype(np.int32),
            np.concatenate(tos).astype(np.int32))


def samples_to_events(doc: dict) -> list:
    """Chrome's sampled-profile form (``samples`` + ``stackFrames``, as Hermes and
    Chrome write) → B/E events: each sample's stack (``sf``, followed up through
    ``parent``) is compared with the previous sample's on the same thread; frames
    that left are closed and new ones opened at the sample's timestamp (the usual
    flame-chart reading of samples).  Iterative; a cycle in ``parent`` is cut."""
    frames = doc.get("stackFrames") or {}
    samples = doc.get("samples") or []
    if not isinstance(frames, dict) or not isinstance(samples, list):
        return []
    stacks: dict = {}

    def stack_of(sf):
        key = str(sf)
        if key in stacks:
            return stacks[key]
        chain, seen, cur = [], set(), key
        while cur is not None and cur in frames and cur not in seen and len(chain) < 100000:
            seen.add(cur)
            fr = frames[cur] if isinstance(frames[cur], dict) else {}
            chain.append((cur, str(fr.get("name", cur))))
            par = fr.get("parent")
            cur = None if par is None else str(par)
        stacks[key] = chain[::-1]
        return stacks[key]

    by_thread: dict = {}
    for k, smp in enumerate(samples):
        if not isinstance(smp, dict) or "sf" not in smp:
            continue
        try:
            t = float(smp.get("ts"))
        except (TypeError, ValueError):
            continue
        by_thread.setdefault((smp.get("pid", 0), smp.get("tid", 0)), []).append((t, k, smp["sf"]))
    events = []
    for (pid, tid), lst in by_thread.items():
        lst.sort()
        open_: list = []
        for t, _, sf in lst:
            st = stack_of(sf)
            common = 0
            while common < min(len(open_), len(st)) and open_[common][0] == st[common][0]:
                common += 1
            for fid, nm in reversed(open_[common:]):
                events.append({"ph": "E", "name": nm, "ts": t, "pid": pid, "tid": tid})
            for fid, nm in st[common:]:
                events.append({"ph": "B", "name": nm, "ts": t, "pid": pid, "tid": tid})
            open_ = list(st)
        if lst:
            t_end = lst[-1][0]
            for fid, nm in reversed(open_):
                events.append({"ph": "E", "name": nm, "ts": t_end, "pid": pid, "tid": tid})
    return events


def _load_with_samples(data: bytes, source: str, **options) -> Trace:
    import orjson

    try:
        doc = orjson.loads(data)
    except Exception:
        raise TraceFormatError(f"{source}: has stackFrames but is not valid JSON as a whole") from None
    if not isinstance(doc, dict):
        raise TraceFormatError(f"{source}: no call events (B/E or X) and no instants: nothing to show")
    events = [e for e in (doc.get("traceEvents") or []) if isinstance(e, dict)]
    sampled = samples_to_events(doc)
    if not sampled:
        raise TraceFormatError(f"{source}: no call events, and its samples/stackFrames give no stacks")
    tr = load_chrome(orjson.dumps({"traceEvents": events + sampled}), source, _from_samples=True, **options)
    tr.meta["format"] = "chrome-json-samples"
    tr.meta["n_samples"] = len(doc.get("samples") or [])
    return tr
