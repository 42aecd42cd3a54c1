"""Counters (``ph: "C"``) and async slices (``b``/``e``/``n``, legacy ``S``/``T``/``p``/``F``) of
a Chrome trace, from the rows the scanner kept.

Counters, the Chrome rule: each key of a ``C`` event's ``args`` is one series; ``name``
(plus ``id`` when present) and the process make one counter.  Values must be numbers:
NaN/±Infinity (``counter_nonfinite``) and other values (``counter_not_number``) are
dropped, each a repair.  Samples come out sorted by (series, ts).

Async slices, the spec's ids: an event's id is ``id``, else ``id2.global``, else
``id2.local``; a track is (category, ``scope``, id), and for a ``id2.local`` id also the
process (``id`` and ``id2.global`` match across processes; an event with no id keeps a
track per process).  The id's text is kept (``async_track_ids``: ``"0x1f"`` stays
``0x1f``, a number its digits), with its kind (``async_track_id_kind``, `jsonside.ID_*`)
and scope (``async_track_scopes``).  On a track an end closes the innermost open begin
when it has no name (the spec lets ``e`` omit it) or the names agree; else the innermost
open begin of its name, the slices above it closed with it (``async_misnested``), and when
no open begin has its name the innermost one (``async_end_name_mismatch``).  ``n`` is a
zero-length slice inside the open ones.  Legacy async events: ``S``/``F`` are begin/end;
the steps ``T`` (step into) and ``p`` (step past) are zero-length slices on the slice's lane
like ``n``: Perfetto's JSON importer reads only ``b``/``e``/``n`` (it drops the legacy
phases), and splitting the slice at each step (what the old catapult viewer drew) would
invent slice ends the file does not have, so the steps stay marks inside their slice.
Begins never ended are closed at their track's last timestamp (``async_unclosed``), ends
with nothing open are dropped (``async_unmatched_end``).

All of it is numpy over the rows plus numba passes (`kernels.jsonside`); Python runs
once per distinct key, name, category, scope and id, never per event.
"""
from __future__ import annotations

import numpy as np

from ..kernels import jsonevent as jev
from ..kernels import jsonside as jsd
from ..kernels import jsonspans as jsp
from ..kernels import sidetables as fss
from ..model_side import SIDE_DTYPES

SIDE_REPAIRS = {
    "counter_nonfinite": "counter value that is NaN or infinite: dropped that sample",
    "counter_not_number": "counter value that is not a number (a string, object, ...): dropped that sample",
    "counter_no_ts": "counter event without a finite ts (or one beyond the time range): dropped it",
    "async_no_ts": "async event without a finite ts (or one beyond the time range): dropped it",
    "async_unclosed": "async begin (b/S) never ended: closed it at its track's last timestamp",
    "async_unmatched_end": "async end (e/F) with no open begin on its track: dropped it",
    "async_misnested": "async slice still open when an end named an enclosing one: closed it there",
    "async_end_name_mismatch": "async end whose name no open begin of its track has: closed the innermost one",
}
ASYNC_PHASES = b"benSTpF"
_KIND = {ord("b"): jsd.A_BEGIN, ord("S"): jsd.A_BEGIN, ord("e"): jsd.A_END, ord("F"): jsd.A_END,
         ord("n"): jsd.A_INSTANT, ord("T"): jsd.A_INSTANT, ord("p"): jsd.A_INSTANT}
_ASYNC_PHASE = np.zeros(256, bool)  # by phase byte
_ASYNC_PHASE[np.frombuffer(ASYNC_PHASES, np.uint8)] = True
_MATCH_REPAIRS = (("async_unclosed", jsd.M_UNCLOSED), ("async_unmatched_end", jsd.M_ORPHAN),
                  ("async_misnested", jsd.M_MISNESTED), ("async_end_name_mismatch", jsd.M_NAME_MISMATCH))


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


