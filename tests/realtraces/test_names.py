"""Module and qualified names of real function names (issue 8, item 4) and py-spy thread names
(item 6).

The TABLE holds names copied verbatim from real traces: the suite of tools/record_traces.py
(json.tool, pydoc, unittest, docutils, networkx, sympy, threads_pipeline under VizTracer 1.1.1
and py-spy 0.4.3 on CPython 3.11), ../shared/realdata/viztracer-examples (VizTracer on 3.12)
and ../shared/realdata/hta-trace-diff (PyTorch profiler).
"""
import gzip
import json

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import load_bytes
from tracevis3d.io.threadnames import fix_pyspy, is_placeholder_name, name_threads_from_root_frames
from tracevis3d.names import (module_from_file, parse_function_name, parse_functions, pyspy_thread_name,
                              split_dotted, unique_labels)

SP = "/work/wt-traces/build/trace-venv/lib/python3.11/site-packages"
LIB = "/root/.pyenv/versions/3.11.7/lib/python3.11"
_FBX = "<frozen importlib._bootstrap_external>"

# (name as written in the trace, file given apart (py-spy args) or "", module, qualname, display)
TABLE = [
    # --- VizTracer, Python functions, this machine's recordings
    (f"Publisher.publish ({SP}/docutils/core.py:253)", "", "docutils.core", "Publisher.publish", "Publisher.publish"),
    (f"<module> ({SP}/docutils/core.py:1)", "", "docutils.core", "<module>", "docutils.core"),
    (f"RSTState.nested_parse ({SP}/docutils/parsers/rst/states.py:282)", "",
     "docutils.parsers.rst.states", "RSTState.nested_parse", "RSTState.nested_parse"),
    (f"NodeVisitor.dispatch_visit ({SP}/docutils/nodes.py:2771)", "", "docutils.nodes",
     "NodeVisitor.dispatch_visit", "NodeVisitor.dispatch_visit"),
    (f"VersionInfo.__new__ ({SP}/docutils/__init__.py:117)", "", "docutils", "VersionInfo.__new__",
     "VersionInfo.__new__"),
    (f"HTMLTranslator ({SP}/docutils/writers/_html_base.py:187)", "", "docutils.writers._html_base",
     "HTMLTranslator", "HTMLTranslator"),   # a class body
    (f"_make_iterencode.<locals>._iterencode_dict ({LIB}/json/encoder.py:334)", "", "json.encoder",
     "_make_iterencode.<locals>._iterencode_dict", "_iterencode_dict"),
    (f"<module> ({LIB}/json/tool.py:1)", "", "json.tool", "<module>", "json.tool"),
    (f"dump ({LIB}/json/__init__.py:120)", "", "json", "dump", "dump"),
    ("_find_and_load (<frozen importlib._bootstrap>:1165)", "", "importlib._bootstrap", "_find_and_load",
     "_find_and_load"),
    ("_check_name.<locals>._check_name_wrapper (<frozen importlib._bootstrap_external>:599)", "",
     "importlib._bootstrap_external", "_check_name.<locals>._check_name_wrapper", "_check_name_wrapper"),
    ("_run_code (<frozen runpy>:65)", "", "runpy", "_run_code", "_run_code"),
    ("<module> (<frozen ntpath>:1)", "", "ntpath", "<module>", "ntpath"),
    ("ABCMeta.__new__ (<frozen abc>:105)", "", "abc", "ABCMeta.__new__", "ABCMeta.__new__"),
    ("<module> (<string>:1)", "", "<string>", "<module>", "<string>"),
    ("<lambda> (<string>:1)", "", "<string>", "<lambda>", "<lambda>"),
    ("argmap_pagerank_49 (<class 'networkx.utils.decorators.argmap'> compilation 52:1)", "",
     "networkx.utils.decorators", "argmap_pagerank_49", "argmap_pagerank_49"),
    (f"_dispatchable._call_if_no_backends_installed ({SP}/networkx/utils/backends.py:541)", "",
     "networkx.utils.backends", "_dispatchable._call_if_no_backends_installed",
     "_dispatchable._call_if_no_backends_installed"),
    (f"<module> ({SP}/networkx/__init__.py:1)", "", "networkx", "<module>", "networkx"),
    (f"__cacheit.<locals>.func_wrapper.<locals>.wrapper ({SP}/sympy/core/cache.py:69)", "", "sympy.core.cache",
     "__cacheit.<locals>.func_wrapper.<locals>.wrapper", "wrapper"),
    (f"Add.<lambda>.<locals>.<genexpr> ({SP}/sympy/core/add.py:628)", "", "sympy.core.add",
     "Add.<lambda>.<locals>.<genexpr>", "Add.<lambda>.<genexpr>"),
    (f"<lambda> ({SP}/mpmath/libmp/libmpf.py:49)", "", "mpmath.libmp.libmpf", "<lambda>", "<lambda>"),
    (f"DistutilsMetaFinder.find_spec.<locals>.<lambda> ({SP}/_distutils_hack/__init__.py:96)", "",
     "_distutils_hack", "DistutilsMetaFinder.find_spec.<locals>.<lambda>", "DistutilsMetaFinder.find_spec.<lambda>"),
    ("Pipeline.process_document (/work/wt-traces/examples/threads_pipeline.py:147)", "", "threads_pipeline",
     "Pipeline.process_document", "Pipeline.process_document"),
    ("main.<locals>.<listcomp> (/work/wt-traces/examples/threads_pipeline.py:203)", "", "threads_pipeline",
     "main.<locals>.<listcomp>", "main.<listcomp>"),
    (f"_worker ({LIB}/concurrent/futures/thread.py:69)", "", "concurrent.futures.thread", "_worker", "_worker"),
    # --- VizTracer on CPython 3.12 (../shared/realdata/viztracer-examples)
    ("Condition.wait (/usr/lib/python3.12/threading.py:323)", "", "threading", "Condition.wait", "Condition.wait"),
    ("ModuleSpec.parent (<frozen importlib._bootstrap>:645)", "", "importlib._bootstrap", "ModuleSpec.parent",
     "ModuleSpec.parent"),
    ("Mapping.get (<frozen _collections_abc>:804)", "", "_collections_abc", "Mapping.get", "Mapping.get"),
    ("Logger.debug (/usr/lib/python3.12/logging/__init__.py:1517)", "", "logging", "Logger.debug", "Logger.debug"),
    ("_UnixDefaultEventLoopPolicy.__init__ (/usr/lib/python3.12/asyncio/unix_events.py:1446)", "",
     "asyncio.unix_events", "_UnixDefaultEventLoopPolicy.__init__", "_UnixDefaultEventLoopPolicy.__init__"),
    ("WeakSet.__init__.<locals>._remove (/usr/lib/python3.12/_weakrefset.py:39)", "", "_weakrefset",
     "WeakSet.__init__.<locals>._remove", "_remove"),
    ("LifoQueue (/usr/lib/python3.12/queue.py:242)", "", "queue", "LifoQueue", "LifoQueue"),
    ("fib (/home/gaogaotiantian/programs/viztracer/example/src/function_args_return.py:6)", "",
     "function_args_return", "fib", "fib"),
    # --- VizTracer, C functions (no file: module.function, type.method)
    ("builtins.len", "", "builtins", "len", "len"),
    ("builtins.exec", "", "builtins", "exec", "exec"),
    ("_thread.lock.locked", "", "_thread", "lock.locked", "lock.locked"),
    ("_thread.RLock._acquire_restore", "", "_thread", "RLock._acquire_restore", "RLock._acquire_restore"),
    ("collections.deque.remove", "", "collections", "deque.remove", "deque.remove"),
    ("select.epoll.poll", "", "select", "epoll.poll", "epoll.poll"),
    ("_asyncio.Future.cancelled", "", "_asyncio", "Future.cancelled", "Future.cancelled"),
    ("_multiprocessing.SemLock._after_fork", "", "_multiprocessing", "SemLock._after_fork", "SemLock._after_fork"),
    ("_io.BufferedReader.__exit__", "", "_io", "BufferedReader.__exit__", "BufferedReader.__exit__"),
    ("_queue.SimpleQueue.get", "", "_queue", "SimpleQueue.get", "SimpleQueue.get"),
    ("_hashlib.pbkdf2_hmac", "", "_hashlib", "pbkdf2_hmac", "pbkdf2_hmac"),
    ("_csv.writer", "", "_csv", "writer", "writer"),
    ("_csv.writer.writerow", "", "_csv", "writer.writerow", "writer.writerow"),
    ("posix.write", "", "posix", "write", "write"),
    ("posix.DirEntry.is_dir", "", "posix", "DirEntry.is_dir", "DirEntry.is_dir"),
    ("zlib.compress", "", "zlib", "compress", "compress"),
    ("math.floor", "", "math", "floor", "floor"),
    ("re.Pattern.findall", "", "re", "Pattern.findall", "Pattern.findall"),
    ("datetime.date.toordinal", "", "datetime", "date.toordinal", "date.toordinal"),
    ("functools._lru_cache_wrapper.cache_clear", "", "functools", "_lru_cache_wrapper.cache_clear",
     "_lru_cache_wrapper.cache_clear"),
    ("dict.copy", "", "builtins", "dict.copy", "dict.copy"),
    ("str.startswith", "", "builtins", "str.startswith", "str.startswith"),
    ("frozenset.__contains__", "", "builtins", "frozenset.__contains__", "frozenset.__contains__"),
    ("type.fromkeys", "", "builtins", "type.fromkeys", "type.fromkeys"),
    ("code.replace", "", "builtins", "code.replace", "code.replace"),
    ("AttributeError.with_traceback", "", "builtins", "AttributeError.with_traceback",
     "AttributeError.with_traceback"),
    # a C method of a Python subclass: VizTracer writes the class name only, the module is unknown
    ("Counter.update", "", "", "Counter.update", "Counter.update"),
    ("Random.getrandbits", "", "", "Random.getrandbits", "Random.getrandbits"),
    # --- py-spy 0.4.3: qualified name in "name", file and line in args
    ("Thread._bootstrap", f"{LIB}/threading.py", "threading", "Thread._bootstrap", "Thread._bootstrap"),
    ("<module>", "/work/wt-traces/examples/threads_pipeline.py", "threads_pipeline", "<module>", "threads_pipeline"),
    ("_worker", f"{LIB}/concurrent/futures/thread.py", "concurrent.futures.thread", "_worker", "_worker"),
    ("Pipeline.process_document.<locals>.<listcomp>", "/work/wt-traces/examples/threads_pipeline.py",
     "threads_pipeline", "Pipeline.process_document.<locals>.<listcomp>", "Pipeline.process_document.<listcomp>"),
    ("Queue.put", f"{LIB}/queue.py", "queue", "Queue.put", "Queue.put"),
    ("Thread._bootstrap", "", "", "Thread._bootstrap", "Thread._bootstrap"),  # without its args
    ("_LoaderBasics.exec_module", "", "", "_LoaderBasics.exec_module", "_LoaderBasics.exec_module"),
    ("_LoaderBasics.exec_module", _FBX, "importlib._bootstrap_external", "_LoaderBasics.exec_module",
     "_LoaderBasics.exec_module"),
    ("thread (12099): writer", "", "", "thread (12099): writer", "thread (12099): writer"),
    # a name qualified by its file's module already (synthetic traces, tools that write the
    # full name and the file): the module once stood twice ("app.__main__.app.__main__.main")
    ("app.__main__.main", "/src/app/__main__.py", "app.__main__", "main", "main"),
    ("threading.Thread.run", "threading.py", "threading", "Thread.run", "Thread.run"),
    ("pkg.mod.Class.method", "/src/pkg/mod.py", "pkg.mod", "Class.method", "Class.method"),
    ("pkg.modular.f", "/src/pkg/mod.py", "pkg.mod", "pkg.modular.f", "pkg.modular.f"),  # not a prefix
    # --- PyTorch profiler (../shared/realdata/hta-trace-diff) and its python_function format
    ("aten::zeros", "", "aten", "zeros", "zeros"),
    ("fbgemm::bounds_check_indices", "", "fbgemm", "bounds_check_indices", "bounds_check_indices"),
    ("c10d::allreduce_", "", "c10d", "allreduce_", "allreduce_"),
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>"
     "(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)", "", "cutlass", "Kernel", "Kernel"),
    ("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, "
     "float const*, float const*, float const*, float*, float*)", "", "at::native::{anonymous}",
     "GammaBetaBackwardCUDAKernel", "GammaBetaBackwardCUDAKernel"),
    ("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, "
     "true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >"
     "(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float>)", "", "internal::gemvx", "kernel", "kernel"),
    ("torch::autograd::AccumulateGrad", "", "torch::autograd", "AccumulateGrad", "AccumulateGrad"),
    ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "", "autograd::engine",
     "evaluate_function: AccumulateGrad", "evaluate_function: AccumulateGrad"),
    ("ampere_sgemm_128x64_nn", "", "", "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"),
    ("cudaLaunchKernel", "", "", "cudaLaunchKernel", "cudaLaunchKernel"),
    ("ProfilerStep#1009", "", "", "ProfilerStep#1009", "ProfilerStep#1009"),
    ("## forward:bottom_mlp ##", "", "", "## forward:bottom_mlp ##", "## forward:bottom_mlp ##"),
    ("Memcpy DtoD (Device -> Device)", "", "", "Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"),
    ("DistributedDataParallel.forward", "", "", "DistributedDataParallel.forward", "DistributedDataParallel.forward"),
    ("torch/nn/modules/module.py(1501): _call_impl", "", "torch.nn.modules.module", "_call_impl", "_call_impl"),
    ("<frozen importlib._bootstrap>(1027): _find_and_load", "", "importlib._bootstrap", "_find_and_load",
     "_find_and_load"),
    ("nn.Module: Linear_0", "", "torch.nn", "Linear_0", "Linear_0"),
    # --- CPython reprs (cProfile, PyTorch's python tracer)
    ("<method 'append' of 'list' objects>", "", "builtins", "list.append", "list.append"),
    ("<method 'acquire' of '_thread.lock' objects>", "", "_thread", "lock.acquire", "lock.acquire"),
    ("<built-in method acquire of _thread.lock object at 0x7f3a2c1b8c00>", "", "_thread", "lock.acquire",
     "lock.acquire"),
    ("<built-in function len>", "", "builtins", "len", "len"),
    ("{built-in method builtins.print}", "", "builtins", "print", "print"),
    ("<built-in method time of module object at 0x7f3a2c1b8c00>", "", "builtins", "time", "time"),
    # --- JAX's profiler (jax.profiler.trace, perfetto_trace.json.gz; tools/record_traces.py jax_mlp)
    ("$threading.py:988 _bootstrap", "", "threading", "_bootstrap", "_bootstrap"),
    ("$<frozen importlib._bootstrap>:1165 _find_and_load", "", "importlib._bootstrap", "_find_and_load",
     "_find_and_load"),
    ("$mlir.py:1287 lower_jaxpr_to_module", "", "mlir", "lower_jaxpr_to_module", "lower_jaxpr_to_module"),
    ("$pjit.py:1604 <listcomp>", "", "pjit", "<listcomp>", "<listcomp>"),
    ("$builtins len", "", "builtins", "len", "len"),
    ("$_sre unicode_iscased", "", "_sre", "unicode_iscased", "unicode_iscased"),
    ("$jaxlib.utils foo", "", "jaxlib.utils", "foo", "foo"),
    ("$<unknown> append", "", "builtins", "append", "append"),
    ("PjRtCpuClient::Compile", "", "", "PjRtCpuClient::Compile", "PjRtCpuClient::Compile"),
    # --- other dialects
    ("v8::internal::Heap::Scavenge(int)", "", "v8::internal", "Heap::Scavenge", "Heap::Scavenge"),
    ("docutils.core.Publisher.publish", "", "docutils.core", "Publisher.publish", "Publisher.publish"),
    ("pkg.mod.Class.method", "", "pkg.mod", "Class.method", "Class.method"),
    ("pkg.mod.func_3", "", "pkg.mod", "func_3", "func_3"),
]


