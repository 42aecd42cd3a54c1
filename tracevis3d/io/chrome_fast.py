"""What the scanner's fast path took of the counter and flow events (`kernels.sidescan`), joined
over the parts of a scan, and the flows of a Chrome trace.

The fast path keeps compact columns and small tables per part (`chrome_rows.FastOut`); here the
parts' tables are joined into one (thread keys, names, categories: interned again over the
parts, numbered by first appearance, which the parts' order keeps), the outputs concatenated and
their entries renumbered.  The importer then merges these events with the few that took side
rows (the general path) by their place in the file, so every number and every repair comes
out as the general path alone gives it.

A repair or a name may cite a fast event as row `FAST` + q: q < the number of names, the first
event of name q; past that, flow event q - names (`FastSide.cite`).

Flows (v1 ``s``/``t``/``f`` chains and v2 ``bind_id`` links): `flow_points` lists the v1 flow
events of both kinds in file order, `flow_order` orders them into chains, `bind_flows` binds
them to calls and makes the edges, `flow_categories` names the categories used.
"""
from __future__ import annotations

import threading

import numpy as np

from ..kernels import chrome_tree as ct
from ..kernels import flowchain as fc
from ..kernels import jsonevent as jev
from ..kernels import jsonspans as jsp
from ..kernels import sidetables as fs
from .chrome_side import by_key_then_time

#: a row cited as SIDE + s is side row s (`jsonscan.scan_events`), one cited as FAST + q a fast event
#: (`FastSide.cite`); rows below FAST are event rows
SIDE = 1 << 62
FAST = 1 << 61


def _cat(parts: list, pick) -> np.ndarray:
    got = [pick(p) for p in parts]
    return np.concatenate(got) if got else np.zeros(0)


def _cat_pieces(pieces: list, dtype) -> np.ndarray:
    return np.concatenate(pieces).astype(dtype, copy=False) if pieces else np.zeros(0, dtype)


