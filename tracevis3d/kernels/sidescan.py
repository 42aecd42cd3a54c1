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

What a taken event leaves (``fx = (tab, slot, cnt, fl, ov, oi, os_)``, `new_fast`):

* tables (``tab[T, entry, field]``, open addressing in ``slot[T]``, keyed by the load's random
  seed, every hit verified value by value and byte by byte; at most `TAB_CAP` entries, at most
  `MAX_PROBES` probes): thread keys (pid, tid; the first event's offset and the largest ts
  in ``fl[:TAB_CAP]``), names and categories (byte spans; the first event's offset, length and
  ordinal), counters (pid, name entry, id, has_id), series (counter entry, key span);
* per counter sample: ts, value (``ov[0], ov[1]``), series entry, event offset (``oi[0], oi[1]``);
* per flow event: ts (``ov[2]``), id, offset (``oi[2], oi[3]``), key entry, category entry,
  ordinal, phase | bp << 8, event length (``os_[0:5]``);
* counts (``cnt``): entries per table, samples, flow events, events taken, counter events; the
  least counter ts (``fl[FL_MIN_CTS]``); ``max_t`` (``fl[FL_MAX_T]``).

The per-event functions are compiled without numba's reference counting (``_nrt=False``: they
allocate nothing): with it, the arrays they pass on cost two atomic operations per call, more
than the parse of a small event.

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
from .jsontokens import parse_number, scan_string, skip_value, skip_ws

# tables
T_KEY, T_NAME, T_CNT, T_SER, T_CAT = range(5)
N_TAB = 5
TAB_CAP = 4096
SLOTS = 2 * TAB_CAP
TAB_W = 8
MAX_PROBES = 32
F_HASH = 7
# fields: thread keys
KF_PID, KF_TID, KF_EV_OFF = 0, 1, 2
# fields: names and categories (byte spans)
SF_OFF, SF_LEN, SF_ESC, SF_EV_OFF, SF_EV_LEN, SF_ORD = range(6)
# fields: counters (one per pid, name, id, has_id) and series (one per counter and key)
CF_PID, CF_NAME, CF_CID, CF_HAS_ID, CF_EV_OFF = range(5)
RF_CNT, RF_KOFF, RF_KLEN, RF_EV_OFF = range(4)
# counts (cnt): entries per table at [T]; then
C_SAMPLES, C_FLOWS, C_EVENTS, C_COUNTERS, C_SEED, C_ON = range(5, 11)
N_CNT = 11
# fl: the largest ts of each thread key entry at [0, TAB_CAP); then
FL_MIN_CTS, FL_MAX_T = TAB_CAP, TAB_CAP + 1
# the pairs of one counter event the fast path takes (more: the general path)
MAX_PAIRS = 64
# per flow event (f_s rows)
FO_KEY, FO_CAT, FO_ORD, FO_CODE, FO_EV_LEN = range(5)


@njit(cache=True, nogil=True)
def new_fast(cap, seed, max_t, on=True):
    """Empty tables and outputs (``fx`` of `scan_fast`) for ``cap`` counter samples and as many
    flow events; ``on`` False: nothing is taken (the scan of ``samples``)."""
    cnt = np.zeros(N_CNT, np.int64)
    cnt[C_SEED] = seed
    cnt[C_ON] = 1 if on else 0
    fl = np.full(TAB_CAP + 2, -np.inf)
    fl[FL_MIN_CTS] = np.inf
    fl[FL_MAX_T] = max_t
    cap = max(cap, MAX_PAIRS)
    return (np.zeros((N_TAB, TAB_CAP, TAB_W), np.int64), np.zeros((N_TAB, SLOTS), np.int32), cnt, fl,
            np.empty((3, cap), np.float64), np.empty((4, cap), np.int64), np.empty((5, cap), np.int32))


@njit(cache=True, nogil=True, _nrt=False)
def fast_room(cnt, ov):
    """Whether the outputs hold one more event (`MAX_PAIRS` samples, a flow event)."""
    return cnt[C_SAMPLES] + MAX_PAIRS <= ov.shape[1] and cnt[C_FLOWS] < ov.shape[1]


