"""A Perfetto TrackEvent's debug annotations → one JSON object (a call's ``args``), in numba.

The JSON is what Perfetto's own JSON export writes for them (trace processor's
``export_json.cc``, the "args" of an event), one key per annotation:

* ``name`` or ``name_iid`` (the sequence's interned ``debug_annotation_names``) is the key;
* ``bool_value`` → true/false, ``int_value`` → an integer, ``uint_value`` → an unsigned integer,
  ``double_value`` → a number (written later: `splice_doubles`), ``pointer_value`` → a string
  ``"0x…"`` (hex), ``string_value`` / ``string_value_iid`` (interned
  ``debug_annotation_string_values``) → a string, ``legacy_json_value`` → its JSON text as is
  (checked by the caller), ``proto_value`` → the string ``"<proto>"`` (no descriptors here);
* ``dict_entries`` → an object of the entries (each a named annotation), ``array_values`` → an
  array, ``nested_value`` (the older ``NestedValue``: ``dict_keys``/``dict_values``,
  ``array_values``, scalars) likewise;
* an annotation without a value → null.

Nesting is walked with an explicit stack of at most ``max_depth`` levels (deeper: the args are
dropped); an event's JSON is at most ``max_bytes`` long (longer: dropped).  Strings are escaped
as JSON requires (``"``, ``\\``, control characters); other bytes are copied (invalid UTF-8 is
replaced when the args are decoded).  Doubles are noted as (position, value) and written by
`splice_doubles` from numpy's shortest round-trip text, which is Python's ``repr``.
"""
import numpy as np
from numba import njit

from .perfetto_wire import (E_WRONG_TYPE, WT_I64, WT_LEN, WT_VARINT, as_double, fixed64, grown1, next_field,
                            map_get, next_message, varint)

ARGS_OK = 0
ARGS_TOO_DEEP = 1
ARGS_TOO_BIG = 2
# kinds of the interned tables (`protoscan`): annotation names, annotation string values
K_DANAME = 3
K_DASTR = 5

_FR_FIELDS_DICT = 0  # fields ``fno`` of [pos, end), each a named DebugAnnotation: "key": value
_FR_FIELDS_ARRAY = 1  # fields ``fno`` of [pos, end), each a DebugAnnotation: value
_FR_NV_DICT = 2  # a NestedValue: keys (field 2) at pos, values (field 3) at pos2
_FR_NV_ARRAY = 3  # a NestedValue: values (field 4) at pos
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)

# what `_scan_annotation` finds (the value fields of DebugAnnotation; a oneof: the last wins)
_V_NONE = 0
_V_BOOL = 2
_V_UINT = 3
_V_INT = 4
_V_DOUBLE = 5
_V_STRING = 6
_V_POINTER = 7
_V_NESTED = 8
_V_JSON = 9
_V_STRING_IID = 17
_V_PROTO = 14


@njit(cache=True, nogil=True, _nrt=False)
def _put(ab, n, c):
    ab[n] = c
    return n + 1


@njit(cache=True, nogil=True, _nrt=False)
def _put_bytes(ab, n, src, a, b):
    """``src[a:b]`` as is at ``ab[n:]`` (room reserved by the caller)."""
    for k in range(a, b):
        ab[n] = src[k]
        n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def _put_string(ab, n, src, a, b):
    """``src[a:b]`` as a JSON string (quoted, escaped); ``ab`` must have 6 * (b - a) + 2 bytes
    of room."""
    ab[n] = 34
    n += 1
    for k in range(a, b):
        c = src[k]
        if c == 34 or c == 92:
            ab[n] = 92
            ab[n + 1] = c
            n += 2
        elif c < 0x20:
            ab[n] = 92
            ab[n + 1] = 117  # \u00XX
            ab[n + 2] = 48
            ab[n + 3] = 48
            ab[n + 4] = _HEX[c >> 4]
            ab[n + 5] = _HEX[c & 15]
            n += 6
        else:
            ab[n] = c
            n += 1
    ab[n] = 34
    return n + 1


@njit(cache=True, nogil=True, _nrt=False)
def _put_text(ab, n, text):
    """ASCII ``text`` (a uint8 array) as is."""
    for k in range(text.shape[0]):
        ab[n + k] = text[k]
    return n + text.shape[0]


