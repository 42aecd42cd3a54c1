"""Counters (``ph: "C"``) and async slices (``b``/``e``/``n``, legacy ``S``/``F``/``T``) of a
Chrome trace, from the rows the scanner kept (issue 25, item 1).

Counters, the Chrome rule: each key of a ``C`` event's ``args`` is one series; ``name``
(plus ``id`` when present) and the process make one counter.  Values must be numbers:
NaN/±Infinity (``counter_nonfinite``) and other values (``counter_not_number``) are
dropped, each a repair.  Samples come out sorted by (series, ts).

Async slices: matched per track = (category, id, process); an end closes the innermost open
begin of its track whatever its name (as Perfetto does for nestable events), ``n`` is a
zero-length slice inside the open ones, legacy ``S``/``F``/``T`` count as ``b``/``e``/``n``.
Begins never ended are closed at their track's last timestamp (``async_unclosed``), ends
with nothing open are dropped (``async_unmatched_end``).

All of it is numpy over the rows plus two numba passes (`kernels.jsonside`); Python runs
once per distinct key, name, category and id, never per event.  Ids that are strings are
kept as the hash the scanner made of them (shown in hexadecimal).
"""
from __future__ import annotations

import numpy as np

from ..kernels import jsonevent as jev
from ..kernels import jsonside as jsd
from ..kernels import jsonspans as jsp

SIDE_REPAIRS = {
    "counter_nonfinite": "counter value that is NaN or infinite: dropped that sample",
    "counter_not_number": "counter value that is not a number (a string, object, ...): dropped that sample",
    "counter_no_ts": "counter event without a finite ts (or one beyond the time range): dropped it",
    "async_no_ts": "async event without a finite ts (or one beyond the time range): dropped it",
    "async_unclosed": "async begin (b/S) never ended: closed it at its track's last timestamp",
    "async_unmatched_end": "async end (e/F) with no open begin on its track: dropped it",
}
COUNTER_PHASES = b"C"
ASYNC_PHASES = b"benSFT"
_KIND = {ord("b"): jsd.A_BEGIN, ord("S"): jsd.A_BEGIN, ord("e"): jsd.A_END, ord("F"): jsd.A_END,
         ord("n"): jsd.A_INSTANT, ord("T"): jsd.A_INSTANT}


def _id_text(v: int, has_id: bool) -> str:
    return "" if not has_id else (str(v) if -(1 << 31) <= v < (1 << 31) else f"{v & ((1 << 64) - 1):#x}")


def _texts(buf, off, ln, first, text) -> list[str]:
    """One decoded string per distinct span (``first``: a row of each)."""
    out = []
    for r in first.tolist():
        if ln[r] < 0:
            out.append("")
            continue
        raw = bytes(buf[off[r]: off[r] + ln[r]])
        if b"\\" in raw:
            import json
            try:
                out.append(text.clean(json.loads(b'"' + raw + b'"')))
                continue
            except ValueError:
                pass
        out.append(text.raw(raw))
    return out


