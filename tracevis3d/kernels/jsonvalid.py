"""Strict JSON validation of byte spans, in numba: does Python's ``json.loads`` read it?

`json_value_status` says whether ``buf[off:off+ln]`` (an event's ``args``, say) is one
JSON value that Python's ``json`` module reads -- JSON plus NaN, Infinity and -Infinity;
strings without raw control characters, escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX;
numbers ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?`` -- nested at most
``max_depth`` deep: JSON_OK, JSON_INVALID or JSON_TOO_DEEP.  Iterative (an explicit
bracket stack) and linear.  `json_spans_status` checks many spans at once (JSON_TOO_BIG
past a length limit): the importers drop (Chrome JSON) or reject (native files) args that
Python would not parse.
"""
import numpy as np
from numba import njit

from .jsontokens import _literal_len, _ws, skip_ws


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
