"""A byte-level scanner for Chrome Trace Event JSON, in numba.

It walks the raw bytes once and writes the fields the model needs into flat
arrays (byte spans for strings, parsed numbers), so no Python object is ever
made per event.  It is a validating JSON scanner for the structure it walks
(objects, arrays, strings, numbers, literals); nested values it does not need
(``args``, ``stack``...) are skipped with an explicit bracket stack, never by
recursion, with a bounded nesting depth.

Numbers: the exact fast path of Clinger's algorithm -- a decimal mantissa
m < 2^53 and a power of ten 10^|e| with |e| <= 22 are both exact doubles, so one
IEEE multiply/divide gives the correctly rounded value.  Anything else is flagged
and re-parsed by Python's ``float`` (rare: 17+ significant digits, huge exponents).

Status codes: OK (0); TRUNCATED (1) when the bytes end inside the event array
(an unterminated array or an event cut short: events before it are kept);
negative codes are syntax errors at ``err_pos``.
"""
import numpy as np
from numba import njit

OK = 0
TRUNCATED = 1
SPLIT = 2  # scan_events stopped at the requested split point
ERR_NOT_JSON = -1
ERR_SYNTAX = -2
ERR_TOO_DEEP = -3
ERR_NO_EVENTS_KEY = -4
ERR_EVENT_NOT_OBJECT = -5
ERR_TOO_MANY = -6
ERR_NO_COMMA = -7  # two events (or two keys) without a comma between them
ERR_DUP_EVENTS = -8  # a second "traceEvents" key
CUT = -100  # internal: the bytes ended inside a value

MAX_NESTING = 4096

# int64 columns
I_NAME_OFF, I_CAT_OFF, I_ARGS_OFF, I_PID, I_TID, I_ID, I_BIND, I_EV_OFF = range(8)
N_I = 8
# int32 columns
S_PH, S_NAME_LEN, S_CAT_LEN, S_ARGS_LEN, S_FLAGS, S_BP, S_SCOPE, S_EV_LEN = range(8)
# byte span of the ts/dur/tdur value (offset from the event start, length; -1 if absent),
# for the bulk re-parse of numbers outside the exact fast path
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

_POW10 = np.array([10.0 ** k for k in range(23)])
_TRUE = np.frombuffer(b"true", np.uint8)
_FALSE = np.frombuffer(b"false", np.uint8)
_NULL = np.frombuffer(b"null", np.uint8)
_NAN = np.frombuffer(b"NaN", np.uint8)
_INF = np.frombuffer(b"Infinity", np.uint8)


@njit(cache=True, nogil=True)
def _ws(c):
    return c == 32 or c == 10 or c == 13 or c == 9


@njit(cache=True, nogil=True)
def skip_ws(buf, i):
    n = buf.shape[0]
    while i < n and _ws(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True)
def scan_string(buf, i):
    """``buf[i]`` is the opening quote.  Returns (index after closing quote,
    has_escape), or (-1, False) if the bytes end first."""
    n = buf.shape[0]
    i += 1
    esc = False
    while i < n:
        c = buf[i]
        if c == 34:  # "
            return i + 1, esc
        if c == 92:  # backslash
            esc = True
            i += 2
            continue
        i += 1
    return -1, esc


@njit(cache=True, nogil=True)
def fnv1a(buf, off, ln):
    """64-bit FNV-1a hash of ``buf[off:off+ln]`` (as int64)."""
    h = np.uint64(14695981039346656037)
    p = np.uint64(1099511628211)
    for k in range(off, off + ln):
        h = (h ^ np.uint64(buf[k])) * p
    return np.int64(h)


@njit(cache=True, nogil=True)
def parse_number(buf, i):
    """Parse a JSON number at i.  Returns (value, end, exact).

    end < 0: not a number (syntax error) or cut off by the end of the bytes
    (end == -2).  exact False: the caller must re-parse with Python's float.
    """
    n = buf.shape[0]
    j = i
    neg = False
    if j < n and buf[j] == 45:  # -
        neg = True
        j += 1
    if j >= n:
        return 0.0, -2, False
    if not (48 <= buf[j] <= 57):
        return 0.0, -1, False
    m = np.uint64(0)
    nd = 0  # significant digits accumulated
    exact = True
    drop = 0  # integer digits dropped when the mantissa is full
    while j < n and 48 <= buf[j] <= 57:
        if nd < 19:
            m = m * np.uint64(10) + np.uint64(buf[j] - 48)
            if m > 0:
                nd += 1
        else:
            drop += 1
            exact = False
        j += 1
    frac = 0
    if j < n and buf[j] == 46:  # .
        j += 1
        if j >= n:
            return 0.0, -2, False
        if not (48 <= buf[j] <= 57):
            return 0.0, -1, False
        while j < n and 48 <= buf[j] <= 57:
            if nd < 19:
                m = m * np.uint64(10) + np.uint64(buf[j] - 48)
                if m > 0:
                    nd += 1
                frac += 1
            else:
                exact = False
            j += 1
    e = 0
    if j < n and (buf[j] == 101 or buf[j] == 69):  # e E
        j += 1
        es = 1
        if j < n and (buf[j] == 43 or buf[j] == 45):
            if buf[j] == 45:
                es = -1
            j += 1
        if j >= n:
            return 0.0, -2, False
        if not (48 <= buf[j] <= 57):
            return 0.0, -1, False
        while j < n and 48 <= buf[j] <= 57:
            if e < 100000:
                e = e * 10 + (buf[j] - 48)
            j += 1
        e *= es
    if j >= n:
        # a number running into the end of the bytes may have been cut
        return 0.0, -2, False
    e10 = e - frac + drop
    if m >= np.uint64(9007199254740992):
        exact = False
    v = 0.0
    if exact:
        fm = float(m)
        if m == 0:
            v = 0.0
        elif 0 <= e10 <= 22:
            v = fm * _POW10[e10]
        elif -22 <= e10 < 0:
            v = fm / _POW10[-e10]
        else:
            exact = False
    if neg:
        v = -v
    return v, j, exact


