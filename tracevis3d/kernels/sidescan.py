"""The scanner's fast path for counter (``C``) and v1 flow (``s``/``t``/``f``) events, in numba:
their values go straight into compact columns while the bytes are in cache, and
their names, categories, thread keys, counters and series are interned as they are met.

`scan_fast` takes an event whose first key is ``ph`` (PyTorch's and Chrome's own order; in a
run of such events, `sideshape.side_run` takes those that repeat an earlier one's bytes by its
shape, and calls `scan_fast` for the others); `side_from_row` takes one that
`jsonevent.scan_event` has already scanned into a row (any other key order).  Either takes only
the plain forms and only events whose values the importer would keep as they are (`string_value`,
`number_value`, `int_value`, `id_value`): ``ts`` a number on the exact fast path within ``max_t``;
integral ``pid``/``tid``; a counter with a name and ``args`` an object of at most `MAX_PAIRS`
``"key": number`` pairs, each number exact (so finite); a flow event with an ``id``.  Anything
else (NaN, strings, odd syntax, a table full, a probe chain too long) is declined (the event
then takes a side row and the general path, `io.chrome_side`, gives the same result): so
declining never changes what a load gives, only how fast.

What a taken event leaves, and the tables its names, keys, counters and series are interned in:
``fx`` of `sidetables`.  The per-event functions are compiled without numba's reference counting
(``_nrt=False``, see `sidetables`).  Numbers are read by `parse_num`: `jsontokens.parse_number`'s
results, the common forms 8 digits at a time.

Entries are numbered per scan (or per part of a parallel scan) in the order they are made;
the importer (`io.chrome_fast`) joins the parts and numbers everything as the general path
does, by first appearance in the file.  Brute-force twins in tests/test_chrome_fast.py.
"""
import numpy as np
from numba import njit

from .jsonevent import (F_TS, FL_ID, FL_NAME_ESC, FL_PID_STR, FL_SLOW, FL_TID_STR, I_ARGS_OFF, I_CAT_OFF,
                        I_EV_OFF, I_ID, I_NAME_OFF, I_PID, I_TID, K_ARGS, K_BP, K_CAT, K_ID, K_NAME,
                        K_OTHER, K_PH, K_PID, K_S, K_TID, K_TS, S_ARGS_LEN, S_BP, S_CAT_LEN, S_EV_LEN,
                        S_FLAGS, S_NAME_LEN, S_ORD, S_PH, next_key)
from .jsontokens import _digit_run, fnv1a, parse_num, scan_string, skip_value, skip_ws  # noqa: F401
# (`parse_num` and `_digit_run` live in jsontokens, where the event scanner reads its numbers too)
from .sidetables import (C_COUNTERS, C_EVENTS, C_FLOWS, C_SAMPLES, FL_MAX_T, FL_MIN_CTS, FO_CAT, FO_CODE, FO_EV_LEN,
                         FO_KEY, FO_ORD, MAX_PAIRS, N_SHAPES, RC_BP, RC_CID, RC_HAS_ID, RC_M, RC_ON, RC_PH, RC_PID,
                         RC_SESC, RC_SLEN, RC_SOFF, RC_TID, SH_SER, SL_ARG, SL_ID, SL_PID, SL_SKIP, SL_SPAN, SL_STR,
                         SL_TID, SL_TS, T_CAT, T_NAME, counter_entry, key_entry, record_value, series_entry, span_entry)


# ------------------------------------------------------------------ values
@njit(cache=True, nogil=True, _nrt=False)
def _scalar_id(buf, p):
    """A number or string id at ``buf[p]``, as `jsonevent._scan_scalar_id` reads it (by
    `parse_num`): (id, end), end < 0 when invalid or cut."""
    if buf[p] == 34:
        j, _ = scan_string(buf, p)
        if j < 0:
            return np.int64(0), -2
        return fnv1a(buf, p + 1, j - p - 2), j
    v, j, exact = parse_num(buf, p)
    if j < 0:
        return np.int64(0), j
    if exact and abs(v) < 9.2e18:
        return np.int64(v), j
    return fnv1a(buf, p, j - p), j


# ------------------------------------------------------------------ the values the fast path takes
# (each at ``buf[p]``, ``p`` within the bytes; read alike by `scan_fast`, `counter_args` and the
# shapes of `sideshape`: end -1 for any other form, which the fast path declines)
@njit(cache=True, nogil=True, _nrt=False)
def string_value(buf, p):
    """A name or category: a string of at most 2^31 - 1 bytes.  Returns (end, has_escape)."""
    if buf[p] != 34:
        return np.int64(-1), False
    j, esc = scan_string(buf, p)
    if j < 0 or j - p - 2 > 2147483647:
        return np.int64(-1), esc
    return j, esc