@njit(cache=True, nogil=True)
def fast_grown(cnt, ov, oi, os_):
    """The outputs ``ov, oi, os_`` twice as long (their samples and flow events kept)."""
    cap = ov.shape[1] * 2
    ov2 = np.empty((3, cap), np.float64)
    oi2 = np.empty((4, cap), np.int64)
    os2 = np.empty((5, cap), np.int32)
    m = cnt[C_SAMPLES]
    ov2[:2, :m] = ov[:2, :m]
    oi2[:2, :m] = oi[:2, :m]
    m = cnt[C_FLOWS]
    ov2[2, :m] = ov[2, :m]
    oi2[2:, :m] = oi[2:, :m]
    os2[:, :m] = os_[:, :m]
    return ov2, oi2, os2


# ------------------------------------------------------------------ hashing and the tables
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_K3 = np.uint64(0x165667B19E3779F9)


@njit(cache=True, nogil=True, _nrt=False)
def _fold(h):
    """The high bits of a product folded onto the low ones (the slot is taken from the low bits)."""
    return h ^ (h >> np.uint64(29)) ^ (h >> np.uint64(47))


@njit(cache=True, nogil=True, _nrt=False)
def span_hash(buf, off, ln, seed, salt):
    """Hash of ``buf[off:off+ln]`` for the tables: its bytes read 8 at a time, each word mixed in
    by one multiply, from a basis of the seed, salt and length.  Weak against a file built to
    collide, and need not be strong: a probe chain longer than `MAX_PROBES` sends the event to
    the general path (`jsonspans`' keyed interning), so collisions cost time, never results."""
    h = (np.uint64(seed) ^ (np.uint64(salt) * _K3) ^ np.uint64(ln)) * _K1
    q = off
    end = off + ln
    while q + 8 <= end:
        w = (np.uint64(buf[q]) | (np.uint64(buf[q + 1]) << np.uint64(8)) | (np.uint64(buf[q + 2]) << np.uint64(16))
             | (np.uint64(buf[q + 3]) << np.uint64(24)) | (np.uint64(buf[q + 4]) << np.uint64(32))
             | (np.uint64(buf[q + 5]) << np.uint64(40)) | (np.uint64(buf[q + 6]) << np.uint64(48))
             | (np.uint64(buf[q + 7]) << np.uint64(56)))
        h = _fold((h ^ w) * _K2)
        q += 8
    if q < end:
        w = np.uint64(0)
        sh = np.uint64(0)
        while q < end:
            w |= np.uint64(buf[q]) << sh
            sh += np.uint64(8)
            q += 1
        h = _fold((h ^ w) * _K2)
    return _fold(h * _K1)


@njit(cache=True, nogil=True, _nrt=False)
def _same_bytes(buf, a, b, ln):
    for q in range(ln):
        if buf[a + q] != buf[b + q]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _new_entry(tab, slot, cnt, t, s, h):
    """A new entry of table ``t`` in slot ``s`` (hash ``h``); -1 when the table is full."""
    e = cnt[t]
    if e >= TAB_CAP:
        return -1
    cnt[t] = e + 1
    slot[t, s] = e + 1
    tab[t, e, F_HASH] = np.int64(h)
    return e