@njit(cache=True, nogil=True)
def _literal_len(buf, i):
    """Length of the literal (true false null NaN Infinity) at i; -1 if none,
    -2 if the bytes end inside it."""
    n = buf.shape[0]
    c = buf[i]
    if c == 116:
        lit = _TRUE
    elif c == 102:
        lit = _FALSE
    elif c == 110:
        lit = _NULL
    elif c == 78:
        lit = _NAN
    else:
        lit = _INF
    for q in range(lit.shape[0]):
        if i + q >= n:
            return -2
        if buf[i + q] != lit[q]:
            return -1
    return lit.shape[0]


@njit(cache=True, nogil=True)
def skip_value(buf, i, stack):
    """Skip one JSON value starting at i (after whitespace).

    Returns the index after it, -2 when the bytes end inside it, -1 on a syntax
    error, -3 when nesting exceeds len(stack).  Iterative: ``stack`` holds the
    open brackets.
    """
    n = buf.shape[0]
    i = skip_ws(buf, i)
    if i >= n:
        return -2
    c = buf[i]
    if c == 34:
        j, _ = scan_string(buf, i)
        return -2 if j < 0 else j
    if c == 45 and i + 1 < n and buf[i + 1] == 73:  # -Infinity
        ln = _literal_len(buf, i + 1)
        if ln == -2:
            return -2
        if ln < 0:
            return -1
        return i + 1 + ln
    if c == 45 or 48 <= c <= 57:
        _, j, _ = parse_number(buf, i)
        return j
    if c == 116 or c == 102 or c == 110 or c == 78 or c == 73:  # true false null NaN Infinity
        ln = _literal_len(buf, i)
        if ln == -2:
            return -2
        if ln < 0:
            return -1
        return i + ln
    if c != 123 and c != 91:
        return -1
    sp = 0
    stack[sp] = c
    sp += 1
    i += 1
    # inside containers: a tolerant walk that checks bracket pairing and strings
    while i < n:
        c = buf[i]
        if c == 34:
            j, _ = scan_string(buf, i)
            if j < 0:
                return -2
            i = j
            continue
        if c == 123 or c == 91:
            if sp >= stack.shape[0]:
                return -3
            stack[sp] = c
            sp += 1
        elif c == 125 or c == 93:
            want = 123 if c == 125 else 91
            if stack[sp - 1] != want:
                return -1
            sp -= 1
            if sp == 0:
                return i + 1
        i += 1
    return -2


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
        v, j, exact = parse_number(buf, i)
        if j < 0:
            return 0, j
        if exact and abs(v) < 9.2e18:
            return np.int64(v), j
        return fnv1a(buf, i, j - i), j
    j = skip_value(buf, i, stack)
    if j < 0:
        return 0, j
    return fnv1a(buf, i, j - i), j


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def scan_event(buf, i, k, ii, ss, ff, stack, spans_mode=False):
    """Scan the event object starting at ``buf[i] == '{'`` into row k.

    Returns (end, status) with status OK, CUT (bytes ended inside) or a
    negative syntax error code.  ``spans_mode`` (samples and stack frames): the
    value of ``sf`` or ``parent`` is kept as a byte span (``I_ID`` offset, ``S_BP``
    length: a string's inside, any other value's text) with FL_ID, and the keys
    id, id2, bind_id, bp and args are not read.
    """
    n = buf.shape[0]
    _blank_row(i, k, ii, ss, ff)
    flags = 0
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
        c = buf[i]
        if key == K_PH or key == K_BP or key == K_S:
            if c == 34:
                j, _ = scan_string(buf, i)
                if j < 0:
                    return -2, CUT
                # exactly one character; "XX" is no X (PH_LONG: an unknown phase), "" none
                v = buf[i + 1] if j - i == 3 else (PH_NONE if j - i == 2 else PH_LONG)
                if key != K_PH and v == PH_LONG:
                    v = 0
                if key == K_PH:
                    ss[k, S_PH] = v
                elif key == K_BP:
                    ss[k, S_BP] = v
                else:
                    ss[k, S_SCOPE] = v
                i = j
            else:
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
                i = j
        elif key == K_NAME or key == K_CAT:
            if c == 34:
                j, esc = scan_string(buf, i)
                if j < 0:
                    return -2, CUT
                if key == K_NAME:
                    ii[k, I_NAME_OFF] = i + 1
                    ss[k, S_NAME_LEN] = min(j - i - 2, 2147483647)
                    flags |= FL_NAME
                    if esc:
                        flags |= FL_NAME_ESC
                else:
                    ii[k, I_CAT_OFF] = i + 1
                    ss[k, S_CAT_LEN] = min(j - i - 2, 2147483647)
                i = j
            else:  # a non-string name: keep its raw JSON text as the name
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
                if key == K_NAME:
                    ii[k, I_NAME_OFF] = i
                    ss[k, S_NAME_LEN] = min(j - i, 2147483647)
                    flags |= FL_NAME
                i = j
        elif key == K_PID or key == K_TID:
            if c == 34:
                j, _ = scan_string(buf, i)
                if j < 0:
                    return -2, CUT
                h = fnv1a(buf, i + 1, j - i - 2)
                flags |= FL_PID_STR if key == K_PID else FL_TID_STR
                i = j
            else:
                v, j, exact = parse_number(buf, i)
                if j < 0:
                    if j == -2:
                        return -2, CUT
                    jj = skip_value(buf, i, stack)
                    if jj < 0:
                        return (-2, CUT) if jj == -2 else (i, ERR_SYNTAX)
                    h = fnv1a(buf, i, jj - i)
                    flags |= FL_PID_STR if key == K_PID else FL_TID_STR
                    j = jj
                elif exact and v == np.floor(v) and abs(v) < 9.2e18:
                    h = np.int64(v)
                else:
                    h = fnv1a(buf, i, j - i)
                i = j
            if key == K_PID:
                ii[k, I_PID] = h
                flags |= FL_PID
            else:
                ii[k, I_TID] = h
                flags |= FL_TID
        elif key == K_TS or key == K_DUR or key == K_TDUR:
            col = F_TS if key == K_TS else (F_DUR if key == K_DUR else F_TDUR)
            bit = FL_TS if key == K_TS else (FL_DUR if key == K_DUR else FL_TDUR)
            if c == 45 and i + 1 < n and buf[i + 1] == 73:  # -Infinity: like Infinity, not a time
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX)
                ff[k, col] = -np.inf
                flags |= bit
                i = j
            elif c == 45 or 48 <= c <= 57:
                v, j, exact = parse_number(buf, i)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX)
                ss[k, S_NUM_REL + col] = min(i - ii[k, I_EV_OFF], 2147483647)
                ss[k, S_NUM_LEN + col] = min(j - i, 2147483647)
                ff[k, col] = v
                flags |= bit
                if not exact:
                    flags |= FL_SLOW
                i = j
            elif c == 78 or c == 73:
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX)
                ff[k, col] = np.nan if c == 78 else np.inf
                flags |= bit
                i = j
            else:  # a string or other value: let Python have a look
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
                if c == 34:
                    flags |= bit | FL_SLOW
                    ss[k, S_NUM_REL + col] = min(i + 1 - ii[k, I_EV_OFF], 2147483647)
                    ss[k, S_NUM_LEN + col] = min(max(j - i - 2, 0), 2147483647)
                i = j
        elif key == K_ARGS:
            j = skip_value(buf, i, stack)
            if j < 0:
                return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
            ii[k, I_ARGS_OFF] = i
            ss[k, S_ARGS_LEN] = min(j - i, 2147483647)
            i = j
        elif key == K_ID or key == K_ID2 or key == K_BIND_ID:
            h, j = _scan_scalar_id(buf, i, stack)
            if j < 0:
                return (-2, CUT) if j == -2 else (i, ERR_SYNTAX)
            if key == K_BIND_ID:
                ii[k, I_BIND] = h
                flags |= FL_BIND
            else:
                ii[k, I_ID] = h
                flags |= FL_ID
            i = j
        elif key == K_SF or key == K_PARENT:  # spans_mode only
            if c == 34:
                j, _ = scan_string(buf, i)
                if j < 0:
                    return -2, CUT
                ii[k, I_ID] = i + 1
                ss[k, S_BP] = min(j - i - 2, 2147483647)
            else:
                j = skip_value(buf, i, stack)
                if j < 0:
                    return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
                ii[k, I_ID] = i
                ss[k, S_BP] = min(j - i, 2147483647)
            flags |= FL_ID
            i = j
        elif key == K_FLOW_IN or key == K_FLOW_OUT:
            j = skip_value(buf, i, stack)
            if j < 0:
                return (-2, CUT) if j == -2 else (i, ERR_SYNTAX)
            if c == 116:  # true
                flags |= FL_FLOW_IN if key == K_FLOW_IN else FL_FLOW_OUT
            i = j
        else:
            j = skip_value(buf, i, stack)
            if j < 0:
                return (-2, CUT) if j == -2 else (i, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP)
            i = j
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


