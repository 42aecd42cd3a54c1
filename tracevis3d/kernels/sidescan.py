"""The scanner's fast path for counter (``C``) and v1 flow (``s``/``t``/``f``) events, in numba
(issue 25): their values go straight into compact columns while the bytes are in cache, and
their names, categories, thread keys, counters and series are interned as they are met.

`scan_fast` takes an event whose first key is ``ph`` (PyTorch's and Chrome's own order);
`side_from_row` takes one that `jsonevent.scan_event` has already scanned into a row (any
other key order).  Either takes only the plain forms and only events whose values the
importer would keep as they are: ``ts`` a number on the exact fast path within ``max_t``;
integral ``pid``/``tid``; a counter with a name and ``args`` an object of at most `MAX_PAIRS`
``"key": number`` pairs, each number exact (so finite); a flow event with an ``id``.  Anything
else (NaN, strings, odd syntax, a table full, a probe chain too long) is declined (the event
then takes a side row and the general path, `io.chrome_side`, gives the same result): so
declining never changes what a load gives, only how fast.

What a taken event leaves, and the tables its names, keys, counters and series are interned in:
``fx`` of `sidetables`.  The per-event functions are compiled without numba's reference counting
(``_nrt=False``, see `sidetables`).

Entries are numbered per scan (or per part of a parallel scan) in the order they are made;
the importer (`io.chrome_fast`) joins the parts and numbers everything as the general path
does, by first appearance in the file.  Brute-force twins in tests/test_chrome_fast.py.
"""
import numpy as np
from numba import njit

from .jsonevent import (F_TS, FL_ID, FL_NAME_ESC, FL_PID_STR, FL_SLOW, FL_TID_STR, I_ARGS_OFF, I_CAT_OFF,
                        I_EV_OFF, I_ID, I_NAME_OFF, I_PID, I_TID, K_ARGS, K_BP, K_CAT, K_ID, K_NAME,
                        K_OTHER, K_PH, K_PID, K_S, K_TID, K_TS, S_ARGS_LEN, S_BP, S_CAT_LEN, S_EV_LEN,
                        S_FLAGS, S_NAME_LEN, S_ORD, S_PH, _key_code, _scan_scalar_id)
from .jsontokens import parse_number as _parse_number
from .jsontokens import scan_string, skip_value, skip_ws
from .sidetables import (C_COUNTERS, C_EVENTS, C_FLOWS, C_SAMPLES, CA_CID, CA_CNT, CA_HAS, CA_KEY, CA_PID, CA_SER,
                         CA_SLEN, CA_SOFF, CA_SPAN, CA_TID, CA_VALID, FL_MAX_T, FL_MIN_CTS, FO_CAT, FO_CODE, FO_EV_LEN,
                         FO_KEY, FO_ORD, MAX_PAIRS, MAX_SEG, N_TPL, T_CAT, T_NAME, TPL_BYTES, TPL_PER_PH, _same_bytes,
                         counter_entry, fast_room, key_entry, series_entry, span_entry)

# the number parser of the tokens, inlined here at numba's IR level (LLVM left it a call in the
# fast path: 6 % of its time)
parse_number = njit(inline="always", nogil=True)(_parse_number.py_func)


