"""Function names in their own language (issue 67, part 5): JavaScript, C++, Rust, Go, Java,
Ruby and Haskell names give their module (for colour and EXTRAVIS's hierarchy) and a label
whose shorter forms never cut the function part away.

The names are real: speedscope's sample profiles (tests/data/formats/speedscope-samples:
Firefox, Chrome, Hermes, linux-perf's Rust symbols, stackprof, GHC, pprof, callgrind;
java-flight-recorder's names as speedscope's snapshot of heavy.jfr lists them), this
repository's own Node and Go recordings (tests/data/formats/node, tests/data/formats/go) and
the C++ of Chromium's traces; mangled ones were checked against c++filt / llvm-cxxfilt
(tests/test_demangle.py).
"""
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest

import tracevis3d
from tracevis3d.naming import describe_function, function_table
from tracevis3d.layout.text import ELLIPSIS, MAX_NAME, fit_text, has_qualifier, name_candidates, text_width
from tracevis3d.model import Trace
from tracevis3d.names import (language_of_file, parse_function_name, script_module, script_parts, split_cpp,
                              unique_labels)

from hostile_names import HOSTILE_NAMES  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples"

_RUST_INDEX = ("_RNvXsb_NtCsfiKabdrepoq_5alloc3vecINtB5_3VecIBw_dEEINtNtNtCsTACXlTRjQ_4core3ops5index5IndexjE5index"
               "Cs8K9WJNlS7Dz_5trace+0x54")
_FF_LOADER = "resource://devtools/shared/base-loader.js -> resource://devtools/shared/ThreadSafeDevToolsUtils.js"

