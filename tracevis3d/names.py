"""Function names → (function, file, line, module, qualname, static hierarchy path).

The hierarchy path (module → class → function) feeds EXTRAVIS-style views
(hierarchical edge bundling needs a system hierarchy, Sec. 3 of the EXTRAVIS
paper) and the colour-by-module mode.  ``path`` is the module's parts followed by
the qualified name's parts (``<locals>`` left out), e.g. ``('docutils', 'core',
'Publisher', 'publish')``; ``module`` and ``qualname`` say where the split is,
so a class is never taken for a module.

Names come in many dialects; each rule below handles one, tried in order:

- VizTracer, Python:  ``fib (/src/pkg/mod.py:6)``, ``Cls.meth (<frozen runpy>:65)``
  (``co_qualname (co_filename:co_firstlineno)``; the module comes from the file)
- PyTorch python:     ``torch/nn/modules/module.py(1501): _call_impl``,
                      ``nn.Module: Linear_0``
- CPython repr:       ``<method 'append' of 'list' objects>``,
                      ``<built-in method acquire of _thread.lock object at 0x7f..>``,
                      ``<built-in function len>``; cProfile's ``{built-in method builtins.print}``
- C++ (PyTorch ops, kernels, native profilers): ``aten::mm``,
                      ``void at::native::reduce_kernel<128, 4, …>(…)``, ``v8::internal::Heap::Scavenge(int)``
- TensorFlow / JAX profiler (its Python tracer, ``jax.profiler.trace``): ``$threading.py:988 _bootstrap``,
                      ``$<frozen importlib._bootstrap>:1165 _find_and_load`` (``$file:line co_name``, the
                      file's base name only: module ``threading``), ``$builtins len``, ``$_sre
                      unicode_iscased``, ``$numpy array`` (a C function: ``$module name``) and
                      ``$<unknown> append`` (a C method of a type it does not name: module ``builtins``)
- dotted (VizTracer's C functions, py-spy and other profilers without a file):
                      ``builtins.print``, ``_thread.lock.acquire``, ``dict.get``,
                      ``collections.deque.append``, ``Thread._bootstrap``, ``pkg.mod.Class.method``
- anything else:      module ``""``, a single-level path (the name itself).

Dotted names without a file are split by these rules (`split_dotted`): a builtin type
first (``dict.get``, ``KeyError.with_traceback``) → module ``builtins``; otherwise the
module is the leading run of lower-case parts, ending before the first part that is
Capitalized (a class, PEP 8) or a known lower-case C type (``_thread.lock``,
``collections.deque``, ``select.epoll``, ``datetime.date``, ``itertools.chain``, …,
`LOWERCASE_C_TYPES`), and always before the last part (the function); a C accelerator
module (a lower-case first part starting with ``_``: ``_thread``, ``_io``, ``_csv``) is never
a package, so it is the whole module.  Leading underscores do not hide a class
(``_ModuleLock.acquire``).  ``Thread.run`` (no module part) has module ``""``.

The module of a file path is `module_from_file` (rules in its docstring).
Parsing runs once per distinct function, never per call.
"""
from __future__ import annotations

import builtins as _builtins
import functools
import re
from typing import NamedTuple


class ParsedName(NamedTuple):
    """What a function name says about the function.

    ``function``: the function as the name spells it (for Python, its qualified name,
    e.g. ``Publisher.publish``; for C/C++ the last part); ``file``/``line``: the source
    location in the name ('' and -1 when it has none); ``path``: module parts then
    qualname parts; ``module``: dotted module name ('' when unknown; ``::``-joined
    namespaces for C++); ``qualname``: the name inside its module (``Publisher.publish``,
    ``_make_iterencode.<locals>._iterencode_dict``, ``<module>``, ``list.append``);
    ``sep``: how the name joins module and qualname (``.``, or ``::`` for C++).
    """

    function: str
    file: str
    line: int
    path: tuple
    module: str = ""
    qualname: str = ""
    sep: str = "."

    @property
    def display(self) -> str:
        """A short label that tells frames apart: a module body (``<module>``) is shown by its
        module (``docutils.core``); a nested function by the name after its last ``<locals>``
        (``_make_iterencode.<locals>._iterencode_dict`` → ``_iterencode_dict``), except an
        anonymous one, which keeps its enclosing function (``main.<locals>.<listcomp>`` →
        ``main.<listcomp>``); anything else by its qualified name (``Publisher.publish``)."""
        if self.qualname == "<module>":
            return self.module or "<module>"
        q = self.qualname or self.function
        if ".<locals>." in q:
            head, _, tail = q.rpartition(".<locals>.")
            if tail.startswith("<"):
                return head.rpartition(".<locals>.")[2] + "." + tail
            return tail
        return q

    @property
    def full(self) -> str:
        """``module.qualname`` (``module::qualname`` for C++), or the qualname alone."""
        if not self.module:
            return self.qualname or self.function
        if self.qualname == "<module>":
            return self.module
        return f"{self.module}{self.sep}{self.qualname}"