@njit(cache=True, nogil=True)
def kept_phase(v):
    """Phases whose events get a row: B E X i I R s t f M.  Any other event (async,
    counters, samples, objects, unknown or no phase) is only counted."""
    return (v == 66 or v == 69 or v == 88 or v == 105 or v == 73 or v == 82 or v == 115
            or v == 116 or v == 102 or v == 77)


@njit(cache=True, nogil=True)
def scan_events(buf, i, ii, ss, ff, stack, max_rows, stop_at, skipped, spans_mode=False):
    """Scan events ``event, event, ... ]`` from ``i`` (just after the ``[`` or at an
    event boundary).  With ``stop_at >= 0`` it stops (status SPLIT, end = the
    position) at the first event starting at or after ``stop_at``: the parallel
    scan checks that this is exactly where the second half began.

    Only events of a `kept_phase` take a row (at most ``max_rows``, else
    ERR_TOO_MANY); the others are counted in ``skipped[phase byte]`` (0: no
    phase, PH_LONG: a phase of several characters).  Rows grow by doubling.
    Events must be separated by commas (ERR_NO_COMMA); a trailing comma and a
    missing closing bracket are tolerated (TRUNCATED; an event cut short by the
    end of the bytes is dropped).  Returns
    (ii, ss, ff, n_rows, end, status, err_pos, n_events_seen).
    ``spans_mode``: the ``samples`` array (see `scan_event`): every element gets a row.
    """
    n = buf.shape[0]
    k = 0
    seen = 0
    need_sep = False
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            return ii, ss, ff, k, i, TRUNCATED, i, seen
        c = buf[i]
        if c == 93:  # ]
            return ii, ss, ff, k, i + 1, OK, i, seen
        if c == 44:  # a comma (stray and trailing ones are tolerated)
            need_sep = False
            i += 1
            continue
        if c != 123:
            return ii, ss, ff, k, i, ERR_EVENT_NOT_OBJECT, i, seen
        if need_sep:
            return ii, ss, ff, k, i, ERR_NO_COMMA, i, seen
        if stop_at >= 0 and i >= stop_at:
            return ii, ss, ff, k, i, SPLIT, i, seen
        if k >= ii.shape[0]:
            ii, ss, ff = _grow(ii, ss, ff)
        j, st = scan_event(buf, i, k, ii, ss, ff, stack, spans_mode)
        if st == CUT:
            return ii, ss, ff, k, n, TRUNCATED, i, seen
        if st != OK:
            return ii, ss, ff, k, j, st, j, seen
        v = ss[k, S_PH]
        if spans_mode or kept_phase(v):
            if k >= max_rows:
                return ii, ss, ff, k, i, ERR_TOO_MANY, i, seen
            ss[k, S_ORD] = min(seen, 2147483647)
            k += 1
        else:
            skipped[v] += 1
        seen += 1
        need_sep = True
        i = j