@pytest.mark.parametrize("name,file,module,qualname,display", TABLE, ids=[r[0][:60] for r in TABLE])
def test_real_names(name, file, module, qualname, display):
    p = parse_function_name(name, file=file) if file else parse_function_name(name)
    assert (p.module, p.qualname, p.display) == (module, qualname, display)
    # path: module parts, then qualname parts (no "<locals>"); module → class → function
    mparts = tuple(x for x in module.replace("::", ".").split(".") if x) if not module.startswith("<") else (module,)
    assert p.path[: len(mparts)] == mparts
    assert "<locals>" not in p.path
    assert len(p.path) > len(mparts)


def test_jax_python_frames_keep_their_file_and_line_and_odd_dollar_names_stay_whole():
    p = parse_function_name("$threading.py:988 _bootstrap")
    assert (p.file, p.line, p.path) == ("threading.py", 988, ("threading", "_bootstrap"))
    assert parse_function_name("$<unknown> get").file == ""  # a C method: no source
    for odd in ("$x", "$a b c", "$ space first", "$f.py:12", "$f.py:x name"):
        assert parse_function_name(odd).module == "" and parse_function_name(odd).qualname == odd, odd


def test_classes_are_never_modules():
    for name, file, module, qualname, _ in TABLE:
        if not module or module.startswith("<"):
            continue
        for part in module.replace("::", ".").split("."):
            assert not (part[:1].isupper() and part in qualname.split(".")[:1]), (name, module)