# --------------------------------------------------------------------------- module_from_file
#: path components after which the module's dotted name starts (the last one wins)
ROOT_DIRS = frozenset({"site-packages", "dist-packages", "lib-dynload", "Lib", "lib-python", "lib_pypy"})
_PY_LIB = re.compile(r"^python\d+(\.\d+)?[a-z]?$")        # lib/python3.11, lib/python3.13t
_ARCHIVE = re.compile(r"\.(egg|zip|whl|pyz)$", re.I)      # zipimport roots: foo.egg/pkg/mod.py
#: weaker roots, used only when no strong root is in the path (a "src layout")
SOURCE_ROOTS = frozenset({"src", "source", "python"})
#: folder names that are taken as "not a package" when walking up an unrooted path
NOT_PACKAGES = frozenset({
    "home", "Users", "root", "usr", "opt", "tmp", "var", "mnt", "srv", "work", "workspace", "projects",
    "code", "repos", "git", "local", "share", "Desktop", "Documents", "Downloads", "examples", "example",
    "scripts", "script", "bin", "tools", "docs", "doc", "notebooks", "benchmarks", "bench", "build", "dist",
})
#: at most this many folders above the file are kept for an absolute path without a root
UNROOTED_MAX_PACKAGES = 2
_SOURCE_EXT = re.compile(r"\.(py|pyw|pyi|pyc|pyo|pyx|pxd|pxi|so|pyd|dylib)$", re.I)
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_DRIVE = re.compile(r"^[A-Za-z]:")
#: code compiled at run time by a class, e.g. networkx's ``<class 'networkx.utils.decorators.argmap'> compilation 57``
_CLASS_PSEUDO = re.compile(r"^<class '(?P<mod>[\w.]+)\.\w+'>")


_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]+:)+//", re.I)  # a script's URL (V8 profiles): https://…, blob:file:///…
_WEB_EXT = re.compile(r"\.(?:m?js|cjs|jsx|tsx?|html?|wasm)$", re.I)


def intern_all(items, index: dict, table: list) -> list:
    """The id of each of ``items`` in ``table``: an item met first is appended to it (ids by
    first appearance); ``index`` maps the items already in ``table`` to their ids.  Two traces'
    function tables joined into one (`analysis.comparison`), V8 profile frames made functions."""
    out = []
    for item in items:
        k = index.get(item)
        if k is None:
            k = index[item] = len(table)
            table.append(item)
        out.append(k)
    return out


def url_module(url: str) -> str:
    """The module of a script's URL (JavaScript frames of V8 profiles): its file's name, without
    the query, the fragment and a web extension, other dots as ``_`` (not a package separator):
    ``https://cdn.example.com/static/js/main.abc123.js?v=2`` → ``main_abc123``; a URL that
    names no file gives its host (``https://example.com/`` → ``example_com``); an object URL
    (``blob:…/<uuid>``: a worker made from a string) is ``blob``."""
    if url[:5].lower() == "blob:":
        return "blob"
    rest = _URL.sub("", url).split("?", 1)[0].split("#", 1)[0]
    parts = [x for x in rest.split("/") if x]
    if not parts:
        return ""
    stem = _WEB_EXT.sub("", parts[-1]) if len(parts) > 1 or "." not in parts[0] else parts[0]
    return stem.replace(".", "_")


