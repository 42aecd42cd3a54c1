"""JSON tokens at the byte level, in numba: whitespace, strings, numbers, literals, and
skipping a whole value (for the Chrome Trace Event scanner, `jsonscan`).

The scanner walks the raw bytes once; these are its lexical steps.  It is a validating
JSON scanner for the structure it walks (objects, arrays, strings, numbers, literals);
nested values it does not need (``args``, ``stack``...) are skipped (`skip_value`) with
an explicit bracket stack, never by recursion, with a bounded nesting depth.

Numbers (`parse_number`): the exact fast path of Clinger's algorithm (W. D. Clinger, "How
to read floating point numbers accurately", PLDI 1990) -- a decimal mantissa
m < 2^53 and a power of ten 10^|e| with |e| <= 22 are both exact doubles, so one
IEEE multiply/divide gives the correctly rounded value.  Anything else is flagged
and re-parsed by Python's ``float`` (rare: 17+ significant digits, huge exponents).
Hash of a byte span: 64-bit FNV-1a (Fowler-Noll-Vo), h = (h XOR byte) × 1099511628211
from the offset basis 14695981039346656037 (`fnv1a`).  Positions for messages:
`line_col`, `first_non_ws`.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic


_POW10 = np.array([10.0 ** k for k in range(23)])
_TRUE = np.frombuffer(b"true", np.uint8)
_FALSE = np.frombuffer(b"false", np.uint8)
_NULL = np.frombuffer(b"null", np.uint8)
_NAN = np.frombuffer(b"NaN", np.uint8)
_INF = np.frombuffer(b"Infinity", np.uint8)


@njit(cache=True, nogil=True, _nrt=False)
def _ws(c):
    return c == 32 or c == 10 or c == 13 or c == 9


@njit(cache=True, nogil=True, _nrt=False)
def skip_ws(buf, i):
    n = buf.shape[0]
    while i < n and _ws(buf[i]):
        i += 1
    return i


@intrinsic
def eq_mask32(typingctx, buf, pos, byte):
    """Bit k (k < 32) of the result: ``buf[pos + k] == byte``: one unaligned load of 32 bytes
    as an LLVM ``<32 x i8>`` vector and one vector compare (the byte-classification step of
    simdjson's stage 1, Langdale and Lemire, VLDB J. 2019).  ``buf``: a contiguous uint8
    array; the caller keeps ``pos + 32 <= len(buf)``."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C" and buf.dtype == types.uint8):
        return None
    sig = types.uint32(buf, pos, byte)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        vec = ir.VectorType(ir.IntType(8), 32)
        v = builder.load(builder.bitcast(builder.gep(ary.data, [args[1]]), vec.as_pointer()), align=1)
        b = builder.trunc(args[2], ir.IntType(8))
        splat = ir.Constant(vec, ir.Undefined)
        for k in range(32):
            splat = builder.insert_element(splat, b, ir.Constant(ir.IntType(32), k))
        return builder.bitcast(builder.icmp_unsigned("==", v, splat), ir.IntType(32))

    return sig, codegen


@njit(cache=True, nogil=True, _nrt=False)
def scan_string(buf, i):
    """``buf[i]`` is the opening quote.  Returns (index after closing quote,
    has_escape), or (-1, has_escape so far) if the bytes end first.

    32 bytes at a time (`eq_mask32`: the quotes and backslashes of a block as two bit masks):
    a block whose first quote has no backslash before it ends the string there; a block with
    a backslash before its first quote (or none) goes on from the byte after the one that
    backslash escapes, the block read again from there; the last 31 bytes of the buffer byte
    by byte.  A walk of every string of a 289 MB trace this way takes half a byte loop's time
    (bench/probe_simd_scan.py).  Stepping byte by byte through a block with a backslash, as it
    did before, read escape-dense strings at a byte loop's speed: the 14.7 MB of source files
    in the sympy trace's ``file_info`` (an escape every ~40 bytes) 18.3 ms, 4.7 ms so.  The
    twin is tests/unit/test_json_scan.py's `_scan_string_bytes`.
    Compiled without reference counting (it allocates nothing): a call of a function that
    counts them costs two atomic operations per array."""
    n = buf.shape[0]
    i += 1
    esc = False
    while i + 32 <= n:
        mq = eq_mask32(buf, i, np.uint8(34))
        mb = eq_mask32(buf, i, np.uint8(92))
        if mq != np.uint32(0):
            if mb & ((mq & (~mq + np.uint32(1))) - np.uint32(1)) == np.uint32(0):  # no backslash before it
                return i + np.int64(trailing_zeros(mq)) + 1, esc
        elif mb == np.uint32(0):
            i += 32
            continue
        esc = True  # the block's first backslash comes before its first quote: it and the byte it escapes skipped
        i += np.int64(trailing_zeros(mb)) + 2
    while i < n:
        c = buf[i]
        if c == 34:  # "
            return i + 1, esc
        if c == 92:  # backslash
            esc = True
            i += 2
            continue
        i += 1
    return np.int64(-1), esc


