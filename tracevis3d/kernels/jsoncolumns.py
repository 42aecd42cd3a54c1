"""Long flat arrays of numbers in JSON bytes, read straight into numpy (`number_arrays`).

A profile in a columnar JSON format (the Firefox Profiler's processed format: every table a
set of columns) is mostly long arrays of numbers: a sample's stack and time, a stack's prefix
and frame.  A JSON parser makes a Python object of each number and the reader then converts
the lists back into arrays; here those arrays are parsed from the bytes into numpy pools
directly, and the parser (orjson) reads only what is left (`profile_json.parse_json_columns`).

Only what is certainly read the way orjson reads it is taken: an array whose elements are all
JSON numbers or ``null`` (RFC 8259's grammar, ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``),
with at least ``min_len`` elements, where each integer has at most 18 digits (exact in int64)
and each number with a fraction or an exponent is exact by the fast path of Clinger's algorithm
(`jsontokens.fast_path_value`: a decimal mantissa m < 2^53 and a power of ten 10^|e| with
|e| <= 22 are both exact doubles, so one IEEE multiply or divide gives the correctly rounded
value, as orjson gives).  Any other array (one
holding a string, a literal other than null, a nested value, a number outside those bounds or
malformed) is left in the text for the parser, which reads or refuses it as before.  Strings are
skipped whole (`jsontokens.scan_string`), so brackets inside them are never taken for arrays.
"""
import numpy as np
from numba import njit

from .jsontokens import fast_path_value, scan_string

#: element kinds in the ``kind`` pool
K_INT, K_FLOAT, K_NULL = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _number(buf, i, n):
    """The JSON number at ``buf[i]`` (a '-' or a digit): (end, kind, int value, float value);
    end -1 when it is not one that is taken (malformed, more than 18 integer digits, or a
    value the fast path cannot give exactly)."""
    j = i
    neg = False
    if buf[j] == 45:
        neg = True
        j += 1
        if j >= n:
            return -1, K_INT, 0, 0.0
    c = buf[j]
    if c == 48:  # a leading zero stands alone
        j += 1
        m = np.int64(0)
        nd = 1
    elif 49 <= c <= 57:
        m = np.int64(0)
        nd = 0
        while j < n:
            c = buf[j]
            if c < 48 or c > 57:
                break
            m = m * 10 + (c - 48)
            nd += 1
            j += 1
            if nd > 18:
                return -1, K_INT, 0, 0.0
    else:
        return -1, K_INT, 0, 0.0
    if j >= n:
        return -1, K_INT, 0, 0.0
    c = buf[j]
    if c != 46 and c != 101 and c != 69:  # an integer
        v = -m if neg else m
        return j, K_INT, v, float(v)
    frac = 0
    if c == 46:
        j += 1
        start = j
        while j < n:
            c = buf[j]
            if c < 48 or c > 57:
                break
            if nd >= 18:
                return -1, K_FLOAT, 0, 0.0
            m = m * 10 + (c - 48)
            if m > 0:
                nd += 1
            frac += 1
            j += 1
        if j == start or j >= n:
            return -1, K_FLOAT, 0, 0.0
        c = buf[j]
    e = 0
    if c == 101 or c == 69:
        j += 1
        if j >= n:
            return -1, K_FLOAT, 0, 0.0
        es = 1
        if buf[j] == 43 or buf[j] == 45:
            es = -1 if buf[j] == 45 else 1
            j += 1
        start = j
        while j < n:
            c = buf[j]
            if c < 48 or c > 57:
                break
            if e < 100000:
                e = e * 10 + (c - 48)
            j += 1
        if j == start or j >= n:
            return -1, K_FLOAT, 0, 0.0
        e *= es
    if m >= 9007199254740992:
        return -1, K_FLOAT, 0, 0.0
    v, exact = fast_path_value(m, e - frac)
    if not exact:
        return -1, K_FLOAT, 0, 0.0
    return j, K_FLOAT, np.int64(0), -v if neg else v


@njit(cache=True, nogil=True, inline="always")
def _ws(c):
    return c == 32 or c == 10 or c == 13 or c == 9


@njit(cache=True, nogil=True)
def number_arrays(buf, start, min_len):
    """The flat arrays of numbers and nulls in the JSON text ``buf[start:]`` with at least
    ``min_len`` elements (module docstring: which are taken).

    Returns (span, first, value, kind): array k spans bytes ``span[k, 0]`` (its ``[``) to
    ``span[k, 1]`` (after its ``]``) and its elements are pool entries ``first[k]`` to
    ``first[k + 1]``; per element its kind (`K_INT`, `K_FLOAT`, `K_NULL`) and its value: the
    int64 of an integer, the float64 of a number with a fraction or an exponent (its bits:
    ``value.view(np.float64)``), 0 for a null.  The pools are views of arrays sized for the
    most elements the bytes could hold, of which only the pages written take memory.  One pass over the
    bytes; an array that turns out not to be taken is left at the byte where that shows, and
    the pass goes on after its ``[``: every byte is read at most twice.  A string that never
    closes ends the pass (the parser reports it)."""
    n = buf.shape[0]
    cap = (n - start) // 2 + 1  # an element is a byte and a comma at least: never full (pages not
    value = np.empty(cap, np.int64)  # written cost no memory)
    fvalue = value.view(np.float64)
    kind = np.empty(cap, np.uint8)
    span = np.empty((16, 2), np.int64)
    first = np.empty(17, np.int64)
    first[0] = 0
    na = 0
    m = 0
    i = start
    while i < n:
        c = buf[i]
        if c == 34:
            j, _ = scan_string(buf, i)
            if j < 0:
                break
            i = j
            continue
        if c != 91:
            i += 1
            continue
        # an array: taken while it holds numbers and nulls only
        j = i + 1
        k = m
        ok = False
        while True:
            while j < n and _ws(buf[j]):
                j += 1
            if j >= n:
                break
            c = buf[j]
            if c == 110:  # null
                if j + 4 > n or buf[j + 1] != 117 or buf[j + 2] != 108 or buf[j + 3] != 108:
                    break
                value[k] = 0
                kind[k] = K_NULL
                j += 4
            elif c == 45 or 48 <= c <= 57:
                e, kd, iv, fv = _number(buf, j, n)
                if e < 0:
                    break
                if kd == K_INT:
                    value[k] = iv
                else:
                    fvalue[k] = fv
                kind[k] = kd
                j = e
            elif c == 93 and k == m:  # an empty array
                break
            else:
                break
            k += 1
            while j < n and _ws(buf[j]):
                j += 1
            if j >= n:
                break
            c = buf[j]
            if c == 44:
                j += 1
                continue
            if c == 93:
                ok = True
                j += 1
            break
        if ok and k - m >= min_len:
            if na >= span.shape[0]:
                span2 = np.empty((2 * na, 2), np.int64)
                span2[:na] = span[:na]
                span = span2
                first2 = np.empty(2 * na + 1, np.int64)
                first2[:na + 1] = first[:na + 1]
                first = first2
            span[na, 0] = i
            span[na, 1] = j
            na += 1
            first[na] = k
            m = k
            i = j
        else:
            i += 1
    return span[:na].copy(), first[:na + 1].copy(), value[:m], kind[:m]