@functools.lru_cache(maxsize=1 << 14)  # a trace's functions share their files: each parsed once
def module_from_file(path: str) -> str:
    """Dotted module name of a source file path, from the path's text alone.

    A trace may come from another machine, so the disk is never consulted.  Rules:

    1. ``<frozen importlib._bootstrap>`` → ``importlib._bootstrap`` (any ``<frozen X>`` → X);
       code a class compiled at run time (``<class 'networkx.utils.decorators.argmap'>
       compilation 57``) → the class's module (``networkx.utils.decorators``); other pseudo
       files (``<string>``, ``<stdin>``, ``<ipython-input-1-…>``) are returned as they are;
       '' and ``<unknown>`` give ''.
    2. The extension is dropped (``.py .pyx .pyi .pyc .so .pyd`` …, and an extension module's
       ABI tag: ``_json.cpython-311-x86_64-linux-gnu.so`` → ``_json``); ``__init__`` is dropped
       (``json/__init__.py`` → ``json``).  Windows paths (``C:\\…\\Lib\\json\\encoder.py``) work.
    3. If the path holds a root (``site-packages``, ``dist-packages``, ``lib-dynload``,
       ``lib/pythonX.Y``, Windows ``Lib``, PyPy's ``lib-python``/``lib_pypy``, or an archive
       ``*.egg``/``*.zip``/``*.whl``), the module is everything after the LAST root:
       ``…/site-packages/docutils/parsers/rst/states.py`` → ``docutils.parsers.rst.states``.
       Otherwise a source root (``src``, ``source``, ``python``: a src layout) is used the same way.
    4. A relative path (what PyTorch writes, ``torch/nn/modules/module.py``, or a script run
       as ``python prog.py``) is taken as relative to its import root: all its parts.
    5. An absolute path without a root: walk up from the file while the folder looks like a
       package: a Python identifier, not a common non-package folder (`NOT_PACKAGES`: home,
       usr, tmp, work, examples, scripts, …), not the top-level folder (``/a``), not the user
       folder under ``home``/``Users``, and at most `UNROOTED_MAX_PACKAGES` (2) folders:
       ``/work/main/tracevis3d/layout/icicle.py`` → ``tracevis3d.layout.icicle``,
       ``/home/u/prog.py`` → ``prog``.  Deeper packages outside a root are cut to their last
       two folders (without the disk we cannot tell where a package starts).

    In every case parts that are not identifiers end the walk (``foo-1.0/x.py`` → ``x``).
    6. A URL (a script's, in V8's profiles) gives its file's name (`url_module`).
    """
    p = path.strip()
    if not p or p == "<unknown>":
        return ""
    if p.startswith("<"):
        if p.startswith("<frozen ") and p.endswith(">"):
            return p[8:-1].strip()
        m = _CLASS_PSEUDO.match(p)
        if m:
            return m.group("mod")
        if p.endswith(">"):
            return p
    if _URL.match(p):
        return url_module(p)
    p = p.replace("\\", "/")
    absolute = p.startswith("/") or bool(_DRIVE.match(p))
    p = _DRIVE.sub("", p)
    parts = [x for x in p.split("/") if x and x != "."]
    if not parts:
        return ""
    stem = parts[-1]
    m = _SOURCE_EXT.search(stem)
    if m:
        stem = stem[: m.start()]
        if m.group(1).lower() in ("so", "pyd", "dylib"):
            stem = stem.split(".", 1)[0]   # foo.cpython-311-x86_64-linux-gnu.so → foo
    dirs = parts[:-1]
    root = -1
    for k, d in enumerate(dirs):
        if d in ROOT_DIRS or _ARCHIVE.search(d) or (_PY_LIB.match(d) and k > 0 and dirs[k - 1] in ("lib", "lib64", "Lib")):
            root = k
    if root < 0:
        for k, d in enumerate(dirs):
            if d in SOURCE_ROOTS:
                root = k
    rooted = root >= 0 or not absolute
    limit = len(dirs) if rooted else UNROOTED_MAX_PACKAGES
    pkg: list = []
    for k in range(len(dirs) - 1, root, -1):
        d = dirs[k]
        if len(pkg) >= limit or d == ".." or not _IDENT.match(d):
            break
        if not rooted:
            if k == 0 or d in NOT_PACKAGES or dirs[k - 1] in ("home", "Users"):
                break
        pkg.append(d)
    pkg.reverse()
    if stem == "__init__" and pkg:
        return ".".join(pkg)
    return ".".join(pkg + [stem]) if stem else ".".join(pkg)