@njit(cache=True, nogil=True, _nrt=False)
def number_value(buf, p):
    """A ts or a counter's value: a number on the exact path of `parse_num`.  Returns (value, end)."""
    c = buf[p]
    if not (c == 45 or 48 <= c <= 57):
        return 0.0, np.int64(-1)
    v, j, exact = parse_num(buf, p)
    if j < 0 or not exact:
        return 0.0, np.int64(-1)
    return v, j


@njit(cache=True, nogil=True, _nrt=False)
def int_value(buf, p):
    """A pid or tid: an integral `number_value` under 9.2e18.  Returns (value, end)."""
    v, j = number_value(buf, p)
    if j < 0 or not (v == np.floor(v) and abs(v) < 9.2e18):
        return np.int64(0), np.int64(-1)
    return np.int64(v), j


@njit(cache=True, nogil=True, _nrt=False)
def id_value(buf, p):
    """An id: a number or a string, as `_scalar_id` reads it.  Returns (id, end)."""
    c = buf[p]
    if not (c == 34 or c == 45 or 48 <= c <= 57):
        return np.int64(0), np.int64(-1)
    v, j = _scalar_id(buf, p)
    return v, (j if j >= 0 else np.int64(-1))


@njit(cache=True, nogil=True, _nrt=False)
def counter_args(buf, p, oi, ov, m0, shp, rec):
    """The ``args`` object at ``buf[p] == '{'`` when it is ``{}`` or ``{"key": number, ...}``
    with at most `MAX_PAIRS` pairs, each number on the exact fast path: the key spans (inside
    the quotes) into ``oi[0], oi[1]``, the values into ``ov[1]``, from column ``m0`` on (``rec``:
    each value and its key noted in the recorder of ``shp``, `sidetables.record_value`).
    Returns (end, pairs), end -1 for any other form (the general path reads it:
    `jsonside.counter_pairs`)."""
    n = buf.shape[0]
    q = skip_ws(buf, p + 1)
    if q >= n:
        return -1, 0
    if buf[q] == 125:
        return q + 1, 0
    m = 0
    while True:
        if q >= n or buf[q] != 34 or m >= MAX_PAIRS:
            return -1, 0
        j, _ = scan_string(buf, q)
        if j < 0:
            return -1, 0
        oi[0, m0 + m] = q + 1
        oi[1, m0 + m] = j - q - 2
        q = skip_ws(buf, j)
        if q >= n or buf[q] != 58:
            return -1, 0
        q = skip_ws(buf, q + 1)
        if q >= n:
            return -1, 0
        v, j = number_value(buf, q)
        if j < 0:
            return -1, 0
        ov[1, m0 + m] = v
        if rec:
            record_value(shp, SL_ARG, q, j, oi[0, m0 + m], oi[1, m0 + m])
        m += 1
        q = skip_ws(buf, j)
        if q >= n:
            return -1, 0
        if buf[q] == 44:
            q = skip_ws(buf, q + 1)
            continue
        if buf[q] == 125:
            return q + 1, m
        return -1, 0


# ------------------------------------------------------------------ taking an event
@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _thread_key_at(tab, slot, cnt, fl, pid, tid, ts, ev_off, ke):
    """The thread key entry of an event of (``pid``, ``tid``) at ``ts`` (``ke`` when known, else
    looked up or made): -1 when ``ts`` is past `FL_MAX_T` or the table refuses."""
    if not abs(ts) <= fl[FL_MAX_T]:
        return np.int64(-1)
    if ke < 0:
        ke = key_entry(tab, slot, cnt, pid, tid, ev_off)
    return ke


def _take_counter(buf, tab, slot, cnt, fl, ov, oi, ev_off, ev_len, ordn, pid, tid, ts, noff, nlen, nesc, has_id, cid,
                 m, ke, ne, ce, shp, s):
    """Counter event: entries, then its ``m`` samples (keys and values already in the sample
    columns, `counter_args`).  False (nothing written but entries) when a table refuses.
    ``ke``, ``ne``, ``ce``: its thread key, name and counter entries when known (-1: looked up
    or made); with ``ce`` known, its series entries are those of shape ``s`` (`sideshape`)."""
    ke = _thread_key_at(tab, slot, cnt, fl, pid, tid, ts, ev_off, ke)
    if ke < 0:
        return False
    if ne < 0:
        ne = span_entry(tab, slot, cnt, T_NAME, buf, noff, nlen, nesc, ev_off, ev_len, ordn)
        if ne < 0:
            return False
    ns = cnt[C_SAMPLES]
    if m:
        if ce >= 0:
            for q in range(m):
                oi[0, ns + q] = shp[s, SH_SER + q]
        else:
            ce = counter_entry(tab, slot, cnt, pid, ne, cid if has_id else 0, has_id, ev_off)
            if ce < 0:
                return False
            for q in range(ns, ns + m):
                se = series_entry(tab, slot, cnt, buf, ce, oi[0, q], oi[1, q], ev_off)
                if se < 0:
                    return False
                oi[0, q] = se
        for q in range(ns, ns + m):
            ov[0, q] = ts
            oi[1, q] = ev_off
        cnt[C_SAMPLES] = ns + m
    if ts > fl[ke]:
        fl[ke] = ts
    if ts < fl[FL_MIN_CTS]:
        fl[FL_MIN_CTS] = ts
    cnt[C_COUNTERS] += 1
    cnt[C_EVENTS] += 1
    return True


