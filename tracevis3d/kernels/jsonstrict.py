"""Strict JSON at the byte level, in numba, for readers that take only documents any JSON parser
takes alike (`tracevis3d.kernels.cpuprofile_scan`): white space, strings (their escapes checked;
a ``\\u`` escape of a surrogate refused), numbers (RFC 8259's grammar; an integer of at most 18
digits read), the literals, keys, whole values skipped and checked with an explicit bracket
stack (`skip_value`), lists of integers, and the document's bytes: well-formed UTF-8
(`utf8_ok`), control bytes (`control_bytes`).  Anything else is "not taken" (-1), never guessed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .jsontokens import bytes_are
from .jsontokens import scan_string as jt_scan_string
from .textscan import load_u64


@njit(cache=True, nogil=True, _nrt=False)
def utf8_ok(buf):
    """Whether ``buf`` is well-formed UTF-8 (the Unicode Standard's table 3-7: no overlong
    forms, no surrogates, nothing past U+10FFFF); ASCII 8 bytes at a time."""
    n = buf.shape[0]
    i = 0
    hi = np.uint64(0x8080808080808080)
    while i < n:
        if i + 8 <= n and load_u64(buf, i) & hi == np.uint64(0):
            i += 8
            continue
        c = buf[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            k = 1
            lo1, hi1 = 0x80, 0xBF
        elif 0xE0 <= c <= 0xEF:
            k = 2
            lo1 = 0xA0 if c == 0xE0 else 0x80
            hi1 = 0x9F if c == 0xED else 0xBF
        elif 0xF0 <= c <= 0xF4:
            k = 3
            lo1 = 0x90 if c == 0xF0 else 0x80
            hi1 = 0x8F if c == 0xF4 else 0xBF
        else:
            return False
        if i + k >= n:
            return False
        d = buf[i + 1]
        if d < lo1 or d > hi1:
            return False
        for q in range(2, k + 1):
            if buf[i + q] < 0x80 or buf[i + q] > 0xBF:
                return False
        i += k + 1
    return True


@njit(cache=True, nogil=True, _nrt=False)
def control_bytes(buf):
    """How many bytes of ``buf`` are below 0x20 (JSON allows them only as white space outside
    strings; a file without any needs no check of its strings' bytes)."""
    n = 0
    for k in range(buf.shape[0]):
        n += np.int64(buf[k] < 32)
    return n


@njit(cache=True, nogil=True, inline="always")
def skip_ws(buf, i, n):
    """The first index >= ``i`` (at most ``n``) that is not JSON white space (space, LF, CR, tab; RFC 8259 section
    2)."""
    while i < n:
        c = buf[i]
        if c != 32 and c != 10 and c != 13 and c != 9:
            break
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _hex(c):
    if 48 <= c <= 57:
        return np.int64(c - 48)
    if 97 <= c <= 102:
        return np.int64(c - 87)
    if 65 <= c <= 70:
        return np.int64(c - 55)
    return np.int64(-1)


@njit(cache=True, nogil=True, _nrt=False)
def _check_string(buf, a, b, strict):
    """Whether the string body ``buf[a:b]`` (between its quotes) is one this reader takes: its
    escapes valid (``\\u`` of a surrogate refused: the caller hands the file back), and, with
    ``strict``, no byte below 0x20."""
    x = a
    while x < b:
        c = buf[x]
        if c == 92:
            if x + 1 >= b:
                return False
            e = buf[x + 1]
            if e == 117:  # \uXXXX
                if x + 6 > b:
                    return False
                v = np.int64(0)
                for q in range(2, 6):
                    h = _hex(buf[x + q])
                    if h < 0:
                        return False
                    v = v * 16 + h
                if 0xD800 <= v <= 0xDFFF:
                    return False
                x += 6
                continue
            if not (e == 34 or e == 92 or e == 47 or e == 98 or e == 102 or e == 110 or e == 114 or e == 116):
                return False
            x += 2
            continue
        if strict and c < 32:
            return False
        x += 1
    return True


@njit(cache=True, nogil=True, inline="always")
def scan_string(buf, i, n, strict):
    """The string at ``buf[i]`` (its opening quote): (index after it, has escapes), index -1
    when it is not one this reader takes (`_check_string`)."""
    j, esc = jt_scan_string(buf, i)
    if j < 0:
        return np.int64(-1), esc
    if (esc or strict) and not _check_string(buf, i + 1, j - 1, strict):
        return np.int64(-1), esc
    return j, esc


@njit(cache=True, nogil=True, inline="always")
def _digit_run(buf, j, n):
    """The index after the run of digits at ``j`` (a fraction's or an exponent's: one at least),
    -1 when there is none."""
    if j >= n or not (48 <= buf[j] <= 57):
        return np.int64(-1)
    while j < n and 48 <= buf[j] <= 57:
        j += 1
    return j


@njit(cache=True, nogil=True, inline="always")
def scan_number(buf, i, n):
    """The JSON number at ``i``: (index after it, kind, value): kind 1 an integer of at most 18
    digits (its value), 2 any other valid number, 0 none (index -1)."""
    j = i
    neg = False
    if j < n and buf[j] == 45:
        neg = True
        j += 1
    if j >= n or not (48 <= buf[j] <= 57):
        return np.int64(-1), 0, np.int64(0)
    v = np.int64(0)
    nd = 0
    if buf[j] == 48:
        j += 1
        nd = 1
        if j < n and 48 <= buf[j] <= 57:
            return np.int64(-1), 0, np.int64(0)
    else:
        while j < n and 48 <= buf[j] <= 57:
            if nd < 18:
                v = v * 10 + np.int64(buf[j] - 48)
            nd += 1
            j += 1
    kind = 1 if nd <= 18 else 2
    if j < n and buf[j] == 46:
        j = _digit_run(buf, j + 1, n)
        if j < 0:
            return np.int64(-1), 0, np.int64(0)
        kind = 2
    if j < n and (buf[j] == 101 or buf[j] == 69):
        j += 1
        if j < n and (buf[j] == 43 or buf[j] == 45):
            j += 1
        j = _digit_run(buf, j, n)
        if j < 0:
            return np.int64(-1), 0, np.int64(0)
        kind = 2
    return j, kind, -v if neg else v


@njit(cache=True, nogil=True, inline="always")
def scan_literal(buf, i, n):
    """The literal ``true``/``false``/``null`` at ``i``: index after it, -1 when none."""
    c = buf[i]
    if c == 116 and i + 4 <= n and buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101:
        return i + 4
    if c == 102 and i + 5 <= n and buf[i + 1] == 97 and buf[i + 2] == 108 and buf[i + 3] == 115 \
            and buf[i + 4] == 101:
        return i + 5
    if c == 110 and i + 4 <= n and buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108:
        return i + 4
    return np.int64(-1)


@njit(cache=True, nogil=True, inline="always")
def scan_key(buf, i, n, strict):
    """The key at ``i`` (white space skipped) and its colon: (start, end of its body, index
    after the colon and the white space after it); start -1 when there is none or it has an
    escape (handed back: a key spelled with escapes may be one this reader reads)."""
    i = skip_ws(buf, i, n)
    if i >= n or buf[i] != 34:
        return np.int64(-1), np.int64(-1), i
    j, esc = scan_string(buf, i, n, strict)
    if j < 0 or esc:
        return np.int64(-1), np.int64(-1), i
    k = skip_ws(buf, j, n)
    if k >= n or buf[k] != 58:
        return np.int64(-1), np.int64(-1), i
    return i + 1, j - 1, skip_ws(buf, k + 1, n)


@njit(cache=True, nogil=True, inline="always")
def span_is(buf, a, b, word):
    """Whether ``buf[a:b]`` is the bytes ``word`` (`jsontokens.bytes_are`)."""
    return bytes_are(buf, a, b - a, word)


@njit(cache=True, nogil=True, _nrt=False)
def skip_value(buf, i, n, strict, stack):
    """Past the JSON value at ``i`` (no white space before it), checked; -1 when it is not valid
    JSON this reader takes (or nests deeper than ``stack`` holds)."""
    sp = 0
    while True:
        # a value
        if i >= n:
            return np.int64(-1)
        c = buf[i]
        if c == 34:
            i, _ = scan_string(buf, i, n, strict)
            if i < 0:
                return np.int64(-1)
        elif c == 45 or 48 <= c <= 57:
            i, kind, _ = scan_number(buf, i, n)
            if kind == 0:
                return np.int64(-1)
        elif c == 123 or c == 91:
            if sp >= stack.shape[0]:
                return np.int64(-1)
            stack[sp] = c
            sp += 1
            i = skip_ws(buf, i + 1, n)
            if i < n and buf[i] == c + 2:  # {} or []
                sp -= 1
                i += 1
            elif c == 123:
                a, _, i = scan_key(buf, i, n, strict)
                if a < 0:
                    return np.int64(-1)
                continue
            else:
                continue
        else:
            i = scan_literal(buf, i, n)
            if i < 0:
                return np.int64(-1)
        # after a value: close what it ends, or a comma and the next value
        while True:
            if sp == 0:
                return i
            i = skip_ws(buf, i, n)
            if i >= n:
                return np.int64(-1)
            c = buf[i]
            top = stack[sp - 1]
            if c == 44:
                i = skip_ws(buf, i + 1, n)
                if top == 123:
                    a, _, i = scan_key(buf, i, n, strict)
                    if a < 0:
                        return np.int64(-1)
                break
            if c == top + 2:
                sp -= 1
                i += 1
                continue
            return np.int64(-1)


@njit(cache=True, nogil=True, inline="always")
def after_item(buf, i, n, close):
    """After an item of an object or array: (index of the next item, or of the byte after the
    ``close`` bracket; 1 more item, 0 the end, -1 an error)."""
    i = skip_ws(buf, i, n)
    if i < n and buf[i] == 44:
        return skip_ws(buf, i + 1, n), 1
    if i < n and buf[i] == close:
        return i + 1, 0
    return i, -1


@njit(cache=True, nogil=True, _nrt=False)
def int_list(buf, i, n, out, m):
    """The JSON array of integers (of at most 18 digits) at ``i`` appended to ``out`` from ``m``:
    (index after it, count); index -1 when it is not one, -2 when ``out`` is full (the caller
    grows it and reads the array again)."""
    if i >= n or buf[i] != 91:
        return np.int64(-1), m
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        return i + 1, m
    while True:
        j, kind, v = scan_number(buf, i, n)
        if kind != 1:
            return np.int64(-1), m
        if m == out.shape[0]:
            return np.int64(-2), m
        out[m] = v
        m += 1
        i, more = after_item(buf, j, n, 93)
        if more < 0:
            return np.int64(-1), m
        if more == 0:
            return i, m
