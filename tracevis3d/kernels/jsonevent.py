"""One Chrome Trace Event object → one row of flat arrays, in numba (`scan_event`), and
the row layout and status codes the scanner (`jsonscan`) and its callers share.

A row is an int64 part (byte offsets of name, cat and args, pid, tid, id, bind_id, the
event's own offset: ``I_*``), an int32 part (phase, lengths, flags ``FL_*``, binding
point, scope, the spans of the time values, the event's ordinal: ``S_*``) and a float64
part (ts, dur, tdur: ``F_*``).  Strings stay byte spans in the file; numbers are parsed
by `jsontokens.parse_num` (`parse_number`'s results, Clinger's exact fast path; the common forms
8 digits at a time), FL_SLOW marking the rare ones
Python's ``float`` must re-parse; pid, tid and id values that are not exact integers become
the FNV-1a hash of their bytes (`jsontokens.fnv1a`).  Only the keys of `_key_code` are read; every other
value is skipped (`jsontokens.skip_value`).  `kept_phase` says which events get a row.

Status codes: OK (0); TRUNCATED (1) when the bytes end inside the event array
(an unterminated array or an event cut short: events before it are kept);
SPLIT (2) when a part of a parallel scan reached its split point; FULL (3) when a chunk's
rows are all used (`jsonscan.scan_events_chunk`: the scan goes on from where it stopped);
negative codes are syntax errors at ``err_pos``; CUT is internal (the bytes ended
inside a value).

Over 600 lines: one event's scanner and the value readers it inlines (numba needs them in
reach of the loop), with the row layout they write; splitting them apart would only add imports.
"""
import numpy as np
from numba import njit

from .jsontokens import fnv1a, parse_num, scan_string, skip_value, skip_ws
from .sidetables import same_bytes


OK = 0
TRUNCATED = 1
SPLIT = 2  # scan_events stopped at the requested split point
FULL = 3  # scan_events_chunk filled its rows: go on from the position it returns
ERR_NOT_JSON = -1
ERR_SYNTAX = -2
ERR_TOO_DEEP = -3
ERR_NO_EVENTS_KEY = -4
ERR_EVENT_NOT_OBJECT = -5
ERR_TOO_MANY = -6
ERR_NO_COMMA = -7  # two events (or two keys) without a comma between them
ERR_DUP_EVENTS = -8  # a second "traceEvents" key
CUT = -100  # internal: the bytes ended inside a value

# int64 columns
I_NAME_OFF, I_CAT_OFF, I_ARGS_OFF, I_PID, I_TID, I_ID, I_BIND, I_EV_OFF = range(8)
N_I = 8
# int32 columns
S_PH, S_NAME_LEN, S_CAT_LEN, S_ARGS_LEN, S_FLAGS, S_BP, S_SCOPE, S_EV_LEN = range(8)
# byte span of the ts/dur/tdur value (offset from the event start, length; -1 if absent or
# parsed exactly), for the bulk re-parse of numbers outside the exact fast path (FL_SLOW)
S_NUM_REL = 8  # 8, 9, 10: ts, dur, tdur offsets
S_NUM_LEN = 11  # 11, 12, 13: lengths
S_ORD = 14  # ordinal of the event in the file (rows keep only the phases we read; saturates at 2**31-1)
N_S = 15
# float64 columns
F_TS, F_DUR, F_TDUR = range(3)
N_F = 3

# S_PH of a phase string that is not exactly one character ("XX", "")
PH_NONE = 0
PH_LONG = 1

# S_FLAGS bits
FL_NAME_ESC = 1
FL_PID_STR = 2
FL_TID_STR = 4
FL_ID = 8
FL_BIND = 16
FL_FLOW_IN = 32
FL_FLOW_OUT = 64
FL_TS = 128
FL_DUR = 256
FL_TDUR = 512
FL_SLOW = 1024  # a number needs Python's float(): re-parse the event
FL_PID = 2048
FL_TID = 4096
FL_NAME = 8192

# keys we read
K_OTHER, K_PH, K_NAME, K_CAT, K_PID, K_TID, K_TS, K_DUR, K_TDUR, K_ARGS, K_ID, K_ID2, \
    K_BP, K_S, K_BIND_ID, K_FLOW_IN, K_FLOW_OUT, K_SF, K_PARENT = range(19)


