"""The VizTracer suite of tools/record_traces.py: one `Spec` per trace (its program, interpreter and
tool), `SUITE` in the order they are recorded, `record` (one trace) and `print_table`.

The names are fixed: benchmarks and figures refer to them (tools/record_traces.py's docstring
describes each).
"""
from __future__ import annotations

import json
import os
import sys

from .chromium import CHROMIUM_PAGE, run_chromium_spec
from .common import (JAX_REQUIREMENTS, JAX_VENV, THREADS_EXAMPLE, TIMEOUT, TORCH_REQUIREMENTS, TORCH_VENV,
                     RecordingSkipped, ensure_trace_venv, fmt_bytes, trace_stats)
from .common import write_text as _write
from .jax_torch import JAX_PROGRAM, TORCH_PROGRAM, run_jax_spec, run_torch_spec
from .library_pools import (HYPOTHESIS_POOL_PROGRAM, JEDI_LARK_SQL_PROGRAM, MARKDOWN_POOL_PROGRAM,
                            PYGMENTS_CYTHON_PROGRAM, PYTEST_FLASK_PROGRAM)
from .library_programs import (BLACK_POOL_PROGRAM, DOCUTILS_POOL_PROGRAM, HTTP_THREADS_PROGRAM, JINJA_PROCS_PROGRAM,
                               MIXED_POOL_PROGRAM, NETWORKX_PROGRAM, SYMPY_POOL_PROGRAM, SYMPY_PROGRAM)
from .python_programs import (AST_POOL_PROGRAM, ASYNC_PROGRAM, CROWD_POOL_PROGRAM, DEEP_RECURSION_PROGRAM,
                              JSON_TOOL_LEVELS, NUMBA_JIT_PROGRAM, SPAWN_POOL_PROGRAM, XML_IO_POOL_PROGRAM,
                              deep_json_document, docutils_pool_documents, rst_document)
from .python_samplers import run_pyspy_spec
from .viztracer import run_viztracer_spec


class Spec:
    """One trace of the suite: how to make its inputs and which command to trace."""

    def __init__(self, name, tool, interpreter, program, entries=1_000_000, doc="", flags=()):
        self.name = name
        self.tool = tool                # "viztracer", "py-spy", "chromium", "jax" or "torch" (profiles itself)
        self.interpreter = interpreter  # "project" (this interpreter), "trace" (build/trace-venv), "jax", "torch"
        self.program = program          # callable(workdir) -> argv after the interpreter
        self.entries = entries          # VizTracer's --tracer_entries
        self.doc = doc
        self.flags = tuple(flags)       # more VizTracer options (``--log_async``)


def _program_spec(name: str, interpreter: str, program: str, doc: str, *args: str, file: str | None = None,
                  entries: int = 3_000_000) -> Spec:
    """A VizTracer recording of a program of this suite: ``program`` written to ``file``
    (default ``<name>.py``) in the work folder and run with ``args``."""
    file = file or f"{name}.py"
    return Spec(name, "viztracer", interpreter, lambda w: [_write(os.path.join(w, file), program), *args],
                entries=entries, doc=doc)


