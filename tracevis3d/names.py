"""Function names → (function, file, line, module, qualname, static hierarchy path, language).

The hierarchy path (module → class → function) feeds EXTRAVIS-style views
(hierarchical edge bundling needs a system hierarchy, Sec. 3 of the EXTRAVIS
paper) and the colour-by-module mode.  ``path`` is the module's parts followed by
the qualified name's parts (``<locals>`` left out), e.g. ``('docutils', 'core',
'Publisher', 'publish')``; ``module`` and ``qualname`` say where the split is,
so a class is never taken for a module.  ``path[0]`` is the top-level package (`ParsedName.package`).

Names come in many dialects; each rule below handles one, tried in order (names are stored
in the Trace as the tool wrote them: a mangled name is demangled here, for display only):

- mangled (native profilers: perf without demangling, Rust): ``_ZN2v88internal4Heap8ScavengeEv``,
                      ``_ZN4core3ptr13drop_in_place17h0123456789abcdefE``, ``_RNvCs1_5trace4main``
                      (`tracevis3d.demangle`; a perf offset ``+0x1c`` is ignored), then read as C++ / Rust
- JavaScript, located: ``fn (http://host/static/js/app.js:12:3)``, ``fn (app.js:12)``,
                      Firefox's ``fn (resource://a.js -> resource://b.js:107)``, ``bound (self-hosted:962)``,
                      Hermes' ``fn(http://localhost:8081/index.bundle:1:9)``; a bare location
                      (``file:///x/simple.js:30``, a script's top level) is ``(anonymous)``
- VizTracer, Python:  ``fib (/src/pkg/mod.py:6)``, ``Cls.meth (<frozen runpy>:65)``
                      (``co_qualname (co_filename:co_firstlineno)``; the module comes from the file)
- Austin 3, Python:   ``/src/pkg/mod.py:Cls.meth:12``, ``<frozen runpy>:_run_code:88``
                      (``co_filename:co_qualname:line``; the module comes from the file)
- PHP (Xdebug):       ``Inventory->add``, ``Rectangle::make``, ``App\\Models\\User->save``,
                      ``php::strlen``, ``php::DateTime->format`` (PHP's own), ``{main}``,
                      ``{closure:/src/a.php:12-14}``, ``require_once::/src/lib.php``: told by a
                      ``.php`` file or Xdebug's ``php:internal``; module = the namespace, ``php`` for
                      PHP's own functions, else the file's base name; qualname as PHP users write it,
                      a path in it cut to its base name (``{closure:a.php:12-14}``)
- PyTorch python:     ``torch/nn/modules/module.py(1501): _call_impl``,
                      ``nn.Module: Linear_0``
- TensorFlow / JAX profiler (its Python tracer, ``jax.profiler.trace``): ``$threading.py:988 _bootstrap``,
                      ``$<frozen importlib._bootstrap>:1165 _find_and_load`` (``$file:line co_name``, the
                      file's base name only: module ``threading``), ``$builtins len``, ``$_sre
                      unicode_iscased``, ``$numpy array`` (a C function: ``$module name``) and
                      ``$<unknown> append`` (a C method of a type it does not name: module ``builtins``)
- a file given apart (py-spy's args, a profile's frame table): by its extension, the
                      name is read in that language (``.js``/URL, ``.go``, ``.rs``, ``.c``/``.cc``/``.h``…,
                      ``.java``/``.kt``, ``.rb``, ``.hs``); any other file is Python's (the module is the file's)
- CPython repr:       ``<method 'append' of 'list' objects>``,
                      ``<built-in method acquire of _thread.lock object at 0x7f..>``,
                      ``<built-in function len>``; cProfile's ``{built-in method builtins.print}``
- Haskell (GHC's cost centres as speedscope names them, ``Module.label``): ``Main.CAF:main7``,
                      ``GHC.IO.Handle.Text.hPutStr2`` (the leading capitalized parts are the module)
- Java:               ``Lpkg/Class;.method(I)V``, ``Lpkg/Class;::method`` (JVM descriptors),
                      ``java.util.Random:nextInt`` (JFR), ``java/util/Random.nextInt`` (async-profiler):
                      module = the package
- Ruby (stackprof):   ``ActiveRecord::Base#save``, ``Object#try``, ``ActiveRecord::Attribute.from_database``,
                      ``block (2 levels) in Foo#bar``: module = the namespace, qualname ``Class#method``
- Go (pprof):         ``net/http.(*Server).Serve``, ``main.fib.func1``, ``github.com/u/r/pkg.Func``:
                      module = the package path (``net/http``), qualname ``(*Server).Serve``
- C++ and Rust (PyTorch ops, kernels, native profilers, demangled names; a name of no
                      namespace when it has a C++ function's shape, ``foo(int)``): ``aten::mm``,
                      ``void at::native::reduce_kernel<128, 4, …>(…)``, ``v8::internal::Heap::Scavenge(int)``,
                      ``std::vector<int, std::allocator<int> >::push_back(int const&)``,
                      ``<alloc::vec::Vec<T> as core::ops::Drop>::drop``, ``std::rt::lang_start::{{closure}}``:
                      arguments, return types and the function's own template arguments are left out,
                      a class's template arguments folded (``vector<…>::push_back``); the module is the
                      leading namespaces (``v8::internal``, a Rust crate and its modules ``core::ptr``),
                      up to the first class (capitalized, templated, or a constructor's)
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

The module of a file path is `module_from_file` (rules in its docstring); a script's (a URL or
a JavaScript file) is `script_module`: its path, ``host/static/js/app``, an npm package's
``react-dom/cjs/react-dom.development`` (package ``react-dom``), Node's ``node:internal/…``.
Parsing runs once per distinct function, never per call.

Over 600 lines: `parse_function_name` is the one parser of every dialect (its rules are
tried in order, so they live beside it), with the file-path and C++/Rust-scope readers
they share.
"""
from __future__ import annotations

import builtins as _builtins
import functools
import re
from typing import NamedTuple

from .demangle import demangle, is_mangled
from .filenumbers import is_digits, read_line


class ParsedName(NamedTuple):
    """What a function name says about the function.

    ``function``: the function as the name spells it (for Python, its qualified name,
    e.g. ``Publisher.publish``; for C/C++/Rust the last part, demangled; for JavaScript its
    name as written); ``file``/``line``: the source location in the name ('' and -1 when it
    has none); ``path``: module parts then qualname parts; ``module``: dotted module name
    ('' when unknown; ``::``-joined namespaces for C++ and Rust, a package path for Go
    and JavaScript); ``qualname``: the name inside its module (``Publisher.publish``,
    ``_make_iterencode.<locals>._iterencode_dict``, ``<module>``, ``list.append``,
    ``vector<…>::push_back``, ``(*Server).Serve``); ``sep``: how the name joins module and
    qualname (``.``, or ``::`` for C++, Rust and Ruby); ``lang``: the dialect's language
    ('python', 'c++', 'rust', 'js', 'java', 'go', 'ruby', 'haskell'; '' when the name does
    not say).
    """

    function: str
    file: str
    line: int
    path: tuple
    module: str = ""
    qualname: str = ""
    sep: str = "."
    lang: str = ""

    @property
    def display(self) -> str:
        """A short label that tells frames apart: a module body (``<module>``) is shown by its
        module (``docutils.core``); a nested function by the name after its last ``<locals>``
        (``_make_iterencode.<locals>._iterencode_dict`` → ``_iterencode_dict``), except an
        anonymous one, which keeps its enclosing function (``main.<locals>.<listcomp>`` →
        ``main.<listcomp>``); anything else by its qualified name (``Publisher.publish``,
        ``Heap::Scavenge``, ``(*Server).Serve``, ``AttributeSet#fetch_value``)."""
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
        """``module.qualname`` (``module::qualname`` for C++; ``script:function`` for
        JavaScript, whose module is a path), or the qualname alone."""
        if not self.module:
            return self.qualname or self.function
        if self.qualname == "<module>":
            return self.module
        if self.lang == "js":
            return f"{self.module}:{self.qualname}"
        return f"{self.module}{self.sep}{self.qualname}"

    @property
    def package(self) -> str:
        """The top-level package the function belongs to ('' without a module): the first
        part of a dotted or ``::`` module (``docutils``, ``v8``, the crate ``core``), a
        script's host or npm package (``react-dom``), Node's ``node``, a Go package path."""
        return self.path[0] if self.module and self.path else ""


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
_WEB_EXT = re.compile(r"\.(?:m?js|cjs|jsx|tsx?|mts|cts|jsm|vue|svelte|coffee|html?|wasm)$", re.I)


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