@njit(cache=True, nogil=True, _nrt=False)
def _key_code(buf, a, ln):
    c0 = buf[a]
    if ln == 1:
        if c0 == 115:
            return K_S
    elif ln == 2:
        c1 = buf[a + 1]
        if c0 == 112 and c1 == 104:
            return K_PH
        if c0 == 116 and c1 == 115:
            return K_TS
        if c0 == 105 and c1 == 100:
            return K_ID
        if c0 == 98 and c1 == 112:
            return K_BP
        if c0 == 115 and c1 == 102:
            return K_SF
    elif ln == 3:
        c1 = buf[a + 1]
        c2 = buf[a + 2]
        if c0 == 112 and c1 == 105 and c2 == 100:
            return K_PID
        if c0 == 116 and c1 == 105 and c2 == 100:
            return K_TID
        if c0 == 100 and c1 == 117 and c2 == 114:
            return K_DUR
        if c0 == 99 and c1 == 97 and c2 == 116:
            return K_CAT
        if c0 == 105 and c1 == 100 and c2 == 50:
            return K_ID2
    elif ln == 4:
        c1 = buf[a + 1]
        c2 = buf[a + 2]
        c3 = buf[a + 3]
        if c0 == 110 and c1 == 97 and c2 == 109 and c3 == 101:
            return K_NAME
        if c0 == 97 and c1 == 114 and c2 == 103 and c3 == 115:
            return K_ARGS
        if c0 == 116 and c1 == 100 and c2 == 117 and c3 == 114:
            return K_TDUR
    elif ln == 6:
        if c0 == 112 and buf[a + 1] == 97 and buf[a + 2] == 114 and buf[a + 3] == 101 \
                and buf[a + 4] == 110 and buf[a + 5] == 116:
            return K_PARENT  # parent
    elif ln == 7:
        if c0 == 98 and buf[a + 1] == 105 and buf[a + 4] == 95 and buf[a + 5] == 105:
            return K_BIND_ID  # bind_id
        if c0 == 102 and buf[a + 1] == 108 and buf[a + 4] == 95 and buf[a + 5] == 105 and buf[a + 6] == 110:
            return K_FLOW_IN  # flow_in
    elif ln == 8:
        if c0 == 102 and buf[a + 1] == 108 and buf[a + 4] == 95 and buf[a + 5] == 111:
            return K_FLOW_OUT  # flow_out
    return K_OTHER


@njit(cache=True, nogil=True, inline="always")
def next_key(buf, p, n, seen):
    """The side scanners' step to the next member of an event object whose keys are plain
    (unescaped) strings: from ``p`` (after a value), white space, then ``}`` -- (its index, -1,
    seen) -- or ``,`` a key ``:`` and white space -- (the value's index < n, the key's code
    (`_key_code`), ``seen`` with the key's bit set).  (-1, K_OTHER, seen) declines the event:
    anything else, an escaped key, or a known key seen before (bit ``1 << code`` of ``seen``)."""
    p = skip_ws(buf, p)
    if p >= n:
        return -1, K_OTHER, seen
    c = buf[p]
    if c == 125:  # }
        return p, -1, seen
    if c != 44:  # ,
        return -1, K_OTHER, seen
    p = skip_ws(buf, p + 1)
    if p >= n or buf[p] != 34:
        return -1, K_OTHER, seen
    ke, esc = scan_string(buf, p)
    if ke < 0 or esc:
        return -1, K_OTHER, seen
    kl = ke - p - 2
    key = _key_code(buf, p + 1, kl) if kl > 0 else K_OTHER
    if key != K_OTHER:
        bit = 1 << key
        if seen & bit:
            return -1, K_OTHER, seen
        seen |= bit
    p = skip_ws(buf, ke)
    if p >= n or buf[p] != 58:
        return -1, K_OTHER, seen
    p = skip_ws(buf, p + 1)
    if p >= n:
        return -1, K_OTHER, seen
    return p, key, seen