@njit(cache=True, nogil=True)
def scan_event_array(buf, i, ii, ss, ff, stack, max_rows, skipped):
    """Scan ``[ event, event, ... ]`` starting at ``buf[i] == '['`` (see scan_events)."""
    return scan_events(buf, i + 1, ii, ss, ff, stack, max_rows, -1, skipped)


@njit(cache=True, nogil=True)
def scan_events_part(buf, i, cap, max_rows, stop_at, max_nesting=MAX_NESTING):
    """`scan_events` with its own fresh arrays (one half of a parallel scan).
    Returns its results and the skipped counts."""
    stack = np.empty(max_nesting, np.uint8)
    skipped = np.zeros(256, np.int64)
    ii = np.empty((max(cap, 16), N_I), np.int64)
    ss = np.empty((max(cap, 16), N_S), np.int32)
    ff = np.empty((max(cap, 16), N_F), np.float64)
    ii, ss, ff, k, end, st, ep, seen = scan_events(buf, i, ii, ss, ff, stack, max_rows, stop_at, skipped)
    return ii, ss, ff, k, end, st, ep, seen, skipped


@njit(cache=True, nogil=True)
def _is_key(buf, i, kl, word):
    """The key string at ``buf[i]`` (its opening quote), ``kl`` bytes long, is ``word``."""
    if kl != word.shape[0]:
        return False
    for q in range(kl):
        if buf[i + 1 + q] != word[q]:
            return False
    return True


_TRACE_EVENTS = np.frombuffer(b"traceEvents", np.uint8)
_DISPLAY_TIME_UNIT = np.frombuffer(b"displayTimeUnit", np.uint8)
_SAMPLES = np.frombuffer(b"samples", np.uint8)
_STACK_FRAMES = np.frombuffer(b"stackFrames", np.uint8)

# the ``info`` array of scan_trace / scan_object_tail
INFO_DTU_OFF, INFO_DTU_LEN, INFO_DOC_END, INFO_SEEN, INFO_SAMPLES, INFO_FRAMES, INFO_CUT_EVENT = range(7)
N_INFO = 7


@njit(cache=True, nogil=True)
def _new_info():
    info = np.zeros(N_INFO, np.int64)
    info[INFO_DTU_LEN] = -1
    info[INFO_SAMPLES] = -1
    info[INFO_FRAMES] = -1
    info[INFO_CUT_EVENT] = -1
    return info


@njit(cache=True, nogil=True)
def _top_key(buf, i, ke, j, info):
    """Note a top-level key (string at i..ke) whose value spans [vstart, j):
    displayTimeUnit, samples and stackFrames (the last of each wins)."""
    kl = ke - i - 2
    v = skip_ws(buf, ke)
    v = skip_ws(buf, v + 1)  # after the colon
    if _is_key(buf, i, kl, _DISPLAY_TIME_UNIT) and buf[v] == 34:
        info[INFO_DTU_OFF] = v + 1
        info[INFO_DTU_LEN] = j - v - 2
    elif _is_key(buf, i, kl, _SAMPLES) and buf[v] == 91:
        info[INFO_SAMPLES] = v
    elif _is_key(buf, i, kl, _STACK_FRAMES) and buf[v] == 123:
        info[INFO_FRAMES] = v


