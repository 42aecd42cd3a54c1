"""A byte-level scanner for Chrome Trace Event JSON, in numba: the document.

It walks the raw bytes once and writes the fields the model needs into flat
arrays (byte spans for strings, parsed numbers), so no Python object is ever
made per event.  It is a validating JSON scanner for the structure it walks
(objects, arrays, strings, numbers, literals); nested values it does not need
(``args``, ``stack``...) are skipped with an explicit bracket stack, never by
recursion, with a bounded nesting depth (``MAX_NESTING``).

This module: the document level -- the array and object forms (`scan_trace`), the
``traceEvents`` array (`scan_events`, and `scan_events_chunk` for a chunk of one part of a parallel
scan), the top-level keys after it (`scan_object_tail`: ``displayTimeUnit``,
``samples``, ``stackFrames``, noted in ``info``), the ``samples`` array and the
``stackFrames`` object.  One event is scanned by `jsonevent.scan_event` into the row
layout and with the status codes of `jsonevent`; the tokens are `jsontokens`'s (numbers
by the exact fast path of Clinger's algorithm).
"""
import numpy as np
from numba import njit

from .jsonevent import (CUT, ERR_DUP_EVENTS, ERR_EVENT_NOT_OBJECT, ERR_NO_COMMA, ERR_NO_EVENTS_KEY,
                        ERR_NOT_JSON, FULL, ERR_SYNTAX, ERR_TOO_DEEP, ERR_TOO_MANY, I_ARGS_OFF, N_F, N_I,
                        N_S, OK, S_ARGS_LEN, S_EV_LEN, S_ORD, S_PH, SPLIT, TRUNCATED, _blank_row,
                        _grow, kept_phase, new_key_memo, row_to_side, scan_event, scan_event_inlined, side_phase)
from .jsontokens import bytes_are, scan_string, skip_value, skip_ws
from .sidescan import side_from_row, side_phase_at
from .sideshape import side_run
from .sidetables import C_EVENTS, C_ON, fast_grown, fast_room, new_fast


MAX_NESTING = 4096


@njit(cache=True, nogil=True)
def new_side_rows(cap):
    """Empty side rows (`scan_events`) for ``cap`` events."""
    cap = max(cap, 1)
    return np.empty((cap, N_I), np.int64), np.empty((cap, N_S), np.int32), np.empty((cap, N_F), np.float64)


@njit(cache=True, nogil=True)
def scan_events(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, stop_at, skipped, spans_mode=False, seen=0,
                grow=True):
    """Scan events ``event, event, ... ]`` from ``i`` (just after the ``[`` or at an
    event boundary).  With ``stop_at >= 0`` it stops (status SPLIT, end = the
    position) at the first event starting at or after ``stop_at``: the parallel
    scan checks that this is exactly where the second half began.

    Only events of a `kept_phase` take a row (at most ``max_rows`` rows in all, else
    ERR_TOO_MANY); the others are counted in ``skipped[phase byte]`` (0: no
    phase, PH_LONG: a phase of several characters).  Counters and v1 flow events
    (`jsonevent.side_phase`) go to the compact outputs and tables ``fx`` of
    `sidescan` when it takes them (`sideshape.side_run`: an event shape or `sidescan.scan_fast`
    for those whose first key is ``ph``, `sidescan.side_from_row` after `scan_event` for the
    others), else to a side row in
    ``vi, vs, vf`` (the same columns as the rows).  Rows, side rows and ``fx``'s outputs grow
    by doubling; rows, side rows and events taken by ``fx`` count against ``max_rows``.
    Events must be separated by commas (ERR_NO_COMMA); a trailing comma and a
    missing closing bracket are tolerated (TRUNCATED; an event cut short by the
    end of the bytes is dropped).  Returns
    (ii, ss, ff, vi, vs, vf, fx, n_rows, n_side_rows, end, status, err_pos, n_events_seen).
    ``spans_mode``: the ``samples`` array (see `scan_event`): every element gets a row, none
    a side row.
    ``seen``: events seen before ``i`` (the ordinals go on from it).  ``grow=False``: when the
    rows, the side rows or ``fx``'s outputs are full, stop (status FULL, end = the next event's
    ``{``; no comma is owed there).
    """
    tab, slot, cnt, fl, ov, oi, os_, shp = fx
    keys = new_key_memo()  # the last events' keys (`jsonevent.scan_event`)
    kf0 = cnt[C_EVENTS]
    # (int64, not the literal 0 of a first call: one signature of the loop for both, compiled once)
    k = np.int64(0)
    kv = np.int64(0)
    seen = np.int64(seen)
    stop_at = np.int64(stop_at)
    while True:
        k, kv, end, st, ep, seen = _scan_events_in_place(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows,
                                                          stop_at, skipped, spans_mode, seen, keys, k, kv, kf0)
        if st != FULL or not grow:
            return ii, ss, ff, vi, vs, vf, fx, k, kv, end, st, ep, seen
        if k >= ii.shape[0]:
            ii, ss, ff = _grow(ii, ss, ff)
        if kv >= vi.shape[0] and not spans_mode:
            vi, vs, vf = _grow(vi, vs, vf)
        if cnt[C_ON] != 0 and not spans_mode and not fast_room(cnt, ov):
            ov, oi, os_ = fast_grown(cnt, ov, oi, os_)
            fx = (tab, slot, cnt, fl, ov, oi, os_, shp)
        i = end