@njit(cache=True, nogil=True)
def _grow(ii, ss, ff):
    cap = ii.shape[0] * 2
    ii2 = np.empty((cap, N_I), np.int64)
    ss2 = np.empty((cap, N_S), np.int32)
    ff2 = np.empty((cap, N_F), np.float64)
    ii2[: ii.shape[0]] = ii
    ss2[: ss.shape[0]] = ss
    ff2[: ff.shape[0]] = ff
    return ii2, ss2, ff2


@njit(cache=True, nogil=True, _nrt=False)
def _scan_scalar_id(buf, i, stack):
    """An id value: number → its integer value; string/object → FNV hash of its
    bytes.  Returns (id, end)."""
    c = buf[i]
    if c == 34:
        j, _ = scan_string(buf, i)
        if j < 0:
            return 0, -2
        return fnv1a(buf, i + 1, j - i - 2), j
    if c == 45 or 48 <= c <= 57:
        v, j, exact = parse_num(buf, i)
        if j < 0:
            return 0, j
        if exact and abs(v) < 9.2e18:
            return np.int64(v), j
        return fnv1a(buf, i, j - i), j
    j = skip_value(buf, i, stack)
    if j < 0:
        return 0, j
    return fnv1a(buf, i, j - i), j


@njit(cache=True, nogil=True, _nrt=False)
def _blank_row(i, k, ii, ss, ff):
    """Row k: an event at byte i with no fields yet."""
    ii[k, I_NAME_OFF] = 0
    ii[k, I_CAT_OFF] = 0
    ii[k, I_ARGS_OFF] = 0
    ii[k, I_PID] = 0
    ii[k, I_TID] = 0
    ii[k, I_ID] = 0
    ii[k, I_BIND] = 0
    ii[k, I_EV_OFF] = i
    for c in range(N_S):
        ss[k, c] = 0
    ss[k, S_NAME_LEN] = -1
    ss[k, S_CAT_LEN] = -1
    ss[k, S_NUM_LEN] = -1
    ss[k, S_NUM_LEN + 1] = -1
    ss[k, S_NUM_LEN + 2] = -1
    ff[k, F_TS] = np.nan
    ff[k, F_DUR] = np.nan
    ff[k, F_TDUR] = np.nan


def _scan_event(buf, i, k, ii, ss, ff, stack, spans_mode, keys):
    """Scan the event object starting at ``buf[i] == '{'`` into row k.

    Returns (end, status) with status OK, CUT (bytes ended inside) or a
    negative syntax error code.  ``spans_mode`` (samples and stack frames): the
    value of ``sf`` or ``parent`` is kept as a byte span (``I_ID`` offset, ``S_BP``
    length: a string's inside, any other value's text) with FL_ID, and the keys
    id, id2, bind_id, bp and args are not read.  Each value is read by `_read_value`
    (inlined, as its readers are).

    ``keys`` (`new_key_memo`): the keys of an earlier event by their place in
    it, each as the span of its bytes from its opening quote to its value (``"ts": ``) and its
    code.  A key whose bytes are that span's is that key (the same bytes read alike), so its
    string, code, colon and blanks are not read again; any other is read and kept.  A writer's
    events repeat their keys in one order (VizTracer's ``pid, tid, ts, ph, cat, dur, name``): the
    scan kernel of the 10^6-call sympy trace (VizTracer) went from 0.33 to 0.30 s on one thread.
    """
    n = buf.shape[0]
    _blank_row(i, k, ii, ss, ff)
    flags = 0
    place = 1  # the key's place in the event: its slot in ``keys`` (3 words a place)
    n_memo = keys.shape[0]
    i += 1
    i = skip_ws(buf, i)
    if i >= n:
        return -2, CUT
    if buf[i] == 125:  # empty object
        ss[k, S_EV_LEN] = i + 1 - ii[k, I_EV_OFF]
        return i + 1, OK
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            return -2, CUT
        if buf[i] == 125 and i > ii[k, I_EV_OFF] + 1:  # tolerate a trailing comma: {"a": 1,}
            ss[k, S_FLAGS] = flags
            ss[k, S_EV_LEN] = min(i + 1 - ii[k, I_EV_OFF], 2147483647)
            return i + 1, OK
        if buf[i] != 34:
            return i, ERR_SYNTAX
        kept = place + 2 < n_memo
        if kept and place < keys[0] and i + keys[place + 1] <= n and same_bytes(buf, i, keys[place], keys[place + 1]):
            key = keys[place + 2]  # the kept key's bytes: that key, its value after them and blanks
            i = skip_ws(buf, i + keys[place + 1])
            if i >= n:
                return -2, CUT
        else:
            k0 = i
            ke, _ = scan_string(buf, i)
            if ke < 0:
                return -2, CUT
            key = _key_code(buf, i + 1, ke - i - 2) if ke - i - 2 > 0 else K_OTHER
            if spans_mode:
                if key == K_ID or key == K_ID2 or key == K_BIND_ID or key == K_BP or key == K_ARGS:
                    key = K_OTHER
            elif key == K_SF or key == K_PARENT:
                key = K_OTHER
            i = skip_ws(buf, ke)
            if i >= n:
                return -2, CUT
            if buf[i] != 58:  # :
                return i, ERR_SYNTAX
            i = skip_ws(buf, i + 1)
            if i >= n:
                return -2, CUT
            if kept:  # this place's key kept for the next event (the places after it: from this one)
                keys[place] = k0
                keys[place + 1] = i - k0
                keys[place + 2] = key
                keys[0] = place + 3
        place += 3
        i, st, flags = _read_value(buf, i, k, key, ii, ss, ff, stack, flags)
        if st != OK:
            return i, st
        i = skip_ws(buf, i)
        if i >= n:
            return -2, CUT
        c = buf[i]
        if c == 44:  # ,
            i += 1
            continue
        if c == 125:  # }
            ss[k, S_FLAGS] = flags
            ss[k, S_EV_LEN] = min(i + 1 - ii[k, I_EV_OFF], 2147483647)
            return i + 1, OK
        return i, ERR_SYNTAX


