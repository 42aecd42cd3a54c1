"""A safe reader of the ``marshal`` subset a ``pstats`` dump uses (`tracevis3d.io.pstats`).

**Reading the bytes.**  `marshal.loads` is documented as unsafe on untrusted bytes, so
`read_marshal` decodes the subset a dump uses in plain Python: dict ``{``…``0``, tuples ``(``
``)``, ints ``i`` ``l``, floats ``g`` ``f``, strings ``z Z a A u t s``, ``N T F``, refs ``r``
and the ref flag (0x80).  Every size is checked against the bytes left (a tuple of n items
needs n bytes), nesting is at most `MAX_MARSHAL_DEPTH`, a long at most `MAX_LONG_DIGITS`
digits, a ref must name an object already complete (a ref to a container still being read,
the only way to make a loop, is refused), a dict key must be a tuple of at most 8 scalars
holding a string (a function's key: keys of ints only could be crafted to collide in one
hash bucket, and a key that is a big tuple, used again by ref, would be hashed again each
time).  Any other type code or a bad size: `TraceFormatError` naming the file, the byte offset and the
problem.  Time and memory are linear in the bytes.  Bytes after the dict are ignored, as
``marshal.load`` ignores them.  One more type: the ``profile`` module keys a script's run by
its code object (``c``), which is read in the layout of the Python that wrote it (3.4-3.13,
`_CODE_LAYOUTS`: the file's first code object decides it, the code objects nested in it read
in the layout it tries, so each byte is read at most three times) and never made: the key names
it as text, ``<code object <module> of prog.py, line 1>``; its constants may be of any kind
(sets are read as tuples, never hashed; a big long is checked, not built).  A Python 2 dump
(string refs ``R``, names of bytes) is refused in one line: Python 3's pstats cannot read it
either.
"""
from __future__ import annotations

import struct

from ..model import TraceFormatError

__all__ = ["read_marshal", "MAX_MARSHAL_DEPTH", "MAX_LONG_DIGITS"]

#: containers nested deeper than this are refused (a pstats dump nests 5 deep)
MAX_MARSHAL_DEPTH = 32
#: a marshal long of more 15-bit digits than this is refused (2**120: no count is larger)
MAX_LONG_DIGITS = 8

_I32 = struct.Struct("<i")
_F64 = struct.Struct("<d")
_END = object()  # marshal's '0' (the end of a dict)
_PENDING = object()  # a ref slot whose container is still being read
_STRINGS = frozenset(b"zZaAuts")
#: a marshalled code object's layouts, newest first: (Pythons, int32 fields, then its fields:
#: "#" a raw int32, "b" bytes, "t" a tuple, "s" a str, "*" any value)
_CODE_LAYOUTS = (
    ("3.11-3.13", 5, (("code", "b"), ("consts", "t"), ("names", "t"), ("localsplusnames", "t"),
                      ("localspluskinds", "b"), ("filename", "s"), ("name", "s"), ("qualname", "s"),
                      ("firstlineno", "#"), ("linetable", "b"), ("exceptiontable", "b"))),
    ("3.8-3.10", 6, (("code", "b"), ("consts", "t"), ("names", "t"), ("varnames", "t"), ("freevars", "t"),
                     ("cellvars", "t"), ("filename", "s"), ("name", "s"), ("firstlineno", "#"), ("lnotab", "b"))),
    ("3.4-3.7", 5, (("code", "b"), ("consts", "t"), ("names", "t"), ("varnames", "t"), ("freevars", "t"),
                    ("cellvars", "t"), ("filename", "s"), ("name", "s"), ("firstlineno", "#"), ("lnotab", "b"))),
)
_FIELD_TYPE = {"b": bytes, "t": tuple, "s": str}
#: a dict key is a short tuple of scalars holding a string (a function's key): hashed in O(1),
#: and its string's hash is salted per process, so no file can put many keys in one bucket
_MAX_KEY_ITEMS = 8
_KEY_ITEM = frozenset((str, int, float, bytes, bool, type(None)))


