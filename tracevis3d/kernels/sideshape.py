"""Event shapes: the scanner's fast path for runs of counter and flow events that repeat the
bytes of an earlier one.

A file's counter and flow events come from a few templates of its writer: the same keys in the
same order with the same spacing, the same counter name and series keys, only the numbers
differing (``{"ph":"C","name":"memory","pid":1,"ts":`` *n* ``,"args":{"rss":`` *n* ``}}``).
When `sidescan.scan_fast` takes an event, the values it read are noted (`sidetables.record_value`)
and the event becomes a *shape*: its literals (the bytes between the values, kept as spans of
the event itself in the scanned bytes) and its slots (the values: pid, tid, ts, id, a counter's
values, the kept name or category, strings and values only read), with the table entries the
event took.  `shape_take` takes the next event when every literal of a shape matches it byte for
byte (8 bytes at a time) and every slot holds a value of the form `scan_fast` takes: no key
codes, no dispatch on keys, and no table probe where the event's thread, name and counter are
the shape's (the entries are reused; otherwise looked up as `scan_fast` does).

An event a shape takes is one `scan_fast` takes, with the same outputs and entries: its keys,
their order and the strings of bp, s and the series keys are the shape's (literals), so the key
checks `scan_fast` made on the shape's event hold for it; each slot is read and checked by the
very calls `scan_fast` makes (`sidescan.parse_num`, `jsontokens.scan_string`, `sidescan._scalar_id`,
`jsontokens.skip_value`) with the same conditions -- or, for a pid, tid, id or string whose bytes
and the literal after them are the shape's own event's, not read at all: the same bytes through
the byte that ends the value parse alike, so its value is that event's, which the shape holds
(a counter's pid, name and id, a flow's pid and category; with the phase checked only when the
predicted shape misses: 0.167 -> 0.142 s for 10^6 flow events, 0.112 -> 0.091 s for 10^6 counter
samples, one thread); and the entries are found or made by the same
`sidescan.take_counter` / `take_flow`.  So a shape changes how fast a load is, never what it
gives.  Brute-force twin (every event through `scan_fast` alone): tests/test_chrome_fast.py.

`side_run` tries the shape that followed the last shape taken (a file cycling through its
counters is predicted exactly), then the last shape, then the others; when none matches,
`scan_fast` with the recorder on, and a new shape in the least recently used row.
"""
import numpy as np
from numba import njit

from .jsontokens import skip_value, skip_ws
from .sidescan import (id_value, int_value, number_value, scan_fast, side_phase_at, string_value,
                       take_counter_inlined, take_flow_inlined)
from .sidetables import (C_SAMPLES, N_SHAPES, RC_BP, RC_CID, RC_CLOCK, RC_HAS_ID, RC_LAST, RC_M, RC_MADE, RC_N, RC_ON,
                         RC_PH, RC_PID, RC_SESC, RC_SLEN, RC_SLOT, RC_SOFF, RC_TID, RC_W, SHAPE_PAIRS, SH_BP, SH_CE,
                         SH_CID, SH_HAS_ID, SH_KE, SH_KEY, SH_LIT, SH_NEXT, SH_NSLOT, SH_PH, SH_PID, SH_SER,
                         SH_SPAN_E, SH_SPAN_LEN, SH_SPAN_OFF, SH_STAMP, SH_TID, SH_TYPE, SL_ARG, SL_ID, SL_PID,
                         SL_SKIP, SL_SPAN, SL_STR, SL_TS, T_CAT, T_NAME, counter_entry, fast_room, key_entry,
                         same_bytes, series_entry, span_entry)


