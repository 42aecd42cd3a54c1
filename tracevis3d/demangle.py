"""Mangled symbol names made readable: Itanium C++ (``_Z…``), Rust legacy (``_ZN…17h<hash>E``)
and Rust v0 (``_R…``), in pure Python (bpy-free, no compiler needed).

`demangle` is the entry point: it returns the readable name, or the name unchanged when it
is not mangled or cannot be read.  It never raises, and its time is bounded on hostile
input: names longer than `MAX_MANGLED_CHARS` are left as they are, the parser's recursion
stops at `MAX_DEPTH` levels, and the output at `MAX_OUTPUT_CHARS` (substitutions can make
a short name stand for an exponentially long one).

Itanium C++ ABI (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling), the subset
that compilers emit for ordinary code: nested and local names, templates and their
arguments (types, literals, argument packs, simple expressions), the ``std::``
abbreviations (``St Sa Sb Ss Si So Sd``), substitutions (``S_``, ``S<seq-id>_``) and
template parameters (``T_``), function and array types, pointers to members,
cv- and ref-qualifiers, operators, constructors and destructors, ABI tags, lambdas and
unnamed types, special names (vtables, typeinfo, thunks, guard variables, transaction
clones) and GCC's clone suffixes (``.cold``, ``.isra.0``, ``.constprop.1``, ``.part.0``).
The text it writes is the text of GNU ``c++filt`` (libiberty's ``cp-demangle.c``):
``std::vector<int, std::allocator<int> >::push_back(int const&)``,
``void (*)(int)``, ``{lambda(int)#1}``, ``foo() [clone .cold]``; ``verbose=True`` writes the
``std::string`` family in full as ``c++filt`` does (its ``DMGL_VERBOSE``), the default writes
them short as ``__cxa_demangle`` does.

Rust: legacy names are Itanium nested names ending in a ``h<16 hex digits>`` hash, with
``$LT$``-style escapes (rustc-demangle's ``legacy.rs``); the hash is dropped.  v0 names
follow the Rust symbol-mangling RFC 2603 (paths, impls ``<T as Trait>``, generic
arguments, closures ``{closure#0}``, shims, punycode identifiers, basic and compound
types, integer/bool/char constants); written as rustc-demangle's alternate form
(``{:#}``: no crate disambiguators, no hashes), as ``llvm-cxxfilt`` writes them.

libstdc++'s ``__cxa_demangle`` (ctypes) can read Itanium names first, with the pure-Python
reader as the fallback for what it refuses (`NATIVE`, off by default: measured 8x faster,
same text on 45,000 real names, but unbounded on a hostile name; see `NATIVE`).

Over 600 lines: one grammar each for Itanium C++ (the parser and the node types that write
c++filt's text: declarators, template parameters resolved where they are written, packs)
and Rust v0, which only make sense together with their readers; split, each half would
import the other's private nodes.
"""
from __future__ import annotations

import re

__all__ = ["demangle", "demangle_itanium", "demangle_rust", "is_mangled", "native_demangle", "native_available",
           "NATIVE", "MAX_MANGLED_CHARS", "MAX_DEPTH", "MAX_OUTPUT_CHARS"]

#: longer mangled names are left as they are (a hostile name must not cost seconds)
MAX_MANGLED_CHARS = 4096
#: nesting the parser and the printer follow at most (deeper names are left as they are)
MAX_DEPTH = 160
#: the longest readable name written (longer ones are left mangled)
MAX_OUTPUT_CHARS = 16384


class _Fail(Exception):
    """The name is not one this reader can read (caught inside `demangle`)."""


# =========================================================================== output
class _Out:
    """The text being written, with its last character (the printer's spacing rules look
    at it: ``> >``, ``operator< <``), a budget, and the template arguments that template
    parameters stand for where they are written: libiberty resolves ``T_`` while printing,
    by the function template being written (`_Encoding`), so a ``T_`` met inside one
    function's local name and reused by substitution outside it names the outer one's."""

    __slots__ = ("parts", "n", "last", "depth", "templates", "current", "lambda_params", "saved")

    def __init__(self):
        self.parts = []
        self.n = 0
        self.last = ""
        self.depth = 0
        self.templates = []   # argument lists of the function templates being written, innermost last
        self.current = None   # the template whose name is being written (for a conversion operator)
        self.lambda_params = 0  # > 0 while a lambda's parameters are written (``T_`` is ``auto:1``)
        self.saved = {}  # id of a T_ under a reference -> the argument lists it was first written with

    def add(self, s: str):
        if s:
            self.parts.append(s)
            self.n += len(s)
            self.last = s[-1]
            if self.n > MAX_OUTPUT_CHARS:
                raise _Fail("output too long")

    def text(self) -> str:
        return "".join(self.parts)


def _show(node, out: _Out):
    """Write a node whole (its left and right parts)."""
    if type(node) is _Name:  # the commonest node, written at once
        s = node.s
        out.parts.append(s)
        out.n += len(s)
        out.last = s[-1]
        return
    out.depth += 1
    if out.depth > MAX_DEPTH:
        raise _Fail("too deep")
    node.left(out)
    node.right(out)
    out.depth -= 1


def _text(node) -> str:
    out = _Out()
    _show(node, out)
    return out.text()


# =========================================================================== AST
class _Node:
    """A piece of a demangled name.  ``left`` writes what comes before a declarator's name,
    ``right`` what comes after it (``void (*`` / ``)(int)``); most nodes have no right part.
    ``rhs(out)`` says what the right part is: 'array' or 'function' (a pointer to it needs
    parentheses), 'inner' (a right part that needs none), or ''."""

    __slots__ = ()

    def left(self, out):  # pragma: no cover - every node overrides it
        raise NotImplementedError

    def right(self, out):
        pass

    def rhs(self, out) -> str:
        return ""

    def base_name(self) -> str:
        """The name a constructor of this class is written with."""
        raise _Fail("no base name")

    def resolved(self, out):
        """The node itself, or what a template parameter stands for where it is written."""
        return self


class _Name(_Node):
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def left(self, out):
        out.add(self.s)

    def base_name(self):
        return self.s


class _Literal(_Name):
    """A literal text (``{unnamed type#1}``, ``{parm#1}``, ``string literal``)."""

    __slots__ = ()


class _StdSub(_Node):
    """``St Sa Sb Ss Si So Sd``: short or full text, and the name their constructors take."""

    __slots__ = ("short", "long", "last", "full")

    def __init__(self, short, long, last, full):
        self.short, self.long, self.last, self.full = short, long, last, full

    def left(self, out):
        out.add(self.long if self.full else self.short)

    def base_name(self):
        return self.last or self.short


class _Qual(_Node):
    """``scope::name``."""

    __slots__ = ("scope", "name")

    def __init__(self, scope, name):
        self.scope, self.name = scope, name

    def left(self, out):
        _show(self.scope, out)
        out.add("::")
        _show(self.name, out)

    def base_name(self):
        return self.name.base_name()


class _Template(_Node):
    __slots__ = ("name", "args")

    def __init__(self, name, args):
        self.name, self.args = name, args

    def left(self, out):
        held = out.current
        out.current = self
        _show(self.name, out)
        if out.last == "<":
            out.add(" ")
        out.add("<")
        _write_args(self.args, out)
        if out.last == ">":
            out.add(" ")
        out.add(">")
        out.current = held

    def base_name(self):
        return self.name.base_name()


def _write_args(args, out):
    """Template arguments or function parameters with ", " between; an argument that writes
    nothing (an empty pack) takes its ", " back but leaves a blank as the last character, as
    libiberty does (so ``<a<b>, <empty pack>>`` ends in ``>>``)."""
    for k, a in enumerate(args):
        if k:
            out.add(", ")
            n = out.n
            _show(a, out)
            if out.n == n:
                out.parts.pop()
                out.n -= 2
                out.last = " "
        else:
            _show(a, out)


class _AbiTag(_Node):
    __slots__ = ("name", "tag")

    def __init__(self, name, tag):
        self.name, self.tag = name, tag

    def left(self, out):
        _show(self.name, out)
        out.add(f"[abi:{self.tag}]")

    def base_name(self):
        return self.name.base_name()


class _Ctor(_Node):
    __slots__ = ("name", "dtor")

    def __init__(self, name, dtor):
        self.name, self.dtor = name, dtor

    def left(self, out):
        out.add(("~" if self.dtor else "") + self.name)

    def base_name(self):
        return self.name


class _Operator(_Node):
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def left(self, out):
        out.add("operator")
        if self.s[:1].isalpha():
            out.add(" ")
        out.add(self.s)

    def base_name(self):
        return "operator" + self.s


class _Conversion(_Node):
    """``operator int``: its type is read in the scope of the template being written."""

    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t

    def left(self, out):
        out.add("operator ")
        pushed = out.current is not None
        if pushed:
            out.templates.append(out.current.args)
        _show(self.type, out)
        if pushed:
            out.templates.pop()

    def base_name(self):
        return "operator"