# ------------------------------------------------------------------ values
@njit(cache=True, nogil=True, _nrt=False)
def counter_args(buf, p, oi, ov, m0):
    """The ``args`` object at ``buf[p] == '{'`` when it is ``{}`` or ``{"key": number, ...}``
    with at most `MAX_PAIRS` pairs, each number on the exact fast path: the key spans (inside
    the quotes) into ``oi[0], oi[1]``, the values into ``ov[1]``, from column ``m0`` on.
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
        c = buf[q]
        if not (c == 45 or 48 <= c <= 57):
            return -1, 0
        v, j, exact = parse_number(buf, q)
        if j < 0 or not exact:
            return -1, 0
        ov[1, m0 + m] = v
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
@njit(cache=True, nogil=True, _nrt=False)
def _take_counter(buf, tab, slot, cnt, fl, ov, oi, ev_off, ev_len, ordn, pid, tid, ts, noff, nlen, nesc, has_id, cid,
                  m, cache, shaped):
    """Counter event: entries, then its ``m`` samples (keys and values already in the sample
    columns).  False (nothing written but entries) when a table refuses.  ``shaped``: read by a
    learnt shape, whose last event's entries ``cache`` holds (`sidetables`, CA_*): an event of the
    same process, thread, name and id has the same entries (the pairs' keys are the shape's)."""
    if not abs(ts) <= fl[FL_MAX_T]:
        return False
    cid0 = cid if has_id else 0
    ns = cnt[C_SAMPLES]
    if (shaped and cache[CA_VALID] != 0 and cache[CA_PID] == pid and cache[CA_TID] == tid and cache[CA_CID] == cid0
            and cache[CA_HAS] == has_id and cache[CA_SLEN] == nlen and _same_bytes(buf, cache[CA_SOFF], noff, nlen)):
        ke = cache[CA_KEY]
        for q in range(m):
            oi[0, ns + q] = cache[CA_SER + q]
    else:
        ke = key_entry(tab, slot, cnt, pid, tid, ev_off)
        if ke < 0:
            return False
        ne = span_entry(tab, slot, cnt, T_NAME, buf, noff, nlen, nesc, ev_off, ev_len, ordn)
        if ne < 0:
            return False
        ce = -1
        if m:
            ce = counter_entry(tab, slot, cnt, pid, ne, cid0, has_id, ev_off)
            if ce < 0:
                return False
            for q in range(ns, ns + m):
                se = series_entry(tab, slot, cnt, buf, ce, oi[0, q], oi[1, q], ev_off)
                if se < 0:
                    return False
                oi[0, q] = se
        if shaped and m <= MAX_SEG:
            cache[CA_PID], cache[CA_TID], cache[CA_CID], cache[CA_HAS] = pid, tid, cid0, has_id
            cache[CA_SOFF], cache[CA_SLEN], cache[CA_KEY], cache[CA_SPAN], cache[CA_CNT] = noff, nlen, ke, ne, ce
            for q in range(m):
                cache[CA_SER + q] = oi[0, ns + q]
            cache[CA_VALID] = 1
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


@njit(cache=True, nogil=True, _nrt=False)
def _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, bp, pid, tid, ts, coff, clen, fid, cache,
               shaped):
    """Flow event (with an id): entries, then its column of outputs.  False when a table refuses.
    ``shaped``, ``cache``: as `_take_counter`'s (the thread key and the category)."""
    if not abs(ts) <= fl[FL_MAX_T]:
        return False
    hit = shaped and cache[CA_VALID] != 0
    if hit and cache[CA_PID] == pid and cache[CA_TID] == tid:
        ke = cache[CA_KEY]
    else:
        ke = key_entry(tab, slot, cnt, pid, tid, ev_off)
        if ke < 0:
            return False
    if hit and cache[CA_SLEN] == clen and _same_bytes(buf, cache[CA_SOFF], coff, max(clen, 0)):
        ce = cache[CA_SPAN]
    else:
        ce = span_entry(tab, slot, cnt, T_CAT, buf, coff, max(clen, 0), 0, ev_off, ev_len, ordn)
        if ce < 0:
            return False
    if shaped:
        cache[CA_PID], cache[CA_TID], cache[CA_KEY] = pid, tid, ke
        cache[CA_SOFF], cache[CA_SLEN], cache[CA_SPAN] = coff, clen, ce
        cache[CA_VALID] = 1
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