@njit(cache=True, nogil=True, inline="always")
def _skipped(j, i, deep):
    """(end, status) of a value `skip_value` skipped from ``i`` to ``j`` (negative: why it could
    not): CUT when the bytes ended, else a syntax error at ``i`` (ERR_TOO_DEEP too when
    ``deep``)."""
    if j >= 0:
        return j, OK
    if j == -2:
        return np.int64(-2), CUT
    return np.int64(i), (ERR_SYNTAX if j == -1 or not deep else ERR_TOO_DEEP)


@njit(cache=True, nogil=True, inline="always")
def _read_value(buf, i, k, key, ii, ss, ff, stack, flags):
    """The value at ``buf[i]`` of key ``key`` (`_key_code`) into row k (any other key's skipped).
    Returns (end, status, flags)."""
    c = buf[i]
    if key == K_PH or key == K_BP or key == K_S:
        return _read_char(buf, i, k, key, ss, stack, flags)
    if key == K_NAME or key == K_CAT:
        return _read_text(buf, i, k, key, ii, ss, stack, flags)
    if key == K_PID or key == K_TID:
        return _read_pid_tid(buf, i, k, key, ii, stack, flags)
    if key == K_TS or key == K_DUR or key == K_TDUR:
        return _read_time(buf, i, k, key, ii, ss, ff, stack, flags)
    if key == K_ARGS:
        j, st = _skipped(skip_value(buf, i, stack), i, True)
        if st == OK:
            ii[k, I_ARGS_OFF] = i
            ss[k, S_ARGS_LEN] = min(j - i, 2147483647)
        return j, st, flags
    if key == K_ID or key == K_ID2 or key == K_BIND_ID:
        h, j = _scan_scalar_id(buf, i, stack)
        if j < 0:
            j, st = _skipped(j, i, False)
            return j, st, flags
        if key == K_BIND_ID:
            ii[k, I_BIND] = h
            flags |= FL_BIND
        else:
            ii[k, I_ID] = h
            flags |= FL_ID
        return j, OK, flags
    if key == K_SF or key == K_PARENT:  # spans_mode only
        return _read_span_id(buf, i, k, ii, ss, stack, flags)
    if key == K_FLOW_IN or key == K_FLOW_OUT:
        j, st = _skipped(skip_value(buf, i, stack), i, False)
        if st == OK and c == 116:  # true
            flags |= FL_FLOW_IN if key == K_FLOW_IN else FL_FLOW_OUT
        return j, st, flags
    j, st = _skipped(skip_value(buf, i, stack), i, True)
    return j, st, flags