@njit(cache=True, nogil=True, _nrt=False)
def _scan_events_in_place(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, stop_at, skipped, spans_mode, seen,
                          keys, k, kv, kf0):
    """`scan_events`' loop over the rows, side rows and ``fx``'s outputs as they are: from ``k``
    rows and ``kv`` side rows taken (``kf0``: ``fx``'s event count when the scan began), it
    stops with status FULL (end = the next event's ``{``; no comma is owed there) when one of
    them is full, for its caller to grow them and call again.  Returns (n_rows, n_side_rows, end,
    status, err_pos, n_events_seen).  Compiled without reference counting (``_nrt=False``: it
    makes no array and keeps none): around every call with an array argument numba counts a
    reference up and down, an atomic add each, which took 33 % of a scan of calls (perf, the
    10^7-call synthetic trace's first 200 MB, one thread)."""
    n = buf.shape[0]
    tab, slot, cnt, fl, ov, oi, os_, shp = fx
    fast = cnt[C_ON] != 0 and not spans_mode
    need_sep = False
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            return k, kv, i, TRUNCATED, i, seen
        c = buf[i]
        if c == 93:  # ]
            return k, kv, i + 1, OK, i, seen
        if c == 44:  # a comma (stray and trailing ones are tolerated)
            need_sep = False
            i += 1
            continue
        if c != 123:
            return k, kv, i, ERR_EVENT_NOT_OBJECT, i, seen
        if need_sep:
            return k, kv, i, ERR_NO_COMMA, i, seen
        if stop_at >= 0 and i >= stop_at:
            return k, kv, i, SPLIT, i, seen
        if k >= ii.shape[0] or (kv >= vi.shape[0] and not spans_mode) or (fast and not fast_room(cnt, ov)):
            return k, kv, i, FULL, i, seen
        kf = cnt[C_EVENTS] - kf0
        # this event and the ones after it, while the fast path takes them (a call is not sent there:
        # `side_run` takes nothing whose phase `side_phase_at` refuses, and its call passes a dozen
        # arrays, ~88 words pushed: 7 % of a scan of calls)
        if fast and k + kv + kf < max_rows and side_phase_at(buf, i) >= 0:
            p, seen, sep, taken = side_run(buf, i, seen, tab, slot, cnt, fl, ov, oi, os_, stack, shp, stop_at,
                                           max_rows - k - kv - kf)
            if taken:
                i, need_sep = p, sep
                continue
        j, st = scan_event_inlined(buf, i, k, ii, ss, ff, stack, spans_mode, keys)
        if st == CUT:
            return k, kv, n, TRUNCATED, i, seen
        if st != OK:
            return k, kv, j, st, j, seen
        v = ss[k, S_PH]
        if spans_mode or kept_phase(v):
            if k + kv + kf >= max_rows:
                return k, kv, i, ERR_TOO_MANY, i, seen
            ss[k, S_ORD] = min(seen, 2147483647)
            if not spans_mode and side_phase(v):
                if not (fast and side_from_row(buf, k, ii, ss, ff, tab, slot, cnt, fl, ov, oi, os_, shp)):
                    row_to_side(k, ii, ss, ff, kv, vi, vs, vf)
                    kv += 1
            else:
                k += 1
        else:
            skipped[v] += 1
        seen += 1
        need_sep = True
        i = j


@njit(cache=True, nogil=True)
def scan_event_array(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, skipped):
    """Scan ``[ event, event, ... ]`` starting at ``buf[i] == '['`` (see scan_events)."""
    return scan_events(buf, i + 1, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, -1, skipped)