# the kinds of an event shape's values (`scan_fast`); V_PAIR: a number of a counter's args whose
# key is in the shape's bytes before it
V_END, V_NAME, V_CAT, V_PID, V_TID, V_TS, V_ID, V_BP, V_S, V_ARGS, V_SKIP, V_PAIR = range(12)
#: a group of shapes whose last this many events matched none is tried only every 64th event
MISS_STREAK = 8


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _kind(key):
    """The kind of value of a key the fast path reads (V_END: one it declines)."""
    if key == K_NAME:
        return V_NAME
    if key == K_CAT:
        return V_CAT
    if key == K_PID:
        return V_PID
    if key == K_TID:
        return V_TID
    if key == K_TS:
        return V_TS
    if key == K_ID:
        return V_ID
    if key == K_BP:
        return V_BP
    if key == K_S:
        return V_S
    if key == K_ARGS:
        return V_ARGS
    if key == K_OTHER:
        return V_SKIP
    return V_END


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _value(buf, p, kind, is_c, oi, ov, m0, stack):
    """The value at ``buf[p]`` (its first byte) of a key of ``kind``, as the fast path takes it.
    Returns (end, x, y, f), end -1 when declined: name and cat: x, y the span inside the quotes,
    f 1 when it has escapes; pid, tid, id, bp, a counter's pairs (`counter_args`): x; ts: f."""
    c = buf[p]
    if kind == V_NAME or kind == V_CAT or kind == V_BP or kind == V_S:
        if c != 34:
            return -1, 0, 0, 0.0
        j, esc = scan_string(buf, p)
        if j < 0 or j - p - 2 > 2147483647:
            return -1, 0, 0, 0.0
        if kind == V_BP:
            return j, np.int64(buf[p + 1]) if j - p == 3 else 0, 0, 0.0
        return j, p + 1, j - p - 2, 1.0 if esc else 0.0
    if kind == V_PID or kind == V_TID or kind == V_TS:
        if not (c == 45 or 48 <= c <= 57):
            return -1, 0, 0, 0.0
        v, j, exact = parse_number(buf, p)
        if j < 0 or not exact:
            return -1, 0, 0, 0.0
        if kind == V_TS:
            return j, 0, 0, v
        if not (v == np.floor(v) and abs(v) < 9.2e18):
            return -1, 0, 0, 0.0
        return j, np.int64(v), 0, 0.0
    if kind == V_ID:
        if not (c == 34 or c == 45 or 48 <= c <= 57):
            return -1, 0, 0, 0.0
        x, j = _scan_scalar_id(buf, p, stack)
        return j, x, 0, 0.0
    if kind == V_ARGS and is_c:
        if c != 123:
            return -1, 0, 0, 0.0
        j, m = counter_args(buf, p, oi, ov, m0)
        return j, m, 0, 0.0
    if kind == V_ARGS or kind == V_SKIP:
        return skip_value(buf, p, stack), 0, 0, 0.0
    return -1, 0, 0, 0.0


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _w8(a, q):
    """The 8 bytes ``a[q:q+8]`` as one little-endian word (``q`` unsigned: one load)."""
    return (np.uint64(a[q]) | (np.uint64(a[q + np.uint64(1)]) << np.uint64(8))
            | (np.uint64(a[q + np.uint64(2)]) << np.uint64(16)) | (np.uint64(a[q + np.uint64(3)]) << np.uint64(24))
            | (np.uint64(a[q + np.uint64(4)]) << np.uint64(32)) | (np.uint64(a[q + np.uint64(5)]) << np.uint64(40))
            | (np.uint64(a[q + np.uint64(6)]) << np.uint64(48)) | (np.uint64(a[q + np.uint64(7)]) << np.uint64(56)))


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _same_run(buf, p, lit, ls, ll):
    """``buf[p:p+ll] == lit[ls:ls+ll]`` (unsigned positions, in bounds), 8 bytes at a time."""
    q = np.uint64(0)
    eight = np.uint64(8)
    while q + eight <= ll:
        if _w8(buf, p + q) != _w8(lit, ls + q):
            return False
        q += eight
    while q < ll:
        if buf[p + q] != lit[ls + q]:
            return False
        q += np.uint64(1)
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _by_shape(buf, i, t, is_c, tpl_b, tpl_s, oi, ov, m0, stack):
    """The event at ``buf[i]`` read by the learnt shape ``t``: its bytes between values must be
    the shape's (keys, separators, spaces), its values of the shape's kinds.  Returns (end, name
    offset, length, escapes, cat offset, length, pid, tid, id, has_id, bp, ts, pairs), end -1
    when it does not fit."""
    n = buf.shape[0]
    noff = np.int64(0)
    nlen = np.int64(-1)
    nesc = 0
    coff = np.int64(0)
    clen = np.int64(-1)
    pid = np.int64(0)
    tid = np.int64(0)
    fid = np.int64(0)
    has_id = 0
    bp = np.int64(0)
    ts = np.nan
    m = 0
    p = np.uint64(i)
    un = np.uint64(n)
    for r in range(1, tpl_s[t, 0, 0] + 1):
        ls = np.uint64(tpl_s[t, r, 0])
        ll = np.uint64(tpl_s[t, r, 1])
        if p + ll > un:
            return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
        if not _same_run(buf, p, tpl_b[t], ls, ll):
            return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
        p += ll
        kind = tpl_s[t, r, 2]
        if kind == V_END:
            break
        if p >= un:
            return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
        if kind == V_PAIR:  # a counter's value, its key in the bytes just compared
            c = buf[p]
            if not (c == 45 or 48 <= c <= 57):
                return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
            v, j, exact = parse_number(buf, np.int64(p))
            if j < 0 or not exact:
                return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
            ov[1, m0 + m] = v
            oi[0, m0 + m] = np.int64(p - ll) + tpl_s[t, r, 3]
            oi[1, m0 + m] = tpl_s[t, r, 4]
            m += 1
            p = np.uint64(j)
            continue
        j, x, y, f = _value(buf, np.int64(p), kind, is_c, oi, ov, m0, stack)
        if j < 0:
            return -1, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m
        if kind == V_NAME:
            noff, nlen, nesc = x, y, 1 if f else 0
        elif kind == V_CAT:
            coff, clen = x, y
        elif kind == V_PID:
            pid = x
        elif kind == V_TID:
            tid = x
        elif kind == V_TS:
            ts = f
        elif kind == V_ID:
            fid, has_id = x, 1
        elif kind == V_BP:
            bp = x
        elif kind == V_ARGS and is_c:
            m = x
        p = np.uint64(j)
    return np.int64(p), noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m