@njit(cache=True, nogil=True, inline="always")
def _read_char(buf, i, k, key, ss, stack, flags):
    """ph, bp or s: a string of exactly one character ("XX" is no X: PH_LONG, an unknown phase;
    "" none; for bp and s both 0); another value is skipped."""
    if buf[i] != 34:
        j, st = _skipped(skip_value(buf, i, stack), i, True)
        return j, st, flags
    j, _ = scan_string(buf, i)
    if j < 0:
        return np.int64(-2), CUT, flags
    v = buf[i + 1] if j - i == 3 else (PH_NONE if j - i == 2 else PH_LONG)
    if key != K_PH and v == PH_LONG:
        v = 0
    if key == K_PH:
        ss[k, S_PH] = v
    elif key == K_BP:
        ss[k, S_BP] = v
    else:
        ss[k, S_SCOPE] = v
    return j, OK, flags


@njit(cache=True, nogil=True, inline="always")
def _read_text(buf, i, k, key, ii, ss, stack, flags):
    """name or cat: a string's inside as a span (FL_NAME_ESC when the name has escapes); a name
    that is no string keeps its raw JSON text."""
    if buf[i] == 34:
        j, esc = scan_string(buf, i)
        if j < 0:
            return np.int64(-2), CUT, flags
        if key == K_NAME:
            ii[k, I_NAME_OFF] = i + 1
            ss[k, S_NAME_LEN] = min(j - i - 2, 2147483647)
            flags |= FL_NAME
            if esc:
                flags |= FL_NAME_ESC
        else:
            ii[k, I_CAT_OFF] = i + 1
            ss[k, S_CAT_LEN] = min(j - i - 2, 2147483647)
        return j, OK, flags
    j, st = _skipped(skip_value(buf, i, stack), i, True)
    if st == OK and key == K_NAME:
        ii[k, I_NAME_OFF] = i
        ss[k, S_NAME_LEN] = min(j - i, 2147483647)
        flags |= FL_NAME
    return j, st, flags


@njit(cache=True, nogil=True, inline="always")
def _read_pid_tid(buf, i, k, key, ii, stack, flags):
    """pid or tid: an exact integer as itself, any other value (a string's inside, else its text)
    as its FNV-1a hash (FL_PID_STR / FL_TID_STR for strings and values that are no numbers)."""
    if buf[i] == 34:
        j, _ = scan_string(buf, i)
        if j < 0:
            return np.int64(-2), CUT, flags
        h = fnv1a(buf, i + 1, j - i - 2)
        flags |= FL_PID_STR if key == K_PID else FL_TID_STR
    else:
        v, j, exact = parse_num(buf, i)
        if j < 0:
            if j == -2:
                return np.int64(-2), CUT, flags
            jj = skip_value(buf, i, stack)
            if jj < 0:
                jj, st = _skipped(jj, i, False)
                return jj, st, flags
            h = fnv1a(buf, i, jj - i)
            flags |= FL_PID_STR if key == K_PID else FL_TID_STR
            j = jj
        elif exact and v == np.floor(v) and abs(v) < 9.2e18:
            h = np.int64(v)
        else:
            h = fnv1a(buf, i, j - i)
    if key == K_PID:
        ii[k, I_PID] = h
        flags |= FL_PID
    else:
        ii[k, I_TID] = h
        flags |= FL_TID
    return j, OK, flags