class _Lambda(_Node):
    __slots__ = ("params", "num")

    def __init__(self, params, num):
        self.params, self.num = params, num

    def left(self, out):
        out.add("{lambda(")
        out.lambda_params += 1
        _write_args(self.params, out)
        out.lambda_params -= 1
        out.add(f")#{self.num}}}")

    def base_name(self):
        return "{lambda}"


class _Local(_Node):
    """``function::entity``."""

    __slots__ = ("enc", "entity")

    def __init__(self, enc, entity):
        self.enc, self.entity = enc, entity

    def left(self, out):
        _show(self.enc, out)
        out.add("::")
        _show(self.entity, out)

    def base_name(self):
        return self.entity.base_name()


class _Prefixed(_Node):
    """``vtable for X``, ``non-virtual thunk to X``, ``X [clone .cold]``, ``decltype (e)``."""

    __slots__ = ("before", "node", "after")

    def __init__(self, before, node, after=""):
        self.before, self.node, self.after = before, node, after

    def left(self, out):
        out.add(self.before)
        _show(self.node, out)
        out.add(self.after)


class _CtorVtable(_Node):
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def left(self, out):
        out.add("construction vtable for ")
        _show(self.a, out)
        out.add("-in-")
        _show(self.b, out)


class _CvName(_Node):
    """A member function's name with the cv- and ref-qualifiers of ``this``."""

    __slots__ = ("name", "cv", "ref")

    def __init__(self, name, cv, ref):
        self.name, self.cv, self.ref = name, cv, ref

    def left(self, out):
        _show(self.name, out)

    def base_name(self):
        return self.name.base_name()


# --------------------------------------------------------------------------- types
class _Builtin(_Name):
    __slots__ = ("code",)

    def __init__(self, s, code=""):
        self.s, self.code = s, code


class _Quals(_Node):
    """A type with cv-qualifiers (``char const``) or a vendor qualifier (``int foo``); a
    qualified array is an array of qualified elements (``char const [3]``)."""

    __slots__ = ("type", "q")

    def __init__(self, t, q):
        self.type, self.q = t, q

    def _array(self, out):
        t = self.type.resolved(out)
        return _Array(t.dim, _Quals(t.type, self.q)) if isinstance(t, _Array) else None

    def rhs(self, out):
        return self.type.resolved(out).rhs(out)

    def _own(self, out):
        """The qualifier to write: none when the type it qualifies (a template argument) has it."""
        t = self.type.resolved(out)
        return "" if isinstance(t, _Quals) and t.q == self.q else self.q

    def left(self, out):
        a = self._array(out)
        if a is not None:
            a.left(out)
            return
        self.type.left(out)
        if self.type.resolved(out).rhs(out) != "function":
            out.add(self._own(out))

    def right(self, out):
        a = self._array(out)
        if a is not None:
            a.right(out)
            return
        self.type.right(out)
        if self.type.resolved(out).rhs(out) == "function":
            out.add(self._own(out))

    def base_name(self):
        return self.type.base_name()


class _Pointer(_Node):
    """``T*``, ``T&``, ``T&&`` (``sym``), ``int (*) [3]``, ``void (*)()``."""

    __slots__ = ("type", "sym")

    def __init__(self, t, sym):
        self.type, self.sym = t, sym

    def _scope(self, out):
        """The argument lists a reference to a template parameter is read with: those it was
        first written with (libiberty's saved scopes: the reference may come back by
        substitution outside the function it was read in, and still names that one's
        argument), None the first time."""
        if self.sym == "*" or type(self.type) is not _TemplateParam or out.lambda_params:
            return None
        key = id(self.type)
        saved = out.saved.get(key)
        if saved is None:
            out.saved[key] = list(out.templates)
        return saved

    def collapsed(self, out):
        """(pointee, symbol) with references to references collapsed (``T& &&`` is ``T&``)."""
        t, sym = self.type.resolved(out), self.sym
        if sym != "*":
            k = 0
            while isinstance(t, _Pointer) and t.sym != "*":
                sym = "&&" if (sym == "&&" and t.sym == "&&") else "&"
                t = t.type.resolved(out)
                k += 1
                if k > MAX_DEPTH:
                    raise _Fail("too deep")
        return t, sym

    def rhs(self, out):
        scope = self._scope(out)
        held = out.templates
        if scope is not None:
            out.templates = scope
        try:
            return "inner" if self.collapsed(out)[0].rhs(out) else ""
        finally:
            out.templates = held

    def left(self, out):
        scope = self._scope(out)
        held = out.templates
        if scope is not None:
            out.templates = scope
        t, sym = self.collapsed(out)
        t.left(out)
        kind = t.rhs(out)
        if kind == "array":
            out.add(" (")
        elif kind == "function":
            out.add("(")
        out.add(sym)
        out.templates = held

    def right(self, out):
        scope = self._scope(out)
        held = out.templates
        if scope is not None:
            out.templates = scope
        t, _ = self.collapsed(out)
        if t.rhs(out) in ("array", "function"):
            out.add(")")
        t.right(out)
        out.templates = held


class _PtrMem(_Node):
    __slots__ = ("cls", "type")

    def __init__(self, cls, t):
        self.cls, self.type = cls, t

    def rhs(self, out):
        return "inner" if self.type.resolved(out).rhs(out) else ""

    def left(self, out):
        t = self.type.resolved(out)
        t.left(out)
        kind = t.rhs(out)
        if kind == "function":
            out.add("(")
        elif kind == "array":
            out.add(" (")
        else:
            out.add(" ")
        _show(self.cls, out)
        out.add("::*")

    def right(self, out):
        t = self.type.resolved(out)
        if t.rhs(out) in ("array", "function"):
            out.add(")")
        t.right(out)


class _Array(_Node):
    __slots__ = ("dim", "type")

    def __init__(self, dim, t):
        self.dim, self.type = dim, t

    def rhs(self, out):
        return "array"

    def left(self, out):
        self.type.left(out)

    def right(self, out):
        if out.last != "]":
            out.add(" ")
        out.add("[")
        if self.dim is not None:
            _show(self.dim, out)
        out.add("]")
        self.type.right(out)


class _Function(_Node):
    """A function type: ``ret (params) cv ref``."""

    __slots__ = ("ret", "params", "cv", "ref")

    def __init__(self, ret, params, cv="", ref=""):
        self.ret, self.params, self.cv, self.ref = ret, params, cv, ref

    def rhs(self, out):
        return "function"

    def left(self, out):
        if self.ret is not None:
            r = self.ret.resolved(out)
            self.ret.left(out)
            if not r.rhs(out):
                out.add(" ")

    def right(self, out):
        out.add("(")
        _write_args(self.params, out)
        out.add(")")
        if self.ret is not None:
            self.ret.right(out)
        out.add(self.cv)
        out.add(self.ref)


class _Encoding(_Node):
    """A function: ``[ret ]name(params)[ cv][ ref]``, written with the function's template
    arguments in scope when its name is a template."""

    __slots__ = ("ret", "params", "cv", "ref", "name")

    def __init__(self, ret, params, cv, ref, name):
        self.ret, self.params, self.cv, self.ref, self.name = ret, params, cv, ref, name

    def left(self, out):
        typed = self.name.entity if isinstance(self.name, _Local) else self.name
        pushed = isinstance(typed, _Template)
        if pushed:
            out.templates.append(typed.args)
        if self.ret is not None:
            r = self.ret.resolved(out)
            self.ret.left(out)
            if not r.rhs(out):
                out.add(" ")
        _show(self.name, out)
        out.add("(")
        _write_args(self.params, out)
        out.add(")")
        if self.ret is not None:
            self.ret.right(out)
        out.add(self.cv)
        out.add(self.ref)
        if pushed:
            out.templates.pop()

    def base_name(self):
        return self.name.base_name()


class _Vector(_Node):
    __slots__ = ("dim", "type")

    def __init__(self, dim, t):
        self.dim, self.type = dim, t

    def left(self, out):
        _show(self.type, out)
        out.add(" __vector(")
        _show(self.dim, out)
        out.add(")")