#: folders a script's module does not start from (a local path without a package)
_SCRIPT_SKIP = frozenset({"src", "lib", "dist", "build", "public", "static", "js", "out", "www", "app"})


def is_url(text: str) -> bool:
    """Whether ``text`` starts with a URL's scheme and ``//`` (``https://``, ``file:///``, ``blob:file://``)."""
    return bool(_URL.match(text))


def is_script(path: str) -> bool:
    """Whether a source location names a script (JavaScript and the web): a URL (``https:``,
    ``file:``, ``webpack:``, ``resource:``, ``blob:``…), Node's ``node:`` modules, SpiderMonkey's
    ``self-hosted``, or a file with a web extension (``.js .mjs .ts .jsx .vue .html .wasm`` …)."""
    p = path.strip()
    if not p or p.startswith("<"):
        return False
    if " -> " in p:  # Firefox: "loader.js -> module.js"
        return True
    low = p[:12].lower()
    if low.startswith(("node:", "blob:", "data:", "self-hosted")) or _URL.match(p):
        return True
    return bool(_WEB_EXT.search(p.split("?", 1)[0].split("#", 1)[0]))


@functools.lru_cache(maxsize=1 << 14)
def script_parts(path: str) -> tuple:
    """(module, parts) of a script's location (`is_script`), from its path's text alone.

    - Node's modules: ``node:internal/modules/cjs/loader`` → ``node:internal/modules/cjs/loader``,
      parts ``('node', 'internal', 'modules', 'cjs', 'loader')``; old Node's relative
      ``internal/…/x.js`` likewise;
    - an npm package (the last ``node_modules`` of the path):
      ``…/node_modules/react-dom/cjs/react-dom.development.js`` → ``react-dom/cjs/react-dom.development``
      (package ``react-dom``; a scoped ``@babel/core`` is one part);
    - a URL: its host (no port, no credentials), folders and file without its web extension,
      query or fragment: ``http://host/static/js/app.js?v=2`` → ``host/static/js/app``;
      ``webpack://app/./src/index.ts`` → ``app/src/index``; ``blob:…`` → ``blob``;
    - a local file (``file:///…`` or a path): at most two folders above it, not a home, user,
      system or build folder (``/home/u/proj/src/app.js`` → ``proj/app``); a relative path whole;
    - Firefox's ``loader.js -> module.js`` is the last script; ``self-hosted`` is itself.
    The module's parts are joined by ``/`` (a file name may hold dots: ``main.abc123``)."""
    p = path.strip()
    if " -> " in p:
        p = p.rsplit(" -> ", 1)[1].strip()
    low = p[:12].lower()
    if low.startswith("blob:"):
        return "blob", ("blob",)
    if low.startswith("data:"):
        return "data", ("data",)
    if low.startswith("self-hosted"):
        return "self-hosted", ("self-hosted",)
    p = p.split("?", 1)[0].split("#", 1)[0]
    if low.startswith("node:"):
        parts = [x for x in p[5:].split("/") if x and x != "."]
        if parts:
            parts[-1] = _WEB_EXT.sub("", parts[-1])
        return "node:" + "/".join(parts), ("node",) + tuple(parts)
    host = ""
    absolute = False
    m = _URL.match(p)
    if m:
        scheme = p[: m.end()].lower()
        rest = p[m.end():]
        if scheme.startswith("file:"):
            absolute = True
        else:
            host, _, rest = rest.partition("/")
            host = host.rpartition("@")[2].split(":", 1)[0]
    else:
        rest = p.replace("\\", "/")
        absolute = rest.startswith("/") or bool(_DRIVE.match(rest))
        rest = _DRIVE.sub("", rest)
    parts = [x for x in rest.split("/") if x and x != "."]
    if parts:
        parts[-1] = _WEB_EXT.sub("", parts[-1])
    if "node_modules" in parts:
        k = len(parts) - 1 - parts[::-1].index("node_modules")
        pkg = parts[k + 1: k + 3] if k + 1 < len(parts) and parts[k + 1].startswith("@") else parts[k + 1: k + 2]
        if pkg:
            rest_parts = parts[k + 1 + len(pkg):]
            out = ("/".join(pkg),) + tuple(rest_parts)
            return "/".join(out), out
    if not host and not absolute and parts[:1] == ["internal"] and len(parts) > 1:
        return "node:" + "/".join(parts), ("node",) + tuple(parts)
    if host:
        out = (host,) + tuple(parts)
        return "/".join(out), out
    if absolute and parts:
        dirs = parts[:-1]
        keep = []
        for k in range(len(dirs) - 1, -1, -1):
            d = dirs[k]
            if len(keep) >= UNROOTED_MAX_PACKAGES or k == 0 or d in NOT_PACKAGES or d == ".." \
                    or dirs[k - 1] in ("home", "Users"):
                break
            if d not in _SCRIPT_SKIP:
                keep.append(d)
        parts = keep[::-1] + parts[-1:]
    parts = [x for x in parts if x != ".."]
    return "/".join(parts), tuple(parts)