def _by_key_then_time(key: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The order of ``np.lexsort((t, key))``: a stable sort by key alone, which is that order
    already when each key's rows come in time order (a file written as it was recorded);
    the lexsort only when they do not."""
    o = np.argsort(key, kind="stable")
    ko, to = key[o], t[o]
    if np.any((ko[1:] == ko[:-1]) & (to[1:] < to[:-1])):
        o = np.lexsort((t, key))
    return o


def side_tracks(buf, ii, ss, ts, rows_ok, name_id, names, t0: float, max_t: float, rep, text, seed,
                max_nesting: int) -> dict:
    """The Trace fields of counters and async slices (`model.SIDE_FIELDS`).  ``rows_ok``:
    rows that are events of the file (not samples or frames); ``name_id``/``names``: the
    importer's interned event names; ``rep``: its repairs (``add(code, count, row)``)."""
    ph = ss[:, jev.S_PH]
    finite = np.abs(ts) <= max_t
    out: dict = {}
    pid = ii[:, jev.I_PID]
    has_id = (ss[:, jev.S_FLAGS] & jev.FL_ID) != 0
    ev_id = np.where(has_id, ii[:, jev.I_ID], 0)

    # --- counters
    c_all = np.flatnonzero(rows_ok & (ph == ord("C")))
    bad = c_all[~finite[c_all]]
    rep.add("counter_no_ts", int(bad.size), int(bad[0]) if bad.size else None)
    c_rows = c_all[finite[c_all]]
    c_rows = c_rows[ss[c_rows, jev.S_ARGS_LEN] >= 2]
    stack = np.zeros(max(int(max_nesting), 1) + 1, np.uint8)
    if c_rows.size:  # the kernels compile on first use: not for traces without counters
        row, koff, klen, voff, vlen, val, st = jsd.counter_pairs(
            buf, ii[c_rows, jev.I_ARGS_OFF], ss[c_rows, jev.S_ARGS_LEN].astype(np.int64), stack)
    else:
        row, koff, klen, voff, vlen = (np.zeros(0, np.int64) for _ in range(5))
        val, st = np.zeros(0, np.float64), np.zeros(0, np.int8)
    inexact = np.flatnonzero(st == jsd.PAIR_INEXACT)
    for k in inexact.tolist():  # rare: numbers outside the exact fast path
        try:
            v = float(bytes(buf[voff[k]: voff[k] + vlen[k]]))
        except ValueError:
            v = np.nan
        val[k] = v
        st[k] = jsd.PAIR_OK if np.isfinite(v) else jsd.PAIR_NONFINITE
    for code, s in (("counter_nonfinite", jsd.PAIR_NONFINITE), ("counter_not_number", jsd.PAIR_NOT_NUMBER)):
        hit = np.flatnonzero(st == s)
        rep.add(code, int(hit.size), int(c_rows[row[hit[0]]]) if hit.size else None)
    keep = st == jsd.PAIR_OK
    row, koff, klen, val = row[keep], koff[keep], klen[keep], val[keep]
    r = c_rows[row]
    # one counter per (process, name, id); one series per (counter, key)
    nid = name_id[r].astype(np.int64)
    ckey, _ = jsp.intern_pairs(pid[r], nid, seed)
    ckey2, cfirst = jsp.intern_pairs(ckey.astype(np.int64), ev_id[r], seed)
    kid, kfirst = jsp.intern_spans(buf, koff, klen, np.ones(koff.shape[0], bool), seed)
    sid, sfirst = jsp.intern_pairs(ckey2.astype(np.int64), kid.astype(np.int64), seed)
    counter_names = []
    for j in cfirst.tolist():
        rr = int(r[j])
        nm = names[int(name_id[rr])] if name_id[rr] >= 0 else "(unnamed)"
        idt = _id_text(int(ev_id[rr]), bool(has_id[rr]))
        counter_names.append(f"{nm}[{idt}]" if idt else nm)
    key_texts = _texts(buf, koff, klen, kfirst, text)
    o = _by_key_then_time(sid, ts[r])
    out["counter_ts"] = np.ascontiguousarray(ts[r][o] - t0, np.float64)
    out["counter_value"] = np.ascontiguousarray(val[o], np.float64)
    out["counter_series"] = np.ascontiguousarray(sid[o], np.int32)
    out["series_counter"] = np.ascontiguousarray(ckey2[sfirst], np.int32)
    out["series_pid"] = np.ascontiguousarray(pid[r[sfirst]], np.int64)
    out["series_names"] = [key_texts[int(kid[j])] for j in sfirst.tolist()]
    out["series_units"] = [""] * int(sfirst.shape[0])
    out["counter_names"] = counter_names

    # --- async slices
    a_all = np.flatnonzero(rows_ok & np.isin(ph, np.frombuffer(ASYNC_PHASES, np.uint8).astype(ph.dtype)))
    bad = a_all[~finite[a_all]]
    rep.add("async_no_ts", int(bad.size), int(bad[0]) if bad.size else None)
    a_rows = a_all[finite[a_all]]
    cat_len = np.maximum(ss[a_rows, jev.S_CAT_LEN], 0).astype(np.int64)
    cat_id, cat_first = jsp.intern_spans(buf, ii[a_rows, jev.I_CAT_OFF], cat_len, np.ones(a_rows.size, bool), seed)
    tk1, _ = jsp.intern_pairs(cat_id.astype(np.int64), ev_id[a_rows], seed)
    track, tfirst = jsp.intern_pairs(tk1.astype(np.int64), pid[a_rows], seed)
    kind_of = np.full(256, jsd.A_INSTANT, np.int8)
    for c, k in _KIND.items():
        kind_of[c] = k
    kind = kind_of[ph[a_rows].astype(np.int64) & 255]
    o = np.lexsort((a_rows, ts[a_rows], track))
    if a_rows.size:
        srow, send, sdep, n_open, first_open, n_orphan, first_orphan = jsd.match_async(
            track[o].astype(np.int64), kind[o], ts[a_rows][o])
    else:
        srow, send, sdep = np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int32)
        n_open = n_orphan = 0
        first_open = first_orphan = -1
    rep.add("async_unclosed", int(n_open), int(a_rows[o][first_open]) if n_open else None)
    rep.add("async_unmatched_end", int(n_orphan), int(a_rows[o][first_orphan]) if n_orphan else None)
    s_rows = a_rows[o][srow]  # the begin (or instant) row of each slice
    s_track = track[o][srow]
    s_start = ts[s_rows]
    q = np.lexsort((sdep, s_start, s_track))
    s_rows, s_track, s_start, send, sdep = s_rows[q], s_track[q], s_start[q], send[q], sdep[q]
    a_nid = name_id[s_rows].astype(np.int64)
    a_uniq, a_inv = np.unique(a_nid, return_inverse=True)
    cat_texts = _texts(buf, ii[a_rows, jev.I_CAT_OFF], ss[a_rows, jev.S_CAT_LEN].astype(np.int64),
                       cat_first, text) if a_rows.size else []
    tr = a_rows[tfirst]
    out["async_start"] = np.ascontiguousarray(s_start - t0, np.float64)
    out["async_end"] = np.ascontiguousarray(send - t0, np.float64)
    out["async_name"] = np.ascontiguousarray(a_inv.reshape(-1), np.int32)
    out["async_track"] = np.ascontiguousarray(s_track, np.int32)
    out["async_depth"] = np.ascontiguousarray(sdep, np.int32)
    out["async_names"] = [names[k] if k >= 0 else "(unnamed)" for k in a_uniq.tolist()]
    out["async_track_pid"] = np.ascontiguousarray(pid[tr], np.int64)
    out["async_track_cats"] = [cat_texts[int(cat_id[j])] for j in tfirst.tolist()]
    out["async_track_ids"] = [_id_text(int(ev_id[x]), bool(has_id[x])) for x in tr.tolist()]
    return out