class _Pack(_Node):
    """A template argument pack (``J…E``): its arguments, written with ", " between."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def left(self, out):
        _write_args(self.items, out)


class _TemplateParam(_Node):
    """``T_``: the template argument it names in the innermost function template being
    written; the argument is written with that function's arguments out of scope (it may
    itself name an outer one's)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def _lookup(self, out):
        """(argument, number of argument lists in scope for it); a generic lambda's parameter
        (``auto:1``) inside its parameters."""
        if out.lambda_params:
            return _Name(f"auto:{self.index + 1}"), len(out.templates)
        level = len(out.templates)
        if level == 0 or self.index >= len(out.templates[level - 1]):
            raise _Fail("template parameter out of scope")
        return out.templates[level - 1][self.index], level - 1

    def resolved(self, out):
        node, level = self._lookup(out)
        if isinstance(node, (_TemplateParam, _Bound)):
            held = out.templates
            out.templates = held[:level]
            try:
                return node.resolved(out)
            finally:
                out.templates = held
        return node

    def rhs(self, out):
        return self.resolved(out).rhs(out)

    def _write(self, out, part):
        node, level = self._lookup(out)
        out.depth += 1
        if out.depth > MAX_DEPTH:
            raise _Fail("too deep")
        held = out.templates
        out.templates = held[:level]
        getattr(node, part)(out)
        out.templates = held
        out.depth -= 1

    def left(self, out):
        self._write(out, "left")

    def right(self, out):
        self._write(out, "right")