class FastSide:
    """The fast path's tables and outputs of every part (`chrome_rows.FastOut`, in file order)
    joined:

    * thread keys ``k_pid, k_tid`` (distinct, by first appearance), ``k_off`` (offset of the
      first event), ``k_max`` (largest ts);
    * names ``n_off, n_len, n_esc`` (distinct byte strings, by first appearance), their first
      event ``n_ev_off, n_ev_len, n_ord``;
    * categories ``t_off, t_len`` likewise (``t_ev_off``: the first event);
    * counters of every part (not joined: one per part that has it) ``c_pid, c_name`` (name
      index), ``c_cid, c_has_id``; series ``r_cnt`` (counter index), ``r_koff, r_klen``;
    * samples ``s_ts, s_val, s_ser`` (series index), ``s_off`` (the event's offset), once
      `join_samples` has joined them;
    * flow events ``f_ts, f_id, f_off, f_key`` (thread key), ``f_cat`` (category), ``f_ord``,
      ``f_ph, f_bp, f_len``, once `join_flows` has;
    * ``n_counter_events``, ``min_counter_ts``, ``n_events``.
    """

    def __init__(self, buf, outs: list, seed: int):
        tabs = [o.fx[0] for o in outs]
        cnts = [o.fx[2] for o in outs]
        self.n_events = sum(o.n for o in outs)
        self.n_counter_events = int(sum(int(c[fs.C_COUNTERS]) for c in cnts))
        self.min_counter_ts = min([float(o.fx[3][fs.FL_MIN_CTS]) for o in outs] or [np.inf])

        def entries(t, f, dtype=np.int64):
            return _cat([(tab, c) for tab, c in zip(tabs, cnts)], lambda tc: tc[0][t, :tc[1][t], f]).astype(dtype)

        def bases(t):
            return np.cumsum([0] + [int(c[t]) for c in cnts])

        # thread keys
        pid, tid = entries(fs.T_KEY, fs.KF_PID), entries(fs.T_KEY, fs.KF_TID)
        kmax = _cat([(o.fx[3], c) for o, c in zip(outs, cnts)], lambda kc: kc[0][:kc[1][fs.T_KEY]]).astype(float)
        key_of, first = jsp.intern_pairs(pid, tid, seed)
        self.k_pid, self.k_tid = pid[first], tid[first]
        self.k_off = entries(fs.T_KEY, fs.KF_EV_OFF)[first]
        self.k_max = np.full(first.size, -np.inf)
        np.maximum.at(self.k_max, key_of, kmax)
        # names and categories: distinct byte strings over the parts
        name_of, self.n_off, self.n_len, self.n_esc, self.n_ev_off, self.n_ev_len, self.n_ord = \
            self._spans(buf, fs.T_NAME, entries, seed)
        cat_of, self.t_off, self.t_len, _, self.t_ev_off, _, _ = self._spans(buf, fs.T_CAT, entries, seed)
        # counters and series, per part (their entries renumbered over the parts)
        kb, nb, cb, rb = bases(fs.T_KEY), bases(fs.T_NAME), bases(fs.T_CNT), bases(fs.T_SER)
        self.c_pid = entries(fs.T_CNT, fs.CF_PID)
        self.c_cid = entries(fs.T_CNT, fs.CF_CID)
        self.c_has_id = entries(fs.T_CNT, fs.CF_HAS_ID).astype(bool)
        c_name = [tab[fs.T_CNT, :c[fs.T_CNT], fs.CF_NAME] + nb[q] for q, (tab, c) in enumerate(zip(tabs, cnts))]
        self.c_name = name_of[_cat_pieces(c_name, np.int64)] if self.c_pid.size else np.zeros(0, np.int64)
        r_cnt = [tab[fs.T_SER, :c[fs.T_SER], fs.RF_CNT] + cb[q] for q, (tab, c) in enumerate(zip(tabs, cnts))]
        self.r_cnt = _cat_pieces(r_cnt, np.int64)
        self.r_koff = entries(fs.T_SER, fs.RF_KOFF)
        self.r_klen = entries(fs.T_SER, fs.RF_KLEN)
        # the samples' and flow events' columns: joined when first used (`join_samples`,
        # `join_flows`: on the importer's second thread, while the main one interns names)
        self._outs, self._key_of, self._cat_of = outs, key_of, cat_of
        self._kb, self._rb, self._tb = kb, rb, bases(fs.T_CAT)
        self._lock = threading.Lock()
        self._samples_joined = self._flows_joined = False

    def join_samples(self) -> None:
        """The samples' columns ``s_ts, s_val, s_ser, s_off`` (once; any thread)."""
        with self._lock:
            if self._samples_joined:
                return
            outs, rb = self._outs, self._rb
            self.s_ts = _cat_pieces([p for o in outs for p in o.samples[0]], np.float64)
            self.s_val = _cat_pieces([p for o in outs for p in o.samples[1]], np.float64)
            self.s_ser = _cat_pieces([p + rb[q] for q, o in enumerate(outs) for p in o.samples[2]], np.int64)
            self.s_off = _cat_pieces([p for o in outs for p in o.samples[3]], np.int64)
            for o in outs:
                o.drop("samples")
            self._samples_joined = True

    def join_flows(self) -> None:
        """The flow events' columns ``f_*`` (once; any thread)."""
        with self._lock:
            if self._flows_joined:
                return
            outs, kb, t_base = self._outs, self._kb, self._tb
            fl = [[p for o in outs for p in o.flows[c]] for c in range(8)]
            self.f_ts = _cat_pieces(fl[0], np.float64)
            self.f_id = _cat_pieces(fl[1], np.int64)
            self.f_off = _cat_pieces(fl[2], np.int64)
            self.f_key = self._key_of[_cat_pieces([p + kb[q] for q, o in enumerate(outs) for p in o.flows[3]],
                                                  np.int64)] if self.f_ts.size else np.zeros(0, np.int32)
            self.f_cat = self._cat_of[_cat_pieces([p + t_base[q] for q, o in enumerate(outs) for p in o.flows[4]],
                                                  np.int64)] if self.f_ts.size else np.zeros(0, np.int32)
            self.f_ord = _cat_pieces(fl[5], np.int64)
            code = _cat_pieces(fl[6], np.int64)
            self.f_ph, self.f_bp = code & 255, code >> 8
            self.f_len = _cat_pieces(fl[7], np.int64)
            del fl, code
            for o in outs:
                o.drop("flows")
            self._flows_joined = True

    @staticmethod
    def _spans(buf, t, entries, seed):
        off, ln = entries(t, fs.SF_OFF), entries(t, fs.SF_LEN)
        ids, first = jsp.intern_spans(buf, off, ln, np.ones(off.size, bool), seed)
        return (ids.astype(np.int64), off[first], ln[first], entries(t, fs.SF_ESC)[first].astype(bool),
                entries(t, fs.SF_EV_OFF)[first], entries(t, fs.SF_EV_LEN)[first], entries(t, fs.SF_ORD)[first])

    def cite(self, q: int) -> tuple:
        """(offset, length, ordinal) of the event cited as row FAST + q."""
        nn = self.n_off.size
        if q < nn:
            return int(self.n_ev_off[q]), int(self.n_ev_len[q]), int(self.n_ord[q])
        q -= nn
        self.join_flows()
        return int(self.f_off[q]), int(self.f_len[q]), int(self.f_ord[q])