@njit(cache=True, nogil=True)
def scan_object_tail(buf, i, info, max_nesting=MAX_NESTING):
    """After the ``]`` of ``traceEvents`` in the object form: the remaining
    ``, "key": value`` pairs up to the closing ``}`` (noted in ``info`` as by
    `scan_trace`).  Returns (status, err_pos): TRUNCATED when the bytes end
    first (the events are complete then), a negative code on a syntax error (a
    second ``traceEvents`` is ERR_DUP_EVENTS); INFO_DOC_END is set just after
    the closing brace."""
    n = buf.shape[0]
    stack = np.empty(max_nesting, np.uint8)
    need_sep = True
    info[INFO_DOC_END] = n
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            return TRUNCATED, i
        if buf[i] == 125:
            info[INFO_DOC_END] = i + 1
            return OK, i
        if buf[i] == 44:
            need_sep = False
            i += 1
            continue
        if buf[i] != 34:
            return ERR_SYNTAX, i
        if need_sep:
            return ERR_NO_COMMA, i
        ke, _ = scan_string(buf, i)
        if ke < 0:
            return TRUNCATED, i
        if _is_key(buf, i, ke - i - 2, _TRACE_EVENTS):
            return ERR_DUP_EVENTS, i
        v = skip_ws(buf, ke)
        if v >= n:
            return TRUNCATED, v
        if buf[v] != 58:
            return ERR_SYNTAX, v
        v = skip_ws(buf, v + 1)
        j = skip_value(buf, v, stack)
        if j == -2:
            return TRUNCATED, v
        if j < 0:
            return (ERR_SYNTAX if j == -1 else ERR_TOO_DEEP), v
        _top_key(buf, i, ke, j, info)
        i = j
        need_sep = True


@njit(cache=True, nogil=True)
def scan_trace(buf, cap, max_rows, max_nesting=MAX_NESTING):
    """Scan a whole Chrome trace (object or array form).

    Returns (ii, ss, ff, n_rows, status, err_pos, info, skipped): the event rows
    (see `scan_events`), the status and where it arose, ``info`` (the byte span of
    ``displayTimeUnit`` (len -1 if absent), the end of the JSON document -- the
    caller looks for trailing data there --, the number of events seen, where
    the ``samples`` array and the ``stackFrames`` object start (-1 if absent),
    where an event cut short by the end of the bytes starts (-1 if none)),
    and the per-phase counts of the events without a row.
    """
    n = buf.shape[0]
    stack = np.empty(max_nesting, np.uint8)
    skipped = np.zeros(256, np.int64)
    info = _new_info()
    info[INFO_DOC_END] = n
    ii = np.empty((max(cap, 16), N_I), np.int64)
    ss = np.empty((max(cap, 16), N_S), np.int32)
    ff = np.empty((max(cap, 16), N_F), np.float64)
    i = 0
    # UTF-8 byte order mark
    if n >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        i = 3
    i = skip_ws(buf, i)
    if i >= n:
        return ii, ss, ff, 0, ERR_NOT_JSON, i, info, skipped
    if buf[i] == 91:
        ii, ss, ff, k, end, st, ep, seen = scan_event_array(buf, i, ii, ss, ff, stack, max_rows, skipped)
        info[INFO_DOC_END] = end
        info[INFO_SEEN] = seen
        if st == TRUNCATED and ep < n:
            info[INFO_CUT_EVENT] = ep
        return ii, ss, ff, k, st, ep, info, skipped
    if buf[i] != 123:
        return ii, ss, ff, 0, ERR_NOT_JSON, i, info, skipped
    # object form: find "traceEvents", note the keys in info, skip the rest
    i += 1
    found = False
    k_events = 0
    need_sep = False
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, i, info, skipped
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped
        if buf[i] == 125:
            break
        if buf[i] == 44:
            need_sep = False
            i += 1
            continue
        if buf[i] != 34:
            return ii, ss, ff, k_events, ERR_SYNTAX, i, info, skipped
        if need_sep:
            return ii, ss, ff, k_events, ERR_NO_COMMA, i, info, skipped
        ke, _ = scan_string(buf, i)
        if ke < 0:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, i, info, skipped
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped
        is_events = _is_key(buf, i, ke - i - 2, _TRACE_EVENTS)
        if is_events and found:
            return ii, ss, ff, k_events, ERR_DUP_EVENTS, i, info, skipped
        v = skip_ws(buf, ke)
        if v >= n or buf[v] != 58:
            if v >= n and found:
                return ii, ss, ff, k_events, TRUNCATED, v, info, skipped
            return ii, ss, ff, k_events, ERR_SYNTAX if v < n else ERR_NO_EVENTS_KEY, v, info, skipped
        v = skip_ws(buf, v + 1)
        if v >= n:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, v, info, skipped
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, v, info, skipped
        need_sep = True
        if is_events and buf[v] == 91:
            ii, ss, ff, k_events, j, st, ep, seen = scan_event_array(buf, v, ii, ss, ff, stack, max_rows,
                                                                     skipped)
            info[INFO_SEEN] = seen
            found = True
            if st == TRUNCATED and ep < n:
                info[INFO_CUT_EVENT] = ep
            if st != OK:
                return ii, ss, ff, k_events, st, ep, info, skipped
            i = j
            continue
        j = skip_value(buf, v, stack)
        if j < 0:
            if j == -2:
                if found:
                    return ii, ss, ff, k_events, TRUNCATED, v, info, skipped
                return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, v, info, skipped
            return ii, ss, ff, k_events, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP, v, info, skipped
        _top_key(buf, i, ke, j, info)
        i = j
    info[INFO_DOC_END] = i + 1
    if not found:
        return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped
    return ii, ss, ff, k_events, OK, i, info, skipped