# (name, file given apart, lang, module, qualname, the figures' full name (FunctionTable.display), short)
TABLE = [
    # --- JavaScript: Firefox (speedscope Firefox/59), V8 (Node recording), Hermes
    ("a (file:///Users/jlfwong/code/speedscope/sample/simple.js:1)", "", "js", "speedscope/sample/simple", "a",
     "a (simple.js:1)", "a"),
    (f"exports.makeInfallible/< ({_FF_LOADER}:107)", "", "js", "devtools/shared/ThreadSafeDevToolsUtils",
     "exports.makeInfallible/<", "exports.makeInfallible/< (ThreadSafeDevToolsUtils.js:107)", "makeInfallible/<"),
    ("bound (self-hosted:962)", "", "js", "self-hosted", "bound", "bound (self-hosted:962)", "bound"),
    ("setTimeout (resource://gre/modules/Timer.jsm:59)", "", "js", "gre/modules/Timer", "setTimeout",
     "setTimeout (Timer.jsm:59)", "setTimeout"),
    ("file:///Users/jlfwong/code/speedscope/sample/simple.js:30", "", "js", "speedscope/sample/simple", "(anonymous)",
     "(anonymous) (simple.js:30)", "(anonymous)"),
    ("Module._compile", "node:internal/modules/cjs/loader", "js", "node:internal/modules/cjs/loader",
     "Module._compile", "Module._compile (loader)", "_compile"),
    ("Module._extensions..js", "node:internal/modules/cjs/loader", "js", "node:internal/modules/cjs/loader",
     "Module._extensions..js", "Module._extensions..js (loader)", "_extensions..js"),
    ("beta", "/Users/example/test_project/node_modules/metro-runtime/src/polyfills/require.js", "js",
     "metro-runtime/src/polyfills/require", "beta", "beta (require.js)", "beta"),
    ("function1(http://localhost:8081/index.bundle?platform=android&dev=true:1:9)", "", "js", "localhost/index.bundle",
     "function1", "function1 (index.bundle:1)", "function1"),
    ("fn (http://host/static/js/app.js:12:3)", "", "js", "host/static/js/app", "fn", "fn (app.js:12)", "fn"),
    # --- C++: Chromium's trace events, Firefox's labels, demangled and mangled symbols
    ("DocumentLoader::CommitData", "", "c++", "", "DocumentLoader::CommitData", "DocumentLoader::CommitData",
     "CommitData"),
    ("nsAppShell::ProcessGeckoEvents", "", "c++", "", "nsAppShell::ProcessGeckoEvents",
     "nsAppShell::ProcessGeckoEvents", "ProcessGeckoEvents"),
    ("v8::internal::Heap::Scavenge(int)", "", "c++", "v8::internal", "Heap::Scavenge", "v8::internal::Heap::Scavenge",
     "Scavenge"),
    ("_ZN2v88internal4Heap8ScavengeEv", "", "c++", "v8::internal", "Heap::Scavenge", "v8::internal::Heap::Scavenge",
     "Scavenge"),
    ("std::vector<int, std::allocator<int>>::push_back(int const&)", "", "c++", "std", "vector<…>::push_back",
     "std::vector<…>::push_back", "push_back"),
    ("_ZNKSt6vectorIiSaIiEE4sizeEv+0x12", "", "c++", "std", "vector<…>::size", "std::vector<…>::size", "size"),
    ("_ZZ4mainENKUlvE_clEv", "", "c++", "", "main::{lambda#1}::operator()", "main::{lambda#1}::operator()",
     "operator()"),
    ("_ZN12_GLOBAL__N_13fooEv.cold", "", "c++", "{anonymous}", "foo", "{anonymous}::foo", "foo"),
    ("main", "file1.c", "c++", "file1", "main", "main (file1.c)", "main"),
    # --- Rust: speedscope's linux-perf/rust-mangled (v0), legacy symbols, demangled text
    (_RUST_INDEX, "", "rust", "alloc::vec", "Vec<…>::index", "alloc::vec::Vec<…>::index", "index"),
    ("_RNvCs8K9WJNlS7Dz_5trace17multiply_matrices+0x208", "", "rust", "trace", "multiply_matrices",
     "trace::multiply_matrices", "multiply_matrices"),
    ("_RNCNkNvNtNtCsiznFMVuT3yX_4rand4rngs6thread14THREAD_RNG_KEY00B9_+0x24", "", "rust", "rand::rngs::thread",
     "THREAD_RNG_KEY::{closure#0}", "rand::rngs::thread::THREAD_RNG_KEY::{closure#0}", "THREAD_RNG_KEY::{closure#0}"),
    ("_ZN4core3ptr13drop_in_place17h1234567890abcdefE", "", "rust", "core::ptr", "drop_in_place",
     "core::ptr::drop_in_place", "drop_in_place"),
    ("core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "", "rust", "core::ptr", "drop_in_place",
     "core::ptr::drop_in_place", "drop_in_place"),
    ("std::rt::lang_start::{{closure}}::h0123456789abcdef", "", "rust", "std::rt", "lang_start::{{closure}}",
     "std::rt::lang_start::{{closure}}", "lang_start::{{closure}}"),
    # --- Go: this repository's pprof recording, speedscope's pprof/simple.prof
    ("strings.(*Builder).Grow", "/usr/lib/go-1.19/src/strings/builder.go", "go", "strings", "(*Builder).Grow",
     "strings.(*Builder).Grow", "Grow"),
    ("sort.StringSlice.Less", "/usr/lib/go-1.19/src/sort/sort.go", "go", "sort", "StringSlice.Less",
     "sort.StringSlice.Less", "Less"),
    ("runtime.gcBgMarkWorker.func2", "", "go", "runtime", "gcBgMarkWorker.func2", "runtime.gcBgMarkWorker.func2",
     "gcBgMarkWorker.func2"),
    ("main.alpha", "/Users/jlfwong/code/speedscope/sample/programs/go/simple.go", "go", "main", "alpha",
     "main.alpha", "alpha"),
    ("net/http.(*Server).Serve", "", "go", "net/http", "(*Server).Serve", "net/http.(*Server).Serve", "Serve"),
    # --- Java: JFR (speedscope's snapshot of java-flight-recorder/heavy.jfr), JVM descriptors, async-profiler
    ("java.util.Random:nextInt", "", "java", "java.util", "Random.nextInt", "java.util.Random.nextInt", "nextInt"),
    ("java.util.stream.SliceOps$2$1:accept", "", "java", "java.util.stream", "SliceOps$2$1.accept",
     "java.util.stream.SliceOps$2$1.accept", "accept"),
    ("jdk.jfr.internal.PlatformRecorder:lambda$startDiskMonitor$1", "", "java", "jdk.jfr.internal",
     "PlatformRecorder.lambda$startDiskMonitor$1", "jdk.jfr.internal.PlatformRecorder.lambda$startDiskMonitor$1",
     "lambda$startDiskMonitor$1"),
    ("Ljava/lang/Thread;.run()V", "", "java", "java.lang", "Thread.run", "java.lang.Thread.run", "run"),
    ("java/util/concurrent/ThreadPoolExecutor.runWorker", "", "java", "java.util.concurrent",
     "ThreadPoolExecutor.runWorker", "java.util.concurrent.ThreadPoolExecutor.runWorker", "runWorker"),
    # --- Ruby: stackprof (speedscope's stackprof samples)
    ("ActiveRecord::AttributeMethods::Read#read_attribute", "", "ruby", "ActiveRecord::AttributeMethods",
     "Read#read_attribute", "ActiveRecord::AttributeMethods::Read#read_attribute", "read_attribute"),
    ("ActiveRecord::Attribute.from_database", "", "ruby", "ActiveRecord", "Attribute.from_database",
     "ActiveRecord::Attribute.from_database", "from_database"),
    ("Object#try", "", "ruby", "", "Object#try", "Object#try", "try"),
    ("block in <main>", "", "ruby", "", "block in <main>", "block in <main>", "<main>"),
    ("#<Module:0x007fec801c41b0>.parse_json_times", "", "ruby", "", "#<Module>.parse_json_times",
     "#<Module>.parse_json_times", "parse_json_times"),
    # --- Haskell: GHC's cost centres as speedscope names them (haskell/simple.prof)
    ("Main.main.vs", "src/Main.hs:34:9-28", "haskell", "Main", "main.vs", "Main.main.vs", "main.vs"),
    ("Main.CAF:main7", "", "haskell", "Main", "CAF:main7", "Main.CAF:main7", "CAF:main7"),
    ("GHC.IO.Handle.Text.CAF", "", "haskell", "GHC.IO.Handle.Text", "CAF", "GHC.IO.Handle.Text.CAF", "CAF"),
]