@njit(cache=True, nogil=True, inline="always")
def _read_time(buf, i, k, key, ii, ss, ff, stack, flags):
    """ts, dur or tdur: a number (its span kept with FL_SLOW where Python must re-parse it), NaN,
    ±Infinity; a string's inside is kept for Python to look at (FL_SLOW)."""
    n = buf.shape[0]
    c = buf[i]
    col = F_TS if key == K_TS else (F_DUR if key == K_DUR else F_TDUR)
    bit = FL_TS if key == K_TS else (FL_DUR if key == K_DUR else FL_TDUR)
    if c == 45 and i + 1 < n and buf[i + 1] == 73:  # -Infinity: like Infinity, not a time
        j, st = _skipped(skip_value(buf, i, stack), i, False)
        if st == OK:
            ff[k, col] = -np.inf
            flags |= bit
        return j, st, flags
    if c == 45 or 48 <= c <= 57:
        v, j, exact = parse_num(buf, i)
        if j < 0:
            j, st = _skipped(j, i, False)
            return j, st, flags
        ff[k, col] = v
        flags |= bit
        if not exact:  # the span only where it is re-parsed: in most files the column stays blank
            ss[k, S_NUM_REL + col] = min(i - ii[k, I_EV_OFF], 2147483647)
            ss[k, S_NUM_LEN + col] = min(j - i, 2147483647)
            flags |= FL_SLOW
        return j, OK, flags
    if c == 78 or c == 73:
        j, st = _skipped(skip_value(buf, i, stack), i, False)
        if st == OK:
            ff[k, col] = np.nan if c == 78 else np.inf
            flags |= bit
        return j, st, flags
    # a string or other value: let Python have a look
    j, st = _skipped(skip_value(buf, i, stack), i, True)
    if st == OK and c == 34:
        flags |= bit | FL_SLOW
        ss[k, S_NUM_REL + col] = min(i + 1 - ii[k, I_EV_OFF], 2147483647)
        ss[k, S_NUM_LEN + col] = min(max(j - i - 2, 0), 2147483647)
    return j, st, flags


@njit(cache=True, nogil=True, inline="always")
def _read_span_id(buf, i, k, ii, ss, stack, flags):
    """sf or parent (spans mode): a string's inside, or any other value's text, as a span
    (``I_ID`` offset, ``S_BP`` length) with FL_ID."""
    if buf[i] == 34:
        j, _ = scan_string(buf, i)
        if j < 0:
            return np.int64(-2), CUT, flags
        ii[k, I_ID] = i + 1
        ss[k, S_BP] = min(j - i - 2, 2147483647)
    else:
        j, st = _skipped(skip_value(buf, i, stack), i, True)
        if st != OK:
            return j, st, flags
        ii[k, I_ID] = i
        ss[k, S_BP] = min(j - i, 2147483647)
    return j, OK, flags | FL_ID


# compiled on its own (the other scanners, the tests) and inlined into `jsonscan.scan_events`, which
# calls it once per call event: numba passes each of its 5 arrays as 7 words on the stack (a scan of
# 10^6 calls, the kernel alone: 0.233 -> 0.218 s)
scan_event = njit(cache=True, nogil=True)(_scan_event)
scan_event_inlined = njit(nogil=True, inline="always")(_scan_event)

#: places of an event whose keys `scan_event` keeps (`new_key_memo`)
MEMO_KEYS = 16


@njit(cache=True, nogil=True)
def new_key_memo():
    """An empty memo of an event's keys for `scan_event`: ``keys[0]`` the words in use, then
    the offset, length and code of each place's key (an array of fewer than 4 words keeps none)."""
    keys = np.zeros(1 + 3 * MEMO_KEYS, np.int64)
    keys[0] = 1
    return keys


@njit(cache=True, nogil=True)
def kept_phase(v):
    """Phases whose events get a row: B E X i I R s t f M, counters C, async b e n (and the
    legacy S T p F), samples P (V8's profiles: `io.chrome_profile`).  Any other event
    (objects, unknown or no phase) is only counted."""
    return (v == 66 or v == 69 or v == 88 or v == 105 or v == 73 or v == 82 or v == 115
            or v == 116 or v == 102 or v == 77 or v == 67 or v == 98 or v == 101 or v == 110
            or v == 83 or v == 84 or v == 112 or v == 70 or v == 80)


@njit(cache=True, nogil=True)
def side_phase(v):
    """Phases whose events go to the side rows, not the event rows: counters ``C`` and v1 flow
    events ``s t f`` (`jsonscan.scan_events`)."""
    return v == 67 or v == 115 or v == 116 or v == 102


@njit(cache=True, nogil=True, _nrt=False)
def row_to_side(k, ii, ss, ff, kv, vi, vs, vf):
    """Row ``k`` of the event rows copied into row ``kv`` of the side rows ``vi, vs, vf``."""
    for c in range(N_I):
        vi[kv, c] = ii[k, c]
    for c in range(N_S):
        vs[kv, c] = ss[k, c]
    for c in range(N_F):
        vf[kv, c] = ff[k, c]