class _Marshal:
    """One pass over marshal bytes (`read_marshal`)."""

    def __init__(self, data, source: str, max_depth: int):
        self.b = bytes(data)
        self.n = len(self.b)
        self.source = source
        self.max_depth = int(max_depth)
        self.refs: list = []
        self.pos = 0
        self.top_keys: list = []  # byte offset of each key of the outermost dict
        self.in_code = 0  # > 0: inside a code object (its constants allow more types)
        self.code_layout = None  # the layout of this file's code objects, once one was read

    def fail(self, at: int, what: str):
        raise TraceFormatError(f"{self.source}: byte {at}: {what}")

    def need(self, k: int, at: int, what: str):
        if k > self.n - self.pos:
            self.fail(at, f"{what} needs {k} bytes, {self.n - self.pos} left (the file is cut short or not a dump)")

    def i32(self, at: int, what: str) -> int:
        self.need(4, at, what)
        v = _I32.unpack_from(self.b, self.pos)[0]
        self.pos += 4
        return v

    def size(self, at: int, what: str, per_item: int = 1) -> int:
        n = self.i32(at, what)
        if n < 0:
            self.fail(at, f"{what} of negative size {n}")
        self.need(n * per_item, at, f"{what} of size {n}")
        return n

    def count(self, at: int, short: bool, what: str, unit: str) -> int:
        """The size of ``what``: one byte (``short``: the small-container codes) or four
        (`size`), the bytes of that many ``unit`` checked to be there."""
        if not short:
            return self.size(at, what)
        self.need(1, at, what)
        k = self.b[self.pos]
        self.pos += 1
        self.need(k, at, f"{what} of {k} {unit}")
        return k

    def tuple_(self, at: int, t: int, flag: int, depth: int) -> tuple:
        """A tuple (``(``: 4 bytes of size, ``)``: 1 byte) at byte ``at``, its code read."""
        if depth >= self.max_depth:
            self.fail(at, f"containers nested more than {self.max_depth} deep")
        k = self.count(at, t == 0x29, "a tuple", "items")
        slot = -1
        if flag:
            slot = len(self.refs)
            self.refs.append(_PENDING)
        items = []
        for _ in range(k):
            item_at = self.pos
            x = self.obj(depth + 1)
            if x is _END:
                self.fail(item_at, "a dict's end ('0') inside a tuple")
            items.append(x)
        v = tuple(items)
        if flag:
            self.refs[slot] = v
        return v

    def dict_(self, at: int, flag: int, depth: int) -> dict:
        """A dict at byte ``at`` (its code read): key, value... up to ``0``."""
        if depth >= self.max_depth:
            self.fail(at, f"containers nested more than {self.max_depth} deep")
        slot = -1
        if flag:
            slot = len(self.refs)
            self.refs.append(_PENDING)
        v = {}
        while True:
            key_at = self.pos
            key = self.obj(depth + 1)
            if key is _END:
                break
            if depth == 0:
                self.top_keys.append(key_at)
            if not (type(key) is tuple and len(key) <= _MAX_KEY_ITEMS and all(type(x) in _KEY_ITEM for x in key)
                    and any(type(x) is str for x in key)):
                if type(key) is tuple and any(type(x) is bytes for x in key[:_MAX_KEY_ITEMS]):
                    self.fail(key_at, f"a dict key {_short(key)} of bytes: a dump written by Python 2, which Python "
                                      f"3's pstats cannot read either: profile the program under Python 3")
                self.fail(key_at, f"a dict key {_short(key)}: not a function's (file, line, name)")
            val_at = self.pos
            val = self.obj(depth + 1)
            if val is _END:
                self.fail(val_at, "a dict ends ('0') after a key, before its value")
            v[key] = val  # a tuple of scalars: hashable
        if flag:
            self.refs[slot] = v
        return v

    def code(self, at: int, flag: int, depth: int) -> str:
        """A code object at byte ``at`` (its code read), never made: read in the layout of the
        Python that wrote it (`_CODE_LAYOUTS`) and returned as the text ``<code object NAME of
        FILE, line N>``.  One file, one Python: the outermost code object of the first one read
        tries each layout in turn, and every code object inside it is read in the layout being
        tried (never each layout again: a code object nested k deep would be read 3^k times);
        the first layout that reads decides every later code object.  So the first code object
        is read at most len(`_CODE_LAYOUTS`) times, the others once: linear in the bytes."""
        if depth >= self.max_depth:
            self.fail(at, f"containers nested more than {self.max_depth} deep")
        start, n_refs = self.pos, len(self.refs)
        deciding = self.code_layout is None
        layouts = _CODE_LAYOUTS if deciding else (self.code_layout,)
        err = None
        for layout in layouts:
            self.pos = start
            del self.refs[n_refs:]
            if flag:
                self.refs.append(_PENDING)
            self.code_layout = layout  # the nested code objects are read in this layout only
            self.in_code += 1
            try:
                fields = self._code_fields(at, layout, depth)
            except TraceFormatError as e:
                err = err or e
                continue
            finally:
                self.in_code -= 1
            v = f"<code object {fields['name']} of {fields['filename']}, line {fields['firstlineno']}>"
            if flag:
                self.refs[n_refs] = v
            return v
        if deciding:
            self.code_layout = None
        raise err

    def _code_fields(self, at: int, layout, depth: int) -> dict:
        _, n_ints, fields = layout
        self.need(4 * n_ints, at, "a code object")
        self.pos += 4 * n_ints
        out = {}
        for name, kind in fields:
            if kind == "#":
                out[name] = self.i32(at, f"a code object's {name}")
                continue
            field_at = self.pos
            v = self.obj(depth + 1)
            if not isinstance(v, _FIELD_TYPE[kind]):
                self.fail(field_at, f"a code object's {name} that is a {type(v).__name__} (layout of Python "
                                    f"{layout[0]})")
            out[name] = v
        return out

    def obj(self, depth: int):
        if self.pos >= self.n:
            self.fail(self.pos, "the data ends where a value should start (the file is cut short)")
        at = self.pos
        code = self.b[at]
        flag = code & 0x80
        t = code & 0x7F
        self.pos += 1
        if t == 0x72:  # r (the commonest code, with z)
            if at + 5 > self.n:
                self.need(4, at, "a ref")
            k = _I32.unpack_from(self.b, at + 1)[0]
            self.pos = at + 5
            if not 0 <= k < len(self.refs):
                self.fail(at, f"a ref to object {k}, but only {len(self.refs)} are defined")
            v = self.refs[k]
            if v is _PENDING:
                self.fail(at, f"a ref to object {k}, a container still being read (a loop)")
            return v
        if t == 0x7A or t == 0x5A:  # z Z: a short ASCII string (marshal reads it as Latin-1)
            if at + 2 > self.n:
                self.need(1, at, "a string")
            k = self.b[at + 1]
            if at + 2 + k > self.n:
                self.pos = at + 2
                self.need(k, at, f"a string of {k} bytes")
            v = self.b[at + 2: at + 2 + k].decode("latin-1")
            self.pos = at + 2 + k
            if flag:
                self.refs.append(v)
            return v
        if t == 0x4E:  # N
            return None
        if t == 0x54:  # T
            return True
        if t == 0x46:  # F
            return False
        if t == 0x30:  # 0
            return _END
        if t == 0x69:  # i
            v = self.i32(at, "an int")
        elif t == 0x6C:  # l
            n = self.i32(at, "a long")
            nd = abs(n)
            if self.in_code and nd > MAX_LONG_DIGITS:  # a code object's big constant: checked, not made
                self.need(2 * nd, at, f"a long of {nd} digits")
                digits = self.b[self.pos: self.pos + 2 * nd]
                if max(digits[1::2]) >= 0x80 or digits[-2:] == b"\x00\x00":
                    self.fail(at, "a long with a digit out of range or not normalised")
                self.pos += 2 * nd
                return None
            if nd > MAX_LONG_DIGITS:
                self.fail(at, f"a long of {nd} digits, more than {MAX_LONG_DIGITS} (larger than any count)")
            self.need(2 * nd, at, f"a long of {nd} digits")
            v = 0
            for j in range(nd):
                d = self.b[self.pos + 2 * j] | (self.b[self.pos + 2 * j + 1] << 8)
                if d >= 1 << 15:
                    self.fail(at, f"a long's digit {d} out of range")
                v |= d << (15 * j)
            if nd and v >> (15 * (nd - 1)) == 0:
                self.fail(at, "a long whose top digit is 0 (not normalised)")
            self.pos += 2 * nd
            v = -v if n < 0 else v
        elif t == 0x67:  # g
            self.need(8, at, "a float")
            v = _F64.unpack_from(self.b, self.pos)[0]
            self.pos += 8
        elif t == 0x66:  # f
            self.need(1, at, "a float")
            k = self.b[self.pos]
            self.pos += 1
            self.need(k, at, f"a float of {k} characters")
            text = self.b[self.pos: self.pos + k]
            self.pos += k
            try:
                v = float(text.decode("ascii"))
            except (UnicodeDecodeError, ValueError):
                self.fail(at, f"a float written {text[:40]!r}: not a number")
        elif t in _STRINGS:
            k = self.count(at, t in (0x7A, 0x5A), "a string", "bytes")  # z Z: one byte of size
            raw = self.b[self.pos: self.pos + k]
            self.pos += k
            if t == 0x73:  # s: bytes
                v = raw
            elif t in (0x75, 0x74):  # u t: UTF-8
                try:
                    v = raw.decode("utf-8", "surrogatepass")
                except UnicodeDecodeError as e:
                    self.fail(at, f"a string that is not UTF-8 ({e.reason} at its byte {e.start})")
            else:  # a A z Z: one byte a character (marshal reads them as Latin-1)
                v = raw.decode("latin-1")
        elif t in (0x28, 0x29):  # ( )
            return self.tuple_(at, t, flag, depth)
        elif t == 0x7B:  # {
            return self.dict_(at, flag, depth)
        elif t == 0x63:  # c: a code object (the profile module's key of a script's run)
            return self.code(at, flag, depth)
        elif self.in_code and t in (0x3C, 0x3E, 0x5B):  # < > [: a constant set (read as a tuple: never hashed)
            return self.tuple_(at, 0x28, flag, depth)
        elif self.in_code and t == 0x2E:  # .
            return Ellipsis
        elif self.in_code and t == 0x79:  # y: a complex, two doubles
            self.need(16, at, "a complex")
            v = complex(*struct.unpack_from("<dd", self.b, self.pos))
            self.pos += 16
        elif t == 0x52:  # R: Python 2's ref to an interned string
            self.fail(at, "a Python 2 string ref ('R'): a dump written by Python 2, which Python 3's pstats cannot "
                          "read either: profile the program under Python 3")
        else:
            ch = chr(t) if 0x20 <= t < 0x7F else "?"
            self.fail(at, f"marshal type code 0x{code:02x} ({ch!r}): not one a pstats dump uses")
        if flag:
            self.refs.append(v)
        return v


def _short(x) -> str:
    s = repr(x)
    return s if len(s) <= 60 else s[:57] + "..."


def read_marshal(data, source: str = "<bytes>", max_depth: int = MAX_MARSHAL_DEPTH):
    """The value marshalled in ``data`` (the subset a pstats dump uses; module docstring), and
    the byte offsets of the outermost dict's keys: (value, offsets)."""
    m = _Marshal(data, source, max_depth)
    v = m.obj(0)
    if v is _END:
        m.fail(0, "a dict's end ('0') where the dump should start")
    return v, m.top_keys