def test_native_frames_are_named_by_their_function_and_coloured_by_their_binary():
    """perf script and pprof frames: a C function in a binary shows its name alone; the binary
    (a shared library, an executable, the kernel) is its module, for colours and EXTRAVIS."""
    for name, file, module in [("insert", "/tmp/w/native_work", "native_work"),
                               ("__libc_start_call_main", "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc"),
                               ("do_anonymous_page", "[kernel.kallsyms]", "kernel"), ("f", "libfoo.dylib", "libfoo")]:
        p = parse_function_name(name, file=file)
        assert (p.lang, p.module) == ("c", module), (name, p)
        assert describe_function(name, p)[3] == name
    assert parse_function_name("helper", file="src/helper.c").lang == "c++"  # a source file, not a binary
    assert parse_function_name("f", file="/tmp/mod/util.py").lang == "python"


@pytest.mark.parametrize("name,file,lang,module,qualname,display,short", TABLE, ids=[r[0][:50] for r in TABLE])
def test_names_of_each_language(name, file, lang, module, qualname, display, short):
    p = parse_function_name(name, file=file) if file else parse_function_name(name)
    assert (p.lang, p.module, p.qualname) == (lang, module, qualname)
    mod, fam, qual, disp, sh, infra = describe_function(name, p)
    # Node's module loader is runtime infrastructure (`naming.JS_INFRA_MODULES`), folded as Python's imports
    assert (disp, sh, infra) == (display, short, module.startswith("node:internal/modules/"))
    assert p.path[-1] and len(p.path) >= 1
    if module:  # the hierarchy's package is the path's first part, the colour family alike
        assert p.package == p.path[0] and fam == p.package
    # the label's shortest qualified form still holds the function's own name
    assert any(sh.split("::")[-1].split(".")[-1] in c for c in name_candidates(disp))


def test_scripts_give_modules_by_path():
    assert script_parts("http://host/static/js/app.js") == ("host/static/js/app", ("host", "static", "js", "app"))
    assert script_parts("/p/node_modules/react-dom/cjs/react-dom.development.js")[1][0] == "react-dom"
    assert script_parts("/p/node_modules/@babel/core/lib/index.js")[1][0] == "@babel/core"
    assert script_module("node:internal/modules/cjs/loader") == "node:internal/modules/cjs/loader"
    assert script_parts("internal/modules/cjs/loader.js")[1][0] == "node"  # Node before 16
    assert script_module("webpack://app/./src/index.ts") == "app/src/index"
    assert script_module("https://u:p@cdn.example.com:8443/a/b.mjs?x=1#y") == "cdn.example.com/a/b"
    assert script_module("blob:https://example.com/0f5c") == "blob"
    assert language_of_file("src/Main.hs:(21,1)-(38,42)") == "haskell"
    assert language_of_file("/usr/lib/go-1.19/src/runtime/proc.go") == "go"
    assert language_of_file("/usr/lib/x86_64-linux-gnu/libc.so.6") == ""
    assert language_of_file("<frozen runpy>") == "python"