@njit(cache=True, nogil=True, _nrt=False)
def key_entry(tab, slot, cnt, pid, tid, ev_off):
    """The thread key entry of (pid, tid), made if new; -1 when full or past `MAX_PROBES`."""
    h = _fold(((np.uint64(pid) ^ np.uint64(cnt[C_SEED])) * _K1) ^ (np.uint64(tid) * _K2))
    mask = np.uint64(SLOTS - 1)
    s = h & mask
    for _ in range(MAX_PROBES):
        e = slot[T_KEY, s] - 1
        if e < 0:
            e = _new_entry(tab, slot, cnt, T_KEY, s, h)
            if e >= 0:
                tab[T_KEY, e, KF_PID] = pid
                tab[T_KEY, e, KF_TID] = tid
                tab[T_KEY, e, KF_EV_OFF] = ev_off
            return e
        if tab[T_KEY, e, F_HASH] == np.int64(h) and tab[T_KEY, e, KF_PID] == pid and tab[T_KEY, e, KF_TID] == tid:
            return e
        s = (s + np.uint64(1)) & mask
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def span_entry(tab, slot, cnt, t, buf, off, ln, esc, ev_off, ev_len, ordn):
    """The entry of the bytes ``buf[off:off+ln]`` in span table ``t`` (names, categories), made
    if new (with its escape flag and the event that brought it); -1 when full or past
    `MAX_PROBES`."""
    h = span_hash(buf, off, ln, cnt[C_SEED], t)
    mask = np.uint64(SLOTS - 1)
    s = h & mask
    for _ in range(MAX_PROBES):
        e = slot[t, s] - 1
        if e < 0:
            e = _new_entry(tab, slot, cnt, t, s, h)
            if e >= 0:
                tab[t, e, SF_OFF] = off
                tab[t, e, SF_LEN] = ln
                tab[t, e, SF_ESC] = esc
                tab[t, e, SF_EV_OFF] = ev_off
                tab[t, e, SF_EV_LEN] = ev_len
                tab[t, e, SF_ORD] = ordn
            return e
        if tab[t, e, F_HASH] == np.int64(h) and tab[t, e, SF_LEN] == ln and _same_bytes(buf, tab[t, e, SF_OFF], off, ln):
            return e
        s = (s + np.uint64(1)) & mask
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def counter_entry(tab, slot, cnt, pid, name_e, cid, has_id, ev_off):
    """The entry of the counter (pid, name entry, id, has_id), made if new; -1 when full or
    past `MAX_PROBES`."""
    h = _fold(((np.uint64(pid) ^ np.uint64(cnt[C_SEED])) * _K1) ^ ((np.uint64(cid) + np.uint64(has_id)) * _K2)
              ^ (np.uint64(name_e) * _K3))
    mask = np.uint64(SLOTS - 1)
    s = h & mask
    for _ in range(MAX_PROBES):
        e = slot[T_CNT, s] - 1
        if e < 0:
            e = _new_entry(tab, slot, cnt, T_CNT, s, h)
            if e >= 0:
                tab[T_CNT, e, CF_PID] = pid
                tab[T_CNT, e, CF_NAME] = name_e
                tab[T_CNT, e, CF_CID] = cid
                tab[T_CNT, e, CF_HAS_ID] = has_id
                tab[T_CNT, e, CF_EV_OFF] = ev_off
            return e
        if (tab[T_CNT, e, F_HASH] == np.int64(h) and tab[T_CNT, e, CF_PID] == pid and tab[T_CNT, e, CF_NAME] == name_e
                and tab[T_CNT, e, CF_CID] == cid and tab[T_CNT, e, CF_HAS_ID] == has_id):
            return e
        s = (s + np.uint64(1)) & mask
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def series_entry(tab, slot, cnt, buf, cnt_e, koff, klen, ev_off):
    """The entry of the series (counter entry, key bytes ``buf[koff:koff+klen]``), made if
    new; -1 when full or past `MAX_PROBES`."""
    h = span_hash(buf, koff, klen, cnt[C_SEED] ^ (cnt_e * 0x2545F4914F6CDD1D), T_SER)
    mask = np.uint64(SLOTS - 1)
    s = h & mask
    for _ in range(MAX_PROBES):
        e = slot[T_SER, s] - 1
        if e < 0:
            e = _new_entry(tab, slot, cnt, T_SER, s, h)
            if e >= 0:
                tab[T_SER, e, RF_CNT] = cnt_e
                tab[T_SER, e, RF_KOFF] = koff
                tab[T_SER, e, RF_KLEN] = klen
                tab[T_SER, e, RF_EV_OFF] = ev_off
            return e
        if (tab[T_SER, e, F_HASH] == np.int64(h) and tab[T_SER, e, RF_CNT] == cnt_e and tab[T_SER, e, RF_KLEN] == klen
                and _same_bytes(buf, tab[T_SER, e, RF_KOFF], koff, klen)):
            return e
        s = (s + np.uint64(1)) & mask
    return -1


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
                  m):
    """Counter event: entries, then its ``m`` samples (keys and values already in the sample
    columns, `counter_args`).  False (nothing written but entries) when a table refuses."""
    if not abs(ts) <= fl[FL_MAX_T]:
        return False
    ke = key_entry(tab, slot, cnt, pid, tid, ev_off)
    if ke < 0:
        return False
    ne = span_entry(tab, slot, cnt, T_NAME, buf, noff, nlen, nesc, ev_off, ev_len, ordn)
    if ne < 0:
        return False
    ns = cnt[C_SAMPLES]
    if m:
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