@njit(cache=True, nogil=True, inline="always")
def _put_digits(ab, n, u, base):
    """The digits of ``u`` (uint64) in ``base`` (10 or 16: ``0-9a-f``) at ``ab[n:]``, most
    significant first (written backwards, then reversed in place); the new ``n``.  Inlined: the
    base is a constant where it is called."""
    start = n
    while True:
        ab[n] = _HEX[np.int64(u % np.uint64(base))]
        u = u // np.uint64(base)
        n += 1
        if u == 0:
            break
    i, j = start, n - 1
    while i < j:
        c = ab[i]
        ab[i] = ab[j]
        ab[j] = c
        i += 1
        j -= 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def _put_int(ab, n, v, unsigned):
    """Decimal digits of ``v`` (int64; as uint64 when ``unsigned``); 21 bytes of room."""
    if unsigned:
        u = np.uint64(v)
    else:
        if v < 0:
            ab[n] = 45
            n += 1
            u = np.uint64(0) - np.uint64(v)  # |v|, also for the smallest int64
        else:
            u = np.uint64(v)
    return _put_digits(ab, n, u, 10)


@njit(cache=True, nogil=True, _nrt=False)
def _put_hex(ab, n, v):
    """``"0x…"`` of ``v`` as uint64 (a pointer); 20 bytes of room."""
    u = np.uint64(v)
    ab[n] = 34
    ab[n + 1] = 48
    ab[n + 2] = 120
    n = _put_digits(ab, n + 3, u, 16)
    ab[n] = 34
    return n + 1


@njit(cache=True, nogil=True, _nrt=False)
def _scan_annotation(buf, a, b):
    """The fields of the DebugAnnotation ``buf[a:b]`` the writer needs: (status, name kind (0
    none, 1 inline, 2 interned), name start or iid, name end, value kind (`_V_*`), value (or
    start), value end, has dict_entries, has array_values); status < 0: a wire error at
    position ``name start``."""
    nk = 0
    na = np.int64(0)
    nb = np.int64(0)
    vk = _V_NONE
    va = np.int64(0)
    vb = np.int64(0)
    has_dict = False
    has_array = False
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, 0, p, 0, 0, 0, 0, False, False
        want = -1
        if f == 1 or f == 2 or f == 3 or f == 4 or f == 7 or f == 13 or f == 17:
            want = WT_VARINT
        elif f == 5:
            want = WT_I64
        elif f == 6 or f == 8 or f == 9 or f == 10 or f == 11 or f == 12 or f == 14 or f == 16:
            want = WT_LEN
        if want >= 0 and wt != want:
            return E_WRONG_TYPE, 0, p, 0, 0, 0, 0, False, False
        if f == 10:
            nk, na, nb = 1, s, e
        elif f == 1:
            nk = 2
            na, _ = varint(buf, q, b)
        elif f == 2 or f == 3 or f == 4 or f == 7 or f == 17:
            vk = f
            va, _ = varint(buf, q, b)
        elif f == 5:
            vk = _V_DOUBLE
            va = fixed64(buf, q)
        elif f == 6 or f == 8 or f == 9:
            vk, va, vb = f, s, e
        elif f == 14:
            vk = _V_PROTO
        elif f == 11:
            has_dict = True
        elif f == 12:
            has_array = True
        p = e
    return 0, nk, na, nb, vk, va, vb, has_dict, has_array


@njit(cache=True, nogil=True, _nrt=False)
def _scan_nested(buf, a, b):
    """The fields of the NestedValue ``buf[a:b]``: (status, nested type, value kind (5 int, 6
    double, 7 bool, 8 string, 0 none), value (or start), value end); status < 0: a wire error
    at position ``value``."""
    nt = 0
    vk = 0
    va = np.int64(0)
    vb = np.int64(0)
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, 0, 0, p, 0
        want = -1
        if f == 1 or f == 5 or f == 7:
            want = WT_VARINT
        elif f == 6:
            want = WT_I64
        elif f == 2 or f == 3 or f == 4 or f == 8:
            want = WT_LEN
        if want >= 0 and wt != want:
            return E_WRONG_TYPE, 0, 0, p, 0
        if f == 1:
            nt, _ = varint(buf, q, b)
        elif f == 5 or f == 7:
            vk = f
            va, _ = varint(buf, q, b)
        elif f == 6:
            vk = 6
            va = fixed64(buf, q)
        elif f == 8:
            vk, va, vb = 8, s, e
        p = e
    return 0, nt, vk, va, vb