def _shape_take(buf, i, seen, shp, s, tab, slot, cnt, fl, ov, oi, os_, stack):
    """Take the event at ``buf[i] == '{'`` by shape ``s`` (see the module's docstring;
    ``seen``: its ordinal; the caller checks `fast_room` first).  Returns the end of the event,
    or -1 when the shape does not match it or `scan_fast` would decline it (nothing taken; the
    sample columns past the samples taken may have been written)."""
    n = buf.shape[0]
    ll = shp[s, SH_LIT + 1]
    if i + ll > n or not same_bytes(buf, i, shp[s, SH_LIT], ll):
        return -1
    p = i + ll
    is_c = shp[s, SH_PH] == 67
    pid = shp[s, SH_PID]
    tid = shp[s, SH_TID]
    cid = shp[s, SH_CID]
    ts = np.nan
    soff = shp[s, SH_SPAN_OFF]
    slen = shp[s, SH_SPAN_LEN]
    sesc = 0
    span_read = False
    ns = cnt[C_SAMPLES]
    m = 0
    lit_start = i
    for k in range(shp[s, SH_NSLOT]):
        if p >= n:
            return -1
        t = shp[s, SH_TYPE + k]
        if t != SL_TS and t != SL_ARG and t != SL_SKIP:
            # a pid, tid, id or string whose bytes and the literal after them repeat the shape's own
            # event (the same thread, name, category, counter id): its value is that event's, the
            # shape's defaults, and nothing is read (the same bytes up to the literal's first byte,
            # which ends the value, parse alike)
            a = shp[s, SH_LIT + 2 * k] + shp[s, SH_LIT + 2 * k + 1]
            vl = shp[s, SH_LIT + 2 * k + 2] - a
            ll = shp[s, SH_LIT + 2 * k + 3]
            if ll > 0 and p + vl + ll <= n and same_bytes(buf, p, a, vl + ll):
                lit_start = p + vl
                p = lit_start + ll
                continue
        if t == SL_SPAN or t == SL_STR:
            j, esc = string_value(buf, p)
            if j < 0:
                return -1
            if t == SL_SPAN:
                span_read = True
                soff = p + 1
                slen = j - p - 2
                sesc = 1 if esc else 0
        elif t == SL_ID:
            cid, j = id_value(buf, p)
            if j < 0:
                return -1
        elif t == SL_SKIP:
            j = skip_value(buf, p, stack)
            if j < 0:
                return -1
        elif t == SL_TS:
            ts, j = number_value(buf, p)
            if j < 0:
                return -1
        elif t == SL_ARG:
            v, j = number_value(buf, p)
            if j < 0:
                return -1
            ov[1, ns + m] = v
            oi[0, ns + m] = lit_start + shp[s, SH_KEY + 2 * m]
            oi[1, ns + m] = shp[s, SH_KEY + 2 * m + 1]
            m += 1
        else:
            v, j = int_value(buf, p)
            if j < 0:
                return -1
            if t == SL_PID:
                pid = v
            else:
                tid = v
        lit_start = j
        ll = shp[s, SH_LIT + 2 * k + 3]
        if j + ll > n or not same_bytes(buf, j, shp[s, SH_LIT + 2 * k + 2], ll):
            return -1
        p = j + ll
    end = p
    if end - i > 2147483647:
        return -1
    ordn = min(seen, 2147483647)
    same_thread = pid == shp[s, SH_PID] and tid == shp[s, SH_TID]
    ke = shp[s, SH_KE] if same_thread else -1
    span_e = shp[s, SH_SPAN_E]
    # (a name or category not read is the shape's own: its entry holds)
    if span_read and not (slen == shp[s, SH_SPAN_LEN] and same_bytes(buf, soff, shp[s, SH_SPAN_OFF], slen)):
        span_e = -1
    if is_c:
        ce = shp[s, SH_CE] if span_e >= 0 and pid == shp[s, SH_PID] and cid == shp[s, SH_CID] else -1
        ok = take_counter_inlined(buf, tab, slot, cnt, fl, ov, oi, i, end - i, ordn, pid, tid, ts, soff, slen, sesc,
                                  shp[s, SH_HAS_ID], cid, m, ke, span_e, ce, shp, s)
    else:
        ok = take_flow_inlined(buf, tab, slot, cnt, fl, ov, oi, os_, i, end - i, ordn, shp[s, SH_PH], shp[s, SH_BP],
                               pid, tid, ts, soff, slen, cid, ke, span_e)
    return end if ok else -1