def _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, bp, pid, tid, ts, coff, clen, fid, ke,
              ce):
    """Flow event (with an id): entries, then its column of outputs.  False when a table refuses.
    ``ke``, ``ce``: its thread key and category entries when known (-1: looked up or made)."""
    ke = _thread_key_at(tab, slot, cnt, fl, pid, tid, ts, ev_off, ke)
    if ke < 0:
        return False
    if ce < 0:
        ce = span_entry(tab, slot, cnt, T_CAT, buf, coff, max(clen, 0), 0, ev_off, ev_len, ordn)
        if ce < 0:
            return False
    nf = cnt[C_FLOWS]
    ov[2, nf] = ts
    oi[2, nf] = fid
    oi[3, nf] = ev_off
    os_[FO_KEY, nf] = ke
    os_[FO_CAT, nf] = ce
    os_[FO_ORD, nf] = ordn
    os_[FO_CODE, nf] = ph | (bp << 8)
    os_[FO_EV_LEN, nf] = ev_len
    cnt[C_FLOWS] = nf + 1
    if ts > fl[ke]:
        fl[ke] = ts
    cnt[C_EVENTS] += 1
    return True


# the two per-event takes, compiled on their own (the general path's `side_from_row`, `scan_fast`)
# and inlined (`sideshape.shape_take`, where the call costs as much as the take: 0.20 -> 0.16 s
# for 10^6 flow events), from the one definition
take_counter = njit(cache=True, nogil=True, _nrt=False)(_take_counter)
take_flow = njit(cache=True, nogil=True, _nrt=False)(_take_flow)
take_counter_inlined = njit(nogil=True, _nrt=False, inline="always")(_take_counter)
take_flow_inlined = njit(nogil=True, _nrt=False, inline="always")(_take_flow)


@njit(cache=True, nogil=True, _nrt=False)
def side_phase_at(buf, i):
    """Where the phase string of the event at ``buf[i] == '{'`` starts when its first key is
    ``ph`` and its phase is ``C``, ``s``, ``t`` or ``f``; else -1."""
    n = buf.shape[0]
    p = skip_ws(buf, i + 1)
    if p + 4 > n or buf[p] != 34 or buf[p + 1] != 112 or buf[p + 2] != 104 or buf[p + 3] != 34:
        return -1
    p = skip_ws(buf, p + 4)
    if p >= n or buf[p] != 58:
        return -1
    p = skip_ws(buf, p + 1)
    if p + 3 > n or buf[p] != 34 or buf[p + 2] != 34:
        return -1
    ph = buf[p + 1]
    if not (ph == 67 or ph == 115 or ph == 116 or ph == 102):
        return -1
    return p