def script_module(path: str) -> str:
    """The module of a script's location (`script_parts`)."""
    return script_parts(path)[0]


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
    6. A script (a URL, in V8's profiles, or a JavaScript file) gives `script_module`.
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
    if is_script(p):
        return script_module(p)
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
    """``s`` split at ``.`` and ``::``."""
    return [p for x in s.split("::") for p in x.split(".")] if "::" in s else s.split(".")


def _qual_parts(qualname: str) -> tuple:
    """``Cls.meth`` → ('Cls', 'meth'); ``f.<locals>.g`` → ('f', 'g'); ``<lambda>`` stays whole.
    A qualname none of the rules below touches (no ``::``, ``<locals>``, empty part or whitespace
    around it: a trace's usual ``Cls.meth``) is split at its dots at once (the sympy trace's 4,334
    names: ~10 ms of a 35 ms parse went to the general rules' generator)."""
    if qualname and "::" not in qualname and "<locals>" not in qualname and ".." not in qualname \
            and qualname[:1] != "." and qualname[-1:] != "." and qualname == qualname.strip():
        return tuple(qualname.split("."))
    return _qual_parts_by_rules(qualname)


def _qual_parts_by_rules(qualname: str) -> tuple:
    """`_qual_parts`' rules, for any qualname (what its split at once must agree with)."""
    q = qualname.strip()
    if not q:
        return ()
    if q.startswith("<") and q.endswith(">") and "." not in q:
        return (q,)
    return tuple(x for x in _dotted(q) if x and x != "<locals>") or (q,)


def _module_parts(module: str) -> tuple:
    """A module's parts in a `ParsedName.path`: ``a.b::c`` → ('a', 'b', 'c'); ``<frozen x>`` whole."""
    if module.startswith("<") and module.endswith(">"):
        return (module,)
    return tuple(x for x in _dotted(module) if x) if module else ()


def _make(function: str, file: str, line: int, module: str, qualname: str, sep: str = ".", lang: str = "",
          mparts=None) -> ParsedName:
    if mparts is None:
        mparts = _module_parts(module)
    return ParsedName(function, file, line, tuple(mparts) + _qual_parts(qualname), module, qualname, sep, lang)


# --------------------------------------------------------------------------- C++ and Rust names
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


#: the tokens that matter when reading a C++ name: an operator's name (``operator<<``,
#: ``operator()``, ``operator new[]``; a bare ``operator`` starts a conversion's type), the
#: anonymous namespace, scope separators, brackets and blanks
_CPP_TOKENS = re.compile(
    r"\boperator\b(?:\s*(?:new\[\]|delete\[\]|new\b|delete\b|co_await\b|\(\)|\[\]|->\*|->|<=>|<<=|>>=|<<|>>"
    r"|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%^&|~!=<>,]=?|\"\"\s*\w+))?"
    r"|\(anonymous namespace\)|::|[<>()\[\]{}]| ")
_CPP_BRACKETS = re.compile(r"([<>()\[\]{}])")  # a name without "operator" (most): split, a faster scan
_CLOSE = {">": "<", ")": "(", "]": "[", "}": "{"}
#: what may follow a symbol's readable name: clones, llvm-cxxfilt's vendor suffix, a perf offset
_CPP_SUFFIX = re.compile(r"(?:\s*\[clone [^\]]*\]|\s*\(\.[\w.$]+\)|\+0x[0-9a-fA-F]+)+$")
#: what may follow a member function's parameters
_CPP_QUALIFIERS = re.compile(
    r"(?:\s*(?:const|volatile|restrict|noexcept|throw\(\)|&&|&|override|final|transaction_safe))*\s*")
#: special names whose function part is the name after them (thunks, clones, aliases)
_CPP_WRAPPERS = ("non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
                 "transaction clone for ", "non-transaction clone for ", "hidden alias for ")
#: special names of data, kept as the function's text (``vtable for Heap``)
_CPP_DATA = re.compile(r"^(vtable|VTT|typeinfo|typeinfo name|construction vtable|guard variable|"
                       r"TLS init function|TLS wrapper function|reference temporary #\d+|"
                       r"template parameter object) for ")
#: lower-case classes of the C++ standard library (a namespace is lower-case, so these would
#: be taken for one): ``std::locale::classic`` is a member of the class ``locale``
STD_LOWERCASE_CLASSES = frozenset({
    "locale", "ios_base", "exception", "bad_alloc", "bad_cast", "bad_typeid", "type_info", "thread", "mutex",
    "recursive_mutex", "shared_mutex", "condition_variable", "runtime_error", "logic_error", "domain_error",
    "invalid_argument", "length_error", "out_of_range", "range_error", "overflow_error", "underflow_error",
    "system_error", "error_code", "error_category", "future_error", "regex_error", "random_device",
    "ctype_base", "codecvt_base", "messages_base", "money_base", "time_base", "strstreambuf", "path",
    "directory_entry", "directory_iterator", "filesystem_error", "string", "wstring", "istream",
    "ostream", "iostream", "ifstream", "ofstream", "fstream", "stringstream", "streambuf", "filebuf",
})
#: the most characters a name is read structurally from (a longer one is free text)
MAX_PARSED_CHARS = 16384


def _strip_suffixes(s: str) -> str:
    """``s`` without what may follow a symbol's readable name (`_CPP_SUFFIX`: clone suffixes,
    a vendor suffix, a perf offset), read from its end (a regex would scan every name)."""
    while True:
        t = s.rstrip()
        if t.endswith("]"):
            k = t.rfind(" [clone ")
            if k >= 0 and "]" not in t[k:-1]:
                s = t[:k]
                continue
        elif t.endswith(")"):
            k = t.rfind(" (.")
            if k >= 0 and _CPP_SUFFIX.fullmatch(t, k):
                s = t[:k]
                continue
        elif "+0x" in t[-24:]:
            m = _PERF_OFFSET.search(t, max(0, len(t) - 24))
            if m:
                s = t[:m.start()]
                continue
        return t


def _scan_cpp(s: str):
    """(separators, blanks, groups, balanced) of a C++/Rust name at bracket depth 0:
    positions of ``::`` and of blanks, and the ``(start, end, bracket)`` of each bracket group,
    found by one pass over the tokens (operators' names are no brackets; a conversion
    operator's type, up to its parameters, holds no separator).  ``balanced`` is False when a
    bracket opens and never closes."""
    seps, blanks, groups, stack = [], [], [], []
    if "operator" not in s and "anonymous namespace" not in s:
        # the brackets first (fewer than the blanks and separators inside template arguments),
        # then the separators and blanks of the stretches between the groups at depth 0
        parts = _CPP_BRACKETS.split(s)
        pos = 0
        for k in range(1, len(parts), 2):
            pos += len(parts[k - 1])
            c = parts[k]
            if c in "<([{":
                stack.append((c, pos))
            elif stack and stack[-1][0] == _CLOSE[c]:
                o, q = stack.pop()
                if not stack:
                    groups.append((q, pos + 1, o))
            pos += 1
        a = 0
        for g0, g1, _ in groups + [(len(s), len(s), "")]:
            j = s.find("::", a, g0)
            while j >= 0:
                seps.append(j)
                j = s.find("::", j + 2, g0)
            j = s.find(" ", a, g0)
            while j >= 0:
                blanks.append(j)
                j = s.find(" ", j + 1, g0)
            a = g1
        return seps, blanks, groups, not stack
    conv = False
    op_end = -1  # where the last operator's name ends ("operator<< <T>": that blank is the name's)
    for m in _CPP_TOKENS.finditer(s):
        t = m.group(0)
        p = m.start()
        c = t[0]
        if c == "o":  # operator…
            if not stack and t == "operator":
                conv = True
            op_end = m.end()
        elif c in "<([{":
            if c == "(" and not stack:
                conv = False
            if c == "(" and t != "(":  # "(anonymous namespace)"
                continue
            stack.append((c, p))
        elif c in ">)]}":
            if stack and stack[-1][0] == _CLOSE[c]:
                o, q = stack.pop()
                if not stack:
                    groups.append((q, p + 1, o))
        elif not stack and not conv and p != op_end:
            (seps if c == ":" else blanks).append(p)
    return seps, blanks, groups, not stack


def _fold_scope(s: str, a: int, b: int, groups) -> tuple:
    """(text, has template arguments, is a function) of the scope ``s[a:b]`` (``groups``: its
    bracket groups, in order): template
    arguments folded to ``<…>``, a local function's parameters and ABI tags left out,
    ``(anonymous namespace)`` as ``{anonymous}``, a lambda as ``{lambda#1}``."""
    out, pos, targs, local = [], a, False, False
    for g0, g1, k in groups:
        out.append(s[pos:g0])
        inner = s[g0 + 1:g1 - 1]
        if k == "<":
            targs = True
            out.append("<…>" if inner.strip() else "<>")
        elif k == "(":
            local = True
        elif k == "{":
            if inner.startswith("lambda"):
                out.append("{lambda" + inner[inner.rfind("#"):] + "}" if "#" in inner else "{lambda}")
            else:
                out.append(s[g0:g1])
        elif not inner.startswith("abi:"):
            out.append(s[g0:g1])
        pos = g1
    out.append(s[pos:b])
    text = "".join(out).strip().replace("(anonymous namespace)", "{anonymous}")
    return text, targs, local


def _rust_impl(inner: str, depth: int):
    """The scopes of the type a Rust qualified path ``<X as Trait>`` / ``<X>`` names
    (its module's, then the type as a class), and the trait's module scopes."""
    sep = inner.find(" as ")
    if sep >= 0:  # " as " at depth 0 (a type's generics never hold it at depth 0 in practice)
        head, trait = inner[:sep], inner[sep + 4:]
    else:
        head, trait = inner, ""
    tscopes = _cpp_scopes(head.strip(), False, depth + 1)
    trait_scopes = _cpp_scopes(trait.strip(), False, depth + 1) if trait else None
    return (tscopes[0] if tscopes else [[head.strip(), True, True]]), (trait_scopes[0] if trait_scopes else [])


def _cpp_scopes(text: str, rust: bool, depth: int = 0):
    """([[scope text, templated, class-like], …], has parameters) of a demangled C++ or Rust
    name, return type, arguments and suffixes left out; None when it cannot be read.
    ``rust``: the last scope's generic arguments are a function's (left out even without
    parameters: Rust writes none)."""
    if depth > 4:
        return None
    s = _strip_suffixes(text).strip()
    for pre in _CPP_WRAPPERS:
        if s.startswith(pre):
            s = s[len(pre):]
    seps, blanks, groups, balanced = _scan_cpp(s)
    if not balanced or not s:
        return None
    end = len(s)
    params = False
    if groups and groups[-1][2] == "(":
        g0, g1, _ = groups[-1]
        if g0 > 0 and s[g0 - 1] != " " and _CPP_QUALIFIERS.fullmatch(s, g1):
            end, params = g0, True
    start = 0
    for p in reversed(blanks):
        if p < end:
            start = p + 1
            break
    if start and "-" in s[start:end] and "operator" not in s[start:end]:
        start = 0  # "Observers::Notify console-api-profiler": a detail after the name, no return type before it
    cuts = [p for p in seps if start <= p < end]
    bounds = [start] + [p + 2 for p in cuts]
    ends = cuts + [end]
    scopes = []
    gi, ng = 0, len(groups)
    for a, b in zip(bounds, ends):
        while gi < ng and groups[gi][0] < a:  # the groups of this scope: those in [a, b)
            gi += 1
        gj = gi
        while gj < ng and groups[gj][1] <= b:
            gj += 1
        mine = groups[gi:gj]
        gi = gj
        if a >= b:
            continue
        if not mine:  # a plain scope (most): no bracket in it
            t = s[a:b].strip()
            if t:
                scopes.append([t.replace("(anonymous namespace)", "{anonymous}") if "(" in t else t, False, False])
            continue
        if s[a] == "<" and mine[0][0] == a and mine[0][1] == b:
            inner = s[a + 1:b - 1]
            if scopes:  # Rust's turbofish "f::<T>": the previous scope's generic arguments
                scopes[-1][1] = True
                if "<" not in scopes[-1][0]:
                    scopes[-1][0] += "<…>"
                continue
            type_scopes, trait_scopes = _rust_impl(inner, depth)
            if len(type_scopes) == 1 and trait_scopes:  # a primitive type: the trait's module
                type_scopes = trait_scopes[:-1] + type_scopes
            for sc in type_scopes[:-1]:
                scopes.append([sc[0], sc[1], sc[2]])
            last = type_scopes[-1]
            scopes.append([last[0], last[1], True])
            continue
        text_, targs, local = _fold_scope(s, a, b, mine)
        if text_:
            scopes.append([text_, targs, local])
    if not scopes:
        return None
    if params or rust:  # the function's own template arguments are arguments
        last = scopes[-1]
        if last[1] and last[0].endswith(">"):
            k = last[0].rfind("<")
            if k > 0 and not last[0][:k].rstrip().endswith("operator"):
                last[0] = last[0][:k].rstrip()
    return scopes, params


def _base(scope: str) -> str:
    k = scope.find("<")
    return scope[:k] if k > 0 else scope


def split_cpp(name: str, rust: bool = False):
    """(module, qualname, function, has parameters) of a demangled C++ or Rust name, or None
    when it cannot be read (unbalanced brackets).  Scopes are namespaces (the module) up to
    the first class: a scope with a capital (``Heap``, Mozilla's ``nsAppShell``: namespaces
    are lower case), a templated or lambda scope, a local function's, a constructor's or
    destructor's class, or one of `STD_LOWERCASE_CLASSES`; a closure or lambda keeps the
    function it is in (``lang_start::{{closure}}``)."""
    data = _CPP_DATA.match(name)
    if data:
        inner = split_cpp(name[data.end():], rust)
        if inner is None:
            return None
        mod, qual, func, _ = inner
        return mod, f"{data.group(1)} for {qual}", f"{data.group(1)} for {func}", False
    got = _cpp_scopes(name, rust)
    if got is None:
        return None
    scopes, params = got
    texts = [sc[0] for sc in scopes]
    func = texts[-1]
    fbase = _base(func)
    n = len(scopes)
    std = texts[0] == "std"
    n_mod = 0
    for k in range(n - 1):
        text_, targs, cls = scopes[k]
        b = _base(text_)
        nxt = texts[k + 1]
        if cls or targs or not b.islower() and b != "{anonymous}" \
                or (k == n - 2 and fbase in (b, "~" + b)) or (std and b in STD_LOWERCASE_CLASSES) \
                or (nxt.startswith("{") and nxt != "{anonymous}"):  # the function a lambda is in
            break
        n_mod += 1
    if n_mod == n - 1 and n_mod > 0 and func.startswith("{"):
        n_mod -= 1  # a closure is named by the function it is in
    return "::".join(texts[:n_mod]), "::".join(texts[n_mod:]), func, params


def _split_cpp(name: str) -> tuple:
    """(module, qualname, function) of a C++ name such as
    ``void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, 2>(float*, …)``;
    the name whole (no module) when it cannot be read."""
    got = split_cpp(name) if len(name) <= MAX_PARSED_CHARS else None
    if got is None:
        return "", name, name
    return got[:3]


def strip_cpp_arguments(text: str) -> str:
    """A C++/Rust name without its parameters, qualifiers and clone suffixes
    (``ns::f(int) const [clone .cold]`` → ``ns::f``); ``text`` when it has none or cannot be read."""
    if len(text) > MAX_PARSED_CHARS or ("(" not in text and "[clone" not in text and "+0x" not in text):
        return text
    s = _strip_suffixes(text).rstrip()
    seps, blanks, groups, balanced = _scan_cpp(s)
    if not balanced:
        return text
    if groups and groups[-1][2] == "(":
        g0, g1, _ = groups[-1]
        if g0 > 0 and s[g0 - 1] != " " and _CPP_QUALIFIERS.fullmatch(s, g1):
            return s[:g0].rstrip()
    return s


_OPERATOR_END = re.compile(r"operator\S+$")


def fold_cpp_templates(text: str) -> str:
    """A C++/Rust name with each template argument list at depth 0 folded to ``<…>``
    (``std::vector<int, std::allocator<int> >::push_back`` → ``std::vector<…>::push_back``);
    pseudo names (``<lambda>``, ``Add.<locals>``) and unreadable text stay."""
    if "<" not in text or len(text) > MAX_PARSED_CHARS:
        return text
    seps, blanks, groups, balanced = _scan_cpp(text)
    if not balanced:
        return text
    out, pos = [], 0
    for g0, g1, k in groups:
        if k != "<" or g0 == 0 or g1 - g0 <= 2:
            continue
        before = text[g0 - 1]
        if not (before.isalnum() or before in "_>" or (before == " " and _OPERATOR_END.search(text, 0, g0 - 1))):
            continue
        if text[g0 + 1:g1 - 1] == "…":
            continue
        out.append(text[pos:g0])
        out.append("<…>")
        pos = g1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


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
#: Austin 3's frame: ``co_filename:co_qualname:line`` (a Python file or a ``<frozen ...>`` pseudo file)
_AUSTIN = re.compile(r"^(?P<file><[^<>]+>|[^<>:]*?\.py[wx]?):(?P<func>[^:\s][^:]*):(?P<line>\d+)$")
_LOCATED = (_VIZ, _TORCH_PY, _TF_PY, _AUSTIN)  # the dialects whose names say func, file and line
_PYSPY_THREAD = re.compile(r"^thread \((?P<tid>[^)]*)\)(?:: (?P<name>.*))?$")
_PYSPY_PROCESS = re.compile(r'^process (?P<pid>\d+):".*"$', re.S)


def _located(name: str) -> tuple:
    """The located dialects (`_LOCATED`) ``name`` may be in, by cheap tests of its shape."""
    if name.endswith(")"):
        k = name.rfind("(")
        return (_VIZ,) if k > 0 and name[k - 1] == " " and ":" in name[k:] else ()
    if name.startswith("$"):
        return (_TF_PY,)
    austin = (_AUSTIN,) if ".py:" in name or ">:" in name or ".pyx:" in name or ".pyw:" in name else ()
    return austin + ((_TORCH_PY,) if "): " in name else ())


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


# --------------------------------------------------------------------------- other languages
#: a bare script location as a frame's name (a script's top level: Firefox's ``file:///x.js:30``)
_JS_BARE = re.compile(r"^(?:[a-z][\w+.-]*:)+//[^\s()]+:\d+(?::\d+)?$", re.I)
#: JVM descriptors: ``Lpkg/Class;.method(I)V``, ``Lpkg/Class;::method``
_JAVA_DESC = re.compile(r"^L(?P<cls>[\w$/]+);(?:\.|::)(?P<meth>[\w$<>]+)(?P<sig>\(.*)?$", re.S)
#: async-profiler's ``java/util/Random.nextInt`` (a class is capitalized)
_JAVA_SLASH = re.compile(r"^(?P<pkg>(?:[a-z_][\w$]*/)+)(?P<cls>[A-Z_$][\w$]*)\.(?P<meth>[A-Za-z_$<][\w$<>]*)"
                         r"(?P<sig>\(.*)?$", re.S)
#: JFR as speedscope names it: ``java.util.Random:nextInt``, ``Heavy$$Lambda+0x1c.21:getAsInt``
_JAVA_JFR = re.compile(r"^(?P<cls>[\w$]+(?:[.+][\w$]+)*):(?P<meth>[A-Za-z_$<][\w$<>]*)$")
_JAVA_LAMBDA_ADDRESS = re.compile(r"\+0x[0-9a-fA-F]+(?:\.\d+)?")
#: stackprof's Ruby frames: ``A::B#m``, ``A::B.m``, ``#<Module:0x1>.m``, with ``block (2 levels) in`` before
_RUBY_BLOCK = re.compile(r"^(?P<pre>(?:block|rescue|ensure)(?: \(\d+ levels\))? in )(?P<body>.+)$", re.S)
_RUBY = re.compile(r"^(?P<cls>#<.+>|[A-Z]\w*(?:::[A-Z]\w*)*)(?P<kind>[#.])(?P<meth>[^\s#.:]+)$", re.S)
_RUBY_METHOD_START = re.compile(r"[a-z_\[=<>+\-!~*/%&|^`]")
_RUBY_ADDRESS = re.compile(r":0x[0-9a-fA-F]+")
#: GHC cost centres as speedscope names them (``Module.label``): the capitalized parts are the module
_HASKELL = re.compile(r"^(?P<mod>[A-Z][\w']*(?:\.[A-Z][\w']*)*)\.(?P<label>.+)$", re.S)
_HASKELL_ROOTS = frozenset({"GHC", "Data", "Control", "System", "Foreign", "Text", "Numeric", "Prelude"})
#: Go: a closure (``pkg.f.func1``, ``pkg.f.func1.2``), a method (``pkg.(*T).M``), generics (``pkg.F[...]``)
_GO_HINT = re.compile(r"\.func\d+(?:\.\d+)*$|\.\(\*?[\w\[\],. ]+\)\.|\[\.\.\.\]|\[go\.shape\.")
_GO_REST = re.compile(r"^(?:[A-Za-z_\u00c0-\uffff]|\()")
#: a legacy Rust hash as c++filt writes it (``core::ptr::drop_in_place::h0123456789abcdef``)
_RUST_HASH_TEXT = re.compile(r"::h[0-9a-f]{16}$")
_RUST_LEGACY_HASH = re.compile(r"17h[0-9a-f]{16}E(?:\.|$)")  # the mangled hash: a legacy Rust symbol
_RUST_HINT = re.compile(r"\{\{closure\}\}|\{closure[#:]|\{shim[#:]|::<|^<[^<>]* as |^<.*>::|^(?:core|alloc)::")
_C_FUNCTION = re.compile(r"^(?:~?[A-Za-z_]\w*|operator\W.*|operator \w.*)$", re.S)
_PERF_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
_EXT = re.compile(r"\.([A-Za-z0-9+]{1,6})$")
#: source extensions by language (a file given apart says how to read the name)
LANGUAGE_OF_EXTENSION = {
    "go": "go", "rs": "rust",
    **dict.fromkeys(("c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "inl", "ipp", "tcc", "cu", "cuh",
                     "m", "mm"), "c++"),
    **dict.fromkeys(("java", "kt", "kts", "scala", "groovy", "clj"), "java"),
    **dict.fromkeys(("rb", "rake"), "ruby"),
    **dict.fromkeys(("hs", "lhs"), "haskell"),
    **dict.fromkeys(("py", "pyw", "pyi", "pyx", "pxd", "pxi", "pyc", "pyo"), "python"),
    # assembly (Go's runtime/asm_amd64.s, glibc's memcpy-avx.S) is written for any language's
    # symbols: the name is read by its own shape, never as a Python module's "asm_amd64.s"
    **dict.fromkeys(("s", "asm"), "asm"),
}


def split_line_col(location: str) -> tuple:
    """(file, line) of ``file``, ``file:line`` or ``file:line:column`` (-1 without a line; ASCII
    digits only, a line past int32 is none: `filenumbers.read_line`)."""
    head, sep, tail = location.rpartition(":")
    if not sep or not is_digits(tail):
        return location, -1
    head2, sep2, tail2 = head.rpartition(":")
    if sep2 and is_digits(tail2):
        return head2, read_line(tail2)
    return head, read_line(tail)


_SHARED_OBJECT = re.compile(r"\.(?:so(?:\.\d+)*|dylib|dll|exe|node)$")


def native_object(file: str) -> str:
    """The binary a native frame's location names, as a module name ('' when ``file`` is no
    binary): a shared library (``/usr/lib/x86_64-linux-gnu/libc.so.6`` → ``libc``), an
    executable (a path whose last part has no extension: ``/tmp/w/native_work``), or a
    profiler's pseudo object (``[kernel.kallsyms]`` → ``kernel``, ``[vdso]``, ``[unknown]``), as
    perf script and pprof write the object a frame's address falls in."""
    f = file.strip()
    if not f or f.startswith("<"):
        return ""
    if f.startswith("[") and f.endswith("]"):
        inner = f[1:-1].strip()
        return inner.split(".", 1)[0] or inner
    base = f.replace("\\", "/").rsplit("/", 1)[-1]
    if _SHARED_OBJECT.search(base):
        return base.split(".", 1)[0] or base
    if "/" in f and "." not in base and base:
        return base
    return ""


def language_of_file(file: str) -> str:
    """The language a source location says ('' for none it tells: a shared library, a
    placeholder): ``js`` for scripts (`is_script`), else by the extension
    (`LANGUAGE_OF_EXTENSION`; a GHC location's ``src/Main.hs:17:1-4`` counts as ``.hs``);
    Python's pseudo files (``<frozen …>``, ``<string>``) are Python's."""
    f = file.strip()
    if not f:
        return ""
    if f.startswith("<"):
        return "python" if f.endswith(">") else ""
    if is_script(f):
        return "js"
    m = _EXT.search(f.split(":", 1)[0] if ".hs:" in f or ".lhs:" in f else f)
    return LANGUAGE_OF_EXTENSION.get(m.group(1).lower(), "") if m else ""


def _js(func: str, file: str, line: int) -> ParsedName:
    """A JavaScript function (``Module._compile``, ``(anonymous)``) of the script ``file``."""
    func = func.strip() or "(anonymous)"
    module, mparts = script_parts(file) if file else ("", ())
    return _make(func, file, line, module, func, ".", "js", mparts)


def _js_located(name: str):
    """``fn (location)`` / ``fn(location)`` whose location is a script's, else None."""
    k = name.rfind("(")
    if k < 0 or ")" in name[k + 1:-1]:
        return None
    loc = name[k + 1:-1]
    if ("." not in loc and ":" not in loc and "self-hosted" not in loc) or (" " in loc and " -> " not in loc):
        return None  # a script has an extension or a scheme, and no blank (C++ arguments: "int const&")
    if " -> " in loc:
        loc = loc.rsplit(" -> ", 1)[1]
    f, ln = split_line_col(loc)
    if not f or not is_script(f):
        return None
    func = name[:k]
    if func.endswith(" "):
        func = func[:-1]
    elif not _URL.match(f):
        return None  # only Hermes writes no blank before the location, and always a URL
    if func.endswith(" "):
        return None
    return _js(func, f, ln)


def _java(cls: str, meth: str, file: str, line: int) -> ParsedName:
    """A Java method of the class ``cls`` (``java.util.Random``, ``java/util/Random``): module =
    the package (``java.util``), qualname ``Class.method`` (nested classes keep their ``$``,
    a lambda class loses its address: ``Heavy$$Lambda+0x1c.21`` → ``Heavy$$Lambda``)."""
    cls = _JAVA_LAMBDA_ADDRESS.sub("", cls)
    parts = [x for x in re.split(r"[/.]", cls) if x]
    n = 0
    while n < len(parts) - 1 and not parts[n][:1].isupper():
        n += 1
    pkg, klass = parts[:n], ".".join(parts[n:]) or cls
    return _make(meth, file, line, ".".join(pkg), f"{klass}.{meth}", ".", "java", tuple(pkg))


def _ruby(name: str, file: str, line: int):
    """A Ruby frame (stackprof): module = the namespace, qualname ``Class#method``; the
    ``block in`` of a block stays in front of its method.  None when ``name`` is no Ruby frame."""
    pre = ""
    m = _RUBY_BLOCK.match(name)
    body = name
    if m:
        pre, body = m.group("pre"), m.group("body")
    r = _RUBY.match(body)
    if r is None:
        if pre:  # "block in set": a block in a method of no class
            return ParsedName(body, file, line, (pre + body,), "", pre + body, "::", "ruby")
        return None
    cls, kind, meth = _RUBY_ADDRESS.sub("", r.group("cls")), r.group("kind"), r.group("meth")
    if kind == "#" and not _RUBY_METHOD_START.match(meth):
        return None
    if kind == "." and "::" not in cls and not cls.startswith("#<") and not pre and not file:
        return None  # "Foo.bar" with no other sign of Ruby: the dotted rule reads it alike
    scopes = cls.split("::") if not cls.startswith("#<") else [cls]
    mod = scopes[:-1]
    return ParsedName(meth, file, line, tuple(scopes) + (pre + meth,), "::".join(mod), f"{pre}{scopes[-1]}{kind}{meth}",
                      "::", "ruby")


def _haskell(name: str, file: str, line: int, sure: bool):
    """A GHC cost centre ``Module.label`` (``Main.CAF:main7``, ``GHC.IO.Handle.Text.hPutStr2``), or None."""
    m = _HASKELL.match(name)
    if m is None:
        return None
    mod, label = m.group("mod"), m.group("label")
    parts = mod.split(".")
    if not (sure or "CAF" in label or (parts[0] in _HASKELL_ROOTS and len(parts) >= 2)):
        return None
    if file and ".hs" in file:  # "src/Main.hs:(21,1)-(38,42)": the file, and its first line
        fm = re.match(r"^(?P<f>.*?\.l?hs)(?::\(?(?P<l>\d+))?", file)
        if fm:
            file = fm.group("f")
            line = read_line(fm.group("l")) if fm.group("l") and line < 0 else line
    return ParsedName(label, file, line, tuple(parts) + (label,), mod, label, ".", "haskell")


def _go(name: str, file: str, line: int, sure: bool):
    """A Go function ``path/pkg.Name`` (``net/http.(*Server).Serve``, ``main.fib.func1``):
    module = the package path, qualname the rest; None when ``name`` is not Go's."""
    if " " in name or "::" in name:
        return None
    cut = name.find("(")
    cut = name.find("[") if cut < 0 else cut
    slash = name.rfind("/", 0, cut if cut >= 0 else len(name))
    dot = name.find(".", slash + 1)
    if dot <= slash + 1 or dot == len(name) - 1:
        return None
    pkg, rest = name[:dot], name[dot + 1:]
    if not _GO_REST.match(rest):
        return None
    if not (sure or slash >= 0 or _GO_HINT.search(name)):
        return None
    func = rest.rsplit(".", 1)[-1] if not rest.endswith(")") else rest
    return _make(func, file, line, pkg, rest, ".", "go", (pkg,))


def _cpp(name: str, file: str, line: int, lang: str) -> ParsedName:
    """A demangled C++ or Rust name (`split_cpp`): module = its namespaces (a Rust crate and
    its modules); a free function of a C/C++ source file without a namespace: the file's name."""
    rust = lang == "rust"
    text = name[:-19] if len(name) > 19 and name[-19:-16] == "::h" and _RUST_HASH_TEXT.search(name, len(name) - 19) \
        else name
    m = _CPP_APPLIED.match(text) if ": " in text else None
    if m:  # PyTorch: "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
        mod, q, func = _split_cpp(m.group("scope"))
        _, q2, _ = _split_cpp(m.group("arg"))
        return _make(func, file, line, mod, f"{q}: {q2}", "::", lang)
    got = split_cpp(text, rust) if len(text) <= MAX_PARSED_CHARS else None
    if got is None:
        return ParsedName(text, file, line, (text,), "", text, "::", lang)
    mod, q, func, _ = got
    mparts = None
    if not mod and file and language_of_file(file) in ("c++", "rust"):
        stem = re.split(r"[/\\]", file)[-1].split(".", 1)[0]
        if stem:
            mod, mparts = stem, (stem,)
    return _make(func, file, line, mod, q, "::", lang, mparts)


def _demangled(name: str, file: str, line: int):
    """A mangled name (``_Z…``, ``_R…``; a perf offset after it ignored) read as C++ or Rust
    once demangled, or None when it is not one."""
    sym = _PERF_OFFSET.sub("", name) if "+0x" in name[-24:] else name
    if not is_mangled(sym):
        return None
    text = demangle(sym)
    if text == sym:
        return None
    rust = sym.startswith(("_R", "__R")) or (sym.startswith(("_ZN", "__ZN")) and _RUST_LEGACY_HASH.search(sym))
    return _cpp(text, file, line, "rust" if rust else "c++")


#: a name of plain scopes (``v8::internal::Heap::Scavenge``, ``org/x/Pool::run``, ``do_syscall_64``):
#: identifiers joined by ``::`` (a path before the first), no bracket, blank, dot or operator
_PLAIN_SCOPED = re.compile(r"[A-Za-z_][\w/]*(?:::~?[A-Za-z_]\w*)*")


def _plain_scoped(name: str, line: int):
    """The `ParsedName` of a name without a file that `_PLAIN_SCOPED` matches whole, as the
    general rules (`_parse_general`) read it, without trying each dialect in turn: one scope
    is the name itself; several are C++ scopes (`split_cpp`: namespaces up to the first class),
    the path every scope.  None for the names those rules read otherwise (mangled symbols,
    Rust's ``core::``/``alloc::`` paths and hashes, operators): they take the general rules.
    Profiles of native code (collapsed stacks, perf) are mostly such names; tests compare
    the two readings."""
    if not _PLAIN_SCOPED.fullmatch(name) or name.startswith(("_Z", "_R", "__Z", "__R")) or "operator" in name:
        return None
    if "::" not in name:
        return ParsedName(name, "", line, (name,), "", name, ".")
    if name.startswith(("core::", "alloc::")) or name[-19:-16] == "::h":
        return None
    texts = name.split("::")
    n = len(texts)
    func = texts[-1]
    std = texts[0] == "std"
    n_mod = 0
    for k in range(n - 1):
        b = texts[k]
        if not b.islower() or (k == n - 2 and func in (b, "~" + b)) or (std and b in STD_LOWERCASE_CLASSES):
            break
        n_mod += 1
    return ParsedName(func, "", line, tuple(texts), "::".join(texts[:n_mod]), "::".join(texts[n_mod:]), "::", "c++")


def plain_scoped_paths(names) -> list:
    """For each name, ``parse_function_name(name).path`` where `_plain_scoped` reads the name
    (without a file), else None: the same tests in list-wide passes (the match in one ``map``,
    the rest in one comprehension), for profiles of 10^4-10^5 native names whose tables need
    only each name's path (`tracevis3d.io.stacks`)."""
    return [tuple(s.split("::")) if m is not None and len(s) <= MAX_PARSED_CHARS and not s.startswith(_MANGLED_STARTS)
            and "operator" not in s and ("::" not in s or not (s.startswith(("core::", "alloc::"))
                                                              or s[-19:-16] == "::h")) else None
            for s, m in zip(names, map(_PLAIN_SCOPED.fullmatch, names))]


_MANGLED_STARTS = ("_Z", "_R", "__Z", "__R")


#: an ELF symbol version after a C name (``@@GLIBC_2.34``, ``@GLIBCXX_3.4.21``, ``@CXXABI_1.3``)
_SYMBOL_VERSION = re.compile(r"(?<=[\w.])@@?[A-Z][A-Za-z0-9_]*_\d+(?:\.\d+)*$")
#: what tools write for a frame whose source file they do not know (valgrind, addr2line)
_UNKNOWN_FILES = frozenset({"???", "??"})


def parse_function_name(name: str, file: str = "", line: int = -1) -> ParsedName:
    """Parse one function name (see the module doc for the dialects).

    ``file``/``line``: a source location known from elsewhere (py-spy writes it in the
    event's args, not in the name; a profile's frame table holds a script's URL); used when
    the name itself carries none: the file's language says how to read the name, and for
    Python the name is taken as the qualified name inside that file's module.
    An ELF symbol version (``pthread_create@@GLIBC_2.34``, ``memcpy@GLIBC_2.2.5``: callgrind,
    perf) is not part of the C name, and valgrind's and addr2line's unknown file (``???``,
    ``??``) is no file (a module "???" labelled ``???.(below main)``).
    """
    got = _parse_function_name(name, file, line)
    # a line past int32 (``f:99999999999999999999``) is no line: the function tables are int32
    return got if -1 <= got.line <= _MAX_LINE else got._replace(line=-1)


#: the largest line number kept (the function tables hold lines as int32)
_MAX_LINE = 2 ** 31 - 1


def _viz_located(s: str):
    """``_VIZ.match(s)``'s (func, file, line), or None, for ``s`` ending in ``)``, read with `str`
    methods (the match's lazy ``.+?`` tried each position: 2.4 µs a name).  The same reading: the
    ``(`` after ``func `` is the last one in ``s`` (``file`` holds no parenthesis), no ``)`` comes
    between it and the last byte, ``file`` ends at the last ``:`` of what lies between (``line`` is
    ``\\d+``: `str.isdecimal`, Unicode's decimal digits as ``\\d``'s), ``func`` is not empty and
    holds no newline (``.``)."""
    j = s.rfind("(")
    if j < 2 or s[j - 1] != " ":
        return None
    inner = s[j + 1: -1]
    k = inner.rfind(":")
    ln = inner[k + 1:]
    func = s[: j - 1]
    if k < 0 or not ln.isdecimal() or ")" in inner or "\n" in func:
        return None
    return func, inner[:k], ln


def parse_function_names(names) -> list:
    """``[parse_function_name(s) for s in names]``, with the names of VizTracer's dialect
    (``qualname (file:line)``, a trace's 10^3-10^4 Python functions) read at once
    (`_viz_located`): the general rules (`_parse_general`) first ask whether the location is a
    script's (`_js_located`) and find it is not, which takes most of their time; here that answer,
    the file's module and its parts are had once per file.  Any other name, or one whose location
    is a script's, goes through `parse_function_name` (tests compare the two on real traces' names
    and on names made to differ).  The sympy trace's 4,334 names: 35 -> 25 ms with the match, the
    per-name module lookups and the usual qualname's general rules (`_qual_parts`) gone."""
    out = []
    python_of: dict = {}  # file -> (module, its parts), or False where _js_located reads it as a script's
    for s in names:
        got = _viz_located(s) if s[-1:] == ")" and len(s) <= MAX_PARSED_CHARS and not s.startswith(_MANGLED_STARTS) \
            else None
        if got is not None:
            func, fl, ln = got
            py = python_of.get(fl)
            if py is None:
                # _js_located's own reading of the location (a " -> " chain, or a line that is not
                # ASCII digits: those names take the general rules)
                loc = f"{fl}:0"
                if " -> " in loc or is_script(split_line_col(loc)[0]):
                    py = python_of[fl] = False
                else:
                    module = module_from_file(fl)
                    py = python_of[fl] = (module, _module_parts(module))
            if py is not False and ln.isascii():
                # `read_line` of ASCII digits: fewer than 10 are within [0, 2^31 - 1]
                out.append(ParsedName(func, fl, int(ln) if len(ln) < 10 else read_line(ln),
                                      py[1] + _qual_parts(func), py[0], func, ".", "python"))
                continue
        out.append(parse_function_name(s))
    return out


def _parse_function_name(name: str, file: str, line: int) -> ParsedName:
    if file in _UNKNOWN_FILES:
        file = ""
    if "@" in name and name[-1:].isdigit():
        m = _SYMBOL_VERSION.search(name)
        if m is not None and m.start() > 0:
            name = name[:m.start()]
    if not file and len(name) <= MAX_PARSED_CHARS:
        got = _plain_scoped(name, line)
        if got is not None:
            return got
    return _parse_general(name, file, line)


def _parse_general(name: str, file: str = "", line: int = -1) -> ParsedName:
    """`parse_function_name` by its general rules: each dialect tried in turn."""
    if len(name) > MAX_PARSED_CHARS:
        return _long_name(name, file, line)
    lang_f = language_of_file(file) if file else ""
    if file and is_php_name(name, file):
        return _php(name, file, line)
    if name[:3] in ("_Z", "__Z", "_R", "__R") or name[:3].startswith(("_Z", "_R")):
        got = _demangled(name, file, line)
        if got is not None:
            return got
    if name.endswith(")"):
        got = _js_located(name)
        if got is not None:
            return got
    elif _JS_BARE.match(name) and is_script(name):
        return _js("(anonymous)", *split_line_col(name))
    for rx in _located(name):  # the name carries its file and line: the module is the file's
        m = rx.match(name)
        if m:
            f, fl = m.group("func"), m.group("file")
            return _make(f, fl, read_line(m.group("line")), module_from_file(fl), f, ".", "python")
    m = _TF_C.match(name) if name.startswith("$") else None
    if m:
        mod = m.group("mod")
        return _make(m.group("func"), file, line, "builtins" if mod == "<unknown>" else mod, m.group("func"),
                     ".", "python")
    if lang_f:
        got = _in_language(name, file, line, lang_f)
        if got is not None:
            return got
    if file and not lang_f and "::" not in name and not name.startswith("<"):
        obj = native_object(file)
        if obj:  # a C function in a binary (perf, pprof): the binary is its module, the name itself
            return _make(name, file, line, obj, name, ".", "c", (obj,))
    if file and (lang_f == "python" or ("::" not in name and not lang_f)):
        mod = module_from_file(file)
        if mod and not _PYSPY_THREAD.match(name):
            # a name already qualified by that module ("app.__main__.main" in app/__main__.py,
            # as other tools and the synthetic traces write) is not prefixed with it again
            qual = name[len(mod) + 1:] if name.startswith(mod + ".") and len(name) > len(mod) + 1 else name
            return _make(qual.rsplit(".", 1)[-1] if qual != name else name, file, line, mod, qual, ".",
                         "python" if lang_f == "python" else "")
    m = _METHOD_OF.match(name)
    if m:
        mod, typ = _owner_module(m.group("cls"))
        return _make(m.group("func"), file, line, mod or "builtins",
                     f"{typ}.{m.group('func')}" if typ else m.group("func"), ".", "python")
    m = _BUILTIN.match(name)
    if m:
        func = m.group("func")
        if m.group("owner"):
            mod, typ = _owner_module(m.group("owner"))
            q = f"{typ}.{func}" if typ else func
        else:
            mod, q = split_dotted(func) if "." in func else ("builtins", func)
            func = func.rsplit(".", 1)[-1]
        return _make(func, file, line, mod or "builtins", q, ".", "python")
    m = _TORCH_NN.match(name)
    if m:
        return _make(name, file, line, "torch.nn", m.group("mod"), ".", "python")
    got = _other_language(name, file, line)
    if got is not None:
        return got
    if "::" in name:
        rust = (("{" in name or "::<" in name or name.startswith(("<", "core::", "alloc::")))
                and _RUST_HINT.search(name)) or (name[-19:-16] == "::h" and _RUST_HASH_TEXT.search(name, len(name) - 19))
        return _cpp(name, file, line, "rust" if rust else "c++")
    if _IDENT_DOTTED.match(name):
        mod, q = split_dotted(name)
        return _make(q.rsplit(".", 1)[-1] if q else name, file, line, mod, q or name)
    return ParsedName(name, file, line, (name,), "", name, ".")


def _long_name(name: str, file: str, line: int) -> ParsedName:
    """A name longer than `MAX_PARSED_CHARS` (hostile or broken): only its location, when it
    ends in one (a script's, or VizTracer's ``fn (file.py:1)``), or a JVM descriptor is read;
    anything else is free text (each rule stays one linear pass)."""
    if name.endswith(")") and ")" not in name[name.rfind("(") + 1:-1]:
        k = name.rfind("(")
        head, loc = name[:k], name[k + 1:-1]
        f, ln = split_line_col(loc)
        if head.strip() and f and is_script(f):
            return _js(head, f, ln)
        if head.endswith(" ") and ln >= 0 and f.endswith((".py", ">")):
            return _make(head[:-1], f, ln, module_from_file(f), head[:-1], ".", "python")
    if name.startswith("L") and ";" in name:
        m = _JAVA_DESC.match(name)
        if m:
            return _java(m.group("cls"), m.group("meth"), file, line)
    return ParsedName(name, file, line, (name,), "", name, ".", "")


_PHP_FILE = re.compile(r"\.(?:php\d?|phtml)$", re.I)
#: Xdebug's pseudo functions, PHP's also in a script without the .php extension
_PHP_PSEUDO = ("{main}", "require_once::", "require::", "include_once::", "include::", "{closure:")
_PHP_PATH_IN = re.compile(r"(?<=[:{])(/|[A-Za-z]:[\\/])[^:{}]*[\\/]")  # a path's folders in a name


def _php(name: str, file: str, line: int) -> ParsedName:
    """A PHP function as Xdebug names it (module doc): ``[php::][Ns\\]Class->method`` or
    ``::static``, a function, ``{main}``, ``{closure:file:lines}``, ``require_once::file``."""
    qual = _PHP_PATH_IN.sub("", name)  # {closure:/src/a.php:3-5} -> {closure:a.php:3-5}
    body = qual[5:] if qual.startswith("php::") else qual
    head, arrow, meth = body.partition("->")
    if not arrow and not body.startswith(("{", "require", "include")) and "::" in body:
        head, arrow, meth = body.partition("::")
    if not arrow:
        head, meth = "", body
    ns, _, cls = head.rpartition("\\")
    if qual.startswith("php::"):
        module = "php"
    elif ns:
        module = ns
    else:
        module = _PHP_FILE.sub("", re.split(r"[/\\]", file)[-1]) if file and file != "php:internal" else ""
    mparts = tuple(x for x in module.split("\\") if x)
    path = mparts + ((cls,) if cls else ()) + (meth or body,)
    return ParsedName(meth or body, file, line, path, module, qual, "::", "php")


def is_php_name(name: str, file: str = "") -> bool:
    """A function Xdebug names: of a PHP file, PHP's own (``php::``, ``php:internal``) or one
    of Xdebug's pseudo functions (``{main}``, ``require_once::…``)."""
    return is_php_file(file) or (bool(file) and is_php_pseudo(name))


def is_php_file(file: str) -> bool:
    """`is_php_name`'s test of the file alone: a PHP file or PHP's own (``php:internal``)."""
    return file == "php:internal" or bool(file and _PHP_FILE.search(file))


def is_php_pseudo(name: str) -> bool:
    """`is_php_name`'s test of the name alone (with a file): one of Xdebug's pseudo functions."""
    return name.startswith(_PHP_PSEUDO)


#: a Go assembly file: its name ends in a GOARCH suffix (``asm_amd64.s``, ``memmove_arm64.s``)
_GO_ASM_FILE = re.compile(r"_(?:amd64|arm64|386|arm|ppc64x?|ppc64le|s390x|mips64x?|mipsx?|riscv64|loong64|wasm)\.s$")


def _in_language(name: str, file: str, line: int, lang: str):
    """``name`` read as the language its file says (None: let the other rules read it)."""
    if lang == "js":
        return _js(name, file, line)
    if lang == "go":
        return _go(name, file, line, True)
    if lang in ("c++", "rust"):
        return _cpp(name, file, line, "rust" if lang == "rust" or _RUST_HINT.search(name) else "c++")
    if lang == "java":
        m = _JAVA_DESC.match(name) or _JAVA_SLASH.match(name) or _JAVA_JFR.match(name)
        if m:
            d = m.groupdict()
            return _java((d.get("pkg") or "") + d["cls"], d["meth"], file, line)
        if _IDENT_DOTTED.match(name.replace("$", "_")) and "." in name:
            cls, _, meth = name.rpartition(".")
            return _java(cls, meth, file, line)
        return None
    if lang == "ruby":
        return _ruby(name, file, line)
    if lang == "haskell":
        return _haskell(name, file, line, True)
    if lang == "asm":  # Go's (runtime/asm_amd64.s: its GOARCH suffix), else the symbol's own shape
        go = _GO_ASM_FILE.search(file) is not None
        got = _go(name, file, line, True) if go else None
        path = file.replace("\\", "/")
        if got is None and go and "/src/" in path and _C_FUNCTION.match(name):
            # a routine pprof names without its package ("cmpbody"): the package is its folder
            pkg = path.rsplit("/src/", 1)[1].rpartition("/")[0]
            if pkg:
                return _make(name, file, line, pkg, name, ".", "go", (pkg,))
        return got if got is not None else parse_function_name(name, "", line)._replace(file=file)
    return None


def _other_language(name: str, file: str, line: int):
    """The dialects a name shows by its shape alone: Haskell's cost centres, Java's
    descriptors and JFR names, Ruby's ``Class#method``, Go's package paths and closures."""
    c0 = name[:1]
    if c0.isupper() and "." in name:
        got = _haskell(name, file, line, False)
        if got is not None:
            return got
    if c0 == "L" and ";" in name:
        m = _JAVA_DESC.match(name)
        if m:
            return _java(m.group("cls"), m.group("meth"), file, line)
    if "/" in name:
        m = _JAVA_SLASH.match(name)
        if m:
            return _java(m.group("pkg") + m.group("cls"), m.group("meth"), file, line)
    if ":" in name and "::" not in name and " " not in name:
        m = _JAVA_JFR.match(name)
        if m and ("." in m.group("cls") or "$" in m.group("cls")):
            return _java(m.group("cls"), m.group("meth"), file, line)
    if "#" in name or ("::" in name and "." in name) or name.startswith(("#<", "block ", "rescue ", "ensure ")):
        got = _ruby(name, file, line)
        if got is not None:
            return got
    if "." in name and "::" not in name:
        got = _go(name, file, line, False)
        if got is not None:
            return got
    if name.endswith((")", "]")) and "(" in name and "::" not in name and len(name) <= MAX_PARSED_CHARS:
        got = split_cpp(name)  # a C/C++ function of no namespace: "foo(int)", "void f<int>()", "operator new(…)"
        if got is not None and got[3] and _C_FUNCTION.match(got[2]):
            return _cpp(name, file, line, "c++")
    return None


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
           "unique_labels", "script_module", "script_parts", "is_script", "is_url", "language_of_file",
           "split_cpp", "strip_cpp_arguments", "fold_cpp_templates", "split_line_col", "STD_LOWERCASE_CLASSES",
           "LANGUAGE_OF_EXTENSION",
           "pyspy_thread_name", "is_pyspy_process_frame", "ROOT_DIRS", "NOT_PACKAGES",
           "BUILTIN_TYPES", "LOWERCASE_C_TYPES"]


def thread_kind(name: str) -> str:
    """What makes threads interchangeable: the name with its numbers left out
    ("Thread-12 (process_request_thread)" → "Thread-# (process_request_thread)").  A name
    with no letter besides its numbers ("12", a trace that names threads by their ids) says
    nothing of the thread's kind: it is its own kind, and never packed with another."""
    kind = re.sub(r"\d+", "#", name)
    return kind if any(c.isalpha() for c in kind) else name