@njit(cache=True, nogil=True)
def scan_samples(buf, i, cap, max_rows, max_nesting=MAX_NESTING):
    """Rows for the elements of the ``samples`` array at ``buf[i] == '['``
    (`scan_events` in spans mode: ``sf`` as a span).  Returns
    (ii, ss, ff, n_rows, end, status, err_pos)."""
    stack = np.empty(max_nesting, np.uint8)
    skipped = np.zeros(256, np.int64)
    ii = np.empty((max(cap, 16), N_I), np.int64)
    ss = np.empty((max(cap, 16), N_S), np.int32)
    ff = np.empty((max(cap, 16), N_F), np.float64)
    ii, ss, ff, k, end, st, ep, _ = scan_events(buf, i + 1, ii, ss, ff, stack, max_rows, -1, skipped, True)
    return ii, ss, ff, k, end, st, ep


@njit(cache=True, nogil=True)
def scan_stack_frames(buf, i, cap, max_rows, max_nesting=MAX_NESTING):
    """Rows for the ``"id": {frame}`` pairs of the ``stackFrames`` object at
    ``buf[i] == '{'``: the frame's name (or none), its ``parent`` as a span
    (``I_ID``/``S_BP``, FL_ID) and the id's own span in ``I_ARGS_OFF``/``S_ARGS_LEN``.
    A value that is not an object is a frame with neither name nor parent.
    Returns (ii, ss, ff, n_rows, end, status, err_pos)."""
    n = buf.shape[0]
    stack = np.empty(max_nesting, np.uint8)
    ii = np.empty((max(cap, 16), N_I), np.int64)
    ss = np.empty((max(cap, 16), N_S), np.int32)
    ff = np.empty((max(cap, 16), N_F), np.float64)
    k = 0
    i += 1
    need_sep = False
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            return ii, ss, ff, k, n, TRUNCATED, i
        c = buf[i]
        if c == 125:
            return ii, ss, ff, k, i + 1, OK, i
        if c == 44:
            need_sep = False
            i += 1
            continue
        if c != 34:
            return ii, ss, ff, k, i, ERR_SYNTAX, i
        if need_sep:
            return ii, ss, ff, k, i, ERR_NO_COMMA, i
        ke, _ = scan_string(buf, i)
        if ke < 0:
            return ii, ss, ff, k, n, TRUNCATED, i
        v = skip_ws(buf, ke)
        if v >= n:
            return ii, ss, ff, k, n, TRUNCATED, v
        if buf[v] != 58:
            return ii, ss, ff, k, v, ERR_SYNTAX, v
        v = skip_ws(buf, v + 1)
        if v >= n:
            return ii, ss, ff, k, n, TRUNCATED, v
        if k >= max_rows:
            return ii, ss, ff, k, v, ERR_TOO_MANY, v
        if k >= ii.shape[0]:
            ii, ss, ff = _grow(ii, ss, ff)
        if buf[v] == 123:
            j, st = scan_event(buf, v, k, ii, ss, ff, stack, True)
            if st == CUT:
                return ii, ss, ff, k, n, TRUNCATED, v
            if st != OK:
                return ii, ss, ff, k, j, st, j
        else:
            j = skip_value(buf, v, stack)
            if j == -2:
                return ii, ss, ff, k, n, TRUNCATED, v
            if j < 0:
                return ii, ss, ff, k, v, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP, v
            _blank_row(v, k, ii, ss, ff)
            ss[k, S_EV_LEN] = min(j - v, 2147483647)
        ii[k, I_ARGS_OFF] = i + 1
        ss[k, S_ARGS_LEN] = min(ke - i - 2, 2147483647)
        k += 1
        i = j
        need_sep = True


@njit(cache=True, nogil=True)
def first_non_ws(buf, i):
    """The first byte at or after ``i`` that is not JSON whitespace, or -1."""
    i = skip_ws(buf, i)
    return i if i < buf.shape[0] else -1


@njit(cache=True, nogil=True)
def line_col(buf, pos):
    """(line, column) of byte ``pos``, both from 1: one pass over ``buf[:pos]``
    counting newlines, no memory per line."""
    line = 1
    last = -1
    for q in range(min(pos, buf.shape[0])):
        if buf[q] == 10:
            line += 1
            last = q
    return line, pos - last


@njit(cache=True, nogil=True)
def span_key_hash(buf, off, ln):
    """A cheap hash of a byte span for interning: FNV-1a over its length and at
    most its first and last 16 bytes.  Callers verify equality byte by byte, so
    a weak hash costs probes, never correctness; names that differ only in the
    middle just probe more (`intern_spans` bounds that work)."""
    h = np.uint64(14695981039346656037) ^ np.uint64(ln)
    p = np.uint64(1099511628211)
    if ln <= 32:
        for k in range(off, off + ln):
            h = (h ^ np.uint64(buf[k])) * p
    else:
        for k in range(off, off + 16):
            h = (h ^ np.uint64(buf[k])) * p
        for k in range(off + ln - 16, off + ln):
            h = (h ^ np.uint64(buf[k])) * p
    return np.int64(h)


@njit(cache=True, nogil=True)
def _mix64(x):
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def span_full_hash(buf, off, ln, seed):
    """A keyed hash of every byte of a span: FNV-1a from a seeded basis, then
    `_mix64`.  With a random seed a file cannot be made to collide on purpose."""
    h = np.uint64(14695981039346656037) ^ np.uint64(seed) ^ np.uint64(ln)
    p = np.uint64(1099511628211)
    for k in range(off, off + ln):
        h = (h ^ np.uint64(buf[k])) * p
    return np.int64(_mix64(h))


