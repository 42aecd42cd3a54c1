"""Chrome Trace Event ``X`` events written as bytes, a chunk of calls at a time
(`io.chrome_writer`: the streamed export that Perfetto and speedscope open).

Each call becomes

    {"pid": P, "tid": T, "ts": TS, "ph": "X", "cat": "FEE", "name": NAME, "dur": D[, "args": A]}

with ``TS`` and ``D`` in microseconds with exactly three decimals (nanoseconds: the
importer's resolution), ``NAME`` the function's name already encoded as a JSON string
(``name_blob[name_ptr[f]:name_ptr[f+1]]``) and ``A`` the call's argument object as
recorded (``args_blob[args_ptr[s]:args_ptr[s+1]]``, slot ``s = arg_slot[call]``, none
when -1).  Events are separated by ``", "``.  A time is written as
``sign, ⌊|t|⌋, ".", round(frac(|t|) · 1000)`` with the carry when the fraction rounds
to 1000, so an exported time is within 0.5 ns of the stored one.
"""
import numpy as np
from numba import njit

#: bytes an event takes besides its name and arguments, at most (keys, 4 numbers of at
#: most 24 characters each, separators)
EVENT_FIXED_BYTES = 200

_PID = np.frombuffer(b'{"pid": ', np.uint8)
_TID = np.frombuffer(b', "tid": ', np.uint8)
_TS = np.frombuffer(b', "ts": ', np.uint8)
_NAME = np.frombuffer(b', "ph": "X", "cat": "FEE", "name": ', np.uint8)
_DUR = np.frombuffer(b', "dur": ', np.uint8)
_ARGS = np.frombuffer(b', "args": ', np.uint8)


@njit(cache=True, nogil=True)
def _put(out, p, lit):
    for i in range(lit.shape[0]):
        out[p + i] = lit[i]
    return p + lit.shape[0]


@njit(cache=True, nogil=True)
def _put_int(out, p, v):
    """Decimal digits of the integer ``v`` (a leading '-' when negative) at ``p``."""
    if v < 0:
        out[p] = 45  # '-'
        p += 1
        v = -v
    digits = np.empty(20, np.uint8)
    n = 0
    while True:
        digits[n] = 48 + v % 10
        n += 1
        v //= 10
        if v == 0:
            break
    for i in range(n):
        out[p + i] = digits[n - 1 - i]
    return p + n


@njit(cache=True, nogil=True)
def _put_time(out, p, t):
    """``t`` (µs) with three decimals (see module doc)."""
    if t < 0:
        out[p] = 45
        p += 1
        t = -t
    whole = np.floor(t)
    frac = np.int64(np.rint((t - whole) * 1000.0))
    w = np.int64(whole)
    if frac >= 1000:
        w += 1
        frac -= 1000
    p = _put_int(out, p, w)
    out[p] = 46  # '.'
    out[p + 1] = 48 + frac // 100
    out[p + 2] = 48 + (frac // 10) % 10
    out[p + 3] = 48 + frac % 10
    return p + 4


@njit(cache=True, nogil=True)
def x_events(calls, start, dur, origin, thread, func, pid_of_thread, tid_of_thread, name_blob, name_ptr,
             arg_slot, args_blob, args_ptr, leading_sep, out):
    """Write the ``X`` events of ``calls`` (in that order) into ``out`` (uint8, at least
    `EVENT_FIXED_BYTES` a call plus their names' and arguments' bytes); ``leading_sep``:
    a ", " before the first one too.  Returns the number of bytes written."""
    p = 0
    for k in range(calls.shape[0]):
        c = calls[k]
        if k > 0 or leading_sep:
            out[p] = 44  # ','
            out[p + 1] = 32
            p += 2
        th = thread[c]
        p = _put(out, p, _PID)
        p = _put_int(out, p, pid_of_thread[th])
        p = _put(out, p, _TID)
        p = _put_int(out, p, tid_of_thread[th])
        p = _put(out, p, _TS)
        p = _put_time(out, p, start[c] + origin)
        p = _put(out, p, _NAME)
        f = func[c]
        for i in range(name_ptr[f], name_ptr[f + 1]):
            out[p] = name_blob[i]
            p += 1
        p = _put(out, p, _DUR)
        p = _put_time(out, p, dur[c])
        s = arg_slot[c]
        if s >= 0:
            p = _put(out, p, _ARGS)
            for i in range(args_ptr[s], args_ptr[s + 1]):
                out[p] = args_blob[i]
                p += 1
        out[p] = 125  # '}'
        p += 1
    return p