@njit(cache=True, nogil=True, _nrt=False)
def shape_record(buf, i, end, shp, tab, slot, cnt):
    """Make a shape of the event ``buf[i:end]`` that `scan_fast` has just taken with the
    recorder on, in the first free row or else the least recently used one.  Returns the row,
    or -1 when the event has too many values or pairs for a shape (or an entry is missing)."""
    r = N_SHAPES
    nv = shp[r, RC_N]
    m = shp[r, RC_M]
    if not shp[r, RC_ON] or m > SHAPE_PAIRS:
        return -1
    pid, tid, cid, has_id = shp[r, RC_PID], shp[r, RC_TID], shp[r, RC_CID], shp[r, RC_HAS_ID]
    soff, slen = shp[r, RC_SOFF], shp[r, RC_SLEN]
    is_c = shp[r, RC_PH] == 67
    # the entries the event took (all there: found, not made)
    ke = key_entry(tab, slot, cnt, pid, tid, i)
    if ke < 0:
        return -1
    span_e = span_entry(tab, slot, cnt, T_NAME if is_c else T_CAT, buf, soff, max(slen, 0), shp[r, RC_SESC], i,
                        end - i, 0)
    if span_e < 0:
        return -1
    ce = np.int64(-1)
    if is_c and m:
        ce = counter_entry(tab, slot, cnt, pid, span_e, cid if has_id else 0, has_id, i)
        if ce < 0:
            return -1
    s = np.int64(-1)
    for q in range(N_SHAPES):
        if shp[q, SH_PH] == 0:
            s = q
            break
        if s < 0 or shp[q, SH_STAMP] < shp[s, SH_STAMP]:
            s = q
    for q in range(N_SHAPES):  # nothing points at the row while it is rewritten (it may stay free)
        if shp[q, SH_NEXT] == s:
            shp[q, SH_NEXT] = -1
    if shp[r, RC_LAST] == s:
        shp[r, RC_LAST] = -1
    shp[s, SH_PH] = 0
    pair = 0
    lit_start = i
    for k in range(nv):
        c = RC_SLOT + RC_W * k
        kind, a, b = shp[r, c], shp[r, c + 1], shp[r, c + 2]
        shp[s, SH_TYPE + k] = kind
        shp[s, SH_LIT + 2 * k] = lit_start
        shp[s, SH_LIT + 2 * k + 1] = a - lit_start
        if kind == SL_ARG:
            se = series_entry(tab, slot, cnt, buf, ce, shp[r, c + 3], shp[r, c + 4], i)
            if se < 0:
                shp[s, SH_PH] = 0
                return -1
            shp[s, SH_SER + pair] = se
            shp[s, SH_KEY + 2 * pair] = shp[r, c + 3] - lit_start
            shp[s, SH_KEY + 2 * pair + 1] = shp[r, c + 4]
            pair += 1
        lit_start = b
    shp[s, SH_LIT + 2 * nv] = lit_start
    shp[s, SH_LIT + 2 * nv + 1] = end - lit_start
    shp[s, SH_PH] = shp[r, RC_PH]
    shp[s, SH_BP] = shp[r, RC_BP]
    shp[s, SH_NSLOT] = nv
    shp[s, SH_KE] = ke
    shp[s, SH_PID] = pid
    shp[s, SH_TID] = tid
    shp[s, SH_SPAN_E] = span_e
    shp[s, SH_SPAN_OFF] = soff
    shp[s, SH_SPAN_LEN] = slen
    shp[s, SH_CE] = ce
    shp[s, SH_CID] = cid
    shp[s, SH_HAS_ID] = has_id
    shp[s, SH_NEXT] = -1
    shp[r, RC_MADE] += 1
    return s


