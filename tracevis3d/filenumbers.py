"""Numbers read out of a file's text: ASCII digits only, a length cap, a range.

Python's own conversions are too generous for a file someone sent: ``int(s)`` reads any
Unicode decimal digit (Arabic-Indic ``١٢``, fullwidth ``１２``) and raises ValueError past
4,300 digits; ``str.isdigit`` accepts superscripts (``"²".isdigit()``) that ``int`` refuses;
``float(s)`` reads ``nan``, ``inf``, ``1_000`` and surrounding white space; and an int of
any size, once it reaches a numpy array, raises OverflowError.  Each of those was a traceback
from `tracevis3d.load` (issue 78).  Every reader and the name parser read such numbers through
these functions instead: a text that is not a plain ASCII number of bounded length in range
gives ``default`` (the caller's "no line", "no id", or its one-line refusal), never an
exception.  Standard library only, so that every layer can use it.
"""
from __future__ import annotations

import math
import re

__all__ = ["MAX_INT_DIGITS", "MAX_HEX_DIGITS", "MAX_FLOAT_CHARS", "MAX_LINE", "ID_MODULUS", "is_digits",
           "read_int", "read_line", "read_id", "read_float"]

#: decimal digits of an integer read from a file: 18 always fit int64 (no count, line or id
#: a tool writes has more; a longer run of digits is not one of them)
MAX_INT_DIGITS = 18
#: hex digits of an id (a 64-bit address or thread handle: 16)
MAX_HEX_DIGITS = 16
#: characters of a float's text (a double needs at most ~25; zeros after the point can pad it)
MAX_FLOAT_CHARS = 64
#: the largest line or column number kept (int32, as the trace's function table stores them)
MAX_LINE = 2 ** 31 - 1
#: ids (pids, tids) are kept modulo this (past it an id could not be an int64 of the trace)
ID_MODULUS = 1 << 62

_DEC = re.compile(r"[+-]?[0-9]{1,%d}" % MAX_INT_DIGITS, re.ASCII)
_HEX = re.compile(r"(?:0[xX])?[0-9A-Fa-f]{1,%d}" % MAX_HEX_DIGITS, re.ASCII)
_ID_DEC = re.compile(r"[0-9]{1,19}", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def _text(s):
    if isinstance(s, (bytes, bytearray, memoryview)):
        try:
            return bytes(s).decode("ascii")
        except UnicodeDecodeError:
            return None
    return s if isinstance(s, str) else None


def is_digits(s) -> bool:
    """Is ``s`` (str or bytes) one or more ASCII digits 0-9, nothing else (unlike ``str.isdigit``,
    no superscripts, no other scripts' digits)?"""
    t = _text(s)
    return t is not None and _DIGITS.fullmatch(t) is not None


def read_int(s, lo: int | None = None, hi: int | None = None, default=None, *, base: int = 10):
    """The integer ``s`` (str or bytes) spells, or ``default``: base 10, ASCII digits with an
    optional sign, at most `MAX_INT_DIGITS`; base 16, ASCII hex digits with an optional ``0x``,
    at most `MAX_HEX_DIGITS`; the value within [``lo``, ``hi``] (either bound None: open).
    No white space is stripped."""
    t = _text(s)
    if t is None:
        return default
    if base == 10:
        if _DEC.fullmatch(t) is None:
            return default
        v = int(t)
    elif base == 16:
        if _HEX.fullmatch(t) is None:
            return default
        v = int(t, 16)
    else:
        raise ValueError(f"base must be 10 or 16, not {base!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        return default
    return v


def read_line(s, default: int = -1) -> int:
    """A line or column number: `read_int` within [0, `MAX_LINE`], else ``default`` (no line)."""
    return read_int(s, 0, MAX_LINE, default)


def read_id(s, default=None, *, hex_ok: bool = False):
    """A process or thread id, modulo `ID_MODULUS` (so that it fits the trace's int64 ids):
    up to 19 ASCII decimal digits; with ``hex_ok`` also ``0x`` and up to `MAX_HEX_DIGITS` hex
    digits, or bare hex digits that are not all decimal (Austin's ``T7f3a…``); else ``default``."""
    t = _text(s)
    if t is None:
        return default
    if _ID_DEC.fullmatch(t) is not None:
        return int(t) % ID_MODULUS
    if hex_ok and _HEX.fullmatch(t) is not None:
        return int(t, 16) % ID_MODULUS
    return default


def read_float(s, max_abs: float | None = None, default=None):
    """The float ``s`` (str or bytes) spells, or ``default``: ASCII decimal notation only (digits,
    one point, an exponent of at most 4 digits; no ``nan``, ``inf``, ``_`` or white space), at
    most `MAX_FLOAT_CHARS` characters, finite, and within ±``max_abs`` when given."""
    t = _text(s)
    if t is None or len(t) > MAX_FLOAT_CHARS or _FLOAT.fullmatch(t) is None:
        return default
    v = float(t)
    if not math.isfinite(v) or (max_abs is not None and abs(v) > max_abs):
        return default
    return v