@njit(cache=True, nogil=True)
def _intern_spans_pass(buf, off, ln, valid, seed, full, budget):
    """One interning pass (see `intern_spans`); with ``full`` False it gives up
    (returns nid = -1) once probing and failed byte comparisons exceed ``budget``."""
    n = off.shape[0]
    size = 16
    while size < 2 * n + 16:
        size *= 2
    table = np.full(size, -1, np.int64)  # row index of the representative
    hashes = np.zeros(size, np.int64)
    ids = np.full(n, -1, np.int32)
    first = np.empty(n, np.int64)
    idmap = np.full(size, -1, np.int32)
    nid = 0
    mask = size - 1
    work = 0
    for k in range(n):
        if not valid[k]:
            continue
        h = span_full_hash(buf, off[k], ln[k], seed) if full else span_key_hash(buf, off[k], ln[k])
        slot = h & mask
        while True:
            r = table[slot]
            if r < 0:
                table[slot] = k
                hashes[slot] = h
                idmap[slot] = nid
                ids[k] = nid
                first[nid] = k
                nid += 1
                break
            if hashes[slot] == h and ln[r] == ln[k]:
                same = True
                a = off[r]
                b = off[k]
                for q in range(ln[k]):
                    if buf[a + q] != buf[b + q]:
                        same = False
                        work += q
                        break
                if same:
                    ids[k] = idmap[slot]
                    break
            work += 1
            if not full and work > budget:
                return ids, first, -1
            slot = (slot + 1) & mask
    return ids, first, nid


@njit(cache=True, nogil=True)
def intern_spans(buf, off, ln, valid, seed=0):
    """Give equal byte strings ``buf[off[k]:off[k]+ln[k]]`` the same id.

    Open addressing with byte-wise verification, so ids are exact (collisions
    cannot merge different strings).  Ids are assigned in order of first
    appearance, whatever the hash.  Returns (ids, first) where ``first[id]`` is the
    row that introduced the string; rows with ``valid[k] == False`` get id -1.

    Linear time: the cheap `span_key_hash` serves real names; if probing and
    failed comparisons pass 2 x (bytes + rows) -- many names that differ only in
    the middle, or built to collide -- the pass restarts with the keyed
    `span_full_hash` (pass a random ``seed``), whose expected probes are O(1).
    """
    budget = 1024
    for k in range(off.shape[0]):
        if valid[k]:
            budget += 2 * (ln[k] + 1)
    ids, first, nid = _intern_spans_pass(buf, off, ln, valid, seed, False, budget)
    if nid < 0:
        ids, first, nid = _intern_spans_pass(buf, off, ln, valid, seed, True, 0)
    return ids, first[:nid].copy()


@njit(cache=True, nogil=True)
def intern_pairs(a, b, seed=0):
    """Ids for distinct (a[k], b[k]) int64 pairs, in order of first appearance.

    The slot comes from a keyed mix of both values (pass a random ``seed``), so
    ids chosen to share low or high bits do not pile up in one probe chain.
    Returns (ids, first_row)."""
    n = a.shape[0]
    size = 16
    while size < 2 * n + 16:
        size *= 2
    mask = size - 1
    table = np.full(size, -1, np.int64)
    idmap = np.full(size, -1, np.int32)
    ids = np.empty(n, np.int32)
    first = np.empty(n, np.int64)
    nid = 0
    s0 = _mix64(np.uint64(seed) ^ np.uint64(0x632BE59BD9B4E019))
    for k in range(n):
        h = _mix64(_mix64(np.uint64(a[k]) ^ s0) + np.uint64(b[k]))
        slot = np.int64(h & np.uint64(mask))
        while True:
            r = table[slot]
            if r < 0:
                table[slot] = k
                idmap[slot] = nid
                ids[k] = nid
                first[nid] = k
                nid += 1
                break
            if a[r] == a[k] and b[r] == b[k]:
                ids[k] = idmap[slot]
                break
            slot = (slot + 1) & mask
    return ids, first[:nid].copy()


@njit(cache=True, nogil=True)
def gather_spans(buf, off, ln):
    """Concatenate byte spans into one blob; returns (blob, ptr)."""
    n = off.shape[0]
    ptr = np.zeros(n + 1, np.int64)
    for k in range(n):
        ptr[k + 1] = ptr[k] + ln[k]
    blob = np.empty(ptr[n], np.uint8)
    for k in range(n):
        blob[ptr[k]: ptr[k + 1]] = buf[off[k]: off[k] + ln[k]]
    return blob, ptr


@njit(cache=True, nogil=True)
def renumber_by_first_use(ids, n_ids):
    """New ids 0..k-1 in order of first appearance in ``ids`` (all >= 0).

    Returns (new_ids int32, old_of_new int64)."""
    remap = np.full(n_ids, -1, np.int32)
    old = np.empty(n_ids, np.int64)
    out = np.empty(ids.shape[0], np.int32)
    k = 0
    for i in range(ids.shape[0]):
        v = ids[i]
        if remap[v] < 0:
            remap[v] = k
            old[k] = v
            k += 1
        out[i] = remap[v]
    return out, old[:k].copy()