@njit(cache=True, nogil=True, _nrt=False)
def _learn(buf, i, tpl_b, tpl_s, tpl_c, g0):
    """The shape just recorded in the scratch shape (``tpl_s[N_TPL]``: spans of the bytes between
    values, from the event's start ``i``, and the kinds) kept as one of the group from ``g0``,
    replacing them in turn; not when it holds too many bytes."""
    nseg = tpl_s[N_TPL, 0, 0]
    total = 0
    for r in range(1, nseg + 1):
        total += tpl_s[N_TPL, r, 1]
    if total > TPL_BYTES:
        return
    victim = tpl_s[g0, 0, 2]
    t = g0 + victim
    pos = 0
    for r in range(1, nseg + 1):
        a = i + tpl_s[N_TPL, r, 0]
        ln = tpl_s[N_TPL, r, 1]
        for q in range(ln):
            tpl_b[t, pos + q] = buf[a + q]
        tpl_s[t, r, 0] = pos
        tpl_s[t, r, 1] = ln
        tpl_s[t, r, 2] = tpl_s[N_TPL, r, 2]
        tpl_s[t, r, 3] = tpl_s[N_TPL, r, 3]
        tpl_s[t, r, 4] = tpl_s[N_TPL, r, 4]
        pos += ln
    tpl_s[t, 0, 0] = nseg
    tpl_s[t, 0, 1] = pos
    tpl_s[t, 0, 3] = 0  # (no successor known)
    tpl_c[t, CA_VALID] = 0
    tpl_s[g0, 0, 2] = (victim + 1) % TPL_PER_PH


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _take(buf, tab, slot, cnt, fl, ov, oi, os_, i, end, seen, ph, noff, nlen, nesc, coff, clen, pid, tid, fid,
          has_id, bp, ts, m, cache, shaped):
    """The parsed counter or flow event [i, end) into the tables and outputs; its end, or -1 when
    declined."""
    if end - i > 2147483647:
        return -1
    ordn = min(seen, 2147483647)
    if ph == 67:
        if nlen < 0:
            return -1
        ok = _take_counter(buf, tab, slot, cnt, fl, ov, oi, i, end - i, ordn, pid, tid, ts, noff, nlen, nesc, has_id,
                           fid, m, cache, shaped)
    else:
        if not has_id:
            return -1
        ok = _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, i, end - i, ordn, ph, bp, pid, tid, ts, coff, clen, fid,
                        cache, shaped)
    return end if ok else -1


