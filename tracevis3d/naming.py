"""What a function is called in a figure, which module and package it belongs to, and
whether it is runtime infrastructure (bpy-free, numba-free).

In the base layer (beside `tracevis3d.names`, which it builds on) because the analyses (search,
filters, synchronisation objects) name functions as the figures do.

Computed once per distinct function of a trace (never per call) and cached per trace.

- ``module``: the dotted module (``docutils.parsers.rst.states``, ``json.encoder``,
  ``importlib._bootstrap``), from `tracevis3d.names`;
- ``family``: what the colour families group by: the top-level package (``docutils``,
  ``json``); C built-ins (``str.join``, ``dict.get``, ``builtins.len``, ...) form the family
  ``builtins``;
- ``qualname``: ``Publisher.publish``; closures lose their ``<locals>`` scopes
  (``_make_iterencode.<locals>._iterencode_dict`` → ``_iterencode_dict``), comprehensions
  keep the function they run in (``ViewList.__init__.<listcomp>``);
- ``display``: the full readable name, ``json.encoder._iterencode_dict``; a ``<module>``
  frame (a module body running at import) is shown as its module, ``docutils.core``; in the
  other languages as each writes it: ``v8::internal::Heap::Scavenge``,
  ``std::vector<…>::push_back`` (C++: no arguments, a class's template arguments folded),
  ``core::ptr::drop_in_place`` (Rust, demangled), ``net/http.(*Server).Serve`` (Go),
  ``java.util.Random.nextInt``, ``ActiveRecord::Base#save`` (Ruby), ``GHC.Base.map``
  (Haskell), and JavaScript by its function and script: ``render (app.js:12)``;
- ``short``: the function's own name, the end of ``qualname`` (``publish``, ``Scavenge``,
  ``Serve``); a closure keeps the function it is in (``main.<listcomp>``, ``lang_start::{{closure}}``);
- ``infra``: runtime infrastructure that is rarely what a figure is about: the import
  machinery (``importlib.*``, ``_imp``, ``zipimport``, ``builtins.__import__``), program
  start-up (``runpy``, ``builtins.exec``, VizTracer's ``<string>`` wrapper, ``site``),
  thread start-up (``threading.Thread._bootstrap``/``_bootstrap_inner``/``run``,
  ``concurrent.futures.thread._worker``/``_WorkItem.run``), and the tracers themselves
  (``viztracer``, ``memray``: ``memray run``'s runner frames under a sampled program,
  ``tracevis3d.live``).  The rule table is `INFRA_MODULES` / `INFRA_FUNCTIONS`.
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

import numpy as np

from .names import parse_function_name, parse_functions

#: what separates a name's parts (scopes, packages, a Ruby class from its method), and brackets
_NAME_TOKENS = re.compile(
    r"\boperator\b(?:\s*(?:\(\)|\[\]|->\*?|<=>|<<=|>>=|<<|>>|[-+*/%^&|~!=<>,]=?|new\b|delete\b))?"
    r"|::|\.|/|#(?=[a-z_])|[<>()\[\]{}]")
_OPEN, _CLOSE = "<([{", ">)]}"


def location_label(file: str, line: int = -1) -> str:
    """A source location as a label writes it: the file's base name, and the line
    (``https://host/static/js/app.js?v=2`` at 12 → ``app.js:12``; ``<string>`` stays); a blob
    URL (a worker's script, ``blob:null/c186e5f1-3f7c-477a-9ab0-e5463bf37c9a``) is ``blob``:
    its name is a random UUID, 36 characters that said nothing on every label."""
    if file.startswith("blob:"):
        return f"blob:{line}" if line is not None and line >= 0 else "blob"
    base = file.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if " -> " in base:  # Firefox: "loader.js -> module.js"
        base = base.rsplit(" -> ", 1)[1]
    base = base.replace("\\", "/").rsplit("/", 1)[-1] or base
    return f"{base}:{line}" if line is not None and line >= 0 else base


def name_separators(text: str) -> list:
    """(position, length) of each separator of ``text``'s parts outside brackets: ``::``,
    ``.``, ``/`` (a package path), ``#`` before a method (Ruby); when the brackets do not
    balance (an ``operator<``), outside none.  Linear in the text."""
    seps, depth = [], 0
    for m in _NAME_TOKENS.finditer(text):
        t = m.group(0)
        if t[0] == "o":  # an operator's name ("operator<<") is no bracket
            continue
        if t == "." and (text[m.start() - 1: m.start()] == "." or text[m.end(): m.end() + 1] == "."):
            continue  # "Module._extensions..js": a property named ".js" (V8), no separator
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0:
            seps.append((m.start(), len(t)))
    if depth:
        seps = [(m.start(), len(m.group(0))) for m in _NAME_TOKENS.finditer(text)
                if m.group(0) not in "<>()[]{}" and m.group(0)[0] != "o"]
    return seps


#: modules (and their submodules) whose frames are infrastructure
INFRA_MODULES = ("importlib", "_frozen_importlib", "_frozen_importlib_external", "_imp", "zipimport",
                 "runpy", "site", "sitecustomize", "viztracer", "memray", "tracevis3d.live", "pkgutil", "<string>")
#: JavaScript modules that are runtime infrastructure: Node's module loader and start-up (a
#: script's first ~8 levels: run_main_module › executeUserEntryPoint › Module._load › … ›
#: Module._compile), not Node's libraries that do a program's work (node:internal/fs, streams)
JS_INFRA_MODULES = ("node:internal/modules/", "node:internal/main/", "node:internal/bootstrap/")
#: (module, qualname) pairs that are infrastructure in modules that are not
INFRA_FUNCTIONS = {
    ("builtins", "exec"), ("builtins", "__import__"), ("builtins", "__build_class__"),
    ("threading", "Thread._bootstrap"), ("threading", "Thread._bootstrap_inner"),
    ("threading", "Thread.run"),
    ("concurrent.futures.thread", "_worker"), ("concurrent.futures.thread", "_WorkItem.run"),
}


def drop_locals(qualname: str) -> str:
    """``_make_iterencode.<locals>._iterencode_dict`` → ``_iterencode_dict`` (a closure is
    named by itself), but ``ViewList.__init__.<locals>.<listcomp>`` →
    ``ViewList.__init__.<listcomp>`` (a comprehension or lambda by where it runs)."""
    if ".<locals>." not in qualname:
        return qualname
    pieces = qualname.split(".<locals>.")
    out = pieces[0]
    for nxt in pieces[1:]:  # linear in the name (a regex here backtracks on hostile names)
        if nxt.startswith("<"):
            out = f"{out}.{nxt}"
        else:
            head = out.rsplit(".", 1)[0] if "." in out else ""
            out = f"{head}.{nxt}" if head else nxt
    return out


@dataclass
class FunctionTable:
    """Names and groups of every function of a trace (lists/arrays indexed by function id)."""

    module: list
    family: list
    qualname: list
    display: list
    short: list
    infra: np.ndarray  # bool per function
    module_id: np.ndarray  # int32 into `modules`
    modules: list
    family_id: np.ndarray  # int32 into `families`
    families: list


def _family(module: str, c_function: bool, package: str = "") -> str:
    """The colour family of a module: its top-level package (``package``, `ParsedName.package`:
    ``docutils``, ``v8``, a script's host or npm package, a Go package path); C functions of
    ``builtins`` and of C accelerator modules (``_io``, ``_thread``, ...) are one family, ``builtins``."""
    if not module:
        return "(unknown)"
    if module.startswith("<"):
        return module
    if module == "builtins" or (c_function and module.startswith("_")):
        return "builtins"
    return package or module.split(".", 1)[0]


#: how each language joins a module and the name inside it in a full name
_JOIN = {"c++": "::", "rust": "::", "ruby": "::", "go": ".", "java": ".", "haskell": "."}
_GO_CLOSURE = re.compile(r"\.func\d+(?:\.\d+)*$")
_RUBY_BLOCK = re.compile(r"^((?:block|rescue|ensure)(?: \(\d+ levels\))? in )(.*)$", re.S)


def _file_stem(file: str) -> str:
    return re.split(r"[/\\]", file)[-1].split(".", 1)[0]


def _other_language(p, name: str) -> tuple:
    """(qualname, display, short) of a function of a language other than Python."""
    qual = p.qualname or p.function or name
    lang = p.lang
    if lang == "js":
        display = f"{qual} ({location_label(p.file, p.line)})" if p.file else qual
        # the part after the last separator ("Module._extensions..js": "_extensions..js", not "js"),
        # unless it is a pseudo name ("Object.<anonymous>") or Firefox's inner-function mark ("f/<")
        tails = [qual[p_ + n:] for p_, n in name_separators(qual)]
        short = next((t for t in reversed(tails) if t and t[0] != "<"), qual)
        return qual, display, short
    if lang == "c":  # a C function in a binary: its name alone (the binary is its module, for colour)
        return qual, qual, qual
    if lang == "php":  # as Xdebug writes it (Inventory->add, php::strlen); the module is for colour
        return qual, qual, p.function or qual
    join = _JOIN.get(lang, ".")
    display = f"{p.module}{join}{qual}" if p.module else qual
    if lang == "ruby":
        m = _RUBY_BLOCK.match(qual)
        if m and p.module:  # "block in ActiveRecord::Base#save"
            display = f"{m.group(1)}{p.module}::{m.group(2)}"
    elif lang == "c++" and p.file and p.module and p.module == _file_stem(p.file):
        display = f"{qual} ({location_label(p.file, p.line)})"  # C: a function of a file, no namespace
    if lang in ("c++", "rust"):
        parts = qual.split("::")
        short = "::".join(parts[-2:]) if parts[-1].startswith("{") and len(parts) > 1 else parts[-1]
    elif lang == "go":
        short = qual if _GO_CLOSURE.search(qual) else qual.rsplit(".", 1)[-1]
    elif lang == "haskell":
        short = qual
    else:
        short = p.function or qual
    return qual, display, short or qual


_INFRA_SET = frozenset(INFRA_MODULES)
_INFRA_PREFIXES = tuple(m + "." for m in INFRA_MODULES)


def _is_infra(module: str, qual: str) -> bool:
    """A module of `INFRA_MODULES` or one of their submodules, or a function of
    `INFRA_FUNCTIONS` (one set lookup and one tuple ``startswith``: thousands of functions)."""
    if module in _INFRA_SET or module.startswith(_INFRA_PREFIXES):
        return True
    return (module, qual) in INFRA_FUNCTIONS


def describe_function(name: str, parsed=None) -> tuple:
    """(module, family, qualname, display, short, infra) of one function name (``parsed``:
    its `ParsedName` when already known, e.g. with the file py-spy keeps in the args)."""
    p = parsed if parsed is not None else parse_function_name(name)
    module = p.module
    lang = getattr(p, "lang", "")
    if lang not in ("", "python"):
        qual, display, short = _other_language(p, name)
        infra = lang == "js" and module.startswith(JS_INFRA_MODULES)
        return module, _family(module, False, p.package), qual, display, short, infra
    qual = drop_locals(p.qualname or p.function or name) or (p.qualname or name)
    short = qual.rsplit(".", 1)[-1] if qual else name
    if short == "<module>":
        display = module or name
    elif module and module != "builtins":
        display = f"{module}.{qual}"
    else:
        display = qual or name
    c_function = not p.file and p.line < 0
    return module, _family(module, c_function, p.package), qual, display, short, _is_infra(module, qual)


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def share_function_table(src, dst) -> None:
    """``dst`` has ``src``'s function table (a trace derived from ``src`` with the same
    function names: hidden or merged calls), so it is not computed again."""
    hit = _CACHE.get(src)
    if hit is None:
        return
    if dst.function_names is src.function_names or list(dst.function_names) == list(src.function_names):
        _CACHE[dst] = hit


def function_table(trace) -> FunctionTable:
    """The `FunctionTable` of ``trace`` (computed once per trace object)."""
    hit = _CACHE.get(trace)
    if hit is not None and len(hit.module) == trace.n_functions:
        return hit
    rows = [describe_function(nm, p) for nm, p in zip(trace.function_names, parse_functions(trace))]
    module = [r[0] for r in rows]
    family = [r[1] for r in rows]
    modules, module_id = np.unique(np.asarray(module + [""], dtype=object), return_inverse=True)
    families, family_id = np.unique(np.asarray(family + [""], dtype=object), return_inverse=True)
    table = FunctionTable(
        module=module, family=family, qualname=[r[2] for r in rows], display=[r[3] for r in rows],
        short=[r[4] for r in rows], infra=np.array([r[5] for r in rows], dtype=np.bool_),
        module_id=module_id[:-1].astype(np.int32), modules=list(modules),
        family_id=family_id[:-1].astype(np.int32), families=list(families))
    _CACHE[trace] = table
    return table