@njit(cache=True, nogil=True)
def write_args(buf, a, b, gen, mk, mv, seed, sp_off, sp_len, ab, n_ab, fix_pos, fix_val, n_fix, max_depth,
               max_bytes, fr):
    """Write the debug annotations (field 4) of the TrackEvent ``buf[a:b]`` as one JSON object at
    ``ab[n_ab:]`` (see the module docstring); ``gen``: the sequence's generation (the keys of the
    interned map ``mk, mv``: (gen * 8 + kind, iid) → span index into ``sp_off, sp_len``); ``fr``:
    an int64 scratch of shape (6, max_depth + 2).  Returns (status, error position, ab, n_ab,
    fix_pos, fix_val, n_fix, undefined interned ids): status `ARGS_OK`, `ARGS_TOO_DEEP`,
    `ARGS_TOO_BIG` (nothing kept: ``n_ab`` and ``n_fix`` as given), or a negative wire error at
    the error position."""
    n0 = n_ab
    f0 = n_fix
    undefined = 0
    ab = grown1(ab, n_ab + 64)
    n_ab = _put(ab, n_ab, 123)
    sp = 0
    fr[0, 0] = _FR_FIELDS_DICT
    fr[1, 0] = a
    fr[2, 0] = b
    fr[3, 0] = 0
    fr[4, 0] = 4  # the TrackEvent's debug_annotations
    fr[5, 0] = 0
    sp = 1
    while sp > 0:
        if n_ab - n0 > max_bytes:
            return ARGS_TOO_BIG, 0, ab, n0, fix_pos, fix_val, f0, undefined
        t = sp - 1
        kind = fr[0, t]
        ab = grown1(ab, n_ab + 64)
        # the next child: a DebugAnnotation (fields frames) or a NestedValue (nested frames)
        is_annotation = kind == _FR_FIELDS_DICT or kind == _FR_FIELDS_ARRAY
        if is_annotation:
            ca, cb, nxt = next_message(buf, fr[1, t], fr[2, t], fr[4, t])
            if cb < 0:
                return cb, ca, ab, n0, fix_pos, fix_val, f0, undefined
            if ca < 0:
                sp -= 1
                n_ab = _put(ab, n_ab, 125 if kind == _FR_FIELDS_DICT else 93)
                continue
            fr[1, t] = nxt
        elif kind == _FR_NV_DICT:
            ka, kb, knext = next_message(buf, fr[1, t], fr[2, t], 2)
            if kb < 0:
                return kb, ka, ab, n0, fix_pos, fix_val, f0, undefined
            ca, cb, nxt = next_message(buf, fr[5, t], fr[2, t], 3)
            if cb < 0:
                return cb, ca, ab, n0, fix_pos, fix_val, f0, undefined
            if ka < 0 or ca < 0:
                sp -= 1
                n_ab = _put(ab, n_ab, 125)
                continue
            fr[1, t] = knext
            fr[5, t] = nxt
        else:
            ca, cb, nxt = next_message(buf, fr[1, t], fr[2, t], 4)
            if cb < 0:
                return cb, ca, ab, n0, fix_pos, fix_val, f0, undefined
            if ca < 0:
                sp -= 1
                n_ab = _put(ab, n_ab, 93)
                continue
            fr[1, t] = nxt
        if fr[3, t] > 0:
            n_ab = _put(ab, n_ab, 44)
        fr[3, t] += 1
        if is_annotation:
            st, nk, na, nb, vk, va, vb, has_dict, has_array = _scan_annotation(buf, ca, cb)
            if st < 0:
                return st, na, ab, n0, fix_pos, fix_val, f0, undefined
            if kind == _FR_FIELDS_DICT:  # the key
                if nk == 1:
                    ab = grown1(ab, n_ab + 6 * (nb - na) + 8)
                    n_ab = _put_string(ab, n_ab, buf, na, nb)
                elif nk == 2:
                    s = map_get(mk, mv, gen * 8 + K_DANAME, na, seed)
                    if s < 0:
                        undefined += 1
                        n_ab = _put_string(ab, n_ab, buf, 0, 0)
                    else:
                        o = sp_off[s]
                        ab = grown1(ab, n_ab + 6 * sp_len[s] + 8)
                        n_ab = _put_string(ab, n_ab, buf, o, o + sp_len[s])
                else:
                    n_ab = _put_string(ab, n_ab, buf, 0, 0)
                n_ab = _put(ab, n_ab, 58)
            if has_dict or has_array:
                if sp >= max_depth:
                    return ARGS_TOO_DEEP, 0, ab, n0, fix_pos, fix_val, f0, undefined
                fr[0, sp] = _FR_FIELDS_DICT if has_dict else _FR_FIELDS_ARRAY
                fr[1, sp] = ca
                fr[2, sp] = cb
                fr[3, sp] = 0
                fr[4, sp] = 11 if has_dict else 12
                sp += 1
                n_ab = _put(ab, n_ab, 123 if has_dict else 91)
                continue
            if vk == _V_NESTED:
                ca, cb = va, vb  # written below as a NestedValue
            else:
                if vk == _V_BOOL:
                    n_ab = _put_text(ab, n_ab, _TRUE if va != 0 else _FALSE)
                elif vk == _V_INT or vk == _V_UINT:
                    n_ab = _put_int(ab, n_ab, va, vk == _V_UINT)
                elif vk == _V_POINTER:
                    n_ab = _put_hex(ab, n_ab, va)
                elif vk == _V_DOUBLE:
                    fix_pos = grown1(fix_pos, n_fix + 1)
                    fix_val = grown1(fix_val, n_fix + 1)
                    fix_pos[n_fix] = n_ab
                    fix_val[n_fix] = as_double(va)
                    n_fix += 1
                elif vk == _V_STRING:
                    ab = grown1(ab, n_ab + 6 * (vb - va) + 8)
                    n_ab = _put_string(ab, n_ab, buf, va, vb)
                elif vk == _V_JSON:
                    ab = grown1(ab, n_ab + (vb - va) + 8)
                    n_ab = _put_bytes(ab, n_ab, buf, va, vb)
                elif vk == _V_STRING_IID:
                    s = map_get(mk, mv, gen * 8 + K_DASTR, va, seed)
                    if s < 0:
                        undefined += 1
                        n_ab = _put_text(ab, n_ab, _NULL)
                    else:
                        o = sp_off[s]
                        ab = grown1(ab, n_ab + 6 * sp_len[s] + 8)
                        n_ab = _put_string(ab, n_ab, buf, o, o + sp_len[s])
                elif vk == _V_PROTO:
                    n_ab = _put_text(ab, n_ab, _PROTO)
                else:
                    n_ab = _put_text(ab, n_ab, _NULL)
                continue
        elif kind == _FR_NV_DICT:  # the key: a string field
            ab = grown1(ab, n_ab + 6 * (kb - ka) + 8)
            n_ab = _put_string(ab, n_ab, buf, ka, kb)
            n_ab = _put(ab, n_ab, 58)
        # a NestedValue at [ca, cb)
        st, nt, vk, va, vb = _scan_nested(buf, ca, cb)
        if st < 0:
            return st, va, ab, n0, fix_pos, fix_val, f0, undefined
        if nt == 1 or nt == 2:
            if sp >= max_depth:
                return ARGS_TOO_DEEP, 0, ab, n0, fix_pos, fix_val, f0, undefined
            fr[0, sp] = _FR_NV_DICT if nt == 1 else _FR_NV_ARRAY
            fr[1, sp] = ca
            fr[2, sp] = cb
            fr[3, sp] = 0
            fr[4, sp] = 0
            fr[5, sp] = ca
            sp += 1
            n_ab = _put(ab, n_ab, 123 if nt == 1 else 91)
        elif vk == 5:
            n_ab = _put_int(ab, n_ab, va, False)
        elif vk == 7:
            n_ab = _put_text(ab, n_ab, _TRUE if va != 0 else _FALSE)
        elif vk == 6:
            fix_pos = grown1(fix_pos, n_fix + 1)
            fix_val = grown1(fix_val, n_fix + 1)
            fix_pos[n_fix] = n_ab
            fix_val[n_fix] = as_double(va)
            n_fix += 1
        elif vk == 8:
            ab = grown1(ab, n_ab + 6 * (vb - va) + 8)
            n_ab = _put_string(ab, n_ab, buf, va, vb)
        else:
            n_ab = _put_text(ab, n_ab, _NULL)
    if n_ab - n0 > max_bytes:
        return ARGS_TOO_BIG, 0, ab, n0, fix_pos, fix_val, f0, undefined
    return ARGS_OK, 0, ab, n_ab, fix_pos, fix_val, n_fix, undefined