# --------------------------------------------------------------------------- dotted names
#: builtin types whose methods VizTracer names ``<tp_name>.<method>`` without a module
BUILTIN_TYPES = frozenset(
    {n for n in dir(_builtins) if isinstance(getattr(_builtins, n), type)}
    | {"code", "frame", "function", "method", "mappingproxy", "cell", "generator", "coroutine",
       "async_generator", "method-wrapper", "builtin_function_or_method", "method_descriptor",
       "wrapper_descriptor", "getset_descriptor", "member_descriptor", "classmethod_descriptor",
       "NoneType", "NotImplementedType", "ellipsis", "module", "traceback", "dict_keys", "dict_values",
       "dict_items", "list_iterator", "tuple_iterator", "str_iterator", "set_iterator", "range_iterator",
       "callable_iterator", "PyCapsule", "weakref", "weakproxy", "instancemethod"})
#: C types with lower-case names (``tp_name``), which VizTracer writes ``module.type.method``
LOWERCASE_C_TYPES = frozenset({
    "collections.deque", "collections.defaultdict", "select.epoll", "select.poll", "select.kqueue",
    "select.devpoll", "functools.partial", "functools._lru_cache_wrapper", "operator.itemgetter", "operator.attrgetter",
    "operator.methodcaller", "datetime.date", "datetime.datetime", "datetime.time", "datetime.timedelta",
    "datetime.timezone", "datetime.tzinfo", "array.array", "mmap.mmap", "pyexpat.xmlparser",
    "numpy.ndarray", "numpy.ufunc", "numpy.dtype", "numpy.generic", "numpy.flatiter", "numpy.broadcast",
    "numpy.nditer", "socket.socket", "ssl.SSLSocket",
})
_LOWER_TYPE_MODULES = frozenset({"itertools"})  # every lower-case name in them is a type


def split_dotted(name: str) -> tuple:
    """(module, qualname) of a dotted name without a file, by the rules in the module doc."""
    parts = name.split(".")
    if len(parts) < 2:
        return "", name
    if parts[0] in BUILTIN_TYPES:
        return "builtins", name
    if parts[0].startswith("_") and not parts[0].startswith("__") and parts[0].lstrip("_")[:1].islower():
        return parts[0], ".".join(parts[1:])
    n_mod = 0
    for k, x in enumerate(parts[:-1]):
        if x.lstrip("_")[:1].isupper() or x.startswith("<"):
            break
        # every known lower-case C type is ``module.type`` (one dot): only k == 1 can match,
        # so a hostile name with thousands of parts costs linear time
        if k > 0 and ((k == 1 and f"{parts[0]}.{parts[1]}" in LOWERCASE_C_TYPES) or parts[0] in _LOWER_TYPE_MODULES):
            break
        n_mod = k + 1
    return ".".join(parts[:n_mod]), ".".join(parts[n_mod:])


def _dotted(s: str) -> list:
    """``s`` split at ``.`` and ``::`` (`re.split` only where a ``::`` is there)."""
    return re.split(r"\.|::", s) if "::" in s else s.split(".")


def _qual_parts(qualname: str) -> tuple:
    """``Cls.meth`` → ('Cls', 'meth'); ``f.<locals>.g`` → ('f', 'g'); ``<lambda>`` stays whole."""
    q = qualname.strip()
    if not q:
        return ()
    if q.startswith("<") and q.endswith(">") and "." not in q:
        return (q,)
    return tuple(x for x in _dotted(q) if x and x != "<locals>") or (q,)


def _make(function: str, file: str, line: int, module: str, qualname: str, sep: str = ".") -> ParsedName:
    mparts = tuple(x for x in _dotted(module) if x) if module else ()
    if module.startswith("<") and module.endswith(">"):
        mparts = (module,)
    return ParsedName(function, file, line, mparts + _qual_parts(qualname), module, qualname, sep)


# --------------------------------------------------------------------------- C++ names
def _strip_balanced(s: str, open_: str, close: str) -> str:
    """Drop every top-level ``open_ … close`` group (templates, argument lists); a ``close``
    outside any group stays.  Visits the delimiters only (a PyTorch trace's C++ names are
    hundreds of characters each)."""
    if open_ not in s and close not in s:
        return s
    out, level, kept_from = [], 0, 0
    for m in re.finditer(re.escape(open_) + "|" + re.escape(close), s):
        i = m.start()
        if s[i] == open_:
            if level == 0:
                out.append(s[kept_from:i])
            level += 1
        elif level:
            level -= 1
            if level == 0:
                kept_from = i + 1
    if level == 0:
        out.append(s[kept_from:])
    return "".join(out)