def _take_one_body(buf, p, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp):
    """Take the event at ``buf[p]`` by a shape (the one that followed the last shape taken, the
    last one, then the others) or else by `scan_fast` (a new shape made of it).  Returns its end
    (-1: not taken)."""
    r = N_SHAPES
    last = shp[r, RC_LAST]
    nxt = shp[last, SH_NEXT] if last >= 0 else -1
    for attempt in range(N_SHAPES + 2):  # (one call of shape_take: it is inlined)
        if attempt == 0:
            s = nxt
        elif attempt == 1:
            # the predicted shape's first literal holds the phase: an event it missed may be a
            # call, which no shape would take
            if side_phase_at(buf, p) < 0:
                return -1
            s = last if last != nxt else -1
        else:
            s = attempt - 2
            if shp[s, SH_PH] == 0 or s == last or s == nxt:
                continue
        if s < 0 or shp[s, SH_PH] == 0:
            continue
        j = shape_take_inlined(buf, p, seen, shp, s, tab, slot, cnt, fl, ov, oi, os_, stack)
        if j >= 0:
            return _taken(shp, s, last, j)
    shp[r, RC_ON] = 1
    shp[r, RC_N] = 0
    j = scan_fast(buf, p, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp)
    s = shape_record(buf, p, j, shp, tab, slot, cnt) if j >= 0 else -1
    shp[r, RC_ON] = 0
    if j >= 0 and s >= 0:
        return _taken(shp, s, last, j)
    shp[r, RC_LAST] = -1
    return j


@njit(cache=True, nogil=True, _nrt=False)
def _taken(shp, s, last, j):
    """Shape ``s`` took an event (ending at ``j``) after shape ``last``: ``s`` follows ``last``."""
    r = N_SHAPES
    if last >= 0:
        shp[last, SH_NEXT] = s
    shp[r, RC_LAST] = s
    shp[r, RC_CLOCK] += 1
    shp[s, SH_STAMP] = shp[r, RC_CLOCK]
    return j


# The per-event takes, compiled on their own (the tests call them) and inlined into `side_run`:
# numba passes each array argument as 7 words on the stack, and a call with a dozen arrays pushed
# ~88 words per event -- a quarter of the side events' scan (perf: 25k of 99k samples on push
# instructions); inlined, 10^6 counter samples 0.072 -> 0.044 s, 10^6 flow events 0.111 -> 0.093 s
# (the kernel alone, one thread).
shape_take = njit(cache=True, nogil=True, _nrt=False)(_shape_take)
shape_take_inlined = njit(nogil=True, _nrt=False, inline="always")(_shape_take)
_take_one = njit(cache=True, nogil=True, _nrt=False)(_take_one_body)
_take_one_inlined = njit(nogil=True, _nrt=False, inline="always")(_take_one_body)


@njit(cache=True, nogil=True, _nrt=False)
def side_run(buf, i, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp, stop_at, room):
    """Take the event at ``buf[i] == '{'`` (``seen``: the events before it; the caller checks
    `fast_room`, ``stop_at`` and that ``room`` > 0) by a shape or `scan_fast`, and the events
    that follow as long as they are taken (a file's counters or flow events come in long runs):
    each one after ``, {`` (spaces allowed), before ``stop_at`` (when >= 0), while the outputs
    have room and ``room`` > 0 events may still be taken.  Returns (position, seen, need_sep,
    taken): just after the last event taken (need_sep True: a comma is owed) or at the ``{`` or
    other byte that follows its comma (need_sep False); with none taken, ``i``.  The caller's
    loop goes on from there as from any event."""
    n = buf.shape[0]
    taken = 0
    p = i
    while True:
        j = _take_one_inlined(buf, p, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp)
        if j < 0:
            return p, seen, False, taken
        seen += 1
        room -= 1
        taken += 1
        p = skip_ws(buf, j)
        if p >= n or buf[p] != 44:
            return j, seen, True, taken
        p = skip_ws(buf, p + 1)
        if p >= n or buf[p] != 123 or (stop_at >= 0 and p >= stop_at) or room <= 0 or not fast_room(cnt, ov):
            return p, seen, False, taken
