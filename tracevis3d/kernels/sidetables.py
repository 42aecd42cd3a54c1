"""The tables and outputs of the scanner's fast path for counter and flow events (`sidescan`), in
numba: the state ``fx = (tab, slot, cnt, fl, ov, oi, os_, shp)`` one scan
(or one part of a parallel scan) keeps, made by `new_fast`.

* tables (``tab[T, entry, field]``, open addressing in ``slot[T]``, keyed by the load's random
  seed, every hit verified value by value and byte by byte; at most `TAB_CAP` entries, at most
  `MAX_PROBES` probes: past either the event is declined and the general path takes it, so a
  table never changes a result, only the time): thread keys (pid, tid; the first event's
  offset; the largest ts in ``fl[:TAB_CAP]``), names and categories (byte spans; the first
  event's offset, length and ordinal), counters (pid, name entry, id, has_id), series (counter
  entry, key span).  `key_entry`, `span_entry`, `counter_entry`, `series_entry` find an entry
  or make it.
* per counter sample: ts, value (``ov[0], ov[1]``), series entry, event offset (``oi[0], oi[1]``);
* per flow event: ts (``ov[2]``), id, offset (``oi[2], oi[3]``), key entry, category entry,
  ordinal, phase | bp << 8, event length (``os_[0:5]``);
* counts (``cnt``): entries per table, samples, flow events, events taken, counter events; the
  least counter ts (``fl[FL_MIN_CTS]``); ``max_t`` (``fl[FL_MAX_T]``);
* the event shapes of `sideshape` (``shp``).

Everything that runs per event is compiled without numba's reference counting (``_nrt=False``:
it allocates nothing): with it, each array passed on costs two atomic operations per call, more
than the parse of a small event.  Brute-force twins in tests/test_chrome_fast.py.
"""
import numpy as np
from numba import njit

from .jsontokens import skip_value, word8  # noqa: F401  (word8: used here and imported from here)

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
# event shapes (``shp``, `sideshape`): `N_SHAPES` rows of the shapes, then the recorder's row.
# A shape: the event's phase and bp, its slots' kinds, its literals (offset and length in the
# bytes of the event it was made from, one before each slot and one after the last) and the
# entries its event took (thread key, name or category, counter, series) with the values they
# were taken for; a counter's pairs (the key's place in the literal before its value).
N_SHAPES = 8
SHAPE_SLOTS = 16
SHAPE_PAIRS = 8
(SH_PH, SH_BP, SH_NSLOT, SH_KE, SH_PID, SH_TID, SH_SPAN_E, SH_SPAN_OFF, SH_SPAN_LEN, SH_CE, SH_CID, SH_HAS_ID,
 SH_NEXT, SH_STAMP) = range(14)
SH_TYPE = 16
SH_LIT = SH_TYPE + SHAPE_SLOTS
SH_SER = SH_LIT + 2 * (SHAPE_SLOTS + 1)
SH_KEY = SH_SER + SHAPE_PAIRS
SHAPE_W = SH_KEY + 2 * SHAPE_PAIRS
# the recorder's row (`scan_fast` notes each value it reads, then the event's values)
RC_ON, RC_N, RC_LAST, RC_CLOCK, RC_PH, RC_BP, RC_PID, RC_TID, RC_SOFF, RC_SLEN, RC_SESC, RC_CID, RC_HAS_ID, \
    RC_M, RC_MADE = range(15)  # (RC_CLOCK: events taken by a shape or made one; RC_MADE: shapes made)
RC_SLOT = 16  # per value: kind, start, end, key offset, key length (a counter's pair)
RC_W = 5
SHP_W = max(SHAPE_W, RC_SLOT + RC_W * SHAPE_SLOTS)
# slot kinds: the string kept (a counter's name, a flow's category), a string only read, pid,
# tid, ts, id, a counter's value, any value skipped
SL_SPAN, SL_STR, SL_PID, SL_TID, SL_TS, SL_ID, SL_ARG, SL_SKIP = range(1, 9)


@njit(cache=True, nogil=True)
def new_fast(cap, seed, max_t, on=True):
    """Empty tables and outputs (``fx`` of `sidescan.scan_fast`) for ``cap`` counter samples and
    as many flow events; ``on`` False: nothing is taken (the scan of ``samples``)."""
    cnt = np.zeros(N_CNT, np.int64)
    cnt[C_SEED] = seed
    cnt[C_ON] = 1 if on else 0
    fl = np.full(TAB_CAP + 2, -np.inf)
    fl[FL_MIN_CTS] = np.inf
    fl[FL_MAX_T] = max_t
    cap = max(cap, MAX_PAIRS)
    shp = np.zeros((N_SHAPES + 1, SHP_W), np.int64)
    shp[N_SHAPES, RC_LAST] = -1
    return (np.zeros((N_TAB, TAB_CAP, TAB_W), np.int64), np.zeros((N_TAB, SLOTS), np.int32), cnt, fl,
            np.empty((3, cap), np.float64), np.empty((4, cap), np.int64), np.empty((5, cap), np.int32), shp)