@njit(cache=True, nogil=True)
def gather_fixed(buf, off, ln, width):
    """Byte spans copied into a zero-padded (n, width) matrix (a fixed-width
    bytes array for numpy's bulk string→float conversion)."""
    n = off.shape[0]
    out = np.zeros((n, width), np.uint8)
    for r in range(n):
        m = min(ln[r], width)
        for q in range(m):
            out[r, q] = buf[off[r] + q]
    return out


JSON_OK = 0
JSON_INVALID = 1
JSON_TOO_DEEP = 2
JSON_TOO_BIG = 3


@njit(cache=True, nogil=True)
def _json_number_end(buf, i, end):
    """End of the JSON number at i (Python's grammar:
    ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?``), or -1."""
    if i < end and buf[i] == 45:
        i += 1
    if i >= end:
        return -1
    if buf[i] == 48:
        i += 1
    elif 49 <= buf[i] <= 57:
        while i < end and 48 <= buf[i] <= 57:
            i += 1
    else:
        return -1
    if i < end and buf[i] == 46:
        i += 1
        if i >= end or not (48 <= buf[i] <= 57):
            return -1
        while i < end and 48 <= buf[i] <= 57:
            i += 1
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        if i < end and (buf[i] == 43 or buf[i] == 45):
            i += 1
        if i >= end or not (48 <= buf[i] <= 57):
            return -1
        while i < end and 48 <= buf[i] <= 57:
            i += 1
    return i


@njit(cache=True, nogil=True)
def _json_string_end(buf, i, end):
    """End of the JSON string whose quote is at i, as Python's strict ``json``
    reads it (no raw control characters; escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), or -1."""
    i += 1
    while i < end:
        c = buf[i]
        if c == 34:
            return i + 1
        if c < 32:
            return -1
        if c == 92:
            if i + 1 >= end:
                return -1
            e = buf[i + 1]
            if e == 117:  # \uXXXX
                if i + 6 > end:
                    return -1
                for q in range(i + 2, i + 6):
                    h = buf[q]
                    if not (48 <= h <= 57 or 65 <= h <= 70 or 97 <= h <= 102):
                        return -1
                i += 6
                continue
            if not (e == 34 or e == 92 or e == 47 or e == 98 or e == 102 or e == 110 or e == 114 or e == 116):
                return -1
            i += 2
            continue
        i += 1
    return -1


@njit(cache=True, nogil=True)
def json_value_status(buf, off, ln, max_depth, stack):
    """Whether ``buf[off:off+ln]`` is one JSON value that Python's ``json.loads``
    reads (NaN, Infinity and -Infinity included), nested at most ``max_depth``
    deep: JSON_OK, JSON_INVALID or JSON_TOO_DEEP.  Iterative, linear; ``stack``
    needs ``max_depth`` entries."""
    end = off + ln
    i = skip_ws(buf[:end], off)
    sp = 0
    # state: 0 expect a value, 1 after a value, 2 expect a key (or '}' right after '{'),
    #        3 expect a key (after ','), 4 expect a value ('[' just opened: ']' allowed)
    state = 0
    while True:
        while i < end and _ws(buf[i]):
            i += 1
        if state == 1:
            if sp == 0:
                return JSON_OK if i == end else JSON_INVALID
            if i >= end:
                return JSON_INVALID
            c = buf[i]
            if c == 44:
                state = 3 if stack[sp - 1] == 123 else 0
                i += 1
                continue
            if (c == 125 and stack[sp - 1] == 123) or (c == 93 and stack[sp - 1] == 91):
                sp -= 1
                i += 1
                continue
            return JSON_INVALID
        if i >= end:
            return JSON_INVALID
        c = buf[i]
        if state == 2 or state == 3:
            if c == 125 and state == 2:
                sp -= 1
                i += 1
                state = 1
                continue
            if c != 34:
                return JSON_INVALID
            j = _json_string_end(buf, i, end)
            if j < 0:
                return JSON_INVALID
            i = j
            while i < end and _ws(buf[i]):
                i += 1
            if i >= end or buf[i] != 58:
                return JSON_INVALID
            i += 1
            state = 0
            continue
        if c == 93 and state == 4:
            sp -= 1
            i += 1
            state = 1
            continue
        if c == 123 or c == 91:
            if sp >= max_depth:
                return JSON_TOO_DEEP
            stack[sp] = c
            sp += 1
            i += 1
            state = 2 if c == 123 else 4
            continue
        if c == 34:
            j = _json_string_end(buf, i, end)
        elif c == 45 and i + 1 < end and buf[i + 1] == 73:
            j = i + 9 if i + 9 <= end and _literal_len(buf[:end], i + 1) == 8 else -1
        elif c == 45 or 48 <= c <= 57:
            j = _json_number_end(buf, i, end)
        elif c == 116 or c == 102 or c == 110 or c == 78 or c == 73:
            ln2 = _literal_len(buf[:end], i)
            j = i + ln2 if ln2 > 0 else -1
        else:
            j = -1
        if j < 0:
            return JSON_INVALID
        i = j
        state = 1


@njit(cache=True, nogil=True)
def json_spans_status(buf, off, ln, max_depth, max_len):
    """`json_value_status` of each span (JSON_TOO_BIG when longer than ``max_len``)."""
    n = off.shape[0]
    out = np.zeros(n, np.int8)
    stack = np.empty(max(max_depth, 1), np.uint8)
    for k in range(n):
        if ln[k] > max_len:
            out[k] = JSON_TOO_BIG
        else:
            out[k] = json_value_status(buf, off[k], ln[k], max_depth, stack)
    return out