@pytest.mark.parametrize("path,module", [
    (f"{SP}/docutils/parsers/rst/states.py", "docutils.parsers.rst.states"),
    (f"{LIB}/json/encoder.py", "json.encoder"),
    ("/usr/lib/python3.11/json/__init__.py", "json"),
    ("<frozen importlib._bootstrap>", "importlib._bootstrap"),
    ("<frozen runpy>", "runpy"),
    ("<frozen zipimport>", "zipimport"),
    ("/home/u/prog.py", "prog"),
    ("/Users/ann/prog.py", "prog"),
    ("<string>", "<string>"),
    ("<stdin>", "<stdin>"),
    ("<ipython-input-3-5d7e8f>", "<ipython-input-3-5d7e8f>"),
    ("", ""),
    ("<unknown>", ""),
    ("/usr/lib/python3/dist-packages/apt/cache.py", "apt.cache"),
    ("/usr/local/lib/python3.12/dist-packages/numpy/core/_methods.py", "numpy.core._methods"),
    ("/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", "_json"),
    (f"{SP}/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "numpy.core._multiarray_umath"),
    ("C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\json\\encoder.py", "json.encoder"),
    ("C:\\Python311\\Lib\\site-packages\\numpy\\core\\fromnumeric.py", "numpy.core.fromnumeric"),
    ("C:\\Python311\\Lib\\site-packages\\pkg\\_speedups.cp311-win_amd64.pyd", "pkg._speedups"),
    ("D:\\proj\\pkg\\mod.py", "pkg.mod"),
    (f"{SP}/sklearn/tree/_tree.pyx", "sklearn.tree._tree"),
    ("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", "torch.nn.modules.module"),
    ("/Library/Frameworks/Python.framework/Versions/3.11/lib/python3.11/json/decoder.py", "json.decoder"),
    ("/usr/lib/python3.13t/threading.py", "threading"),
    ("/opt/app/deps/foo-1.0-py3.11.egg/foo/bar.py", "foo.bar"),
    ("/srv/app.pyz/app/main.py", "app.main"),
    # no root marker: walk up while the folder looks like a package, at most two folders
    ("/work/main/tracevis3d/layout/icicle.py", "tracevis3d.layout.icicle"),
    ("/work/wt-traces/examples/threads_pipeline.py", "threads_pipeline"),
    ("/home/x/src/pkg/mod.py", "pkg.mod"),
    ("/home/x/proj/src/app/__main__.py", "app.__main__"),
    ("/a/pkg/mod.py", "pkg.mod"),
    ("/tmp/spytest.py", "spytest"),
    ("/home/u/my-project/tool.py", "tool"),
    # relative paths are relative to an import root (PyTorch writes them so; `python prog.py`)
    ("torch/nn/modules/module.py", "torch.nn.modules.module"),
    ("prog.py", "prog"),
    ("./prog.py", "prog"),
    ("../lib/util.py", "lib.util"),
    ("<class 'networkx.utils.decorators.argmap'> compilation 52", "networkx.utils.decorators"),
    # a script's URL (JavaScript frames of V8 profiles): its path, host first, without the web
    # extension, query and fragment (names.script_parts; issue 67: the file's name alone
    # gave every "index" one module)
    ("https://cdn.example.com/static/js/main.abc123.js?v=2#x", "cdn.example.com/static/js/main.abc123"),
    ("file:///tmp/cr/page.html", "cr/page"),
    ("https://example.com/", "example.com"),
    ("blob:file:///8f1c2d3e-aaaa", "blob"),
    ("webpack://app/src/index.ts", "app/src/index"),
])
def test_module_from_file(path, module):
    assert module_from_file(path) == module


def test_split_dotted_rules():
    assert split_dotted("a") == ("", "a")
    assert split_dotted("itertools.chain.from_iterable") == ("itertools", "chain.from_iterable")
    assert split_dotted("numpy.core._multiarray_umath.implement_array_function") == (
        "numpy.core._multiarray_umath", "implement_array_function")
    assert split_dotted("numpy.ndarray.sum") == ("numpy", "ndarray.sum")


def test_backward_compatible_fields():
    p = parse_function_name("A.run (/a/pkg/mod.py:3)")
    assert (p.function, p.file, p.line, p.path) == ("A.run", "/a/pkg/mod.py", 3, ("pkg", "mod", "A", "run"))
    function, file, line, path = p[:4]  # positional use of the first four fields still works
    assert function == "A.run"
    assert parse_function_name("<method 'append' of 'list' objects>").function == "append"
    assert parse_function_name("aten::mm").path == ("aten", "mm")
    assert parse_function_name("v8::internal::Heap::Scavenge(int)").path == ("v8", "internal", "Heap", "Scavenge")
    assert parse_function_name("ProfilerStep#2").path == ("ProfilerStep#2",)


def test_full_and_unique_labels():
    assert parse_function_name(f"<module> ({SP}/docutils/core.py:1)").full == "docutils.core"
    assert parse_function_name(f"Publisher.publish ({SP}/docutils/core.py:253)").full == "docutils.core.Publisher.publish"
    assert parse_function_name("aten::mm").full == "aten::mm"
    names = [f"<module> ({SP}/docutils/core.py:1)", f"<module> ({SP}/docutils/nodes.py:1)",
             f"<lambda> ({SP}/sympy/core/containers.py:177)", f"<lambda> ({SP}/sympy/core/containers.py:337)",
             f"<lambda> ({SP}/sympy/logic/boolalg.py:480)", "run (/a/pkg/m.py:3)", "dup", "dup"]
    labels = unique_labels(names)
    assert labels[:2] == ["docutils.core", "docutils.nodes"]
    assert labels[2:5] == ["sympy.core.containers.<lambda>:177", "sympy.core.containers.<lambda>:337",
                           "sympy.logic.boolalg.<lambda>"]
    assert labels[5] == "run"
    assert len(set(labels)) == len(labels)


def _names_of(path):
    """Distinct event names of a Chrome JSON file (array or object form, .json or .json.gz)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    return sorted({e["name"] for e in ev if e.get("ph") in ("X", "B") and isinstance(e.get("name"), str)})


def test_every_name_of_the_shared_real_traces(realdata):
    """Every distinct name of the shared VizTracer and PyTorch traces parses consistently."""
    files = sorted((realdata / "viztracer-examples").glob("*.json")) + sorted(
        (realdata / "hta-trace-diff").glob("*.json.gz"))
    assert files
    n = 0
    for path in files:
        names = _names_of(path)
        labels = unique_labels(names)
        assert len(set(labels)) == len(labels), path
        for nm in names:
            p = parse_function_name(nm)
            n += 1
            assert p.path and all(p.path), nm
            if p.file:  # a Python function: the module comes from its file
                assert p.module and not p.module.startswith("<frozen"), nm
                assert p.module == module_from_file(p.file), nm
            if p.qualname == "<module>":
                assert p.display == p.module, nm
            if nm.startswith("aten::"):
                assert p.module == "aten", nm
    assert n > 1000


# --------------------------------------------------------------------------- py-spy thread names
def _ev(name, ph, ts, filename="", line=0, tid=139870148429504):
    return {"args": {"filename": filename, "line": line}, "cat": "py-spy", "name": name, "ph": ph,
            "pid": 12096, "tid": tid, "ts": ts}


#: the complete writer thread of a real py-spy 0.4.3 recording of examples/threads_pipeline.py
#: (``py-spy record --format chrometrace --threads --idle --rate 1000``), verbatim but for brevity:
#: (name, phase, ts, filename, line)
_TP = "/work/wt-traces/examples/threads_pipeline.py"
_TH = f"{LIB}/threading.py"
_Q = f"{LIB}/queue.py"
PYSPY_WRITER = [
    ("thread (12099): writer", "B", 74148, "", 0), ("Thread._bootstrap", "B", 74148, _TH, 1002),
    ("Thread._bootstrap_inner", "B", 74148, _TH, 1045), ("Thread.run", "B", 74148, _TH, 982),
    ("Pipeline.writer", "B", 74148, _TP, 154), ("Queue.get", "B", 74148, _Q, 171),
    ("Condition.wait", "B", 74148, _TH, 327), ("Condition.wait", "E", 118734, _TH, 327),
    ("Queue.get", "E", 118734, _Q, 171), ("Pipeline.writer", "E", 118734, _TP, 154),
    ("Pipeline.writer", "B", 118734, _TP, 158), ("Pipeline.writer", "E", 286562, _TP, 158),
    ("Pipeline.writer", "B", 286562, _TP, 154), ("Queue.get", "B", 286562, _Q, 171),
    ("Condition.wait", "B", 286562, _TH, 327), ("Condition.wait", "E", 314680, _TH, 327),
    ("Queue.get", "E", 314680, _Q, 171), ("Pipeline.writer", "E", 314680, _TP, 154),
    ("Pipeline.writer", "B", 314680, _TP, 158), ("Pipeline.writer", "E", 451521, _TP, 158),
    ("Pipeline.writer", "B", 451521, _TP, 156), ("Pipeline.writer", "E", 452504, _TP, 156),
    ("Pipeline.writer", "B", 452504, _TP, 158), ("Pipeline.writer", "E", 1220445, _TP, 158),
    ("Thread.run", "E", 1220445, _TH, 982), ("Thread._bootstrap_inner", "E", 1220445, _TH, 1045),
    ("Thread._bootstrap", "E", 1220445, _TH, 1002), ("thread (12099): writer", "E", 1220445, "", 0),
]
#: MainThread (tid 139870167333760): the interpreter's start-up, sampled before ``threading``
#: knew the thread's name (so py-spy wrote ``thread (<tid>)``; from a second recording, cut
#: after its first sample and closed there), then the first named sample
_FB = "<frozen importlib._bootstrap>"
PYSPY_MAIN = [
    ("thread (21765)", "B", 19455, "", 0), ("_find_and_load", "B", 19455, _FB, 1176),
    ("_find_and_load_unlocked", "B", 19455, _FB, 1147), ("_load_unlocked", "B", 19455, _FB, 676),
    ("module_from_spec", "B", 19455, _FB, 573), ("BuiltinImporter.create_module", "B", 19455, _FB, 776),
    ("_call_with_frames_removed", "B", 19455, _FB, 241), ("_call_with_frames_removed", "E", 20409, _FB, 241),
    ("BuiltinImporter.create_module", "E", 20409, _FB, 776), ("module_from_spec", "E", 20409, _FB, 573),
    ("_load_unlocked", "E", 20409, _FB, 676), ("_load_unlocked", "B", 20409, _FB, 690),
    ("FrozenImporter.exec_module", "B", 20409, _FB, 980), ("<module>", "B", 20409, "<frozen io>", 53),
    ("<module>", "E", 24047, "<frozen io>", 53), ("FrozenImporter.exec_module", "E", 24047, _FB, 980),
    ("_load_unlocked", "E", 24047, _FB, 690), ("_find_and_load_unlocked", "E", 24047, _FB, 1147),
    ("_find_and_load", "E", 24047, _FB, 1176), ("thread (21765)", "E", 24047, "", 0),

    ("thread (12096): MainThread", "B", 40095, "", 0), ("<module>", "B", 40095, _TP, 208),
    ("main", "B", 40095, _TP, 204), ("main", "E", 41107, _TP, 204), ("<module>", "E", 41107, _TP, 208),
    ("thread (12096): MainThread", "E", 41107, "", 0),
]


def _pyspy_bytes(extra=()):
    ev = [_ev(n, ph, ts, f, ln) for n, ph, ts, f, ln in PYSPY_WRITER]
    ev += [_ev(n, ph, ts, f, ln, tid=139870167333760) for n, ph, ts, f, ln in PYSPY_MAIN]
    return json.dumps(ev + list(extra)).encode()


def test_parse_functions_uses_the_function_table():
    t = load_bytes(_pyspy_bytes(), source="pyspy-excerpt.json")
    parsed = parse_functions(t)
    by_name = {nm: p for nm, p in zip(t.function_names, parsed)}
    assert by_name["Queue.get"].module == "queue" and by_name["Queue.get"].line == 171
    # "<module>" holds the bodies of io and threads_pipeline (the importer interns by name): no file
    assert by_name["<module>"].module == "" and by_name["<module>"].display == "<module>"
    assert by_name["thread (12099): writer"].module == ""


def test_pyspy_thread_frame_format():
    assert pyspy_thread_name("thread (11359): render_2") == "render_2"
    assert pyspy_thread_name("thread (11359)") == "thread 11359"
    assert pyspy_thread_name("thread (0x7FF84A2C1000): MainThread") == "MainThread"   # macOS ids
    assert pyspy_thread_name("thread (11359): ") == "thread 11359"
    assert pyspy_thread_name("Thread.run") is None
    assert is_placeholder_name("139870148429504") and is_placeholder_name("11353: 140013048286080")
    assert not is_placeholder_name("writer") and not is_placeholder_name("MainThread")


def test_pyspy_lanes_named_from_root_frames():
    t = load_bytes(_pyspy_bytes(), source="pyspy-excerpt.json").check()
    # MainThread's roots are "thread (21765)" and "thread (12096): MainThread": a name beats none
    assert sorted(t.thread_names) == ["MainThread", "writer"]
    k = t.function_names.index("BuiltinImporter.create_module")
    assert t.function_paths[k] == ("importlib", "_bootstrap", "BuiltinImporter", "create_module")
    assert t.meta["pyspy"]["threads_renamed"]
    # the root frames stay; their files and modules come from the args
    k = t.function_names.index("Pipeline.writer")
    assert t.function_files[k] == _TP and t.function_paths[k] == ("threads_pipeline", "Pipeline", "writer")
    k = t.function_names.index("Queue.get")
    assert t.function_paths[k] == ("queue", "Queue", "get") and t.function_lines[k] == 171
    # one "<module>" function holds two module bodies (io and threads_pipeline): left without a file
    assert t.meta["pyspy"]["functions_in_several_files"] == ["<module>"]
    assert t.function_files[t.function_names.index("<module>")] == ""
    # the vectorised file fingerprints agree with reading every call's args
    files: dict = {}
    for k, i in enumerate(t.args_call.tolist()):
        a = json.loads(bytes(t.args_blob[t.args_ptr[k]: t.args_ptr[k + 1]]))
        files.setdefault(t.function_names[t.func[i]], set()).add(a["filename"])
    assert sorted(n for n, fs in files.items() if len(fs) > 1) == ["<module>"]
    assert all(t.function_files[t.function_names.index(n)] == next(iter(fs)) for n, fs in files.items()
               if len(fs) == 1)
    # the queue wait is still a wait
    assert (t.kind[t.func == t.function_names.index("Condition.wait")] == tracevis3d.KIND_WAIT).all()


def test_pyspy_never_overrides_metadata_names():
    meta = {"ph": "M", "pid": 12096, "tid": 139870148429504, "name": "thread_name", "args": {"name": "disk-writer"}}
    t = load_bytes(_pyspy_bytes([meta]), source="pyspy-excerpt.json").check()
    assert "disk-writer" in t.thread_names and "writer" not in t.thread_names
    assert "MainThread" in t.thread_names  # the other lane still gets its root frame's name


def test_pyspy_rename_needs_every_root_to_be_a_thread_frame():
    # a second root on the writer lane that is not a py-spy thread frame: the lane keeps its id
    stray = [_ev("stray_root", "B", 1300000), _ev("stray_root", "E", 1300100)]
    t = load_bytes(_pyspy_bytes(stray), source="pyspy-excerpt.json").check()
    assert "139870148429504" in t.thread_names and "MainThread" in t.thread_names
    assert name_threads_from_root_frames(t) == []  # idempotent: nothing left to rename


def test_other_traces_are_untouched(realdata):
    t = tracevis3d.load(realdata / "viztracer-examples" / "multithread.json")
    assert "pyspy" not in t.meta
    assert fix_pyspy(t) is t and "pyspy" not in t.meta
    assert sorted(t.thread_names) == sorted(["MainThread", "Dummy-5", "Dummy-6", "Dummy-7", "Dummy-8"])


def test_recorded_traces_name_modules(deep_trace_path, threads_trace_path):
    """On the committed real recordings: module bodies display as their module, every legend
    label is unique, and the modules of the frames that make the depth are right."""
    for path in (deep_trace_path, threads_trace_path):
        t = tracevis3d.load(path)
        parsed = [parse_function_name(s) for s in t.function_names]
        mods = {p.module for p in parsed}
        assert "importlib._bootstrap" in mods and "builtins" in mods
        assert not any(m.startswith("<frozen") for m in mods)
        for p in parsed:
            if p.qualname == "<module>":
                assert p.display == p.module
        labels = unique_labels(t.function_names)
        assert len(set(labels)) == len(labels)
    t = tracevis3d.load(deep_trace_path)
    deepest = int(np.argmax(t.depth))
    p = parse_function_name(t.function_names[t.func[deepest]])
    chain = []
    i = deepest
    while i >= 0:
        chain.append(parse_function_name(t.function_names[t.func[i]]))
        i = int(t.parent[i])
    assert sum(q.module == "json.encoder" and q.display == "_iterencode_dict" for q in chain) >= 100
    assert p.module in ("json.encoder", "builtins", "_io", "_json")


def _strip_balanced_twin(s, open_, close):
    """Character by character: drop what lies inside top-level ``open_ … close`` groups."""
    out, level = [], 0
    for ch in s:
        if ch == open_:
            level += 1
        elif ch == close and level:
            level -= 1
        elif level == 0:
            out.append(ch)
    return "".join(out)


def test_strip_balanced_matches_its_character_twin():
    """`names._strip_balanced` (which visits the delimiters only) against the plain scan, on
    random strings of delimiters, nested, unmatched and unclosed."""
    import random

    from tracevis3d.names import _strip_balanced

    rng = random.Random(7)
    for _ in range(20000):
        s = "".join(rng.choice("ab<>()x :") for _ in range(rng.randint(0, 24)))
        for o, c in (("<", ">"), ("(", ")")):
            assert _strip_balanced(s, o, c) == _strip_balanced_twin(s, o, c), (s, o)


def test_python_dialects_say_their_language():
    """Issue 67: every dialect rule tells its language (`ParsedName.lang`); a dotted name with
    nothing else to go by says none, and the hierarchy's package is the path's first part."""
    assert parse_function_name(f"Publisher.publish ({SP}/docutils/core.py:253)").lang == "python"
    assert parse_function_name("Queue.get", file=f"{LIB}/queue.py").lang == "python"
    assert parse_function_name("<built-in function len>").lang == "python"
    assert parse_function_name("$threading.py:988 _bootstrap").lang == "python"
    assert parse_function_name("pkg.mod.Class.method").lang == ""
    assert parse_function_name("aten::mm").lang == "c++"
    for name, file, module, _, _ in TABLE:
        p = parse_function_name(name, file=file) if file else parse_function_name(name)
        assert p.package == (p.path[0] if module else ""), name


def test_a_script_module_is_its_path():
    """V8's frames give their file apart: the module is the script's path (host first), the
    package its host, so two scripts called index.js are two modules."""
    a = parse_function_name("render", file="https://a.example.com/static/js/index.js?v=1", line=3)
    b = parse_function_name("render", file="https://b.example.com/index.js", line=3)
    assert (a.module, a.package, a.lang) == ("a.example.com/static/js/index", "a.example.com", "js")
    assert a.module != b.module and a.full != b.full