def test_cpp_splits():
    assert split_cpp("std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >("
                     "std::basic_ostream<char, std::char_traits<char> >&, char const*)")[:3] == \
        ("std", "operator<<", "operator<<")
    assert split_cpp("A::operator int<int>()")[:3] == ("", "A::operator int", "operator int")
    assert split_cpp("std::locale::classic()")[:2] == ("std", "locale::classic")  # a lower-case std class
    assert split_cpp("llvm::cl::opt<bool, false, llvm::cl::parser<bool> >::~opt()")[:2] == ("llvm::cl", "opt<…>::~opt")
    assert split_cpp("<usize as core::iter::range::Step>::forward_unchecked", True)[:2] == \
        ("core::iter::range", "usize::forward_unchecked")
    assert split_cpp("main::apply::<main::main::{closure#0}>", True)[:2] == ("main", "apply")
    assert split_cpp("vtable for std::exception")[:2] == ("std", "vtable for exception")
    assert split_cpp("ns::f<(") is None  # unbalanced: no structure read


# --------------------------------------------------------------------------- labels
def _chain(display):
    c = name_candidates(display)
    assert all(len(b) < len(a) for a, b in zip(c, c[1:])), c  # each shorter than the last
    return c


def test_label_forms_of_each_language():
    assert _chain("fn (app.js:12)") == ["fn (app.js:12)", "fn (app.js)", "fn"]
    assert _chain("fn (http://host/path/file.js:12:3)") == ["fn (http://host/path/file.js:12:3)", "fn (file.js:12)",
                                                           "fn (file.js)", "fn"]
    assert _chain("function1(http://localhost:8081/index.bundle?platform=android:1:9)")[1:] == [
        "function1 (index.bundle:1)", "function1 (index.bundle)", "function1"]
    assert _chain("std::vector<int, std::allocator<int>>::push_back(int const&)")[1:] == [
        "std::vector<int, std::allocator<int>>::push_back", "std::vector<…>::push_back", "…vector<…>::push_back",
        "…push_back"]
    assert _chain("v8::internal::Heap::Scavenge")[1:] == ["…internal::Heap::Scavenge", "…Heap::Scavenge", "…Scavenge"]
    assert _chain("net/http.(*Server).Serve")[1:] == ["…http.(*Server).Serve", "…(*Server).Serve", "…Serve"]
    assert _chain("ActiveRecord::Base#save")[1:] == ["…Base#save", "…save"]
    assert _chain("Module._extensions..js")[1:] == ["…_extensions..js"]  # never "…js"
    # the Python convention stays
    assert _chain("json.encoder._iterencode_dict") == ["json.encoder._iterencode_dict", "…encoder._iterencode_dict",
                                                       "…_iterencode_dict"]
    assert has_qualifier("…Heap::Scavenge") and has_qualifier("render (app.js)") and not has_qualifier("…Scavenge")


@pytest.mark.parametrize("name,file,lang,module,qualname,display,short", TABLE, ids=[r[0][:50] for r in TABLE])
def test_labels_never_cut_the_function_part(name, file, lang, module, qualname, display, short):
    """At every width, the fitted label of a function is '' or holds its function part whole
    (a location, arguments, templates and scopes go first), or is that part cut from its
    start at a word boundary (the last resort: ``…_iterencode_dict``)."""
    p = parse_function_name(name, file=file) if file else parse_function_name(name)
    disp = describe_function(name, p)[3]
    func = p.function if lang != "js" else p.qualname
    cands = name_candidates(disp)
    for width in np.linspace(0.5, text_width(disp) + 1, 60):
        t = fit_text(cands, float(width))
        if not t:
            continue
        body = t[1:] if t.startswith(ELLIPSIS) else t
        assert func in body or func.endswith(body) or func.split("::")[-1].endswith(body) \
            or (func.split(".")[-1].endswith(body)), (t, func)


def test_the_raw_names_too():
    """Names as a tool wrote them, fitted without parsing (live labels, legends): the URL, the
    arguments or the file are what goes, never the function."""
    for raw, func in [("Module._compile (node:internal/modules/cjs/loader:1105:14)", "Module._compile"),
                      ("function1(http://localhost:8081/index.bundle?platform=android&dev=true:1:9)", "function1"),
                      ("_iterencode_dict (/usr/lib/python3.11/json/encoder.py:334)", "_iterencode_dict"),
                      ("std::vector<int, std::allocator<int> >::push_back(int const&)", "push_back")]:
        cands = name_candidates(raw)
        for width in np.linspace(1, text_width(raw), 40):
            t = fit_text(cands, float(width))
            assert not t or func in t or func.endswith(t.lstrip(ELLIPSIS)), (raw, t)
        assert not any(c.endswith(("…js", ":14)", "…9)")) for c in cands[1:]), cands