@njit(cache=True, nogil=True, inline="always")
def bytes_are(buf, at, ln, word):
    """Whether the ``ln`` bytes at ``buf[at]`` are the bytes ``word`` (a key, a literal)."""
    if ln != word.shape[0]:
        return False
    for q in range(ln):
        if buf[at + q] != word[q]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def fnv1a(buf, off, ln):
    """64-bit FNV-1a hash of ``buf[off:off+ln]`` (as int64)."""
    h = np.uint64(14695981039346656037)
    p = np.uint64(1099511628211)
    for k in range(off, off + ln):
        h = (h ^ np.uint64(buf[k])) * p
    return np.int64(h)


@njit(cache=True, nogil=True, inline="always")
def fast_path_value(m, e10):
    """m · 10^e10 for a decimal mantissa 0 ≤ m < 2^53 by the fast path of Clinger's algorithm
    (W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990: m and 10^|e10|
    ≤ 10^22 are exact doubles, so one IEEE multiply or divide rounds correctly): (value, True),
    or (0.0, False) when |e10| > 22 and m > 0 (the caller reads it another way)."""
    fm = float(m)
    if m == 0:
        return 0.0, True
    if 0 <= e10 <= 22:
        return fm * _POW10[e10], True
    if -22 <= e10 < 0:
        return fm / _POW10[-e10], True
    return 0.0, False


@njit(cache=True, nogil=True, _nrt=False)
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
        v, exact = fast_path_value(m, e10)
    if neg:
        v = -v
    return v, j, exact


@njit(cache=True, nogil=True, _nrt=False)
def word8(a, q):
    """The 8 bytes ``a[q:q+8]`` as one little-endian word (``q`` unsigned: one load)."""
    return (np.uint64(a[q]) | (np.uint64(a[q + np.uint64(1)]) << np.uint64(8))
            | (np.uint64(a[q + np.uint64(2)]) << np.uint64(16)) | (np.uint64(a[q + np.uint64(3)]) << np.uint64(24))
            | (np.uint64(a[q + np.uint64(4)]) << np.uint64(32)) | (np.uint64(a[q + np.uint64(5)]) << np.uint64(40))
            | (np.uint64(a[q + np.uint64(6)]) << np.uint64(48)) | (np.uint64(a[q + np.uint64(7)]) << np.uint64(56)))


# ------------------------------------------------------------------ numbers of the common form, 8 digits at a time
_K30 = np.uint64(0x3030303030303030)
_K76 = np.uint64(0x7676767676767676)
_K80 = np.uint64(0x8080808080808080)
_POW10I = np.array([10 ** k for k in range(17)], np.uint64)
_POW10F = np.array([10.0 ** k for k in range(23)])
_TWO53 = np.uint64(1 << 53)


@njit(cache=True, nogil=True, _nrt=False)
def _eight_digits(x):
    """The number of the 8 digits of ``x`` (each byte a digit 0-9, the first in the low byte),
    by three multiplies (the SWAR conversion of simdjson, Langdale and Lemire, VLDB J. 2019)."""
    x = ((x & np.uint64(0x0F0F0F0F0F0F0F0F)) * np.uint64(2561)) >> np.uint64(8)
    x = ((x & np.uint64(0x00FF00FF00FF00FF)) * np.uint64(6553601)) >> np.uint64(16)
    return ((x & np.uint64(0x0000FFFF0000FFFF)) * np.uint64(42949672960001)) >> np.uint64(32)