@njit(cache=True, nogil=True)
def scan_events_chunk(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, stop_at, skipped, seen):
    """`scan_events` into the fixed rows ``ii, ss, ff``, side rows ``vi, vs, vf`` and outputs
    of ``fx`` (one chunk of a part of a parallel scan; the caller keeps the rows' columns and
    ``fx``'s outputs and calls again from ``end`` while the status is FULL).  ``seen``: events
    seen by the part before ``i``; ``max_rows``: rows (side rows, events taken by ``fx``) the
    part may still take.  Returns (n_rows, n_side_rows, end, status, err_pos, seen)."""
    _, _, _, _, _, _, _, k, kv, end, st, ep, seen = scan_events(buf, i, ii, ss, ff, vi, vs, vf, fx, stack, max_rows,
                                                                stop_at, skipped, False, seen, False)
    return k, kv, end, st, ep, seen


@njit(cache=True, nogil=True, inline="always")
def _is_key(buf, i, kl, word):
    """The key string at ``buf[i]`` (its opening quote), ``kl`` bytes long, is ``word``."""
    return bytes_are(buf, i + 1, kl, word)


_TRACE_EVENTS = np.frombuffer(b"traceEvents", np.uint8)
_DISPLAY_TIME_UNIT = np.frombuffer(b"displayTimeUnit", np.uint8)
_SAMPLES = np.frombuffer(b"samples", np.uint8)
_STACK_FRAMES = np.frombuffer(b"stackFrames", np.uint8)
_VIZTRACER_METADATA = np.frombuffer(b"viztracer_metadata", np.uint8)

# the ``info`` array of scan_trace / scan_object_tail
INFO_DTU_OFF, INFO_DTU_LEN, INFO_DOC_END, INFO_SEEN, INFO_SAMPLES, INFO_FRAMES, INFO_CUT_EVENT = range(7)
#: the byte span [INFO_VIZ_OFF, INFO_VIZ_END) of VizTracer's ``viztracer_metadata`` object (-1: absent)
INFO_VIZ_OFF, INFO_VIZ_END = 7, 8
N_INFO = 9


@njit(cache=True, nogil=True)
def _new_info():
    info = np.zeros(N_INFO, np.int64)
    info[INFO_DTU_LEN] = -1
    info[INFO_SAMPLES] = -1
    info[INFO_FRAMES] = -1
    info[INFO_CUT_EVENT] = -1
    info[INFO_VIZ_OFF] = -1
    return info