def join_fast(buf, outs: list, seed: int) -> FastSide:
    """The parts' `chrome_rows.FastOut` (in file order) as one `FastSide`."""
    return FastSide(buf, outs, seed)


# ------------------------------------------------------------------ flows
def _joined(side, fast, dtype=np.int64) -> np.ndarray:
    """The side rows' values then the fast path's, as ``dtype``: no copy of either when the other
    is empty (the fast path's arrays are read, never written, after the join)."""
    if not side.size:
        return fast.astype(dtype, copy=False)
    if not fast.size:
        return side.astype(dtype, copy=False)
    return np.concatenate([side.astype(dtype, copy=False), fast.astype(dtype, copy=False)])


def flow_points(buf, vii, vss, v_ts, flow_rows, v_key_id, fast: FastSide, fast_key, seed) -> dict:
    """The v1 flow events in file order: the side rows ``flow_rows`` (finite ts and an id) and
    the fast path's, merged by their offsets (``fast_key``: the importer's thread key of each
    of ``fast``'s).  Per event: ``ts``, thread ``key``, ``ph``,
    ``bp``, category ``cat`` (numbered by first appearance), ``id``, ``cite`` (the row a repair
    cites: SIDE + side row, or `FAST` + q); per category a byte span ``cat_off``, ``cat_len``."""
    fast.join_flows()
    n_v, n_f = flow_rows.size, fast.f_ts.size
    # categories: the side rows' spans and the fast path's distinct ones, one numbering
    v_cat_off = vii[flow_rows, jev.I_CAT_OFF]
    v_cat_len = np.maximum(vss[flow_rows, jev.S_CAT_LEN], 0).astype(np.int64)
    off = np.concatenate([fast.t_off, v_cat_off]).astype(np.int64)
    ln = np.concatenate([fast.t_len, v_cat_len]).astype(np.int64)
    cid, cfirst = jsp.intern_spans(buf, off, ln, np.ones(off.size, bool), seed)
    nt = fast.t_off.size
    cat = np.concatenate([cid[nt:], cid[:nt][fast.f_cat] if n_f else np.zeros(0, np.int32)])
    cite = _joined(SIDE + flow_rows.astype(np.int64), FAST + fast.n_off.size + np.arange(n_f, dtype=np.int64))
    pts = {
        "ts": _joined(v_ts[flow_rows], fast.f_ts, np.float64),
        "key": _joined(v_key_id[flow_rows], fast_key[fast.f_key]),
        "ph": _joined(vss[flow_rows, jev.S_PH], fast.f_ph),
        "bp": _joined(vss[flow_rows, jev.S_BP], fast.f_bp),
        "cat": cat,
        "id": _joined(vii[flow_rows, jev.I_ID], fast.f_id),
        "cite": cite,
    }
    if n_v and n_f:  # both kinds: in file order
        o = np.argsort(np.concatenate([vii[flow_rows, jev.I_EV_OFF], fast.f_off]), kind="stable")
        pts = {k: v[o] for k, v in pts.items()}
    # the categories numbered by first appearance among the events, as one interning of them
    cat, old = jsp.renumber_by_first_use(pts["cat"].astype(np.int32, copy=False), max(int(cid.max()) + 1 if cid.size else 1, 1)) \
        if pts["cat"].size else (np.zeros(0, np.int32), np.zeros(0, np.int64))
    pts["cat"] = cat.astype(np.int64)
    pts["cat_off"], pts["cat_len"] = off[cfirst[old]], ln[cfirst[old]]
    return pts


def flow_order(pts: dict, seed) -> tuple:
    """The flow events ``pts`` (`flow_points`) in chain order, by (category, id) then time (then
    file order): (chain key of each event, the order).  No call is needed: it may run on a
    thread of its own while the call tree is built."""
    n_cats = int(pts["cat_off"].size)
    if not pts["id"].size:  # no flow event: nothing to key (`chain_keys` not loaded for nothing)
        return np.zeros(0, np.int32), by_key_then_time(np.zeros(0, np.int32), pts["ts"])
    fk, ok = fc.chain_keys(pts["cat"], pts["id"], n_cats)
    if not ok:  # ids spread over a wide range (hashes of string ids): interned
        fk, _ = jsp.intern_pairs(pts["cat"], pts["id"], seed)
    return fk, by_key_then_time(fk, pts["ts"])  # = np.lexsort((file order, ts, fk))