# --------------------------------------------------------------------------- the samples
def _sample(rel):
    path = SAMPLES / rel
    if not path.exists():
        pytest.skip(f"speedscope sample {rel} not copied")
    return path


def test_firefox_names():
    d = json.loads(_sample("Firefox/59/simple-firefox.json").read_text())
    strings = set()
    stack = [d]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "stringTable":
                    strings.update(x for x in v if isinstance(x, str))
                else:
                    stack.append(v)
        elif isinstance(o, list):
            stack.extend(o)
    js = [s for s in strings if re.search(r"\((?:resource|file|self-hosted)[^()]*\)$", s)]
    assert len(js) > 20
    for s in js:
        p = parse_function_name(s)
        assert p.lang == "js" and p.module and p.file and not p.qualname.endswith(")"), s
        assert not any(c.endswith((".js", "js)")) and c.startswith(ELLIPSIS) for c in name_candidates(s)), s
    cpp = [s for s in strings if "::" in s and " (" not in s]
    assert cpp and all(parse_function_name(s).lang == "c++" for s in cpp)


def test_hermes_frames_name_their_npm_package():
    events = json.loads(_sample("trace-event/hermes-multiple-frames.json").read_text())
    frames = {(e["name"], e["args"].get("url") or "") for e in events if e.get("ph") == "B"}
    for name, url in frames:
        p = parse_function_name(name, file=url)
        if url:
            assert (p.lang, p.package) == ("js", "metro-runtime"), (name, url)


def test_rust_sample_symbols_name_their_crates():
    lines = _sample("linux-perf/rust-mangled.linux-perf.txt").read_text().splitlines()
    syms = {ln.split()[1] for ln in lines if ln.startswith(("\t", " ")) and len(ln.split()) > 1}
    rust = sorted(s for s in syms if s.startswith("_R"))
    crates = set()
    for s in rust:
        p = parse_function_name(s)
        assert p.lang == "rust" and not p.display.startswith("_R"), s
        assert p.module or p.qualname.startswith("usize::"), s  # <usize>::f: rustc-demangle hides the impl's module
        crates.add(p.package)
    assert {"core", "alloc", "trace"} <= crates


def test_stackprof_frames_are_ruby():
    d = json.loads(_sample("stackprof/simple-stackprof.json").read_text())
    for fr in d["frames"].values():
        p = parse_function_name(fr["name"], file=fr.get("file", ""))
        if "#" in fr["name"]:
            assert p.lang == "ruby" and "#" in p.qualname, fr


def test_ghc_cost_centres():
    d = json.loads(_sample("haskell/simple.prof").read_text())
    for cc in d["cost_centres"]:
        name = f"{cc['module']}.{cc['label']}"  # speedscope's name for a cost centre
        src = cc["src_loc"] if not cc["src_loc"].startswith("<") else ""
        p = parse_function_name(name, file=src)
        if src or "CAF" in cc["label"] or cc["module"].split(".")[0] in ("GHC", "Data", "Control", "System"):
            assert (p.lang, p.module, p.qualname) == ("haskell", cc["module"], cc["label"]), name


def test_node_recording_modules():
    d = json.loads((DATA / "node" / "csv-summary.cpuprofile").read_text())
    frames = {(n["callFrame"]["functionName"], n["callFrame"]["url"], n["callFrame"]["lineNumber"]) for n in d["nodes"]}
    pkgs = set()
    for name, url, line in frames:
        if not url:
            continue
        p = parse_function_name(name, file=url, line=line)
        assert p.lang == "js" and p.module, (name, url)
        pkgs.add(p.package)
    assert "node" in pkgs


def _pprof_strings(data: bytes) -> list:
    """The string table of a pprof Profile message (field 6, repeated string): the top-level
    fields read by their wire types (varint 0, 64-bit 1, length-delimited 2, 32-bit 5)."""
    def varint(k):
        v, shift = 0, 0
        while True:
            b = data[k]
            v |= (b & 0x7F) << shift
            k += 1
            if b < 0x80:
                return v, k
            shift += 7

    out, k = [], 0
    while k < len(data):
        tag, k = varint(k)
        wire = tag & 7
        if wire == 0:
            _, k = varint(k)
        elif wire == 1:
            k += 8
        elif wire == 5:
            k += 4
        else:
            n, k = varint(k)
            if tag >> 3 == 6:
                out.append(data[k:k + n].decode("utf-8", "replace"))
            k += n
    return out