def by_key_then_time(key: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The order of ``np.lexsort((t, key))``: a stable sort by key alone, which is that order
    already when each key's rows come in time order (a file written as it was recorded: one
    counting sort, `jsonside.key_time_order`); the lexsort only when they do not."""
    if key.size:
        o, ok = jsd.key_time_order(key, t)
        if ok:
            return o
    o = np.argsort(key, kind="stable")
    ko, to = key[o], t[o]
    if np.any((ko[1:] == ko[:-1]) & (to[1:] < to[:-1])):
        o = np.lexsort((t, key))
    return o


def _series(buf, pid, nid, cid, koff, klen, seed):
    """(series of each pair, counter of each series, first pair of each series, first pair of
    each counter) of counter pairs (process, name, id, key span): `jsonside.series_ids`,
    or when keys were built to collide the exact interning of `jsonspans`."""
    if pid.size == 0:  # the kernels compile on first use: not for traces without counters
        e = np.zeros(0, np.int64)
        return e.astype(np.int32), e, e, e
    sid, s_counter, sfirst, cfirst, ok = jsd.series_ids(buf, pid, nid, cid, koff, klen, seed)
    if ok:
        return sid, s_counter, sfirst, cfirst
    ckey, _ = jsp.intern_pairs(pid, nid, seed)
    ckey2, cfirst = jsp.intern_pairs(ckey.astype(np.int64), cid, seed)
    kid, _ = jsp.intern_spans(buf, koff, klen, np.ones(koff.shape[0], bool), seed)
    sid, sfirst = jsp.intern_pairs(ckey2.astype(np.int64), kid.astype(np.int64), seed)
    return sid, ckey2[sfirst].astype(np.int64), sfirst, cfirst


def counter_samples(buf, cii, css, cts, c_all, c_name, max_t: float, rep, seed, max_nesting: int,
                    base: int = 0, fast=None, fast_names=None) -> dict:
    """The numeric part of the counters (no text is decoded: it may run on a thread of its own
    while the importer builds the call tree): the counter events ``c_all`` (side rows of ``cii,
    css``, times ``cts``, interned names ``c_name``) and the fast path's samples (``fast``, an
    `io.chrome_fast.FastSide`; ``fast_names``: the importer's name of each of its names), merged
    in file order → their samples, series and order.  ``rep``: the repairs (``add(code, count,
    row)``), a side row cited as ``base + row``."""
    if fast is not None:
        fast.join_samples()
    c_all = np.asarray(c_all, np.int64)
    finite = np.abs(cts[c_all]) <= max_t
    bad = c_all[~finite]
    rep.add("counter_no_ts", int(bad.size), base + int(bad[0]) if bad.size else None)
    c_rows = c_all[finite]
    c_rows = c_rows[css[c_rows, jev.S_ARGS_LEN] >= 2]
    stack = np.zeros(max(int(max_nesting), 1) + 1, np.uint8)
    if c_rows.size:  # the kernels compile on first use: not for traces without counters
        row, koff, klen, voff, vlen, val, st = jsd.counter_pairs(
            buf, cii[c_rows, jev.I_ARGS_OFF], css[c_rows, jev.S_ARGS_LEN].astype(np.int64), stack)
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
        rep.add(code, int(hit.size), base + int(c_rows[row[hit[0]]]) if hit.size else None)
    keep = st == jsd.PAIR_OK
    row, koff, klen, val = row[keep], koff[keep], klen[keep], val[keep]
    r = c_rows[row]
    r_has_id = (css[r, jev.S_FLAGS] & jev.FL_ID) != 0
    # the pairs of both paths: one series per (process, name, id, key), one counter per (process,
    # name, id); the fast path's series entries (one per part) stand for their samples
    n_e = 0 if fast is None else fast.r_cnt.size
    if n_e:
        ce = fast.r_cnt
        pid = np.concatenate([fast.c_pid[ce], cii[r, jev.I_PID]])
        nid = np.concatenate([fast_names[fast.c_name[ce]], c_name[r].astype(np.int64)])
        cid = np.concatenate([fast.c_cid[ce], np.where(r_has_id, cii[r, jev.I_ID], 0)])
        kof = np.concatenate([fast.r_koff, koff])
        kln = np.concatenate([fast.r_klen, klen])
    else:
        pid, nid = cii[r, jev.I_PID], c_name[r].astype(np.int64)
        cid, kof, kln = np.where(r_has_id, cii[r, jev.I_ID], 0), koff, klen
    prov, prov_counter, _, _ = _series(buf, pid, nid, cid, kof, kln, seed)
    n_v = r.size
    n_f = 0 if fast is None else fast.s_ts.size
    src = None  # merged pair -> its source: a side pair (< n_v) or n_v + a fast sample
    if n_f and n_v:
        src = np.argsort(np.concatenate([cii[r, jev.I_EV_OFF], fast.s_off]), kind="stable")
        m_prov = np.concatenate([prov[n_e:], prov[:n_e][fast.s_ser]])[src]
        m_ts = np.concatenate([cts[r], fast.s_ts])[src]
        m_val = np.concatenate([val, fast.s_val])[src]
    elif n_f:
        m_prov, m_ts, m_val = prov[:n_e][fast.s_ser], fast.s_ts, fast.s_val
    else:
        m_prov, m_ts, m_val = prov[n_e:], cts[r], val
    # series and counters numbered by first appearance in the file
    n_prov = int(prov.max()) + 1 if prov.size else 1
    sid, s_old = jsp.renumber_by_first_use(m_prov.astype(np.int32), n_prov)
    sfirst = _first_uses(sid)
    s_counter, _ = jsp.renumber_by_first_use(np.asarray(prov_counter, np.int64)[s_old].astype(np.int32),
                                             max(int(np.max(prov_counter)) + 1 if len(prov_counter) else 1, 1))
    cfirst = sfirst[_first_uses(s_counter)]  # the first pair of each counter
    o = by_key_then_time(sid, m_ts)
    return {"ts": m_ts[o], "value": m_val[o], "series": sid[o], "s_counter": s_counter.astype(np.int64),
            **_firsts(buf, cii, css, c_name, r, r_has_id, koff, klen, fast, fast_names, sfirst, cfirst, src, n_v,
                      stack)}


def _first_uses(ids) -> np.ndarray:
    """Where each id of ``ids`` (numbered by first use: 0, 1, 2, ... as they first come) first
    comes: where their running maximum grows."""
    grows = np.ones(ids.shape[0], bool)
    if ids.size:
        top = np.maximum.accumulate(ids)
        np.greater(top[1:], top[:-1], out=grows[1:])
    return np.flatnonzero(grows)


def _firsts(buf, cii, css, c_name, r, r_has_id, koff, klen, fast, fast_names, sfirst, cfirst, src, n_v, stack):
    """What the texts need of the first pair of each series (its process, key span) and of each
    counter (its name, whether it has an id, its event's span), from a side pair or a fast
    sample (``src``: the source of each merged pair, None when all come from one)."""
    def source(m):
        if src is not None:
            return src[m]
        return m if n_v else m + n_v
    ss_ = source(sfirst)
    cs_ = source(cfirst)
    sv, sf = ss_ < n_v, ss_ >= n_v
    out_pid = np.zeros(ss_.size, np.int64)
    out_koff = np.zeros(ss_.size, np.int64)
    out_klen = np.zeros(ss_.size, np.int64)
    out_pid[sv] = cii[r[ss_[sv]], jev.I_PID]
    out_koff[sv], out_klen[sv] = koff[ss_[sv]], klen[ss_[sv]]
    cv, cf = cs_ < n_v, cs_ >= n_v
    c_nm = np.zeros(cs_.size, np.int64)
    c_has = np.zeros(cs_.size, bool)
    c_off = np.zeros(cs_.size, np.int64)
    c_len = np.zeros(cs_.size, np.int64)
    rv = r[cs_[cv]]
    c_nm[cv], c_has[cv] = c_name[rv], r_has_id[cs_[cv]]
    c_off[cv], c_len[cv] = cii[rv, jev.I_EV_OFF], css[rv, jev.S_EV_LEN]
    if fast is not None and (sf.any() or cf.any()):
        e = fast.s_ser[ss_[sf] - n_v]
        out_pid[sf] = fast.c_pid[fast.r_cnt[e]]
        out_koff[sf], out_klen[sf] = fast.r_koff[e], fast.r_klen[e]
        j = cs_[cf] - n_v
        ce = fast.r_cnt[fast.s_ser[j]]
        c_nm[cf], c_has[cf] = fast_names[fast.c_name[ce]], fast.c_has_id[ce]
        c_off[cf] = fast.s_off[j]
        c_len[cf] = fss.event_lengths(buf, c_off[cf], stack)
    return {"pid": out_pid, "koff": out_koff, "klen": out_klen, "c_name": c_nm, "c_has_id": c_has,
            "c_ev_off": c_off, "c_ev_len": c_len}


def counter_fields(buf, cs: dict, names, t0: float, text, max_nesting: int) -> dict:
    """The Trace's counter fields from `counter_samples`' ``cs``: the texts (counter names with
    their ids as the file has them, series names) decoded here, the times from ``t0``."""
    stack = np.zeros(max(int(max_nesting), 1) + 1, np.uint8)
    counter_names = []
    id_of = {}
    with_id = np.flatnonzero(cs["c_has_id"])
    if with_id.size:
        _, i_off, i_len, _, _ = jsd.event_ids(buf, cs["c_ev_off"][with_id], cs["c_ev_len"][with_id], stack)
        i_first = np.flatnonzero(i_len >= 0)
        id_of = dict(zip(with_id[i_first].tolist(), _texts(buf, i_off, i_len, i_first, text)))
    for c, (nid, hid) in enumerate(zip(cs["c_name"].tolist(), cs["c_has_id"].tolist())):
        nm = names[nid] if nid >= 0 else "(unnamed)"
        idt = id_of.get(c, "")
        counter_names.append(f"{nm}[{idt}]" if hid else nm)
    n_series = int(cs["pid"].shape[0])
    return {
        "counter_ts": np.ascontiguousarray(cs["ts"] - t0, np.float64),
        "counter_value": np.ascontiguousarray(cs["value"], np.float64),
        "counter_series": np.ascontiguousarray(cs["series"], np.int32),
        "series_counter": np.ascontiguousarray(cs["s_counter"], np.int32),
        "series_pid": np.ascontiguousarray(cs["pid"], np.int64),
        "series_names": _texts(buf, cs["koff"], cs["klen"], np.arange(n_series), text),
        "series_units": [""] * n_series,
        "counter_names": counter_names,
    }


def series_units_from(side: dict, units: dict) -> None:
    """Sets ``side["series_units"]`` (in place) from ``units``: {(pid, counter name, series name):
    unit}, as `chrome_writer` keeps them in metadata events; series not named keep theirs."""
    if not units:
        return
    names, counter = side["counter_names"], side["series_counter"]
    side["series_units"] = [units.get((int(pid), names[int(c)], sn), u) for pid, c, sn, u in
                            zip(side["series_pid"].tolist(), counter.tolist(), side["series_names"],
                                side["series_units"])]


def side_tracks(buf, ii, ss, ts, rows, name_id, names, t0: float, max_t: float, rep, text, seed,
                max_nesting: int, counters: dict) -> dict:
    """The Trace fields of counters and async slices (`model.SIDE_FIELDS`).  ``rows``: the
    rows (ascending) of events of the file (not samples or frames) that may be async events
    (any row of those phases; per-row values are read at these rows only, to bound the memory);
    ``name_id``/``names``: the importer's interned event names; ``rep``: its repairs
    (``add(code, count, row)``).  ``counters``: the counters' fields (`counter_fields`; the
    scanner keeps the counter events in its side rows, not among ``rows``)."""
    rows = np.asarray(rows, np.int64)
    ph = ss[rows, jev.S_PH]
    stack = np.zeros(max(int(max_nesting), 1) + 1, np.uint8)
    out = dict(counters)

    # --- async slices
    a_all = rows[_ASYNC_PHASE[ph & 255]]
    finite = np.abs(ts[a_all]) <= max_t
    bad = a_all[~finite]
    rep.add("async_no_ts", int(bad.size), int(bad[0]) if bad.size else None)
    out.update(_async_slices(buf, ii, ss, ts, a_all[finite], name_id, names, t0, rep, text, seed, stack))
    return out


def _async_slices(buf, ii, ss, ts, a_rows, name_id, names, t0: float, rep, text, seed, stack) -> dict:
    """The async slice fields of the Trace from the async rows ``a_rows`` (finite ts)."""
    if a_rows.size == 0:  # the kernels compile on first use: not for traces without async events
        return {k: np.zeros(0, dt) for k, dt in SIDE_DTYPES.items() if k.startswith("async_")} | {
            "async_names": [], "async_track_cats": [], "async_track_ids": [], "async_track_scopes": []}
    ph = ss[a_rows, jev.S_PH]
    pid = ii[a_rows, jev.I_PID]
    ones = np.ones(a_rows.size, bool)
    if a_rows.size:
        idk, id_off, id_len, sc_off, sc_len = jsd.event_ids(
            buf, ii[a_rows, jev.I_EV_OFF], ss[a_rows, jev.S_EV_LEN].astype(np.int64), stack)
    else:
        idk = np.zeros(0, np.int8)
        id_off = id_len = sc_off = sc_len = np.zeros(0, np.int64)
    id_tid, id_first = jsp.intern_spans(buf, id_off, np.maximum(id_len, 0), id_len >= 0, seed)
    sc_tid, sc_first = jsp.intern_spans(buf, sc_off, np.maximum(sc_len, 0), sc_len >= 0, seed)
    cat_len = np.maximum(ss[a_rows, jev.S_CAT_LEN], 0).astype(np.int64)
    cat_id, cat_first = jsp.intern_spans(buf, ii[a_rows, jev.I_CAT_OFF], cat_len, ones, seed)
    # a track: (category, scope, id, global or per process [, process])
    per_process = (idk == jsd.ID2_LOCAL) | (idk == jsd.ID_NONE)
    k1, _ = jsp.intern_pairs(cat_id.astype(np.int64), id_tid.astype(np.int64), seed)
    k2, _ = jsp.intern_pairs(k1.astype(np.int64), sc_tid.astype(np.int64), seed)
    k3, _ = jsp.intern_pairs(k2.astype(np.int64), per_process.astype(np.int64), seed)
    track, tfirst = jsp.intern_pairs(k3.astype(np.int64), np.where(per_process, pid, 0), seed)
    kind_of = np.full(256, jsd.A_INSTANT, np.int8)
    for c, k in _KIND.items():
        kind_of[c] = k
    kind = kind_of[ph.astype(np.int64) & 255]
    a_ts = ts[a_rows]
    o = np.lexsort((a_rows, a_ts, track))
    srow, send, sdep, counts, firsts = jsd.match_async(
        track[o].astype(np.int64), kind[o], a_ts[o], name_id[a_rows][o].astype(np.int64))
    for code, m in _MATCH_REPAIRS:
        rep.add(code, int(counts[m]), int(a_rows[o][firsts[m]]) if counts[m] else None)
    s_rows = a_rows[o][srow]  # the begin (or instant) row of each slice
    s_track = track[o][srow]
    s_start = ts[s_rows]
    q = np.lexsort((sdep, s_start, s_track))
    s_rows, s_track, s_start, send, sdep = s_rows[q], s_track[q], s_start[q], send[q], sdep[q]
    a_uniq, a_inv = np.unique(name_id[s_rows].astype(np.int64), return_inverse=True)
    cat_texts = _texts(buf, ii[a_rows, jev.I_CAT_OFF], ss[a_rows, jev.S_CAT_LEN].astype(np.int64),
                       cat_first, text)
    id_texts = _texts(buf, id_off, id_len, id_first, text)
    sc_texts = _texts(buf, sc_off, sc_len, sc_first, text)
    return {
        "async_start": np.ascontiguousarray(s_start - t0, np.float64),
        "async_end": np.ascontiguousarray(send - t0, np.float64),
        "async_name": np.ascontiguousarray(a_inv.reshape(-1), np.int32),
        "async_track": np.ascontiguousarray(s_track, np.int32),
        "async_depth": np.ascontiguousarray(sdep, np.int32),
        "async_names": [names[k] if k >= 0 else "(unnamed)" for k in a_uniq.tolist()],
        "async_track_pid": np.ascontiguousarray(pid[tfirst], np.int64),
        "async_track_id_kind": np.ascontiguousarray(idk[tfirst], np.uint8),
        "async_track_cats": [cat_texts[int(cat_id[j])] for j in tfirst.tolist()],
        "async_track_ids": [id_texts[int(id_tid[j])] if id_tid[j] >= 0 else "" for j in tfirst.tolist()],
        "async_track_scopes": [sc_texts[int(sc_tid[j])] if sc_tid[j] >= 0 else "" for j in tfirst.tolist()],
    }