@njit(cache=True, nogil=True, _nrt=False)
def scan_fast(buf, i, seen, tab, slot, cnt, fl, ov, oi, os_, tpl_b, tpl_s, tpl_c, stack):
    """Take the counter or flow event at ``buf[i] == '{'`` whose first key is ``ph`` (see the
    module's docstring); ``seen``: its ordinal.  The caller checks `fast_room` first.  Returns
    the end of the event, or -1 when it is declined (`jsonevent.scan_event` then scans it).

    Events of one phase in a file mostly share a shape: the same keys in the same order with the
    same spaces (a writer's fixed format).  The last `TPL_PER_PH` shapes of each phase seen are
    kept (``tpl_b``, ``tpl_s``: the bytes between values, the kind of each value; a counter's
    args are part of its shape, the numbers values, the keys bytes); an event is first read by
    them (`_by_shape`: the bytes compared 8 at a time, the values parsed as their kind says, the
    entries of the shape's last event reused when its process, thread, name and id are the same:
    ``tpl_c``), and only when none fits key by key (keys in any order; its shape is then learnt)."""
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
    ph = np.int64(buf[p + 1])
    is_c = ph == 67
    cls = 0 if is_c else (1 if ph == 115 else (2 if ph == 116 else (3 if ph == 102 else -1)))
    if cls < 0:
        return -1
    p += 3
    m0 = cnt[C_SAMPLES]
    g0 = cls * TPL_PER_PH
    streak = tpl_s[N_TPL, MAX_SEG + 1, cls]
    if streak < MISS_STREAK or (seen & 63) == 0:
        # the shape that followed the last one matched last time first (counters of a few
        # kinds written in turn), then the others
        last = tpl_s[N_TPL, 0, 1 + cls] - 1
        pred = tpl_s[g0 + last, 0, 3] - 1 if last >= 0 else -1
        for k in range(-1, TPL_PER_PH):
            if k == pred or (k < 0 and pred < 0):
                continue
            t = g0 + (pred if k < 0 else k)
            if tpl_s[t, 0, 0] == 0:
                break
            end, noff, nlen, nesc, coff, clen, pid, tid, fid, has_id, bp, ts, m = _by_shape(
                buf, i, t, is_c, tpl_b, tpl_s, oi, ov, m0, stack)
            if end >= 0:
                tpl_s[N_TPL, MAX_SEG + 1, cls] = 0
                if last >= 0:
                    tpl_s[g0 + last, 0, 3] = t - g0 + 1
                tpl_s[N_TPL, 0, 1 + cls] = t - g0 + 1
                return _take(buf, tab, slot, cnt, fl, ov, oi, os_, i, end, seen, ph, noff, nlen, nesc, coff, clen,
                             pid, tid, fid, has_id, bp, ts, m, tpl_c[t], True)
        tpl_s[N_TPL, MAX_SEG + 1, cls] = streak + 1
    # key by key (any order), the shape recorded in the scratch shape as it goes
    noff = np.int64(0)
    nlen = np.int64(-1)
    nesc = 0
    coff = np.int64(0)
    clen = np.int64(-1)
    pid = np.int64(0)
    tid = np.int64(0)
    fid = np.int64(0)
    has_id = 0
    bp = np.int64(0)
    ts = np.nan
    m = 0
    seen_keys = 1 << K_PH
    prev = i  # where the bytes before the next value begin
    nseg = 0
    while True:
        p = skip_ws(buf, p)
        if p >= n:
            return -1
        c = buf[p]
        if c == 125:  # }
            break
        if c != 44:  # ,
            return -1
        p = skip_ws(buf, p + 1)
        if p >= n or buf[p] != 34:
            return -1
        ke, esc = scan_string(buf, p)
        if ke < 0 or esc:
            return -1
        kl = ke - p - 2
        key = _key_code(buf, p + 1, kl) if kl > 0 else K_OTHER
        if key != K_OTHER:
            bit = 1 << key
            if seen_keys & bit:
                return -1
            seen_keys |= bit
        kind = _kind(key)
        if kind == V_END:  # dur, tdur, id2, bind_id, flow_in, flow_out, sf, parent: scan_event's
            return -1
        p = skip_ws(buf, ke)
        if p >= n or buf[p] != 58:
            return -1
        p = skip_ws(buf, p + 1)
        if p >= n:
            return -1
        j, x, y, f = _value(buf, p, kind, is_c, oi, ov, m0, stack)
        if j < 0:
            return -1
        if kind == V_ARGS and is_c:  # the shape: the bytes up to each number (its key), then the number
            for q in range(m0, m0 + x):
                ko = oi[0, q]
                vs = skip_ws(buf, skip_ws(buf, ko + oi[1, q] + 1) + 1)  # after the key's quote and the colon
                nseg += 1
                if nseg <= MAX_SEG:
                    tpl_s[N_TPL, nseg, 0] = prev - i
                    tpl_s[N_TPL, nseg, 1] = vs - prev
                    tpl_s[N_TPL, nseg, 2] = V_PAIR
                    tpl_s[N_TPL, nseg, 3] = ko - prev
                    tpl_s[N_TPL, nseg, 4] = oi[1, q]
                _, prev, _ = parse_number(buf, vs)
            m = x
            p = j
            continue
        if kind == V_NAME:
            noff, nlen, nesc = x, y, 1 if f else 0
        elif kind == V_CAT:
            coff, clen = x, y
        elif kind == V_PID:
            pid = x
        elif kind == V_TID:
            tid = x
        elif kind == V_TS:
            ts = f
        elif kind == V_ID:
            fid, has_id = x, 1
        elif kind == V_BP:
            bp = x
        elif kind == V_ARGS and is_c:
            m = x
        nseg += 1
        if nseg <= MAX_SEG:  # (wrong when the event is over 2 GiB: then _take declines it, nothing is learnt)
            tpl_s[N_TPL, nseg, 0] = prev - i
            tpl_s[N_TPL, nseg, 1] = p - prev
            tpl_s[N_TPL, nseg, 2] = kind
        prev = j
        p = j
    end = p + 1
    got = _take(buf, tab, slot, cnt, fl, ov, oi, os_, i, end, seen, ph, noff, nlen, nesc, coff, clen, pid, tid, fid,
                has_id, bp, ts, m, tpl_c[N_TPL], False)
    if got >= 0 and nseg < MAX_SEG:
        nseg += 1
        tpl_s[N_TPL, nseg, 0] = prev - i
        tpl_s[N_TPL, nseg, 1] = end - prev
        tpl_s[N_TPL, nseg, 2] = V_END
        tpl_s[N_TPL, 0, 0] = nseg
        _learn(buf, i, tpl_b, tpl_s, tpl_c, g0)
    return got