@njit(cache=True, nogil=True, _nrt=False)
def _digit_run(buf, q):
    """The digits from ``buf[q]`` (``q`` unsigned, ``q + 16`` within the bytes): (their number,
    how many, 0 to 16; 16: 16 or more, the number not made)."""
    x = word8(buf, q) ^ _K30
    mask = ((x + _K76) | x) & _K80  # the high bit of each byte that is no digit
    if mask != 0:
        c = np.uint64(trailing_zeros(mask)) >> np.uint64(3)
        if c == 0:
            return np.uint64(0), np.uint64(0)
        return _eight_digits(x << (np.uint64(64) - np.uint64(8) * c)), c
    v = _eight_digits(x)
    x = word8(buf, q + np.uint64(8)) ^ _K30
    mask = ((x + _K76) | x) & _K80
    if mask == 0:
        return np.uint64(0), np.uint64(16)
    c = np.uint64(trailing_zeros(mask)) >> np.uint64(3)
    if c == 0:
        return v, np.uint64(8)
    return v * _POW10I[c] + _eight_digits(x << (np.uint64(64) - np.uint64(8) * c)), np.uint64(8) + c


@njit(cache=True, nogil=True, _nrt=False)
def _common_num(buf, p):
    """A number of the common form ``-?digits(.digits)?``, at most 16 digits, its mantissa under
    2^53, not within 17 bytes of the end: (True, value, end) as `jsontokens.parse_number` gives
    it (the mantissa m read 8 digits at a time, `_digit_run`; the value m / 10^f); (False, 0, 0)
    for any other form."""
    un = np.uint64(buf.shape[0])
    q = np.uint64(p)
    neg = buf[q] == 45
    if neg:
        q += np.uint64(1)
    if q + np.uint64(16) > un:
        return False, 0.0, np.int64(0)
    m, ci = _digit_run(buf, q)
    if ci == 0 or ci >= 16:
        return False, 0.0, np.int64(0)
    q += ci
    frac = np.uint64(0)
    c = buf[q]
    if c == 46:  # .
        if q + np.uint64(17) > un:
            return False, 0.0, np.int64(0)
        f, frac = _digit_run(buf, q + np.uint64(1))
        if frac == 0 or ci + frac > 16:
            return False, 0.0, np.int64(0)
        m = m * _POW10I[frac] + f
        q += np.uint64(1) + frac
        c = buf[q]
    if c == 101 or c == 69 or m >= _TWO53:  # e E, or a mantissa past 2^53
        return False, 0.0, np.int64(0)
    v = float(m) if frac == 0 else float(m) / _POW10F[frac]
    return True, -v if neg else v, np.int64(q)


@njit(cache=True, nogil=True, _nrt=False)
def parse_num(buf, p):
    """`jsontokens.parse_number` (its very results: value, end, exact), the common forms faster
    (`_common_num`)."""
    ok, v, j = _common_num(buf, p)
    if ok:
        return v, j, True
    return parse_number(buf, p)


@njit(cache=True, nogil=True, _nrt=False)
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


@njit(cache=True, nogil=True, _nrt=False)
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


@njit(cache=True, nogil=True, _nrt=False)
def first_non_ws(buf, i):
    """The first byte at or after ``i`` that is not JSON whitespace, or -1."""
    i = skip_ws(buf, i)
    return i if i < buf.shape[0] else -1


@njit(cache=True, nogil=True)
def line_col(buf, pos):
    """(line, column) of byte ``pos``, both from 1: line = 1 + the newlines in ``buf[:pos]``,
    column = ``pos`` − the last of them; one pass, no memory per line.  Branch-free (a count
    and a running maximum, which the compiler vectorises: 0.35 → 0.11 ns a byte, a repair
    message of a 1.3 GB file cites its line in 0.15 s instead of 0.5)."""
    n = 0
    last = -1
    for q in range(min(pos, buf.shape[0])):
        c = np.int64(buf[q] == 10)
        n += c
        last = max(last, q * c - 1 + c)  # q at a newline, else -1
    return n + 1, pos - last
