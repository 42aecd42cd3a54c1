"""Function names → (function, file, line, static hierarchy path).

The hierarchy path (module → class → function) feeds EXTRAVIS-style views
(hierarchical edge bundling needs a system hierarchy, Sec. 3 of the EXTRAVIS
paper).  Names come in many dialects; each rule below handles one, tried in order:

- VizTracer:        ``fib (/src/pkg/mod.py:6)``, ``Cls.meth (/src/mod.py:12)``
- PyTorch python:   ``torch/nn/modules/module.py(1501): _call_impl``
- CPython builtins: ``<method 'append' of 'list' objects>``,
                    ``<built-in method time of module object at 0x7f..>``,
                    ``builtins.print``
- C++ / PyTorch ops: ``aten::mm``, ``v8::internal::Heap::Scavenge(int)``
- dotted:           ``package.module.Class.method``
- anything else:    a single-level path (the name itself).
Parsing runs once per distinct function, never per call.
"""
from __future__ import annotations

import os
import re
from typing import NamedTuple


class ParsedName(NamedTuple):
    function: str
    file: str
    line: int
    path: tuple


_VIZ = re.compile(r"^(?P<func>.+?) \((?P<file>[^()]*?):(?P<line>\d+)\)$")
_TORCH_PY = re.compile(r"^(?P<file>[^()\s]+?\.pyx?)\((?P<line>\d+)\): (?P<func>.+)$")
_METHOD_OF = re.compile(r"^<(?:method|slot wrapper|attribute) '(?P<func>[^']+)' of '(?P<cls>[^']+)' objects>$")
_BUILTIN = re.compile(r"^<built-in (?:method|function) (?P<func>[\w.]+)(?: of (?P<owner>.+?))?>$")
_IDENT_DOTTED = re.compile(r"^[A-Za-z_<][\w<>]*(\.[A-Za-z_<][\w<>]*)+$")


def _module_of(path: str) -> tuple:
    """``/a/b/pkg/mod.py`` → ('pkg', 'mod'): the last directory and the file stem."""
    p = path.replace("\\", "/")
    stem = os.path.splitext(p.rsplit("/", 1)[-1])[0] or p
    parts = [x for x in p.split("/")[:-1] if x and x not in (".", "..")]
    if stem == "__init__" and parts:
        return (parts[-1],)
    if parts and parts[-1] not in ("src", "lib", "site-packages", "dist-packages"):
        return (parts[-1], stem)
    return (stem,)


def _split_qual(func: str) -> tuple:
    """``Cls.meth`` → ('Cls', 'meth'); ``<lambda>`` and plain names stay whole."""
    func = func.strip()
    if "." in func and not func.startswith("<"):
        return tuple(x for x in func.split(".") if x)
    return (func,)


def parse_function_name(name: str) -> ParsedName:
    m = _VIZ.match(name)
    if m:
        f = m.group("func")
        return ParsedName(f, m.group("file"), int(m.group("line")),
                          _module_of(m.group("file")) + _split_qual(f))
    m = _TORCH_PY.match(name)
    if m:
        f = m.group("func")
        return ParsedName(f, m.group("file"), int(m.group("line")),
                          _module_of(m.group("file")) + _split_qual(f))
    m = _METHOD_OF.match(name)
    if m:
        return ParsedName(m.group("func"), "", -1, ("builtins", m.group("cls"), m.group("func")))
    m = _BUILTIN.match(name)
    if m:
        owner = m.group("owner") or ""
        owner = re.sub(r" at 0x[0-9a-fA-F]+$", "", owner)
        owner = owner.replace(" object", "").strip() or "builtins"
        return ParsedName(m.group("func"), "", -1, ("builtins", owner) + _split_qual(m.group("func")))
    if "::" in name:
        base = name.split("(", 1)[0].strip() or name
        parts = tuple(x for x in base.split("::") if x)
        return ParsedName(parts[-1] if parts else name, "", -1, parts or (name,))
    if _IDENT_DOTTED.match(name):
        parts = tuple(name.split("."))
        return ParsedName(parts[-1], "", -1, parts)
    return ParsedName(name, "", -1, (name,))