SUITE = [
    Spec("json_tool", "viztracer", "project",
         lambda w: ["-m", "json.tool", _write(os.path.join(w, "deep.json"), deep_json_document()),
                    os.path.join(w, "deep.out.json")],
         doc=f"json.tool on a JSON document {JSON_TOOL_LEVELS} levels deep"),
    Spec("pydoc", "viztracer", "project", lambda w: ["-m", "pydoc", "-w", "email.message"],
         doc="pydoc -w email.message"),
    Spec("unittest", "viztracer", "project",
         lambda w: ["-m", "unittest", "-q", "test.test_csv", "test.test_textwrap", "test.test_shlex"],
         entries=3_000_000, doc="unittest on CPython's test_csv, test_textwrap, test_shlex"),
    Spec("docutils", "viztracer", "trace",
         lambda w: ["-m", "docutils", _write(os.path.join(w, "manual.rst"), rst_document()),
                    os.path.join(w, "manual.html")],
         entries=3_000_000, doc="docutils rst → html on a generated manual"),
    Spec("networkx", "viztracer", "trace", lambda w: [_write(os.path.join(w, "nx_workload.py"), NETWORKX_PROGRAM)],
         entries=3_000_000, doc="networkx graph analysis"),
    Spec("sympy", "viztracer", "trace", lambda w: [_write(os.path.join(w, "sympy_workload.py"), SYMPY_PROGRAM)],
         entries=3_000_000, doc="sympy symbolic computation (~1M calls)"),
    Spec("docutils_b", "viztracer", "trace",
         lambda w: ["-m", "docutils", _write(os.path.join(w, "manual_b.rst"), rst_document(3, seed=5)),
                    os.path.join(w, "manual_b.html")],
         entries=3_000_000, doc="docutils rst → html on a shorter manual (B run of a comparison)"),
    Spec("docutils_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "docutils_pool.py"), DOCUTILS_POOL_PROGRAM)] + docutils_pool_documents(w),
         entries=3_000_000, doc="docutils in a thread pool of 4 workers (5 threads)"),
    Spec("networkx_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "nx_workload.py"), NETWORKX_PROGRAM), "450"],
         entries=3_000_000, doc="networkx graph analysis on 450 nodes (B run of a comparison)"),
    Spec("sympy_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "sympy_pool.py"), SYMPY_POOL_PROGRAM)],
         entries=3_000_000, doc="sympy in a thread pool of 3 workers (4 threads)"),
    Spec("mixed_pool", "viztracer", "trace", lambda w: [_write(os.path.join(w, "mixed_pool.py"), MIXED_POOL_PROGRAM)],
         entries=4_000_000, doc="networkx, sympy, docutils and difflib in a pool of 6 workers (8 threads)"),
    Spec("mixed_pool_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "mixed_pool.py"), MIXED_POOL_PROGRAM)], entries=4_000_000,
         doc="mixed_pool run again (the pool hands the tasks to other workers: the B run of a comparison)"),
    Spec("http_threads", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "http_threads.py"), HTTP_THREADS_PROGRAM)], entries=3_000_000,
         doc="a threading HTTP server rendering docutils pages for six client threads (a thread per request)"),
    Spec("http_threads_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "http_threads.py"), HTTP_THREADS_PROGRAM), "24"], entries=3_000_000,
         doc="http_threads serving 24 pages (the B run of a comparison)"),
    Spec("pip_show", "viztracer", "trace", lambda w: ["-m", "pip", "show", "docutils"], entries=3_000_000,
         doc="pip show docutils (a command that is mostly imports: pip's vendored libraries, pyparsing's recursion)"),
    Spec("black_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "black_pool.py"), BLACK_POOL_PROGRAM)], entries=3_000_000,
         doc="black formatting four stdlib modules in a thread pool of 4 workers (5 threads, 86 levels)"),
    Spec("black_pool_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "black_pool.py"), BLACK_POOL_PROGRAM), "fnmatch.py", "colorsys.py",
                    "glob.py", "shlex.py", "sched.py"], entries=3_000_000,
         doc="black_pool on five modules (the B run of a comparison)"),
    Spec("jinja_procs", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "jinja_procs.py"), JINJA_PROCS_PROGRAM)], entries=3_000_000,
         doc="jinja2 + pygments in a ProcessPoolExecutor of 3 forked workers (4 processes, 6 threads)"),
    Spec("deep_recursion", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "deep_recursion.py"), DEEP_RECURSION_PROGRAM)],
         doc="three threads recursing 300-900 deep through two functions (2,700 levels)"),
    _program_spec("crowd_pool", "project", CROWD_POOL_PROGRAM,
                  "48 worker threads doing rounds of stdlib work between barriers, two writer threads behind a "
                  "queue and a lock (51 threads)"),
    _program_spec("crowd_pool_b", "project", CROWD_POOL_PROGRAM,
                  "crowd_pool with 32 workers (the B run of a comparison)", "32", file="crowd_pool.py"),
    _program_spec("markdown_pool", "trace", MARKDOWN_POOL_PROGRAM,
                  "python-markdown, PyYAML (pure Python) and rich in a pool of 4 workers, a collector behind a "
                  "queue and a lock (6 threads, ~1.5M calls)", "1", "2", entries=20_000_000),
    _program_spec("markdown_pool_b", "trace", MARKDOWN_POOL_PROGRAM,
                  "markdown_pool with another seed (the tasks in another order: the B run of a comparison)", "2", "2",
                  file="markdown_pool.py", entries=20_000_000),
    _program_spec("numba_jit", "project", NUMBA_JIT_PROGRAM,
                  "three threads jit-compiling with numba behind its global compiler lock (4 threads, lock waits)"),
    _program_spec("pygments_cython", "trace", PYGMENTS_CYTHON_PROGRAM,
                  "Pygments highlighting in a pool of 4 workers beside Cython's compiler in a fifth thread (6 threads)"),
    _program_spec("pygments_cython_b", "trace", PYGMENTS_CYTHON_PROGRAM,
                  "pygments_cython highlighting nine sources (the B run of a comparison)", "9",
                  file="pygments_cython.py"),
    _program_spec("jedi_lark_sql", "trace", JEDI_LARK_SQL_PROGRAM,
                  "jedi inferring names in stdlib sources (3 tasks), lark's Earley and LALR parsers and SQLAlchemy's "
                  "ORM on SQLite in a pool of 5 workers (7 threads, ~3,000 levels of jedi's inference)", "3",
                  entries=8_000_000),
    _program_spec("jedi_lark_sql_b", "trace", JEDI_LARK_SQL_PROGRAM,
                  "jedi_lark_sql with two jedi tasks (the B run of a comparison)", "2", file="jedi_lark_sql.py",
                  entries=8_000_000),
    Spec("pytest_flask", "viztracer", "trace",
         lambda w: ["-m", "pytest", "-q", "-p", "no:cacheprovider", _write(os.path.join(w, "test_shop.py"),
                                                                              PYTEST_FLASK_PROGRAM)],
         entries=3_000_000, doc="pytest running a Flask shop's tests (Flask's test client, Jinja, one test "
                                "sending requests from 4 shopper threads): 5 threads, ~130 levels"),
    Spec("ast_pool", "viztracer", "project", lambda w: [_write(os.path.join(w, "ast_pool.py"), AST_POOL_PROGRAM)],
         entries=3_000_000, doc="ast parse, NodeVisitor walk and unparse in a thread pool of 3 workers (4 threads)"),
    Spec("xml_io_pool", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "xml_io_pool.py"), XML_IO_POOL_PROGRAM)], entries=3_000_000,
         doc="nested XML built, written, gzipped, archived and parsed back by 4 workers; logging to a listener"),
    Spec("xml_io_pool_b", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "xml_io_pool.py"), XML_IO_POOL_PROGRAM), "90", "10"], entries=4_500_000,
         doc="xml_io_pool on 10 documents (the B run of a comparison)"),
    Spec("spawn_pool", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "spawn_pool.py"), SPAWN_POOL_PROGRAM)], entries=3_000_000,
         doc="difflib, json and textwrap in a spawn-started process pool of 3 workers with heartbeat threads"),
    Spec("async_tasks", "viztracer", "project", lambda w: [_write(os.path.join(w, "async_tasks.py"), ASYNC_PROGRAM)],
         entries=3_000_000, doc="asyncio, five worker tasks (--log_async: a lane per task)", flags=("--log_async",)),
    _program_spec("hypothesis_pool", "trace", HYPOTHESIS_POOL_PROGRAM,
                  "hypothesis's property tests from a pool of 4 threads, its buffer far too small on purpose "
                  "(viztracer_metadata.overflow: each worker's early part hollow; 5 threads)", "60",
                  entries=1_000_000),
    Spec("threads", "viztracer", "project", lambda w: [THREADS_EXAMPLE],
         doc="examples/threads_pipeline.py, 5 threads"),
    Spec("pyspy_threads", "py-spy", "project", lambda w: [THREADS_EXAMPLE],
         doc="examples/threads_pipeline.py sampled by py-spy"),
    Spec("chromium_page", "chromium", "project", lambda w: [_write(os.path.join(w, "page.html"), CHROMIUM_PAGE)],
         doc="Chromium (Debian's chromium package) tracing its own headless start-up and a page load: 9 processes, "
             "80+ threads, flows, async slices, instants, counters (asked for by name)"),
    Spec("jax_mlp", "jax", "jax", lambda w: [_write(os.path.join(w, "jax_mlp.py"), JAX_PROGRAM)],
         doc="JAX's own profiler (perfetto_trace.json.gz): jit-compiled MLP gradients, then 12 steps in a pool of "
             "3 threads (XLA compiler and Eigen threads; Python frames as '$file:line name'; asked for by name)"),
    Spec("torch_cnn", "torch", "torch", lambda w: [_write(os.path.join(w, "torch_cnn.py"), TORCH_PROGRAM)],
         doc="torch.profiler on a small CNN's training steps on the CPU with profile_memory and with_stack (its "
             "allocator's totals as [memory] instants, Python frames as 'file.py(line): name'; asked for by name)"),
]
NAMES = [s.name for s in SUITE]
#: recorded only when named (--only): they install a large tool of their own
OPT_IN = {"jax_mlp", "chromium_page", "torch_cnn"}


