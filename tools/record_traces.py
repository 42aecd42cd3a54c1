#!/usr/bin/env python3
"""Record REAL traces of real programs: a VizTracer suite (py-spy, Chromium, JAX, PyTorch too), other tools' formats.

    .venv/bin/python tools/record_traces.py                    # all traces -> build/traces/
    .venv/bin/python tools/record_traces.py --only json_tool,threads --force
    .venv/bin/python tools/record_traces.py --out /tmp/traces --list
    .venv/bin/python tools/record_traces.py --formats all --ship  # other tools -> build/traces/formats/

The recorders live in tools/recorders/ (by what they record); this file is their command line and
keeps every name other code imports from it.

The suite (the names are fixed: benchmarks and figures refer to them):

==============  ===========================================================================
json_tool       ``python -m json.tool`` on a generated JSON document nested 105 levels deep:
                the pure-Python encoder (``indent`` set) recurses one generator per level,
                so the trace is 100+ levels deep.
pydoc           ``python -m pydoc -w email.message``: the import machinery of a package with
                many submodules, then pydoc's HTML renderer.
unittest        ``python -m unittest`` on real stdlib test modules (CPython's ``test``
                package: test_csv, test_textwrap, test_shlex).
docutils        docutils' command line (``python -m docutils``) on a generated
                reStructuredText document: sections, lists, tables, literal blocks, footnotes.
networkx        a graph workload: small-world graph, shortest paths, PageRank (networkx's
                pure-Python one: the trace venv has no scipy), eigenvector centrality,
                Louvain communities, betweenness, minimum spanning tree.
sympy           symbolic computation (import, expand, factor, a rational integral, a
                determinant, solving a cubic) sized to about a million calls; VizTracer's buffer is made big enough that
                nothing is dropped, and the table says whether anything was.
docutils_b      the same docutils command on a shorter document (3 chapters, another seed):
                the B run of a comparison with ``docutils``.
docutils_pool   docutils in a ``ThreadPoolExecutor`` of 4 workers, each turning its own
                generated document into HTML (5 threads, 100+ levels in every worker).
networkx_b      the networkx workload on a larger graph (450 nodes): the B run of a
                comparison with ``networkx``.
sympy_pool      sympy in a ``ThreadPoolExecutor`` of 3 workers (expand/factor, an integral,
                a determinant and a cubic in parallel): deep and multi-threaded.
mixed_pool      a pool of 6 workers running unlike tasks at once (networkx graphs, sympy
                algebra, docutils documents, difflib and json), and a consumer thread
                behind a lock: 8 threads that import, wait on each other's import locks and
                work in different libraries; 2M calls, 116 levels.
mixed_pool_b    the same program run again: the pool hands its tasks to other workers (the
                B run of a comparison with ``mixed_pool``).
black_pool      black formatting four stdlib modules in a thread pool of 4 workers (black built
                from source: its wheel is compiled with mypyc); **black_pool_b** five modules.
jinja_procs     jinja2 templates with pygments-highlighted code in a ProcessPoolExecutor of 3
                forked workers (VizTracer follows them: 4 processes, 6 threads).
deep_recursion  three threads that recurse 300, 600 and 900 deep through two functions
                (walk > <genexpr> > walk) and through json: 2,700 levels, 24k calls.
numba_jit       three threads each jit-compiling a numba function: numba's compiler behind its
                global compiler lock, so two threads wait while the third compiles (4 threads,
                ~10^6 calls, lock waits on a real library's lock).
pygments_cython Pygments highlighting four stdlib modules (Python, C and HTML lexers, the HTML
                formatter) in a pool of 4 workers while a fifth thread runs Cython's compiler on a
                small ``.pyx``: 2.4M calls, 6 threads, Cython's pipeline ~100 levels deep;
                **pygments_cython_b** nine sources (the B run of a comparison).
jedi_lark_sql   jedi completing and inferring names in three stdlib modules' sources, lark's
                Earley and LALR parsers on nested expressions and SQLAlchemy's ORM on SQLite, in a
                pool of 5 workers (7 threads: jedi's subprocess reader too; ~4 M calls, ~3,000
                levels); **jedi_lark_sql_b** two jedi tasks (the B run of a comparison).
crowd_pool      48 worker threads at once (SyncTrace's Firefox case has 43): rounds of stdlib work
                (difflib, json, csv and re, email, decimal, fractions) between barriers every worker
                waits at, results through a queue to two writer threads behind a lock (51 threads);
                **crowd_pool_b** 32 workers (the B run of a comparison).
markdown_pool   Markdown to HTML (python-markdown with tables, fenced code and a table of contents),
                PyYAML dumping and loading nested documents (its pure-Python Dumper and Loader) and rich
                rendering tables and highlighted code, in a pool of 4 workers, with a collector thread
                taking the results from a bounded queue behind a lock (6 threads, ~1.5M calls, ~150
                levels: yaml's recursive composer); **markdown_pool_b** another seed (the tasks in
                another order: the B run of a comparison).
pytest_flask    pytest running a Flask shop's tests: parametrized requests through Flask's test
                client (routing, Jinja templates, JSON), fixtures, one test sending requests from
                a pool of four shopper threads; pluggy's hooks and assertion rewriting around them
                (1.5 M calls, 5 threads, ~130 levels).
ast_pool        the standard library's ``ast`` in a thread pool of 3 workers: each parses a stdlib
                module's source (``inspect.getsource``), walks it with a ``NodeVisitor``
                (``visit › generic_visit``: a recursion through three functions, 50-70 levels)
                and unparses it (``_Unparser``'s own recursion); 4 threads, 70 levels.
xml_io_pool     nested XML (minidom, 90 levels) built, pretty-printed, gzipped, archived in a shared
                zip behind a lock and parsed back with ElementTree by a thread pool of 4 workers,
                each waiting on a child process; the main thread logs through a QueueHandler to
                a listener thread that writes the log file (6 threads, I/O and waits);
                **xml_io_pool_b** 10 documents.
spawn_pool      difflib, json and textwrap work in a ``multiprocessing`` pool started with "spawn"
                (3 worker processes, each named "python -c", each with a heartbeat thread per
                task): 16 threads in 4 processes, 35 levels.
async_tasks     an asyncio program recorded with ``--log_async``: five worker tasks (a lane
                each) that await a queue and do short bursts of json and difflib work,
                each task hundreds of resumptions.
hypothesis_pool hypothesis's property tests (nested lists of dicts, recursive strategies) run
                from a pool of 4 threads, recorded with a buffer (``--tracer_entries``) far too small
                on purpose: VizTracer keeps only the calls that end last and writes
                ``viztracer_metadata.overflow``, so each worker's early part is hollow (its long outer
                calls only); 5 threads, ~1M calls kept.
threads         ``examples/threads_pipeline.py`` under VizTracer (all five threads).
pyspy_threads   the same program sampled by py-spy (``record --format chrometrace --threads
                --idle``), per-thread stacks with thread names in the root frames.
==============  ===========================================================================

VizTracer runs with its defaults (no ``--ignore_frozen``, no ``--ignore_c_function``: real users
don't pass them, and the import machinery and C calls are part of what the figures must cope
with), except ``--tracer_entries`` (buffer size) and ``--quiet``.

Interpreters.  The stdlib traces and ``threads`` run under the interpreter this script runs
with (the project's .venv).  The third-party programs (docutils, networkx, sympy, black, jinja2,
pygments, py-spy) run
in a venv of their own, ``build/trace-venv``, created on first need from
``tools/trace-requirements.txt`` (pinned; re-installed when that file changes).  None of
them is a dependency of the project.

Output: ``<out>/<name>.json`` (Chrome Trace Event JSON) and ``<out>/<name>.record.json``
(command, seconds to record, calls, depth, threads, thread names, whether VizTracer's
buffer overflowed); generated inputs (documents, workload scripts) go to
``<out>/inputs/<name>-input/``, which is also the working directory of the recording.  A trace
already there is not recorded again unless ``--force``.
Prints one table at the end.  Exit status 1 if a trace failed to record.

Other tools' formats (``--formats NAMES`` or ``--formats all``; into ``<out>/formats/``, by
default build/traces/formats/): each tool run as its users run it, on a small program of
``tools/recorders/programs/``, then described (threads, samples, the format TraceVis3D sniffs, what
its reader makes of it):

================  =========================================================================
chromium_json     headless Chromium's start-up and ``work_page.html`` (``--trace-startup`` with
                  DevTools' timeline categories, JSON): 10 processes, ~25 threads, async
                  slices, flows.
chromium_proto    the same as a Perfetto protobuf trace (``--trace-startup-format=proto``).
firefox_gecko     Firefox ESR's start-up and the page under its Gecko profiler from start-up
                  (``MOZ_PROFILER_STARTUP``/``MOZ_PROFILER_SHUTDOWN``): main threads and workers
                  of 3 processes; **firefox_workers** the Web Workers' threads only.
go_pprof          Go's runtime/pprof: CPU and heap profiles of six labelled goroutines.
node_cpuprofile   ``node --cpu-prof``: the main thread's and a worker thread's profiles.
callgrind         ``valgrind --tool=callgrind`` on a small C program (3 threads).
perf              ``perf record -g`` + ``perf script`` on the C program.
pyspy_speedscope  py-spy ``--format speedscope`` on a Python program (4 threads);
                  **pyspy_raw** ``--format raw`` (collapsed stacks).
pyinstrument      ``pyinstrument -r speedscope`` on the same program.
uftrace           ``uftrace record`` of the C program built with ``-pg``, ``uftrace dump --chrome``.
yappi             ``yappi -c wall -f callgrind`` on the Python program (pip: yappi).
austin_wall       Austin 3 on the Python program (collapsed stacks, ``P<pid>;T<iid>:<tid>``
                  frames; pip: austin-dist==3.7.0); **austin_memory** its memory mode (``-m``).
xdebug            Xdebug's profiler on ``programs/php/php_work.php`` (apt: php-cli php-xdebug;
                  only when named: not part of ``all``).
================  =========================================================================

``--ship`` copies the recorded files that are at most 200 kB gzipped to
tests/data/formats/recorded/<tool>/ and rewrites its manifest.json and README.md.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys

_RECORDERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorders")


def _import_recorders():
    """tools/recorders as the package ``recorders``: imported by its path, since this file is also
    loaded by path (tests/support/realtraces.py) without tools/ on sys.path."""
    pkg = sys.modules.get("recorders")
    if pkg is not None and os.path.dirname(os.path.abspath(pkg.__file__ or "")) == _RECORDERS:
        return pkg
    spec = importlib.util.spec_from_file_location("recorders", os.path.join(_RECORDERS, "__init__.py"),
                                                  submodule_search_locations=[_RECORDERS])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["recorders"] = pkg
    spec.loader.exec_module(pkg)
    return pkg


_import_recorders()

from recorders.chromium import (CHROMIUM_CATEGORIES, CHROMIUM_PAGE, CHROMIUM_TIMELINE_CATEGORIES,  # noqa: E402
                                record_chromium, record_chromium_json, record_chromium_proto)
from recorders.common import (DEFAULT_FORMATS_OUT, DEFAULT_OUT, FORMAT_TIMEOUT, JAX_REQUIREMENTS,  # noqa: E402
                              JAX_VENV, REPO, THREADS_EXAMPLE, TIMEOUT, TORCH_REQUIREMENTS, TORCH_VENV,
                              TRACE_REQUIREMENTS, TRACE_VENV, RecordingSkipped, ensure_trace_venv, run_logged,
                              trace_stats)
from recorders.common import child_env as _child_env  # noqa: E402
from recorders.common import fmt_bytes as _fmt_bytes  # noqa: E402
from recorders.common import venv_python as _venv_python  # noqa: E402
from recorders.common import write_text as _write  # noqa: E402
from recorders.firefox import record_firefox, record_firefox_workers  # noqa: E402
from recorders.format_suite import (FORMAT_NAMES, FORMAT_NAMES_ALL, FORMAT_SUITE, print_formats_table,  # noqa: E402
                                    record_formats, ship)
from recorders.go_pprof import record_go_pprof  # noqa: E402
from recorders.jax_torch import JAX_PROGRAM, TORCH_PROGRAM  # noqa: E402
from recorders.library_pools import (HYPOTHESIS_POOL_PROGRAM, JEDI_LARK_SQL_PROGRAM,  # noqa: E402
                                     MARKDOWN_POOL_PROGRAM, PYGMENTS_CYTHON_PROGRAM, PYTEST_FLASK_PROGRAM)
from recorders.library_programs import (BLACK_POOL_PROGRAM, COUNTERS_PROGRAM, DOCUTILS_POOL_PROGRAM,  # noqa: E402
                                        HTTP_THREADS_PROGRAM, JINJA_PROCS_PROGRAM, MIXED_POOL_PROGRAM,
                                        NETWORKX_PROGRAM, SYMPY_POOL_PROGRAM, SYMPY_PROGRAM)
from recorders.native import record_callgrind, record_perf, record_uftrace  # noqa: E402
from recorders.node import record_node_cpuprofile  # noqa: E402
from recorders.python_programs import (AST_POOL_PROGRAM, ASYNC_PROGRAM, CROWD_POOL_PROGRAM,  # noqa: E402
                                       DEEP_RECURSION_PROGRAM, JSON_TOOL_LEVELS, NUMBA_JIT_PROGRAM,
                                       SPAWN_POOL_PROGRAM, XML_IO_POOL_PROGRAM, deep_json_document,
                                       docutils_pool_documents, rst_document)
from recorders.python_samplers import record_pyinstrument, record_pyspy_raw, record_pyspy_speedscope  # noqa: E402
from recorders.suite import NAMES, OPT_IN, SUITE, Spec, _program_spec, print_table, record  # noqa: E402
from recorders.summaries import summarize  # noqa: E402
from recorders.viztracer import viztracer_command, viztracer_overflowed  # noqa: E402

#: what other code imports from this file (tests/support/realtraces.py, tests/test_chrome_profile.py, the
#: benches and docs scripts) and the recorders' entry points
__all__ = [
    "AST_POOL_PROGRAM", "ASYNC_PROGRAM", "BLACK_POOL_PROGRAM", "CHROMIUM_CATEGORIES", "CHROMIUM_PAGE",
    "CHROMIUM_TIMELINE_CATEGORIES", "COUNTERS_PROGRAM", "CROWD_POOL_PROGRAM", "DEEP_RECURSION_PROGRAM",
    "DEFAULT_FORMATS_OUT", "DEFAULT_OUT", "DOCUTILS_POOL_PROGRAM", "FORMAT_NAMES", "FORMAT_SUITE", "FORMAT_TIMEOUT",
    "HTTP_THREADS_PROGRAM", "HYPOTHESIS_POOL_PROGRAM", "JAX_PROGRAM", "JAX_REQUIREMENTS", "JAX_VENV",
    "JEDI_LARK_SQL_PROGRAM", "JINJA_PROCS_PROGRAM", "JSON_TOOL_LEVELS", "MARKDOWN_POOL_PROGRAM",
    "MIXED_POOL_PROGRAM", "NAMES", "NETWORKX_PROGRAM", "NUMBA_JIT_PROGRAM", "OPT_IN", "PYGMENTS_CYTHON_PROGRAM",
    "PYTEST_FLASK_PROGRAM", "REPO", "SPAWN_POOL_PROGRAM", "SUITE", "SYMPY_POOL_PROGRAM", "SYMPY_PROGRAM",
    "THREADS_EXAMPLE", "TIMEOUT", "TORCH_PROGRAM", "TORCH_REQUIREMENTS", "TORCH_VENV", "TRACE_REQUIREMENTS",
    "TRACE_VENV", "XML_IO_POOL_PROGRAM", "RecordingSkipped", "Spec", "_child_env", "_fmt_bytes", "_program_spec",
    "_venv_python", "_write", "deep_json_document", "docutils_pool_documents", "ensure_trace_venv", "main",
    "print_formats_table", "print_table", "record", "record_callgrind", "record_chromium", "record_chromium_json",
    "record_chromium_proto", "record_firefox", "record_firefox_workers", "record_formats", "record_go_pprof",
    "record_node_cpuprofile", "record_perf", "record_pyinstrument", "record_pyspy_raw", "record_pyspy_speedscope",
    "record_uftrace", "rst_document", "run_logged", "ship", "summarize", "trace_stats", "viztracer_command",
    "viztracer_overflowed",
]


def _main_formats(args, ap) -> int:
    """``--formats``: record other tools' formats into ``<out>/formats``, print their table, ship."""
    names = FORMAT_NAMES_ALL if args.formats.strip() == "all" else \
        [n.strip() for n in args.formats.split(",") if n.strip()]
    unknown = [n for n in names if n not in FORMAT_NAMES]
    if unknown:
        ap.error(f"unknown format recording(s) {', '.join(unknown)}; known: {', '.join(FORMAT_NAMES)}")
    out = os.path.join(args.out, "formats")
    rows = record_formats(names, out, args.timeout or FORMAT_TIMEOUT, load=not args.no_load)
    print_formats_table(rows)
    if args.ship:
        for rel, size, note in ship(rows, out):
            print(f"ship: {rel:<44} {size:>9,} bytes  {note}")
    return 1 if any(r.get("failed") for r in rows) else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="traces: " + ", ".join(NAMES) + "; formats: " + ", ".join(FORMAT_NAMES))
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default build/traces)")
    ap.add_argument("--only", default="", help=f"comma-separated trace names (default: all but {', '.join(sorted(OPT_IN))})")
    ap.add_argument("--force", action="store_true", help="record again traces already there")
    ap.add_argument("--timeout", type=float, default=None,
                    help=f"seconds per recording (default {TIMEOUT}; {FORMAT_TIMEOUT} with --formats)")
    ap.add_argument("--list", action="store_true", help="list the suite and exit")
    ap.add_argument("--formats", default="", metavar="NAMES",
                    help="record other tools' formats instead (comma-separated names, or 'all') into OUT/formats")
    ap.add_argument("--ship", action="store_true",
                    help="with --formats: copy the small recordings to tests/data/formats/recorded/")
    ap.add_argument("--no-load", action="store_true", help="with --formats: do not load the recordings with tracevis3d")
    args = ap.parse_args(argv)
    if args.list:
        for s in SUITE:
            print(f"{s.name:<14} {s.tool:<9} {s.doc}")
        for r in FORMAT_SUITE:
            print(f"{r.name:<17} {r.tool:<12} {r.doc} (--formats)")
        return 0
    if args.formats:
        return _main_formats(args, ap)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or [n for n in NAMES if n not in OPT_IN]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        ap.error(f"unknown trace name(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    os.makedirs(args.out, exist_ok=True)
    rows, failed = [], 0
    for spec in SUITE:
        if spec.name not in names:
            continue
        trace = os.path.join(args.out, spec.name + ".json")
        meta = os.path.join(args.out, spec.name + ".record.json")
        if not args.force and os.path.exists(trace) and os.path.exists(meta):
            with open(meta) as f:
                rows.append(dict(json.load(f), cached=True))
            continue
        print(f"record_traces: recording {spec.name} ({spec.doc})", file=sys.stderr, flush=True)
        try:
            rec = record(spec, args.out, args.timeout or TIMEOUT)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            print(f"record_traces: FAILED {e}", file=sys.stderr)
            failed += 1
            last = [ln for ln in str(e).splitlines() if ln.strip()][-1:] or ["?"]
            rows.append({"name": spec.name, "skipped": f"FAILED (see above): {last[0][:200]}"})
            continue
        if rec.get("skipped"):
            print(f"record_traces: skip {spec.name}: {rec['skipped']}", file=sys.stderr)
        rows.append(rec)
    print_table(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