@njit(cache=True, nogil=True, _nrt=False)
def scan_fast(buf, i, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp):
    """Take the counter or flow event at ``buf[i] == '{'`` whose first key is ``ph`` (see the
    module's docstring); ``seen``: its ordinal.  The caller checks `fast_room` first.  Returns
    the end of the event, or -1 when it is declined (`jsonevent.scan_event` then scans it).
    With the recorder of ``shp`` on (`sideshape`), each value read and then the event's values
    are noted there."""
    n = buf.shape[0]
    p = side_phase_at(buf, i)
    if p < 0:
        return -1
    ph = np.int64(buf[p + 1])
    is_c = ph == 67
    p += 3
    name_off = np.int64(0)
    name_len = np.int64(-1)
    name_esc = 0
    cat_off = np.int64(0)
    cat_len = np.int64(-1)
    pid = np.int64(0)
    tid = np.int64(0)
    ev_id = np.int64(0)
    has_id = 0
    bp = np.int64(0)
    ts = np.nan
    m = 0
    seen_keys = 1 << K_PH
    rec = shp[N_SHAPES, RC_ON] != 0
    while True:
        p, key, seen_keys = next_key(buf, p, n, seen_keys)
        if p < 0:
            return -1
        if key < 0:  # the event's closing brace, at p
            break
        c = buf[p]
        if key == K_NAME or key == K_CAT:
            j, esc = string_value(buf, p)
            if j < 0:
                return -1
            if key == K_NAME:
                name_off = p + 1
                name_len = j - p - 2
                name_esc = 1 if esc else 0
            else:
                cat_off = p + 1
                cat_len = j - p - 2
            if rec:
                record_value(shp, SL_SPAN if (key == K_NAME) == is_c else SL_STR, p, j, 0, 0)
        elif key == K_TS:
            ts, j = number_value(buf, p)
            if j < 0:
                return -1
            if rec:
                record_value(shp, SL_TS, p, j, 0, 0)
        elif key == K_PID or key == K_TID:
            v, j = int_value(buf, p)
            if j < 0:
                return -1
            if key == K_PID:
                pid = v
            else:
                tid = v
            if rec:
                record_value(shp, SL_PID if key == K_PID else SL_TID, p, j, 0, 0)
        elif key == K_ID:
            ev_id, j = id_value(buf, p)
            if j < 0:
                return -1
            has_id = 1
            if rec:
                record_value(shp, SL_ID, p, j, 0, 0)
        elif key == K_BP or key == K_S:
            if c != 34:
                return -1
            j, _ = scan_string(buf, p)
            if j < 0:
                return -1
            if key == K_BP:
                bp = np.int64(buf[p + 1]) if j - p == 3 else 0
        elif key == K_ARGS and is_c:
            if c != 123:
                return -1
            j, m = counter_args(buf, p, oi, ov, cnt[C_SAMPLES], shp, rec)
            if j < 0:
                return -1
        elif key == K_ARGS or key == K_OTHER:
            j = skip_value(buf, p, stack)
            if j < 0:
                return -1
            if rec:
                record_value(shp, SL_SKIP, p, j, 0, 0)
        else:  # dur, tdur, id2, bind_id, flow_in, flow_out, sf, parent: scan_event's
            return -1
        p = j
    end = p + 1
    if end - i > 2147483647:
        return -1
    ordn = min(seen, 2147483647)
    if is_c:
        if name_len < 0:
            return -1
        ok = take_counter(buf, tab, slot, cnt, fl, ov, oi, i, end - i, ordn, pid, tid, ts, name_off, name_len,
                          name_esc, has_id, ev_id, m, -1, -1, -1, shp, 0)
    else:
        if not has_id:
            return -1
        ok = take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, i, end - i, ordn, ph, bp, pid, tid, ts, cat_off,
                       cat_len, ev_id, -1, -1)
    if ok and rec:
        r = N_SHAPES
        shp[r, RC_PH] = ph
        shp[r, RC_BP] = bp
        shp[r, RC_PID] = pid
        shp[r, RC_TID] = tid
        shp[r, RC_SOFF] = name_off if is_c else cat_off
        shp[r, RC_SLEN] = name_len if is_c else cat_len
        shp[r, RC_SESC] = name_esc if is_c else 0
        shp[r, RC_CID] = ev_id
        shp[r, RC_HAS_ID] = has_id
        shp[r, RC_M] = m
    return end if ok else -1


@njit(cache=True, nogil=True, _nrt=False)
def side_from_row(buf, k, ii, ss, ff, tab, slot, cnt, fl, ov, oi, os_, shp):
    """Take the counter or flow event that `jsonevent.scan_event` scanned into row ``k`` (its
    ordinal in ``ss[k, S_ORD]``; the caller checks `fast_room` first), on the same terms as
    `scan_fast`.  Returns whether it was taken (else the caller keeps the row)."""
    flags = ss[k, S_FLAGS]
    if flags & (FL_SLOW | FL_PID_STR | FL_TID_STR):
        return False
    ph = np.int64(ss[k, S_PH])
    ev_off = ii[k, I_EV_OFF]
    ev_len = np.int64(ss[k, S_EV_LEN])
    ordn = np.int64(ss[k, S_ORD])
    ts = ff[k, F_TS]
    has_id = 1 if flags & FL_ID else 0
    if ph == 67:
        if ss[k, S_NAME_LEN] < 0:
            return False
        m = 0
        if ss[k, S_ARGS_LEN] >= 2:
            a = ii[k, I_ARGS_OFF]
            if buf[a] != 123:
                return False
            j, m = counter_args(buf, a, oi, ov, cnt[C_SAMPLES], shp, False)
            if j != a + ss[k, S_ARGS_LEN]:
                return False
        return take_counter(buf, tab, slot, cnt, fl, ov, oi, ev_off, ev_len, ordn, ii[k, I_PID], ii[k, I_TID], ts,
                            ii[k, I_NAME_OFF], np.int64(ss[k, S_NAME_LEN]), 1 if flags & FL_NAME_ESC else 0, has_id,
                            ii[k, I_ID], m, -1, -1, -1, shp, 0)
    if not has_id:
        return False
    return take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, np.int64(ss[k, S_BP]),
                     ii[k, I_PID], ii[k, I_TID], ts, ii[k, I_CAT_OFF], np.int64(ss[k, S_CAT_LEN]), ii[k, I_ID], -1, -1)