def _interpreter(spec: Spec) -> str:
    if spec.interpreter == "project":
        return sys.executable
    if spec.interpreter == "jax":
        return ensure_trace_venv(JAX_VENV, JAX_REQUIREMENTS)
    if spec.interpreter == "torch":
        return ensure_trace_venv(TORCH_VENV, TORCH_REQUIREMENTS)
    return ensure_trace_venv()


def record(spec: Spec, out_dir: str, timeout: float = TIMEOUT) -> dict:
    """Record one trace of the suite into ``out_dir``; return its record (also written to
    ``<name>.record.json``).  Raises RuntimeError naming the command when it fails; returns a
    record with ``skipped`` set when the tool cannot run here."""
    # "<name>-input" is not an identifier, so a workload script there is module "<script>", not a
    # package's module (tracevis3d.names.module_from_file stops at such a folder)
    work = os.path.join(out_dir, "inputs", spec.name + "-input")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(out_dir, spec.name + ".json")
    python = _interpreter(spec)
    argv = spec.program(work)
    tmp = os.path.join(out_dir, spec.name + ".part.json")  # VizTracer wants .json/.gz/.html
    if os.path.exists(tmp):
        os.remove(tmp)
    rec = {"name": spec.name, "tool": spec.tool, "program": spec.doc, "python": python}
    try:
        if spec.tool == "viztracer":
            ran = run_viztracer_spec(spec, python, argv, work, tmp, timeout)
        elif spec.tool == "chromium":  # the browser traces its own start-up (JSON: it writes protobuf otherwise)
            ran = run_chromium_spec(spec, argv, work, tmp, timeout)
        elif spec.tool == "jax":  # the program profiles itself into a log folder: its Chrome JSON, gzipped
            ran = run_jax_spec(spec, python, argv, work, out_dir, timeout)
        elif spec.tool == "torch":  # the program profiles itself and writes its Chrome JSON
            ran = run_torch_spec(spec, python, argv, work, tmp, timeout)
        else:
            ran = run_pyspy_spec(spec, python, argv, work, tmp, timeout)
    except RecordingSkipped as e:
        rec.update(skipped=str(e))
        return rec
    tmp, out = ran.pop("tmp", tmp), ran.pop("out", out)
    cmd, log, secs = ran.pop("cmd"), ran.pop("log"), ran.pop("secs")
    rec.update(ran)
    os.replace(tmp, out)
    rec.update(command=cmd, seconds=round(secs, 2), bytes=os.path.getsize(out),
               tool_log=log.strip()[-2000:])
    rec.update(trace_stats(out))
    with open(os.path.join(out_dir, spec.name + ".record.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def print_table(rows: list, file=sys.stdout) -> None:
    """One line per trace: name, calls, max depth, threads, file size, seconds to record."""
    head = f"{'trace':<14} {'calls':>9} {'depth':>6} {'threads':>7} {'size':>9} {'record s':>9}  notes"
    print(head, file=file)
    print("-" * len(head), file=file)
    for r in rows:
        if r.get("skipped") and "calls" not in r:
            print(f"{r['name']:<14} {'-':>9} {'-':>6} {'-':>7} {'-':>9} {'-':>9}  SKIPPED: {r['skipped']}",
                  file=file)
            continue
        notes = []
        if r.get("overflow"):
            notes.append("VizTracer buffer OVERFLOWED: early entries dropped")
        elif r.get("overflow") is False:
            notes.append(f"nothing dropped (buffer {r['tracer_entries']:,})")
        if r.get("repairs"):
            notes.append("repairs " + ", ".join(f"{k}×{v}" for k, v in r["repairs"].items()))
        if r.get("cached"):
            notes.append("already there")
        print(f"{r['name']:<14} {r['calls']:>9,} {r['depth']:>6} {r['threads']:>7} "
              f"{fmt_bytes(r['bytes']):>9} {r['seconds']:>9.1f}  {'; '.join(notes)}", file=file)