def _split_cpp(name: str) -> tuple:
    """(module, qualname, function) of a C++ name such as
    ``void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, 2>(float*, …)``."""
    s = name.replace("(anonymous namespace)", "{anonymous}")
    s = re.sub(r"\{lambda\([^)]*\)#\d+\}", "{lambda}", s)
    s = _strip_balanced(s, "<", ">")
    s = _strip_balanced(s, "(", ")")
    s = re.sub(r"\s+(const|volatile|noexcept|&|&&)\s*$", "", s).strip()
    s = s.rsplit(" ", 1)[-1]  # drop a return type ("void ", "int ")
    scopes = [x for x in s.split("::") if x]
    if not scopes:
        return "", name, name
    func = scopes[-1]
    n_mod = 0
    for x in scopes[:-1]:
        if x[:1].isupper() or (x.startswith("{") and x != "{anonymous}"):
            break
        n_mod += 1
    return "::".join(scopes[:n_mod]), "::".join(scopes[n_mod:]), func


# --------------------------------------------------------------------------- the dialects
_VIZ = re.compile(r"^(?P<func>.+?) \((?P<file>[^()]*?):(?P<line>\d+)\)$")
_TORCH_PY = re.compile(r"^(?P<file><[^<>]+>|[^()\s]+?\.pyx?)\((?P<line>\d+)\): (?P<func>.+)$")
_TORCH_NN = re.compile(r"^nn\.Module: (?P<mod>.+)$")
_METHOD_OF = re.compile(
    r"^[<{](?:method|slot wrapper|attribute|method-wrapper) '(?P<func>[^']+)' of '(?P<cls>[^']+)' objects[>}]$")
_BUILTIN = re.compile(r"^[<{]built-in (?:method|function) (?P<func>[\w.]+)(?: of (?P<owner>.+?))?[>}]$")
_IDENT_DOTTED = re.compile(r"^[A-Za-z_<][\w<>-]*(\.[A-Za-z_<][\w<>-]*)+$")
_CPP_APPLIED = re.compile(r"^(?P<scope>\w+(?:::\w+)+): (?P<arg>\S.*)$")
_TF_PY = re.compile(r"^\$(?P<file><[^<>]+>|[^\s:<>]+):(?P<line>\d+) (?P<func>\S.*)$")
_TF_C = re.compile(r"^\$(?P<mod><unknown>|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*) (?P<func>[A-Za-z_<][\w<>.]*)$")
_LOCATED = (_VIZ, _TORCH_PY, _TF_PY)  # the dialects whose names say func, file and line, in this order
_PYSPY_THREAD = re.compile(r"^thread \((?P<tid>[^)]*)\)(?:: (?P<name>.*))?$")
_PYSPY_PROCESS = re.compile(r'^process (?P<pid>\d+):".*"$', re.S)


def _owner_module(owner: str) -> tuple:
    """(module, type) of an object description: ``_thread.lock object at 0x..`` → ('_thread', 'lock')."""
    owner = re.sub(r" at 0x[0-9a-fA-F]+$", "", owner).strip()
    owner = re.sub(r" object$", "", owner).strip()
    if not owner or owner == "module":
        return "builtins", ""
    mod, q = split_dotted(owner + ".x")
    q = q[:-2] if q.endswith(".x") else ""
    if not mod:
        mod = "builtins" if owner in BUILTIN_TYPES else ""
    return mod, q