@njit(cache=True, nogil=True, _nrt=False)
def _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, bp, pid, tid, ts, coff, clen, fid):
    """Flow event (with an id): entries, then its column of outputs.  False when a table refuses."""
    if not abs(ts) <= fl[FL_MAX_T]:
        return False
    ke = key_entry(tab, slot, cnt, pid, tid, ev_off)
    if ke < 0:
        return False
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


@njit(cache=True, nogil=True, _nrt=False)
def scan_fast(buf, i, seen, tab, slot, cnt, fl, ov, oi, os_, stack):
    """Take the counter or flow event at ``buf[i] == '{'`` whose first key is ``ph`` (see the
    module's docstring); ``seen``: its ordinal.  The caller checks `fast_room` first.  Returns
    the end of the event, or -1 when it is declined (`jsonevent.scan_event` then scans it)."""
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
    if not (is_c or ph == 115 or ph == 116 or ph == 102):
        return -1
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
        p = skip_ws(buf, ke)
        if p >= n or buf[p] != 58:
            return -1
        p = skip_ws(buf, p + 1)
        if p >= n:
            return -1
        c = buf[p]
        if key == K_NAME or key == K_CAT:
            if c != 34:
                return -1
            j, esc = scan_string(buf, p)
            if j < 0 or j - p - 2 > 2147483647:
                return -1
            if key == K_NAME:
                name_off = p + 1
                name_len = j - p - 2
                name_esc = 1 if esc else 0
            else:
                cat_off = p + 1
                cat_len = j - p - 2
        elif key == K_PID or key == K_TID or key == K_TS:
            if not (c == 45 or 48 <= c <= 57):
                return -1
            v, j, exact = parse_number(buf, p)
            if j < 0 or not exact:
                return -1
            if key == K_TS:
                ts = v
            else:
                if not (v == np.floor(v) and abs(v) < 9.2e18):
                    return -1
                if key == K_PID:
                    pid = np.int64(v)
                else:
                    tid = np.int64(v)
        elif key == K_ID:
            if not (c == 34 or c == 45 or 48 <= c <= 57):
                return -1
            ev_id, j = _scan_scalar_id(buf, p, stack)
            if j < 0:
                return -1
            has_id = 1
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
            j, m = counter_args(buf, p, oi, ov, cnt[C_SAMPLES])
            if j < 0:
                return -1
        elif key == K_ARGS or key == K_OTHER:
            j = skip_value(buf, p, stack)
            if j < 0:
                return -1
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
        ok = _take_counter(buf, tab, slot, cnt, fl, ov, oi, i, end - i, ordn, pid, tid, ts, name_off, name_len,
                           name_esc, has_id, ev_id, m)
    else:
        if not has_id:
            return -1
        ok = _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, i, end - i, ordn, ph, bp, pid, tid, ts, cat_off,
                        cat_len, ev_id)
    return end if ok else -1


@njit(cache=True, nogil=True, _nrt=False)
def side_run(buf, j, seen, tab, slot, cnt, fl, ov, oi, os_, stack, stop_at, room):
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
        q = scan_fast(buf, p, seen, tab, slot, cnt, fl, ov, oi, os_, stack)
        if q < 0:
            return p, seen, False
        seen += 1
        room -= 1
        j = q


@njit(cache=True, nogil=True, _nrt=False)
def side_from_row(buf, k, ii, ss, ff, tab, slot, cnt, fl, ov, oi, os_):
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
                             ii[k, I_ID], m)
    if not has_id:
        return False
    return _take_flow(buf, tab, slot, cnt, fl, ov, oi, os_, ev_off, ev_len, ordn, ph, np.int64(ss[k, S_BP]),
                      ii[k, I_PID], ii[k, I_TID], ts, ii[k, I_CAT_OFF], np.int64(ss[k, S_CAT_LEN]), ii[k, I_ID])


@njit(cache=True, nogil=True)
def event_lengths(buf, offs, stack):
    """The length of the JSON value at each offset (events the scanner took: valid objects)."""
    out = np.empty(offs.shape[0], np.int64)
    for q in range(offs.shape[0]):
        out[q] = skip_value(buf, offs[q], stack) - offs[q]
    return out