def flow_categories(buf, pts: dict, flow_cat, text, decode_spans) -> tuple:
    """The bound flows' categories numbered from 0 over the categories they use (``flow_cat`` of
    `bind_flows`: 0 for a v2 link, 1 + the v1 category), and their names (the ``cat`` text of
    each category's first flow event, decoded by ``decode_spans(buf, offsets, lengths, text)``,
    the importer's: this module does not import it back; a v2 link's category is "")."""
    if flow_cat.size == 0:
        return np.zeros(0, np.int32), []
    used, inv = np.unique(flow_cat, return_inverse=True)
    names = []
    v1 = used[used > 0] - 1
    if v1.size:
        names = decode_spans(buf, pts["cat_off"][v1], pts["cat_len"][v1], text)
    return inv.astype(np.int32).reshape(-1), ([""] if used[0] == 0 else []) + names


def _flow_event_threads(pts: dict, rank):
    """Each v1 flow event's thread (``rank`` of its key) and whether it binds to the next call
    (an ``f`` without ``bp: "e"``)."""
    return rank[pts["key"]].astype(np.int64), (pts["ph"] == ord("f")) & (pts["bp"] != ord("e"))


def flow_event_buckets(pts: dict, rank, call_thread, call_start, n_threads):
    """The flow events ``pts`` grouped by the time buckets of their threads' calls
    (`kernels.chrome_tree.bucket_points_early`: the calls in any order), for `flow_event_calls`
    once the calls are sorted; None when the binding will not use them."""
    f_thread, f_next = _flow_event_threads(pts, rank)
    return ct.bucket_points_early(call_thread, call_start, n_threads, f_thread, pts["ts"], f_next)


def flow_event_calls(pts: dict, rank, abs_start, abs_end, parent, thread_ranges, early=None) -> np.ndarray:
    """The call each v1 flow event ``pts`` (`flow_points`) binds to (`kernels.chrome_tree.bind_flow_points`:
    Chrome's rule; -1 when none), the calls sorted per thread (``thread_ranges``) in pre-order
    (``early``: the events' buckets from `flow_event_buckets`, or None)."""
    if not pts["ts"].size:
        return np.zeros(0, np.int32)
    lo = thread_ranges[:-1].astype(np.int64)
    hi = thread_ranges[1:].astype(np.int64)
    f_thread, f_next = _flow_event_threads(pts, rank)
    return ct.bind_flow_points_threaded(abs_start, abs_end, parent, lo, hi, f_thread, pts["ts"], f_next, early)


def bind_flows(ii, ss, pts: dict, bound, c_row, sample_call, rep, order):
    """Flow edges (from call, to call): v1 s/t/f chains (the events ``pts`` of `flow_points`,
    ``bound`` their calls (`flow_event_calls`), ``order`` their `flow_order`) and v2 bind_id links
    (the calls' rows ``c_row`` of ``ii, ss``)."""
    ids, froms, tos, cats = [], [], [], []
    if pts["ts"].size:
        f_ph = pts["ph"]
        unb = np.flatnonzero(bound < 0)
        rep.add("flow_unbound", int(unb.size), int(pts["cite"][unb[0]]) if unb.size else None)
        fk, o = order
        # (category 0: a v2 link's, no category of its own)
        for got, out in zip(fc.chain_edges(fk, o, f_ph, bound, pts["id"], pts["cat"]), (ids, froms, tos, cats)):
            out.append(got)
    # v2: X/B events carrying bind_id with flow_out / flow_in
    cf = ss[c_row, jev.S_FLAGS] if ss.any_bits(jev.S_FLAGS, jev.FL_BIND) else np.zeros(0, np.int32)
    if cf.size and sample_call.any():
        cf = np.where(sample_call, 0, cf)
    has_bind = (cf & jev.FL_BIND) != 0
    if has_bind.any():
        calls = np.flatnonzero(has_bind)
        b = ii[c_row[calls], jev.I_BIND]
        out_ = (cf[calls] & jev.FL_FLOW_OUT) != 0
        in_ = (cf[calls] & jev.FL_FLOW_IN) != 0
        src: dict[int, int] = {}
        for c, bid in zip(calls[out_], b[out_]):
            src.setdefault(int(bid), int(c))
        for c, bid in zip(calls[in_], b[in_]):
            s = src.get(int(bid))
            if s is not None and s != int(c):
                ids.append(np.array([bid], np.int64))
                froms.append(np.array([s], np.int32))
                tos.append(np.array([c], np.int32))
                cats.append(np.zeros(1, np.int64))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32)
    return (np.concatenate(ids).astype(np.int64), np.concatenate(froms).astype(np.int32),
            np.concatenate(tos).astype(np.int32), np.concatenate(cats).astype(np.int32))