def test_go_recording_names():
    """The functions of this repository's Go recording (tests/data/formats/go/cpu.pprof)."""
    strings = _pprof_strings(gzip.decompress((DATA / "go" / "cpu.pprof").read_bytes()))
    funcs = [x for x in strings if re.fullmatch(r"[a-z][\w/]*\.[\w.()*]+", x) and not x.endswith((".go", ".s"))]
    assert "strings.(*Builder).Grow" in funcs and "runtime.gcBgMarkWorker.func2" in funcs
    for n in funcs:
        p = parse_function_name(n, file="/usr/lib/go-1.19/src/x/x.go")
        assert p.lang == "go" and p.module == n.split(".", 1)[0] and p.qualname == n.split(".", 1)[1], n


# --------------------------------------------------------------------------- hierarchy, tables
def _trace(names, files, lines=None):
    n = len(names)
    return Trace.from_arrays(list(range(n)), [float(k) for k in range(n)], [k + 0.5 for k in range(n)], [-1] * n,
                             function_names=names, function_files=list(files),
                             function_lines=np.asarray(lines if lines is not None else [-1] * n, np.int32))


def test_extravis_hierarchy_has_modules_for_other_languages():
    names = ["Module._compile", "render", "_ZN2v88internal4Heap8ScavengeEv", "net/http.(*Server).Serve",
             "ActiveRecord::Base#save", "java.util.Random:nextInt"]
    files = ["node:internal/modules/cjs/loader", "https://example.com/static/js/app.js", "", "", "", ""]
    t = _trace(names, files, [1105, 12, -1, -1, -1, -1])
    h = tracevis3d.hierarchy(t)
    packages = {h.names[e] for e in range(len(h)) if int(h.kind[e]) == 0}
    assert {"node", "example.com", "v8", "net/http", "ActiveRecord", "java"} <= packages, packages
    assert "(no module)" not in packages
    ft = function_table(t)
    assert ft.display[1] == "render (app.js:12)" and ft.family[1] == "example.com"
    assert ft.display[2] == "v8::internal::Heap::Scavenge" and ft.short[2] == "Scavenge"
    assert ft.display[3] == "net/http.(*Server).Serve" and ft.module[3] == "net/http"


def test_unique_labels_across_languages():
    names = ["render (https://a.com/x.js:1)", "render (https://b.com/y.js:9)", "_ZN1a1fEv", "_ZN1b1fEv"]
    labels = unique_labels(names)
    assert len(set(labels)) == 4
    assert labels[2:] == ["a::f", "b::f"]


def test_mangled_names_are_stored_as_written():
    t = _trace(["_ZN2v88internal4Heap8ScavengeEv"], [""])
    assert t.function_names[0] == "_ZN2v88internal4Heap8ScavengeEv"
    assert function_table(t).display[0] == "v8::internal::Heap::Scavenge"


# --------------------------------------------------------------------------- hostile
@pytest.mark.parametrize("label,name,check", HOSTILE_NAMES, ids=[c[0] for c in HOSTILE_NAMES])
def test_hostile_names(label, name, check):
    p = parse_function_name(name)
    assert check(p), (label, p.display[:200])
    d = describe_function(name, p)
    cands = name_candidates(d[3])
    assert cands and all(len(c) <= max(MAX_NAME + 80, len(d[3])) for c in cands[1:])
    assert fit_text(cands, 10.0) is not None


def test_the_tracers_own_frames_are_infrastructure():
    """``memray run`` puts six of its runner's frames under a program a sampler records with it
    (py-spy beside memray); they fold like VizTracer's own, the program's frames do not."""
    from tracevis3d.naming import describe_function

    for name in ("_run_tracker (/v/lib/python3.11/site-packages/memray/commands/run.py:47)",
                 "main (/v/lib/python3.11/site-packages/memray/commands/__init__.py:131)",
                 "_run_tracker (memray/commands/run.py:47)"):
        assert describe_function(name)[5], name
    for name in ("round_trip (/tmp/deep_json.py:20)", "memray_report (/tmp/tools.py:3)"):
        assert not describe_function(name)[5], name