@njit(cache=True, nogil=True, _nrt=False)
def side_run(buf, j, seen, tab, slot, cnt, fl, ov, oi, os_, tpl_b, tpl_s, tpl_c, stack, stop_at, room):
    """After an event `scan_fast` took (ending at ``j``; ``seen``: the events so far), take the
    events that follow as long as it takes them (a file's counters or flow events come in long
    runs): each one after ``, {`` (spaces allowed), before ``stop_at`` (when >= 0), while the
    outputs have room and ``room`` > 0 events may still be taken.  Returns (position, seen,
    need_sep): just after the last event taken (need_sep True: a comma is owed) or at the
    ``{`` or other byte that follows its comma (need_sep False); the caller's loop goes on
    from there as from any event."""
    n = buf.shape[0]
    while True:
        p = skip_ws(buf, j)
        if p >= n or buf[p] != 44:
            return j, seen, True
        p = skip_ws(buf, p + 1)
        if p >= n or buf[p] != 123 or (stop_at >= 0 and p >= stop_at) or room <= 0 or not fast_room(cnt, ov):
            return p, seen, False
        q = scan_fast(buf, p, seen, tab, slot, cnt, fl, ov, oi, os_, tpl_b, tpl_s, tpl_c, stack)
        if q < 0:
            return p, seen, False
        seen += 1
        room -= 1
        j = q


@njit(cache=True, nogil=True, _nrt=False)
def side_from_row(buf, k, ii, ss, ff, tab, slot, cnt, fl, ov, oi, os_, cache):
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
            j, m = counter_args(buf, a, oi, ov, cnt[C_SAMPLES])
            if j != a + ss[k, S_ARGS_LEN]:
                return False
        return _take_counter(buf, tab, slot, cnt, fl, ov, oi, ev_off, ev_len, ordn, ii[k, I_PID], ii[k, I_TID], ts,
                             ii[k, I_NAME_OFF], np.int64(ss[k, S_NAME_LEN]), 1 if flags & FL_NAME_ESC else 0, has_id,
                             ii[k, I_ID], m, cache, False)
    if not has_id:
        return False
    return _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, np.int64(ss[k, S_BP]),
                      ii[k, I_PID], ii[k, I_TID], ts, ii[k, I_CAT_OFF], np.int64(ss[k, S_CAT_LEN]), ii[k, I_ID],
                      cache, False)