@njit(cache=True, nogil=True, _nrt=False)
def record_value(shp, kind, start, end, key_off, key_len):
    """Note a value ``buf[start:end]`` of kind ``kind`` (``SL_*``) the scanner read, when the
    recorder is on (`sideshape`); past `SHAPE_SLOTS` values it turns itself off."""
    r = N_SHAPES
    if shp[r, RC_ON]:
        k = shp[r, RC_N]
        if k >= SHAPE_SLOTS:
            shp[r, RC_ON] = 0
            return
        c = RC_SLOT + RC_W * k
        shp[r, c] = kind
        shp[r, c + 1] = start
        shp[r, c + 2] = end
        shp[r, c + 3] = key_off
        shp[r, c + 4] = key_len
        shp[r, RC_N] = k + 1


@njit(cache=True, nogil=True, _nrt=False)
def fast_room(cnt, ov):
    """Whether the outputs hold one more event (`MAX_PAIRS` samples, a flow event)."""
    return cnt[C_SAMPLES] + MAX_PAIRS <= ov.shape[1] and cnt[C_FLOWS] < ov.shape[1]


@njit(cache=True, nogil=True)
def copy_fast_outputs(cnt, ov, oi, os_, ov2, oi2, os2):
    """Copy the samples and flow events the outputs ``ov, oi, os_`` hold into ``ov2, oi2, os2``
    (at least as long): rows 0-1 of ``ov`` and ``oi`` are the samples', the rest the flows'."""
    m = cnt[C_SAMPLES]
    ov2[:2, :m] = ov[:2, :m]
    oi2[:2, :m] = oi[:2, :m]
    m = cnt[C_FLOWS]
    ov2[2, :m] = ov[2, :m]
    oi2[2:, :m] = oi[2:, :m]
    os2[:, :m] = os_[:, :m]


@njit(cache=True, nogil=True)
def fast_grown(cnt, ov, oi, os_):
    """The outputs ``ov, oi, os_`` twice as long (their samples and flow events kept)."""
    cap = ov.shape[1] * 2
    ov2 = np.empty((3, cap), np.float64)
    oi2 = np.empty((4, cap), np.int64)
    os2 = np.empty((5, cap), np.int32)
    copy_fast_outputs(cnt, ov, oi, os_, ov2, oi2, os2)
    return ov2, oi2, os2


_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_K3 = np.uint64(0x165667B19E3779F9)


@njit(cache=True, nogil=True, _nrt=False)
def _fold(h):
    """The high bits of a product folded onto the low ones (the slot is taken from the low bits)."""
    return h ^ (h >> np.uint64(29)) ^ (h >> np.uint64(47))


@njit(cache=True, nogil=True, _nrt=False)
def same_bytes(buf, a, b, ln):
    """Whether ``buf[a:a+ln]`` and ``buf[b:b+ln]`` are the same bytes (both within ``buf``): 8
    bytes at a time, the last word masked when 8 bytes can be read there, else byte by byte."""
    n = buf.shape[0]
    q = np.int64(0)
    while q + 8 <= ln:
        if word8(buf, np.uint64(a + q)) != word8(buf, np.uint64(b + q)):
            return False
        q += 8
    r = ln - q
    if r <= 0:
        return True
    if a + q + 8 <= n and b + q + 8 <= n:
        mask = (np.uint64(1) << np.uint64(8 * r)) - np.uint64(1)
        return ((word8(buf, np.uint64(a + q)) ^ word8(buf, np.uint64(b + q))) & mask) == np.uint64(0)
    while q < ln:
        if buf[a + q] != buf[b + q]:
            return False
        q += 1
    return True


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
        h = _fold((h ^ word8(buf, np.uint64(q))) * _K2)
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
        if tab[t, e, F_HASH] == np.int64(h) and tab[t, e, SF_LEN] == ln and same_bytes(buf, tab[t, e, SF_OFF], off, ln):
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
                and same_bytes(buf, tab[T_SER, e, RF_KOFF], koff, klen)):
            return e
        s = (s + np.uint64(1)) & mask
    return -1


@njit(cache=True, nogil=True)
def event_lengths(buf, offs, stack):
    """The length of the JSON value at each offset (events the scanner took: valid objects)."""
    out = np.empty(offs.shape[0], np.int64)
    for q in range(offs.shape[0]):
        out[q] = skip_value(buf, offs[q], stack) - offs[q]
    return out