class _Bound(_Node):
    """A template parameter bound to one element of its pack (inside a pack expansion)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def resolved(self, out):
        return self.node.resolved(out)

    def rhs(self, out):
        return self.node.rhs(out)

    def left(self, out):
        self.node.left(out)

    def right(self, out):
        self.node.right(out)


class _PackExpansion(_Node):
    """``Dp T``: ``T`` once per element of the pack it holds."""

    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t

    def left(self, out):
        pack = _find_pack(self.type, out, 0, set())
        if pack is None:
            _show(self.type, out)
            out.add("...")
            return
        for k, item in enumerate(pack.items):
            if k:
                out.add(", ")
            _show(_substitute_pack(self.type, pack, item, out, 0, {}), out)


def _children(node):
    for name in node.__slots__:
        child = getattr(node, name, None)
        if isinstance(child, _Node):
            yield name, child
        elif isinstance(child, list):
            for c in child:
                if isinstance(c, _Node):
                    yield name, c


def _find_pack(node, out, depth, seen):
    """The first argument pack a template parameter inside ``node`` stands for (each shared
    node visited once: substitutions make the tree a graph, exponential when walked as a tree)."""
    if depth > MAX_DEPTH:
        raise _Fail("too deep")
    if id(node) in seen:
        return None
    seen.add(id(node))
    if isinstance(node, _TemplateParam):
        r = node.resolved(out)
        return r if isinstance(r, _Pack) else None
    for _, child in _children(node):
        p = _find_pack(child, out, depth + 1, seen)
        if p is not None:
            return p
    return None


def _substitute_pack(node, pack, item, out, depth, memo):
    """A copy of ``node`` with the template parameters that stand for ``pack`` bound to
    ``item`` (``memo``: the copies made so far, by the id of their original)."""
    if depth > MAX_DEPTH:
        raise _Fail("too deep")
    done = memo.get(id(node))
    if done is not None:
        return done
    if isinstance(node, _TemplateParam):
        new_node = _Bound(item) if node.resolved(out) is pack else node
        memo[id(node)] = new_node
        return new_node
    slots = node.__slots__
    changed = {}
    for name in slots:
        child = getattr(node, name, None)
        if isinstance(child, _Node):
            new = _substitute_pack(child, pack, item, out, depth + 1, memo)
            if new is not child:
                changed[name] = new
        elif isinstance(child, list):
            new_list = [_substitute_pack(c, pack, item, out, depth + 1, memo) if isinstance(c, _Node) else c
                        for c in child]
            if any(a is not b for a, b in zip(new_list, child)):
                changed[name] = new_list
    if not changed:
        memo[id(node)] = node
        return node
    copy = object.__new__(type(node))
    for name in slots:
        setattr(copy, name, changed.get(name, getattr(node, name)))
    memo[id(node)] = copy
    return copy


# --------------------------------------------------------------------------- expressions
class _Expr(_Node):
    """An expression, written as c++filt writes it (operands in parentheses but names)."""

    __slots__ = ("op", "args")

    def __init__(self, op, args):
        self.op, self.args = op, args

    def left(self, out):
        op, a = self.op, self.args
        if op == "call":
            _sub(a[0], out)
            out.add("(")
            _write_args(a[1:], out)
            out.add(")")
        elif op in ("sizeof ", "alignof ", "sizeof...", "noexcept"):
            out.add(op.strip() + " (")
            _show(a[0], out)
            out.add(")")
        elif op == "cast":
            out.add("(")
            _show(a[0], out)
            out.add(")")
            _sub(a[1], out)
        elif op in ("static_cast", "dynamic_cast", "const_cast", "reinterpret_cast"):
            out.add(op + "<")
            _show(a[0], out)
            out.add(">(")
            _show(a[1], out)
            out.add(")")
        elif op == "?":
            _sub(a[0], out)
            out.add("?")
            _sub(a[1], out)
            out.add(" : ")
            _sub(a[2], out)
        elif op in (".", "->"):
            _sub(a[0], out)
            out.add(op)
            _show(a[1], out)
        elif op == "[]":
            _sub(a[0], out)
            out.add("[")
            _show(a[1], out)
            out.add("]")
        elif len(a) == 1:
            out.add(op)
            _sub(a[0], out)
        else:
            _sub(a[0], out)
            out.add(op)
            _sub(a[1], out)


def _sub(node, out):
    """An operand: in parentheses unless it is a name or a function parameter."""
    r = node.resolved(out)
    simple = type(r) in (_Name, _Qual, _Literal)
    if not simple:
        out.add("(")
    _show(node, out)
    if not simple:
        out.add(")")


class _IntLiteral(_Node):
    __slots__ = ("type", "value")

    #: literal suffixes by builtin type code (c++filt's)
    SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}

    def __init__(self, t, value):
        self.type, self.value = t, value

    def left(self, out):
        code = getattr(self.type, "code", None)
        if code == "b" and self.value in ("0", "1"):
            out.add("false" if self.value == "0" else "true")
            return
        if code in self.SUFFIX:
            out.add(self.value + self.SUFFIX[code])
            return
        out.add("(")
        _show(self.type, out)
        out.add(")")
        out.add(self.value)


# =========================================================================== tables
_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
    "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
    "x": "long long", "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...",
}
_BUILTIN_D = {
    "d": "decimal64", "e": "decimal128", "f": "decimal32", "h": "half", "i": "char32_t", "s": "char16_t",
    "u": "char8_t", "a": "auto", "c": "decltype(auto)", "n": "decltype(nullptr)",
}
_BUILTIN_NODES = {k: _Builtin(v, k) for k, v in _BUILTIN.items()}
_BUILTIN_D_NODES = {k: _Builtin(v, "D" + k) for k, v in _BUILTIN_D.items()}

# (code) -> (spelling, arity); arity is the number of operands in an expression
_OPERATORS = {
    "nw": ("new", 3), "na": ("new[]", 3), "dl": ("delete", 1), "da": ("delete[]", 1),
    "ps": ("+", 1), "ng": ("-", 1), "ad": ("&", 1), "de": ("*", 1), "co": ("~", 1),
    "pl": ("+", 2), "mi": ("-", 2), "ml": ("*", 2), "dv": ("/", 2), "rm": ("%", 2), "an": ("&", 2),
    "or": ("|", 2), "eo": ("^", 2), "aS": ("=", 2), "pL": ("+=", 2), "mI": ("-=", 2), "mL": ("*=", 2),
    "dV": ("/=", 2), "rM": ("%=", 2), "aN": ("&=", 2), "oR": ("|=", 2), "eO": ("^=", 2), "ls": ("<<", 2),
    "rs": (">>", 2), "lS": ("<<=", 2), "rS": (">>=", 2), "eq": ("==", 2), "ne": ("!=", 2), "lt": ("<", 2),
    "gt": (">", 2), "le": ("<=", 2), "ge": (">=", 2), "ss": ("<=>", 2), "nt": ("!", 1), "aa": ("&&", 2),
    "oo": ("||", 2), "pp": ("++", 1), "mm": ("--", 1), "cm": (",", 2), "pm": ("->*", 2), "pt": ("->", 2),
    "cl": ("()", 2), "ix": ("[]", 2), "qu": ("?", 3), "st": ("sizeof ", 1), "sz": ("sizeof ", 1),
    "at": ("alignof ", 1), "az": ("alignof ", 1), "aw": ("co_await", 1),
}

_STD_SUBS = {
    "t": ("std", "std", ""),
    "a": ("std::allocator", "std::allocator", "allocator"),
    "b": ("std::basic_string", "std::basic_string", "basic_string"),
    "s": ("std::string", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "basic_string"),
    "i": ("std::istream", "std::basic_istream<char, std::char_traits<char> >", "basic_istream"),
    "o": ("std::ostream", "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream"),
    "d": ("std::iostream", "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream"),
}

_NUMBER = re.compile(r"n?\d+")
_DIGITS = re.compile(r"\d+")
_CLONE = re.compile(r"\.(?:[a-z_]+|\d+)(?:\.\d+)*")
_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# =========================================================================== Itanium parser
class _Itanium:
    """Recursive-descent reader of one ``_Z`` name (the grammar in the module doc)."""

    __slots__ = ("s", "i", "n", "subs", "depth", "verbose", "last_name", "in_conversion")

    def __init__(self, s: str, verbose: bool):
        self.s = s + "\0\0"  # two sentinels: peeking one or two ahead needs no bounds test
        self.i = 0
        self.n = len(s)
        self.subs = []
        self.depth = 0
        self.verbose = verbose
        self.last_name = None
        self.in_conversion = False

    # ------------------------------------------------------------------ helpers
    def peek(self, k=0) -> str:
        """The character ``k`` ahead ('' at the end)."""
        c = self.s[self.i + k]
        return "" if c == "\0" else c

    def eat(self, c: str) -> bool:
        if self.s[self.i] == c if len(c) == 1 else self.s.startswith(c, self.i):
            self.i += len(c)
            return True
        return False

    def need(self, c: str):
        if not self.eat(c):
            raise _Fail(f"expected {c!r} at {self.i}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail("too deep")

    def number(self) -> int:
        """``[n] <digits>`` (n: negative)."""
        m = _NUMBER.match(self.s, self.i)
        if m is None:
            raise _Fail("number expected")
        self.i = m.end()
        return int(m.group(0).replace("n", "-"))

    def seq_id(self) -> int:
        """A base-36 number ending in ``_`` ('' is 0, else the value + 1)."""
        if self.eat("_"):
            return 0
        v = 0
        while True:
            c = self.peek()
            if c == "_":
                self.i += 1
                return v + 1
            k = _B36.find(c) if c else -1
            if k < 0:
                raise _Fail("bad seq-id")
            v = v * 36 + k
            self.i += 1
            if v > 1 << 24:
                raise _Fail("seq-id too large")

    def add_sub(self, node):
        self.subs.append(node)

    # ------------------------------------------------------------------ top level
    def mangled(self):
        self.need("_Z")
        enc = self.encoding()
        while self.i < self.n and self.peek() == ".":
            m = _CLONE.match(self.s, self.i)
            if not m:
                break
            enc = _Prefixed("", enc, f" [clone {m.group(0)}]")
            self.i = m.end()
        if self.i != self.n:
            raise _Fail(f"trailing characters at {self.i}")
        return enc

    def encoding(self, local=False):
        self.enter()
        if self.peek() in ("T", "G"):
            node = self.special_name()
            self.depth -= 1
            return node
        name = self.name()
        if self.i >= self.n or self.peek() in ("E", "."):
            self.depth -= 1
            return name
        # a function: its type follows the name
        cv, ref, inner = "", "", name
        if isinstance(name, _CvName):
            cv, ref, inner = name.cv, name.ref, name.name
        elif isinstance(name, _Local) and isinstance(name.entity, _CvName):
            e = name.entity
            cv, ref, inner = e.cv, e.ref, _Local(name.enc, e.name)
        ret = None
        if _has_return_type(inner):
            ret = self.type()
            if local:  # a function a local name is in is written without its return type
                ret = None
        params = self.bare_params()
        self.depth -= 1
        return _Encoding(ret, params, cv, ref, inner)

    def bare_params(self) -> list:
        params = []
        if self.peek() == "v" and (self.i + 1 >= self.n or self.s[self.i + 1] in "E."):
            self.i += 1
            return params
        while self.i < self.n and self.peek() not in ("E", "."):
            params.append(self.type())
        if not params:
            raise _Fail("no parameters")
        return params

    # ------------------------------------------------------------------ names
    def name(self):
        self.enter()
        c = self.peek()
        if c == "N":
            node = self.nested_name()
        elif c == "Z":
            node = self.local_name()
        elif c == "S" and self.peek(1) != "t":
            node = self.substitution(prefix=False)
            if self.peek() == "I":
                node = _Template(node, self.template_args())
        else:
            if c == "S":  # St <unqualified-name>
                self.i += 2
                node = _Qual(_Name("std"), self.unqualified_name(None))
            else:
                node = self.unqualified_name(None)
            if self.peek() == "I":
                self.add_sub(node)
                node = _Template(node, self.template_args())
        self.depth -= 1
        return node

    def nested_name(self):
        self.need("N")
        cv = self.cv_qualifiers()
        ref = ""
        if self.eat("R"):
            ref = " &"
        elif self.eat("O"):
            ref = " &&"
        node = None
        s, subs = self.s, self.subs
        while True:
            c = s[self.i]
            if c == "E":
                self.i += 1
                break
            from_sub = False
            if c.isdigit():
                comp = self.source_name()
                if s[self.i] == "B":
                    comp = self.abi_tags(comp)
            elif c == "S":
                if s[self.i + 1] == "t":
                    self.i += 2
                    comp = _Name("std")
                else:
                    comp = self.substitution(prefix=True)
                from_sub = True
            elif c == "I":
                if node is None:
                    raise _Fail("template arguments without a name")
                node = _Template(node, self.template_args())
                if s[self.i] != "E":
                    subs.append(node)
                continue
            elif c == "T":
                comp = self.template_param()
            elif c == "D" and s[self.i + 1] in "tT":
                comp = self.type()
            elif c == "M":  # the initializer scope of a lambda (a data member)
                self.i += 1
                continue
            elif c == "\0":
                raise _Fail("unterminated nested name")
            else:
                comp = self.unqualified_name(node)
            node = comp if node is None else _Qual(node, comp)
            if not from_sub and s[self.i] != "E":
                subs.append(node)
        if node is None:
            raise _Fail("empty nested name")
        if cv or ref:
            return _CvName(node, cv, ref)
        return node

    def local_name(self):
        self.need("Z")
        enc = self.encoding(local=True)
        self.need("E")
        if self.eat("s"):
            self.discriminator()
            return _Local(enc, _Literal("string literal"))
        if self.eat("d"):
            num = 0
            if self.peek() != "_":
                num = self.number() + 1
            self.need("_")
            entity = self.name()
            return _Local(enc, _Qual(_Literal(f"{{default arg#{num + 1}}}"), entity))
        entity = self.name()
        self.discriminator()
        return _Local(enc, entity)

    def discriminator(self):
        if self.peek() != "_":
            return
        self.i += 1
        if self.eat("_"):
            self.number()
            self.need("_")
        elif self.peek().isdigit():
            self.i += 1
        else:
            raise _Fail("bad discriminator")

    def unqualified_name(self, scope):
        c = self.peek()
        if c.isdigit():
            node = self.source_name()
        elif c == "L":  # internal linkage (GCC)
            self.i += 1
            node = self.source_name()
            self.discriminator()
        elif c == "C" or (c == "D" and self.peek(1) in "0124589"):
            node = self.ctor_dtor_name(scope)
        elif c == "U":
            node = self.unnamed_type()
        elif c == "D" and self.peek(1) == "C":  # structured binding
            self.i += 2
            names = []
            while not self.eat("E"):
                names.append(self.source_name().s)
                if self.i >= self.n:
                    raise _Fail("unterminated binding")
            node = _Literal("[" + ", ".join(names) + "]")
        elif c.islower():
            node = self.operator_name()
        else:
            raise _Fail(f"bad name at {self.i}")
        if self.s[self.i] == "B":
            node = self.abi_tags(node)
        return node

    def abi_tags(self, node):
        """``B <source-name>``…: ``name[abi:cxx11]`` (the tags leave ``last_name`` alone)."""
        held = self.last_name
        while self.s[self.i] == "B":
            self.i += 1
            node = _AbiTag(node, self.source_name().s)
        self.last_name = held
        return node

    def source_name(self):
        m = _DIGITS.match(self.s, self.i)
        if m is None:
            raise _Fail("bad source name")
        j = m.end()
        n = int(m.group(0))
        if n <= 0 or j + n > self.n:
            raise _Fail("bad source name")
        s = self.s[j:j + n]
        self.i = j + n
        if s.startswith("_GLOBAL_") and len(s) > 9 and s[8] in "._$" and s[9] == "N":
            node = _Name("(anonymous namespace)")
        else:
            node = _Name(s)
        self.last_name = node
        return node

    def ctor_dtor_name(self, scope):
        if self.last_name is None and scope is None:
            raise _Fail("constructor without a class")
        # the last source name read (libiberty's ``last_name``; template arguments and ABI tags
        # do not change it): the class's name in ordinary names
        base = self.last_name.base_name() if self.last_name is not None else scope.base_name()
        c = self.s[self.i]
        if c == "C":
            self.i += 1
            inheriting = self.eat("I")
            if self.peek() not in "12345":
                raise _Fail("bad constructor")
            self.i += 1
            if inheriting:
                self.type()
            return _Ctor(base, False)
        self.i += 1
        if self.peek() not in "012345":
            raise _Fail("bad destructor")
        self.i += 1
        return _Ctor(base, True)

    def unnamed_type(self):
        self.need("U")
        if self.eat("t"):
            num = 1
            if self.peek() != "_":
                num = self.number() + 2
            self.need("_")
            return _Literal(f"{{unnamed type#{num}}}")
        if self.eat("l"):
            if self.peek() == "T":  # a generic lambda's template parameter declarations
                raise _Fail("lambda template parameters")
            params = self.bare_params()
            self.need("E")
            num = 1
            if self.peek() != "_":
                num = self.number() + 2
            self.need("_")
            return _Lambda(params, num)
        raise _Fail("bad unnamed type")

    def operator_name(self):
        code = self.s[self.i:self.i + 2]
        if code == "cv":
            self.i += 2
            saved = self.in_conversion
            self.in_conversion = True
            t = self.type()
            self.in_conversion = saved
            return _Conversion(t)
        if code == "li":
            self.i += 2
            return _Operator('"" ' + self.source_name().s)
        if code[:1] == "v" and code[1:].isdigit():
            self.i += 2
            return _Operator(" " + self.source_name().s)
        op = _OPERATORS.get(code)
        if op is None:
            raise _Fail(f"unknown operator {code!r}")
        self.i += 2
        return _Operator(op[0].strip())

    # ------------------------------------------------------------------ special names
    def special_name(self):
        s = self.s
        if self.eat("TV"):
            return _Prefixed("vtable for ", self.type())
        if self.eat("TT"):
            return _Prefixed("VTT for ", self.type())
        if self.eat("TI"):
            return _Prefixed("typeinfo for ", self.type())
        if self.eat("TS"):
            return _Prefixed("typeinfo name for ", self.type())
        if self.eat("TH"):
            return _Prefixed("TLS init function for ", self.name())
        if self.eat("TW"):
            return _Prefixed("TLS wrapper function for ", self.name())
        if self.eat("TA"):
            return _Prefixed("template parameter object for ", self.template_arg())
        if self.eat("Th"):
            self.call_offset("h")
            return _Prefixed("non-virtual thunk to ", self.encoding())
        if self.eat("Tv"):
            self.call_offset("v")
            return _Prefixed("virtual thunk to ", self.encoding())
        if self.eat("Tc"):
            self.call_offset(None)
            self.call_offset(None)
            return _Prefixed("covariant return thunk to ", self.encoding())
        if self.eat("TC"):
            a = self.type()
            self.number()
            self.need("_")
            b = self.type()
            return _CtorVtable(b, a)
        if self.eat("GV"):
            return _Prefixed("guard variable for ", self.name())
        if self.eat("GR"):
            node = self.name()
            num = self.seq_id()
            return _Prefixed(f"reference temporary #{num} for ", node)
        if self.eat("GA"):
            return _Prefixed("hidden alias for ", self.encoding())
        if self.eat("GTt"):
            return _Prefixed("transaction clone for ", self.encoding())
        if self.eat("GTn"):
            return _Prefixed("non-transaction clone for ", self.encoding())
        raise _Fail(f"unknown special name {s[self.i:self.i + 2]!r}")

    def call_offset(self, kind):
        if kind is None:
            kind = self.peek()
            self.i += 1
        if kind == "h":
            self.number()
            self.need("_")
        elif kind == "v":
            self.number()
            self.need("_")
            self.number()
            self.need("_")
        else:
            raise _Fail("bad call offset")

    # ------------------------------------------------------------------ substitutions, template params
    def substitution(self, prefix: bool):
        self.need("S")
        c = self.peek()
        if c.islower():
            sub = _STD_SUBS.get(c)
            if sub is None:
                raise _Fail(f"unknown std abbreviation S{c}")
            self.i += 1
            full = self.verbose or (prefix and self.peek() in ("C", "D"))
            node = _StdSub(sub[0], sub[1], sub[2], full)
            if sub[2]:
                self.last_name = node
            return node
        k = self.seq_id()
        if k >= len(self.subs):
            raise _Fail("substitution out of range")
        return self.subs[k]

    def template_param(self):
        self.need("T")
        k = self.seq_id()
        return _TemplateParam(k)

    def template_args(self) -> list:
        self.enter()
        self.need("I")
        hold_last = self.last_name
        conv = self.in_conversion
        self.in_conversion = False
        args = []
        while not self.eat("E"):
            if self.i >= self.n:
                raise _Fail("unterminated template arguments")
            args.append(self.template_arg())
        self.in_conversion = conv
        self.last_name = hold_last
        self.depth -= 1
        return args

    def template_arg(self):
        c = self.peek()
        if c == "X":
            self.i += 1
            e = self.expression()
            self.need("E")
            return e
        if c == "L":
            return self.expr_primary()
        if c == "J":
            self.i += 1
            items = []
            while not self.eat("E"):
                if self.i >= self.n:
                    raise _Fail("unterminated pack")
                items.append(self.template_arg())
            return _Pack(items)
        return self.type()

    # ------------------------------------------------------------------ types
    def cv_qualifiers(self) -> str:
        q = []
        while True:
            c = self.peek()
            if c == "r":
                q.append(" restrict")
            elif c == "V":
                q.append(" volatile")
            elif c == "K":
                q.append(" const")
            else:
                break
            self.i += 1
        q.reverse()
        return "".join(q)

    def type(self):
        c = self.s[self.i]
        b = _BUILTIN_NODES.get(c)
        if b is not None:
            self.i += 1
            return b
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail("too deep")
        try:
            return self._type(c)
        finally:
            self.depth -= 1

    def _type(self, c):
        if c == "\0":
            raise _Fail("type expected")
        if c in "rVK":
            cv = self.cv_qualifiers()
            # qualifiers of a function type apply to ``this``: the unqualified type is no candidate
            t = self.function_type() if self.peek() == "F" else self.type()
            if type(t) is _Function:
                node = _Function(t.ret, t.params, t.cv + cv, t.ref)
            else:
                node = _Quals(t, cv)
            self.add_sub(node)
            return node
        if c == "u":
            self.i += 1
            node = self.source_name()
            self.add_sub(node)
            return node
        if c == "F":
            node = self.function_type()
            self.add_sub(node)
            return node
        if c == "N":
            node = self.nested_name()
            self.subs.append(node)
            return node
        if c.isdigit() or c == "Z":
            node = self.name()
            self.subs.append(node)
            return node
        if c == "A":
            node = self.array_type()
            self.add_sub(node)
            return node
        if c == "M":
            self.i += 1
            cls = self.type()
            mem = self.type()
            node = _PtrMem(cls, mem)
            self.add_sub(node)
            return node
        if c == "T":
            node = self.template_param()
            self.add_sub(node)
            if self.peek() == "I" and not self.in_conversion:
                node = _Template(node, self.template_args())
                self.add_sub(node)
            return node
        if c == "S":
            nxt = self.peek(1)
            if nxt.isdigit() or nxt == "_" or nxt.isupper():
                node = self.substitution(prefix=False)
                if self.peek() == "I":
                    node = _Template(node, self.template_args())
                    self.add_sub(node)
                return node
            node = self.name()
            if not isinstance(node, _StdSub):
                self.add_sub(node)
            return node
        if c in "PROCG":
            self.i += 1
            t = self.type()
            if c == "P":
                node = _Pointer(t, "*")
            elif c == "R":
                node = _Pointer(t, "&")
            elif c == "O":
                node = _Pointer(t, "&&")
            elif c == "C":
                node = _Quals(t, " _Complex")
            else:
                node = _Quals(t, " _Imaginary")
            self.add_sub(node)
            return node
        if c == "U":
            self.i += 1
            q = self.source_name().s
            if self.peek() == "I":
                q += _text(_Template(_Name(""), self.template_args()))
            t = self.type()
            node = _Quals(t, " " + q)
            self.add_sub(node)
            return node
        if c == "D":
            d = self.peek(1)
            bd = _BUILTIN_D_NODES.get(d)
            if bd is not None:
                self.i += 2
                return bd
            if d == "F":  # _FloatN
                self.i += 2
                n = self.number()
                x = "x" if self.eat("x") else ""
                self.need("_")
                return _Builtin(f"_Float{n}{x}")
            if d in ("t", "T"):
                self.i += 2
                e = self.expression()
                self.need("E")
                node = _Prefixed("decltype (", e, ")")
                self.add_sub(node)
                return node
            if d == "p":
                self.i += 2
                node = _PackExpansion(self.type())
                self.add_sub(node)
                return node
            if d == "v":
                self.i += 2
                if self.peek() == "_":
                    self.i += 1
                    dim = self.expression()
                    self.need("_")
                else:
                    dim = _Literal(str(self.number()))
                    self.need("_")
                node = _Vector(dim, self.type())
                self.add_sub(node)
                return node
            if d == "o" or d == "x":  # noexcept / transaction_safe function type
                self.i += 2
                if self.peek() != "F":
                    raise _Fail("function type expected")
                f = self.function_type()
                f.ref += " noexcept" if d == "o" else " transaction_safe"
                self.add_sub(f)
                return f
            if d in ("O", "w"):  # noexcept(expr), throw(types)
                raise _Fail("unsupported exception specification")
        raise _Fail(f"unknown type at {self.i}")

    def function_type(self):
        self.need("F")
        self.eat("Y")  # extern "C"
        ret = self.type()
        params = []
        ref = ""
        while True:
            c = self.peek()
            if c == "E":
                self.i += 1
                break
            if c == "R" and self.peek(1) == "E":
                self.i += 2
                ref = " &"
                break
            if c == "O" and self.peek(1) == "E":
                self.i += 2
                ref = " &&"
                break
            if not c:
                raise _Fail("unterminated function type")
            params.append(self.type())
        if len(params) == 1 and params[0] is _BUILTIN_NODES["v"]:
            params = []
        return _Function(ret, params, "", ref)

    def array_type(self):
        self.need("A")
        c = self.peek()
        if c == "_":
            dim = None
        elif c.isdigit():
            j = self.i
            while j < self.n and self.s[j].isdigit():
                j += 1
            dim = _Literal(self.s[self.i:j])
            self.i = j
        else:
            dim = self.expression()
        self.need("_")
        return _Array(dim, self.type())

    # ------------------------------------------------------------------ expressions
    def expr_primary(self):
        self.need("L")
        if self.peek() == "_" and self.peek(1) == "Z":
            self.i += 2
            enc = self.encoding()
            self.need("E")
            return enc
        if self.eat("Z"):
            enc = self.encoding()
            self.need("E")
            return enc
        t = self.type()
        j = self.i
        while j < self.n and self.s[j] != "E":
            j += 1
        if j >= self.n:
            raise _Fail("unterminated literal")
        raw = self.s[self.i:j]
        self.i = j + 1
        if raw.startswith("n"):
            raw = "-" + raw[1:]
        if isinstance(t, _Builtin) and t.code == "Dn":
            return _Literal("(decltype(nullptr))" + (raw or "0"))
        return _IntLiteral(t, raw)

    def expression(self):
        self.enter()
        try:
            return self._expression()
        finally:
            self.depth -= 1

    def _expression(self):
        c = self.peek()
        if c == "L":
            return self.expr_primary()
        if c == "T":
            return self.template_param()
        if c == "f" and self.peek(1) == "p":
            self.i += 2
            self.cv_qualifiers()
            num = 1 if self.peek() == "_" else self.number() + 2
            self.need("_")
            return _Literal(f"{{parm#{num}}}")
        if c == "f" and self.peek(1) == "L":
            self.i += 2
            self.number()
            self.need("p")
            self.cv_qualifiers()
            num = 1 if self.peek() == "_" else self.number() + 2
            self.need("_")
            return _Literal(f"{{parm#{num}}}")
        if c == "g" and self.peek(1) == "s":
            self.i += 2
            node = self.expression()
            return _Prefixed("::", node)
        if c == "s" and self.peek(1) == "r":
            self.i += 2
            return self.unresolved_name()
        if c == "s" and self.peek(1) == "Z":
            self.i += 2
            return _Expr("sizeof...", [self.template_param()])
        if c == "c" and self.peek(1) == "l":
            self.i += 2
            args = []
            while not self.eat("E"):
                if self.i >= self.n:
                    raise _Fail("unterminated call")
                args.append(self.expression())
            return _Expr("call", args)
        if c == "c" and self.peek(1) == "v":
            self.i += 2
            t = self.type()
            if self.eat("_"):
                args = []
                while not self.eat("E"):
                    args.append(self.expression())
                    if self.i >= self.n:
                        raise _Fail("unterminated cast")
                return _Expr("cast", [t, _Pack(args)])
            return _Expr("cast", [t, self.expression()])
        for code, op in (("sc", "static_cast"), ("dc", "dynamic_cast"), ("cc", "const_cast"),
                         ("rc", "reinterpret_cast")):
            if self.eat(code):
                t = self.type()
                return _Expr(op, [t, self.expression()])
        if self.s.startswith("st", self.i) or self.s.startswith("at", self.i):
            self.i += 2
            return _Expr("sizeof " if c == "s" else "alignof ", [self.type()])
        if c.isdigit() or (c in "od" and self.peek(1) == "n"):
            return self.base_unresolved_name()
        if c == "d" and self.peek(1) == "t":
            self.i += 2
            a = self.expression()
            return _Expr(".", [a, self.base_unresolved_name()])
        if c == "p" and self.peek(1) == "t":
            self.i += 2
            a = self.expression()
            return _Expr("->", [a, self.base_unresolved_name()])
        code = self.s[self.i:self.i + 2]
        op = _OPERATORS.get(code)
        if op is None:
            raise _Fail(f"unknown expression at {self.i}")
        self.i += 2
        spelling, arity = op
        if code in ("nw", "na", "dl", "da"):
            raise _Fail("unsupported new/delete expression")
        if code in ("sz", "az"):
            return _Expr(spelling, [self.expression()])
        if code == "ix":
            a = self.expression()
            return _Expr("[]", [a, self.expression()])
        args = [self.expression() for _ in range(arity)]
        if arity == 3:
            return _Expr("?", args)
        return _Expr(spelling, args)

    def simple_id(self):
        node = self.source_name()
        if self.peek() == "I":
            node = _Template(node, self.template_args())
        return node

    def base_unresolved_name(self):
        """``<simple-id>``, ``on <operator>``, ``dn <destructor>``."""
        if self.eat("on"):
            node = self.operator_name()
        elif self.eat("dn"):
            t = self.type() if not self.peek().isdigit() else self.source_name()
            return _Prefixed("~", t)
        else:
            node = self.source_name()
        if self.peek() == "I":
            node = _Template(node, self.template_args())
        return node

    def unresolved_name(self):
        """What follows ``sr``: a scope (a type, or qualifier levels ended by ``E``) and a name."""
        c = self.peek()
        if c == "N":
            self.i += 1
            scope = self.type()
            if self.peek() == "I":
                scope = _Template(scope, self.template_args())
            while not self.eat("E"):
                if not self.peek().isdigit():
                    raise _Fail("bad qualifier level")
                scope = _Qual(scope, self.simple_id())
        elif c.isdigit():
            scope = None
            while not self.eat("E"):
                if not self.peek().isdigit():
                    raise _Fail("bad qualifier level")
                part = self.simple_id()
                scope = part if scope is None else _Qual(scope, part)
        else:
            scope = self.type()
            if self.peek() == "I":
                scope = _Template(scope, self.template_args())
        if self.eat("on"):
            name = self.operator_name()
        elif self.eat("dn"):
            name = _Prefixed("~", self.type() if not self.peek().isdigit() else self.source_name())
        else:
            name = self.source_name()
        node = _Qual(scope, name)
        if self.peek() == "I":  # the arguments apply to the qualified name (written in parentheses)
            node = _Template(node, self.template_args())
        return node


def _has_return_type(name) -> bool:
    """Whether a function of this name has its return type mangled (template functions
    other than constructors, destructors and conversion operators)."""
    if isinstance(name, _Local):
        return _has_return_type(name.entity)
    if isinstance(name, _Template):
        inner = name.name
        while isinstance(inner, _AbiTag):
            inner = inner.name
        if isinstance(inner, _Qual):
            inner = inner.name
        while isinstance(inner, _AbiTag):
            inner = inner.name
        return not isinstance(inner, (_Ctor, _Conversion))
    return False


def demangle_itanium(name: str, verbose: bool = False):
    """The readable form of an Itanium C++ name (``_Z…``, macOS ``__Z…``), or None."""
    s = name[1:] if name.startswith("__Z") else name
    if not s.startswith("_Z") or len(s) > MAX_MANGLED_CHARS:
        return None
    try:
        node = _Itanium(s, verbose).mangled()
        return _text(node)
    except (_Fail, RecursionError, IndexError, ValueError):
        return None


# =========================================================================== Rust legacy
_RUST_HASH = re.compile(r"h[0-9a-f]{16}$")
_RUST_ESCAPES = {"SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ","}
_RUST_DOLLAR = re.compile(r"\$([A-Z]{1,2}|u[0-9a-f]{1,6})\$")


def _rust_legacy_part(part: str) -> str:
    """One path segment with rustc's escapes undone (``$LT$`` → ``<``, ``$u20$`` → `` ``,
    ``..`` → ``::``); a leading ``_$`` loses its underscore."""
    if part.startswith("_$"):
        part = part[1:]

    def unescape(m):
        code = m.group(1)
        if code in _RUST_ESCAPES:
            return _RUST_ESCAPES[code]
        if code[0] == "u" and len(code) > 1 and code != "u":
            try:
                return chr(int(code[1:], 16))
            except (ValueError, OverflowError):
                raise _Fail("bad escape") from None
        raise _Fail("bad escape")

    if "$" in part:
        part = _RUST_DOLLAR.sub(unescape, part)
        if "$" in part:
            raise _Fail("stray $")
    return part.replace("..", "::")


def _rust_legacy(s: str):
    """``_ZN<len><part>…17h<16 hex>E[suffix]`` → ``a::b::c`` (the hash left out), or None."""
    if not s.startswith("_ZN"):
        return None
    i, n, parts = 3, len(s), []
    while i < n and s[i] != "E":
        j = i
        while j < n and "0" <= s[j] <= "9":  # ASCII digits ("²".isdigit(), and int("²") raises)
            j += 1
        if j == i:
            return None
        k = int(s[i:j])
        if k <= 0 or j + k > n:
            return None
        parts.append(s[j:j + k])
        i = j + k
    if i >= n or len(parts) < 2 or not _RUST_HASH.match(parts[-1]):
        return None
    rest = s[i + 1:]
    if rest and not rest.startswith("."):
        return None
    try:
        return "::".join(_rust_legacy_part(p) for p in parts[:-1])
    except _Fail:
        return None


# =========================================================================== Rust v0
_BASIC = {
    "a": "i8", "b": "bool", "c": "char", "d": "f64", "e": "str", "f": "f32", "h": "u8", "i": "isize",
    "j": "usize", "l": "i32", "m": "u32", "n": "i128", "o": "u128", "s": "i16", "t": "u16", "u": "()",
    "v": "...", "x": "i64", "y": "u64", "z": "!", "p": "_",
}
_B62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _punycode(ascii_part: str, code: str) -> str:
    """RFC 3492 decoding (the parameters Rust's v0 mangling uses)."""
    base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
    out = list(ascii_part)
    n, bias, i, pos = 0x80, 72, 0, 0
    while pos < len(code):
        old_i, w, k = i, 1, base
        while True:
            if pos >= len(code):
                raise _Fail("bad punycode")
            c = code[pos]
            pos += 1
            if "a" <= c <= "z":
                d = ord(c) - 97
            elif "0" <= c <= "9":
                d = ord(c) - 22
            else:
                raise _Fail("bad punycode")
            i += d * w
            t = tmin if k <= bias else tmax if k >= bias + tmax else k - bias
            if d < t:
                break
            w *= base - t
            k += base
            if i > 0x10FFFF * 64:
                raise _Fail("bad punycode")
        length = len(out) + 1
        delta = (i - old_i) // damp if old_i == 0 else (i - old_i) // 2
        delta += delta // length
        k = 0
        while delta > ((base - tmin) * tmax) // 2:
            delta //= base - tmin
            k += base
        bias = k + (base - tmin + 1) * delta // (delta + skew)
        n += i // length
        i %= length
        if n > 0x10FFFF or len(out) > 4096:
            raise _Fail("bad punycode")
        out.insert(i, chr(n))
        i += 1
    return "".join(out)


class _RustV0:
    """Reader and writer of one v0 symbol at once (as rustc-demangle's ``Printer``: each
    production writes as it reads; a back-reference reads again from an earlier position)."""

    __slots__ = ("s", "i", "out", "n_out", "depth", "printing", "bound")

    def __init__(self, s: str):
        self.s = s + "\0\0"
        self.i = 0
        self.out = []
        self.n_out = 0
        self.depth = 0
        self.printing = True
        self.bound = 0   # lifetimes bound by the enclosing binders

    def w(self, text: str):
        if self.printing and text:
            self.out.append(text)
            self.n_out += len(text)
            if self.n_out > MAX_OUTPUT_CHARS:
                raise _Fail("output too long")

    def eat(self, c: str) -> bool:
        if self.s[self.i] == c:
            self.i += 1
            return True
        return False

    def next(self) -> str:
        c = self.s[self.i]
        if c == "\0":
            raise _Fail("unexpected end")
        self.i += 1
        return c

    def b62(self) -> int:
        if self.eat("_"):
            return 0
        x = 0
        while not self.eat("_"):
            k = _B62.find(self.s[self.i])
            if k < 0 or self.s[self.i] == "\0":
                raise _Fail("bad base-62 number")
            x = x * 62 + k
            self.i += 1
            if x >= 1 << 64:
                raise _Fail("number too large")
        return x + 1

    def opt_b62(self, tag: str) -> int:
        return self.b62() + 1 if self.eat(tag) else 0

    def ident(self):
        """(ascii, punycode) of an identifier."""
        puny = self.eat("u")
        j = self.i
        if not self.s[j].isdigit():
            raise _Fail("identifier length expected")
        if self.s[j] == "0":
            j += 1
        else:
            while self.s[j].isdigit():
                j += 1
        length = int(self.s[self.i:j])
        self.i = j
        self.eat("_")
        start = self.i
        self.i += length
        if self.i > len(self.s) - 2:
            raise _Fail("identifier runs past the end")
        text = self.s[start:self.i]
        if puny:
            k = text.rfind("_")
            ascii_part, code = (text[:k], text[k + 1:]) if k >= 0 else ("", text)
            if not code:
                raise _Fail("empty punycode")
            return ascii_part, code
        return text, ""

    def write_ident(self, ident):
        ascii_part, code = ident
        if code:
            try:
                self.w(_punycode(ascii_part, code))
            except _Fail:
                self.w(f"punycode{{{ascii_part}-{code}}}" if ascii_part else f"punycode{{{code}}}")
        else:
            self.w(ascii_part)

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fail("too deep")

    def backref(self, fn, *args):
        start = self.i - 1
        pos = self.b62()
        if pos >= start:
            raise _Fail("forward back-reference")
        if not self.printing:
            return None
        held = self.i
        self.i = pos
        self.enter()
        try:
            return fn(*args)
        finally:
            self.depth -= 1
            self.i = held

    # ------------------------------------------------------------------ paths
    def path(self, in_value: bool):
        self.enter()
        tag = self.next()
        if tag == "C":
            self.opt_b62("s")
            self.write_ident(self.ident())
        elif tag == "N":
            ns = self.next()
            if not ns.isalpha():
                raise _Fail("bad namespace")
            self.path(in_value)
            dis = self.opt_b62("s")
            name = self.ident()
            if ns.isupper():
                self.w("::{" + ("closure" if ns == "C" else "shim" if ns == "S" else ns))
                if name[0] or name[1]:
                    self.w(":")
                    self.write_ident(name)
                self.w(f"#{dis}}}")
            elif name[0] or name[1]:
                self.w("::")
                self.write_ident(name)
        elif tag in "MXY":
            if tag != "Y":
                self.opt_b62("s")
                held = self.printing
                self.printing = False
                self.path(False)
                self.printing = held
            self.w("<")
            self.type()
            if tag != "M":
                self.w(" as ")
                self.path(False)
            self.w(">")
        elif tag == "I":
            self.path(in_value)
            if in_value:
                self.w("::")
            self.w("<")
            k = 0
            while not self.eat("E"):
                if k:
                    self.w(", ")
                self.generic_arg()
                k += 1
            self.w(">")
        elif tag == "B":
            self.backref(self.path, in_value)
        else:
            raise _Fail(f"bad path tag {tag!r}")
        self.depth -= 1

    def generic_arg(self):
        if self.eat("L"):
            self.lifetime(self.b62())
        elif self.eat("K"):
            self.const(False)
        else:
            self.type()

    def lifetime(self, lt: int):
        if lt == 0:
            self.w("'_")
            return
        depth = self.bound - lt
        if depth < 0:
            raise _Fail("unbound lifetime")
        self.w("'" + chr(97 + depth) if depth < 26 else f"'_{depth}")

    def binder(self, fn):
        count = self.opt_b62("G")
        if count:
            self.w("for<")
            for k in range(count):
                if k:
                    self.w(", ")
                self.bound += 1
                self.lifetime(1)
            self.w("> ")
        try:
            fn()
        finally:
            self.bound -= count

    # ------------------------------------------------------------------ types
    def type(self):
        self.enter()
        tag = self.next()
        basic = _BASIC.get(tag)
        if basic is not None:
            self.w(basic)
        elif tag in "RQ":
            self.w("&")
            if self.eat("L"):
                lt = self.b62()
                if lt:
                    self.lifetime(lt)
                    self.w(" ")
            if tag == "Q":
                self.w("mut ")
            self.type()
        elif tag in "PO":
            self.w("*const " if tag == "P" else "*mut ")
            self.type()
        elif tag in "AS":
            self.w("[")
            self.type()
            if tag == "A":
                self.w("; ")
                self.const(True)
            self.w("]")
        elif tag == "T":
            self.w("(")
            k = 0
            while not self.eat("E"):
                if k:
                    self.w(", ")
                self.type()
                k += 1
            if k == 1:
                self.w(",")
            self.w(")")
        elif tag == "F":
            self.binder(self.fn_sig)
        elif tag == "D":
            self.w("dyn ")
            self.binder(self.dyn_bounds)
            if not self.eat("L"):
                raise _Fail("dyn without lifetime")
            lt = self.b62()
            if lt:
                self.w(" + ")
                self.lifetime(lt)
        elif tag == "B":
            self.backref(self.type)
        else:
            self.i -= 1
            self.path(False)
        self.depth -= 1

    def fn_sig(self):
        unsafe = self.eat("U")
        abi = None
        if self.eat("K"):
            if self.eat("C"):
                abi = "C"
            else:
                ascii_part, code = self.ident()
                if not ascii_part or code:
                    raise _Fail("bad ABI")
                abi = ascii_part.replace("_", "-")
        if unsafe:
            self.w("unsafe ")
        if abi is not None:
            self.w(f'extern "{abi}" ')
        self.w("fn(")
        k = 0
        while not self.eat("E"):
            if k:
                self.w(", ")
            self.type()
            k += 1
        self.w(")")
        if not self.eat("u"):
            self.w(" -> ")
            self.type()

    def dyn_bounds(self):
        k = 0
        while not self.eat("E"):
            if k:
                self.w(" + ")
            self.dyn_trait()
            k += 1

    def dyn_trait(self):
        open_ = self.path_maybe_open()
        while self.eat("p"):
            self.w(", " if open_ else "<")
            open_ = True
            self.write_ident(self.ident())
            self.w(" = ")
            self.type()
        if open_:
            self.w(">")

    def path_maybe_open(self) -> bool:
        if self.eat("B"):
            r = self.backref(self.path_maybe_open)
            return bool(r)
        if self.eat("I"):
            self.path(False)
            self.w("<")
            k = 0
            while not self.eat("E"):
                if k:
                    self.w(", ")
                self.generic_arg()
                k += 1
            return True
        self.path(False)
        return False

    # ------------------------------------------------------------------ constants
    def hex_nibbles(self) -> str:
        j = self.i
        while self.s[j] in "0123456789abcdef" and self.s[j] != "\0":
            j += 1
        if self.s[j] != "_":
            raise _Fail("bad constant")
        text = self.s[self.i:j]
        self.i = j + 1
        return text

    def const(self, in_value: bool):
        self.enter()
        tag = self.next()
        braced = False
        if tag == "p":
            self.w("_")
        elif tag in "htmyoj":
            self.w(_hex_value(self.hex_nibbles()))
        elif tag in "aslxni":
            neg = self.eat("n")
            self.w(("-" if neg else "") + _hex_value(self.hex_nibbles()))
        elif tag == "b":
            v = self.hex_nibbles()
            if v not in ("0", "1"):
                raise _Fail("bad bool")
            self.w("false" if v == "0" else "true")
        elif tag == "c":
            v = int(self.hex_nibbles() or "0", 16)
            if v > 0x10FFFF:
                raise _Fail("bad char")
            self.w(repr(chr(v)))
        elif tag == "B":
            self.backref(self.const, in_value)
        else:
            raise _Fail("unsupported constant")
        if braced:
            self.w("}")
        self.depth -= 1

    def skip_path(self):
        held = self.printing
        self.printing = False
        try:
            self.path(False)
        finally:
            self.printing = held

    def symbol(self) -> str:
        if self.s[0].isdigit():
            raise _Fail("unsupported encoding version")
        self.path(True)
        if self.s[self.i].isupper():
            self.skip_path()
        rest = self.s[self.i:-2]
        if rest and rest[0] not in ".$":
            raise _Fail("trailing characters")
        return "".join(self.out)


def _hex_value(h: str) -> str:
    if not h:
        return "0"
    v = int(h, 16)
    return str(v) if v < 1 << 64 else "0x" + h


def _rust_v0(s: str):
    """``_R…`` → its readable path, or None."""
    if s.startswith("__R"):
        s = s[1:]
    if not s.startswith("_R") or len(s) < 3 or not (s[2].isupper() or s[2].isdigit()):
        return None
    try:
        return _RustV0(s[2:]).symbol()
    except (_Fail, RecursionError, IndexError, ValueError):
        return None


def demangle_rust(name: str):
    """The readable path of a Rust symbol (legacy ``_ZN…17h<hash>E`` or v0 ``_R…``), the
    hash and crate disambiguators left out; None when it is neither."""
    if len(name) > MAX_MANGLED_CHARS:
        return None
    if name.startswith(("_R", "__R")):
        return _rust_v0(name)
    s = name[1:] if name.startswith("__ZN") else name
    return _rust_legacy(s)


# =========================================================================== libstdc++'s demangler
def _load_native():
    """``__cxa_demangle`` of GNU libstdc++ through ctypes, or None where it cannot be loaded
    (another C++ runtime writes other text; Windows has none)."""
    try:
        import ctypes
        import ctypes.util

        lib = ctypes.CDLL("libstdc++.so.6")
        fn = lib.__cxa_demangle
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        free = ctypes.CDLL(None).free
        free.argtypes = [ctypes.c_void_p]
        free.restype = None
    except (OSError, AttributeError, ImportError):
        return None
    string_at = ctypes.string_at
    c_int, byref = ctypes.c_int, ctypes.byref

    def native(name: str):
        status = c_int(0)
        p = fn(name.encode("utf-8", "surrogateescape"), None, None, byref(status))
        if not p:
            return None
        try:
            return string_at(p).decode("utf-8", "replace") if status.value == 0 else None
        finally:
            free(p)

    return native


_NATIVE_FN = None
_NATIVE_LOADED = False


def native_available() -> bool:
    """Whether libstdc++'s ``__cxa_demangle`` can be called here (loaded on first ask)."""
    global _NATIVE_FN, _NATIVE_LOADED
    if not _NATIVE_LOADED:
        _NATIVE_FN = _load_native()
        _NATIVE_LOADED = True
    return _NATIVE_FN is not None


def _native_default() -> bool:
    import os

    return os.environ.get("TRACEVIS3D_DEMANGLE", "").strip().lower() == "native"


#: whether Itanium names go through libstdc++'s ``__cxa_demangle`` first.  Off unless the
#: environment says ``TRACEVIS3D_DEMANGLE=native``: it is 8x faster than the pure-Python
#: reader (12 µs against 100 µs a name on LLVM's exports) and writes the same text, but it
#: has no bound on its output: a 456-character name whose substitutions double the text at
#: each step (tests/support/hostile_names.py) makes it build 2^40 characters, where the Python
#: reader stops at `MAX_OUTPUT_CHARS`.  For symbols one trusts (one's own program's).
NATIVE = _native_default()


def native_demangle(name: str):
    """``__cxa_demangle``'s text for an Itanium name, or None (not available, or refused).
    Unbounded on hostile names (see `NATIVE`)."""
    if not native_available() or len(name) > MAX_MANGLED_CHARS or "\0" in name:
        return None
    s = name[1:] if name.startswith("__Z") else name
    if not s.startswith("_Z"):
        return None
    return _NATIVE_FN(s)


# =========================================================================== entry point
_MANGLED = re.compile(r"^_{1,2}[ZR][A-Za-z0-9_]")
#: what may follow a symbol in profiles: a perf offset (``+0x1c``), a symbol version (``@@GLIBCXX_3.4``)
_SYMBOL_TAIL = re.compile(r"(\+0x[0-9a-fA-F]+|@{1,2}[\w.]*)$")


def is_mangled(name: str) -> bool:
    """Whether ``name`` looks like an Itanium or Rust v0 symbol (``_Z…``, ``_R…``; macOS adds
    an underscore).  A cheap test: `demangle` decides."""
    return bool(_MANGLED.match(name))


def demangle(name: str, verbose: bool = False, native=None) -> str:
    """The readable form of a mangled symbol, or ``name`` itself.

    Rust (legacy and v0) first, then Itanium C++: by the pure-Python reader, or through
    ``__cxa_demangle`` first when ``native`` (default `NATIVE`: off) and it can.  A perf offset (``+0x1c``) or
    a symbol version (``@@GLIBCXX_3.4``) after the symbol is kept after the readable name.
    Never raises; names longer than `MAX_MANGLED_CHARS` are returned as they are."""
    if not isinstance(name, str) or len(name) > MAX_MANGLED_CHARS or not _MANGLED.match(name):
        return name
    tail = ""
    m = _SYMBOL_TAIL.search(name)
    sym = name
    if m:
        tail = m.group(0)
        sym = name[: m.start()]
    out = None
    if sym.startswith(("_R", "__R")):
        out = _rust_v0(sym)
    else:
        out = _rust_legacy(sym[1:] if sym.startswith("__ZN") else sym)
        if out is None:
            if (NATIVE if native is None else native) and not verbose:
                out = native_demangle(sym)
            if out is None:
                out = demangle_itanium(sym, verbose)
    return name if out is None else out + tail