_TRUE = np.frombuffer(b"true", np.uint8)
_FALSE = np.frombuffer(b"false", np.uint8)
_NULL = np.frombuffer(b"null", np.uint8)
_PROTO = np.frombuffer(b'"<proto>"', np.uint8)


@njit(cache=True, nogil=True)
def splice_doubles(ab, n_ab, ptr, fix_pos, texts, text_len):
    """The blob ``ab[:n_ab]`` with ``texts[k, :text_len[k]]`` inserted at ``fix_pos[k]``
    (ascending) and the entry starts ``ptr`` moved by what was inserted before them (an entry
    starting where a text goes keeps it: texts sit inside an entry, after its ``{``)."""
    extra = 0
    for k in range(text_len.shape[0]):
        extra += text_len[k]
    out = np.empty(n_ab + extra, np.uint8)
    src = 0
    dst = 0
    for k in range(fix_pos.shape[0]):
        p = fix_pos[k]
        ln = p - src
        out[dst: dst + ln] = ab[src: p]
        dst += ln
        src = p
        for j in range(text_len[k]):
            out[dst + j] = texts[k, j]
        dst += text_len[k]
    out[dst: dst + n_ab - src] = ab[src: n_ab]
    new_ptr = np.empty(ptr.shape[0], np.int64)
    k = 0
    shift = 0
    for i in range(ptr.shape[0]):
        while k < fix_pos.shape[0] and fix_pos[k] < ptr[i]:
            shift += text_len[k]
            k += 1
        new_ptr[i] = ptr[i] + shift
    return out, new_ptr