def parse_function_name(name: str, file: str = "", line: int = -1) -> ParsedName:
    """Parse one function name (see the module doc for the dialects).

    ``file``/``line``: a source location known from elsewhere (py-spy writes it in the
    event's args, not in the name); used when the name itself carries none, and then the
    name is taken as the qualified name inside that file's module.
    """
    for rx in _LOCATED:  # the name carries its file and line: the module is the file's
        m = rx.match(name)
        if m:
            f, fl = m.group("func"), m.group("file")
            return _make(f, fl, int(m.group("line")), module_from_file(fl), f)
    m = _TF_C.match(name) if name.startswith("$") else None
    if m:
        mod = m.group("mod")
        return _make(m.group("func"), file, line, "builtins" if mod == "<unknown>" else mod, m.group("func"))
    if file:
        mod = module_from_file(file)
        if mod and not _PYSPY_THREAD.match(name):
            # a name already qualified by that module ("app.__main__.main" in app/__main__.py,
            # as other tools and the synthetic traces write) is not prefixed with it again
            qual = name[len(mod) + 1:] if name.startswith(mod + ".") and len(name) > len(mod) + 1 else name
            return _make(qual.rsplit(".", 1)[-1] if qual != name else name, file, line, mod, qual)
    m = _METHOD_OF.match(name)
    if m:
        mod, typ = _owner_module(m.group("cls"))
        return _make(m.group("func"), file, line, mod or "builtins",
                     f"{typ}.{m.group('func')}" if typ else m.group("func"))
    m = _BUILTIN.match(name)
    if m:
        func = m.group("func")
        if m.group("owner"):
            mod, typ = _owner_module(m.group("owner"))
            q = f"{typ}.{func}" if typ else func
        else:
            mod, q = split_dotted(func) if "." in func else ("builtins", func)
            func = func.rsplit(".", 1)[-1]
        return _make(func, file, line, mod or "builtins", q)
    m = _TORCH_NN.match(name)
    if m:
        return _make(name, file, line, "torch.nn", m.group("mod"))
    if "::" in name:
        m = _CPP_APPLIED.match(name)
        if m:  # PyTorch: "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
            mod, q, func = _split_cpp(m.group("scope"))
            _, q2, _ = _split_cpp(m.group("arg"))
            return _make(func, file, line, mod, f"{q}: {q2}", "::")
        mod, q, func = _split_cpp(name)
        return _make(func, file, line, mod, q, "::")
    if _IDENT_DOTTED.match(name):
        mod, q = split_dotted(name)
        return _make(q.rsplit(".", 1)[-1] if q else name, file, line, mod, q or name)
    return ParsedName(name, file, line, (name,), "", name, ".")


def parse_functions(trace) -> list:
    """`ParsedName` of every function of a `Trace` (once per distinct function), using the
    function table's file and line where the name carries none (py-spy frames, whose files
    `tracevis3d.io.threadnames.locate_pyspy_frames` fills in from the event args)."""
    files = trace.function_files
    lines = trace.function_lines
    return [parse_function_name(s, file=files[i] if i < len(files) else "",
                                line=int(lines[i]) if i < len(lines) else -1)
            for i, s in enumerate(trace.function_names)]


def unique_labels(names) -> list:
    """One label per function name, no two alike: its `ParsedName.display`; where displays
    collide, `ParsedName.full` (with the module); where those still collide, ``full:line``;
    then ``#k`` for whatever is left (identical names).  Parses each name once."""
    parsed = [parse_function_name(s) for s in names]
    labels = [p.display for p in parsed]
    for step in ("full", "line", "index"):
        seen: dict = {}
        for i, lab in enumerate(labels):
            seen.setdefault(lab, []).append(i)
        clash = [ix for ix in seen.values() if len(ix) > 1]
        if not clash:
            break
        for ix in clash:
            for k, i in enumerate(ix):
                p = parsed[i]
                if step == "full":
                    labels[i] = p.full
                elif step == "line":
                    labels[i] = f"{p.full}:{p.line}" if p.line >= 0 else labels[i]
                else:
                    labels[i] = f"{labels[i]} #{k + 1}"
    return labels


def pyspy_thread_name(frame_name: str):
    """The thread name in a py-spy root frame, or None if it is not one.

    py-spy (``--threads``) puts ``thread (<os tid>): <name>`` (``thread (<tid>)`` when the
    thread has no name) at the root of every stack; ``0x…`` ids on macOS.  Returns the name,
    or ``thread <tid>`` when it has none.
    """
    m = _PYSPY_THREAD.match(frame_name)
    if m is None:
        return None
    nm = (m.group("name") or "").strip()
    return nm or f"thread {m.group('tid').strip()}"


def is_pyspy_process_frame(frame_name: str) -> bool:
    """True for py-spy's ``process <pid>:"<command line>"`` root frame (``--subprocesses``)."""
    return bool(_PYSPY_PROCESS.match(frame_name))


__all__ = ["ParsedName", "parse_function_name", "parse_functions", "module_from_file", "split_dotted",
           "unique_labels",
           "pyspy_thread_name", "is_pyspy_process_frame", "ROOT_DIRS", "NOT_PACKAGES",
           "BUILTIN_TYPES", "LOWERCASE_C_TYPES"]


def thread_kind(name: str) -> str:
    """What makes threads interchangeable: the name with its numbers left out
    ("Thread-12 (process_request_thread)" → "Thread-# (process_request_thread)").  A name
    with no letter besides its numbers ("12", a trace that names threads by their ids) says
    nothing of the thread's kind: it is its own kind, and never packed with another."""
    kind = re.sub(r"\d+", "#", name)
    return kind if any(c.isalpha() for c in kind) else name