@njit(cache=True, nogil=True)
def _top_key(buf, i, ke, j, info):
    """Note a top-level key (string at i..ke) whose value spans [vstart, j):
    displayTimeUnit, samples, stackFrames and viztracer_metadata (the last of each wins)."""
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
    elif _is_key(buf, i, kl, _VIZTRACER_METADATA) and buf[v] == 123:
        info[INFO_VIZ_OFF] = v
        info[INFO_VIZ_END] = j


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
def scan_trace(buf, cap, max_rows, fx, max_nesting=MAX_NESTING):
    """Scan a whole Chrome trace (object or array form).

    Returns (ii, ss, ff, n_rows, status, err_pos, info, skipped, vi, vs, vf, n_side_rows, fx): the
    event rows (see `scan_events`), the status and where it arose, ``info`` (the byte span of
    ``displayTimeUnit`` (len -1 if absent), the end of the JSON document -- the
    caller looks for trailing data there --, the number of events seen, where
    the ``samples`` array and the ``stackFrames`` object start (-1 if absent),
    where an event cut short by the end of the bytes starts (-1 if none)),
    the per-phase counts of the events without a row, the side rows and ``fx`` (counters and
    flow events, `sidescan.new_fast`; its outputs may have grown: see `scan_events`).
    """
    n = buf.shape[0]
    stack = np.empty(max_nesting, np.uint8)
    skipped = np.zeros(256, np.int64)
    info = _new_info()
    info[INFO_DOC_END] = n
    ii = np.empty((max(cap, 16), N_I), np.int64)
    ss = np.empty((max(cap, 16), N_S), np.int32)
    ff = np.empty((max(cap, 16), N_F), np.float64)
    vi, vs, vf = new_side_rows(max(cap // 4, 16))
    kv = 0
    i = 0
    # UTF-8 byte order mark
    if n >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        i = 3
    i = skip_ws(buf, i)
    if i >= n:
        return ii, ss, ff, 0, ERR_NOT_JSON, i, info, skipped, vi, vs, vf, kv, fx
    if buf[i] == 91:
        ii, ss, ff, vi, vs, vf, fx, k, kv, end, st, ep, seen = scan_event_array(buf, i, ii, ss, ff, vi, vs, vf, fx,
                                                                                 stack, max_rows, skipped)
        info[INFO_DOC_END] = end
        info[INFO_SEEN] = seen
        if st == TRUNCATED and ep < n:
            info[INFO_CUT_EVENT] = ep
        return ii, ss, ff, k, st, ep, info, skipped, vi, vs, vf, kv, fx
    if buf[i] != 123:
        return ii, ss, ff, 0, ERR_NOT_JSON, i, info, skipped, vi, vs, vf, kv, fx
    # object form: find "traceEvents", note the keys in info, skip the rest
    i += 1
    found = False
    k_events = 0
    need_sep = False
    while True:
        i = skip_ws(buf, i)
        if i >= n:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, i, info, skipped, vi, vs, vf, kv, fx
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped, vi, vs, vf, kv, fx
        if buf[i] == 125:
            break
        if buf[i] == 44:
            need_sep = False
            i += 1
            continue
        if buf[i] != 34:
            return ii, ss, ff, k_events, ERR_SYNTAX, i, info, skipped, vi, vs, vf, kv, fx
        if need_sep:
            return ii, ss, ff, k_events, ERR_NO_COMMA, i, info, skipped, vi, vs, vf, kv, fx
        ke, _ = scan_string(buf, i)
        if ke < 0:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, i, info, skipped, vi, vs, vf, kv, fx
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped, vi, vs, vf, kv, fx
        is_events = _is_key(buf, i, ke - i - 2, _TRACE_EVENTS)
        if is_events and found:
            return ii, ss, ff, k_events, ERR_DUP_EVENTS, i, info, skipped, vi, vs, vf, kv, fx
        v = skip_ws(buf, ke)
        if v >= n or buf[v] != 58:
            if v >= n and found:
                return ii, ss, ff, k_events, TRUNCATED, v, info, skipped, vi, vs, vf, kv, fx
            return ii, ss, ff, k_events, ERR_SYNTAX if v < n else ERR_NO_EVENTS_KEY, v, info, skipped, vi, vs, vf, kv, fx
        v = skip_ws(buf, v + 1)
        if v >= n:
            if found:
                return ii, ss, ff, k_events, TRUNCATED, v, info, skipped, vi, vs, vf, kv, fx
            return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, v, info, skipped, vi, vs, vf, kv, fx
        need_sep = True
        if is_events and buf[v] == 91:
            ii, ss, ff, vi, vs, vf, fx, k_events, kv, j, st, ep, seen = scan_event_array(
                buf, v, ii, ss, ff, vi, vs, vf, fx, stack, max_rows, skipped)
            info[INFO_SEEN] = seen
            found = True
            if st == TRUNCATED and ep < n:
                info[INFO_CUT_EVENT] = ep
            if st != OK:
                return ii, ss, ff, k_events, st, ep, info, skipped, vi, vs, vf, kv, fx
            i = j
            continue
        j = skip_value(buf, v, stack)
        if j < 0:
            if j == -2:
                if found:
                    return ii, ss, ff, k_events, TRUNCATED, v, info, skipped, vi, vs, vf, kv, fx
                return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, v, info, skipped, vi, vs, vf, kv, fx
            return ii, ss, ff, k_events, ERR_SYNTAX if j == -1 else ERR_TOO_DEEP, v, info, skipped, vi, vs, vf, kv, fx
        _top_key(buf, i, ke, j, info)
        i = j
    info[INFO_DOC_END] = i + 1
    if not found:
        return ii, ss, ff, 0, ERR_NO_EVENTS_KEY, i, info, skipped, vi, vs, vf, kv, fx
    return ii, ss, ff, k_events, OK, i, info, skipped, vi, vs, vf, kv, fx


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
    vi, vs, vf = new_side_rows(1)
    ii, ss, ff, _, _, _, _, k, _, end, st, ep, _ = scan_events(buf, i + 1, ii, ss, ff, vi, vs, vf,
                                                               new_fast(1, 0, 0.0, False), stack, max_rows, -1,
                                                               skipped, True)
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
    keys = new_key_memo()
    k = np.int64(0)  # (not a literal 0: `scan_event` compiled once)
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
            j, st = scan_event(buf, v, k, ii, ss, ff, stack, True, keys)
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
