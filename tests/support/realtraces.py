"""Real traces recorded during the test session, for tests that need deep or multi-threaded
input from a real program rather than synthetic data.

Both are recorded with ``sys.executable -m viztracer`` (the project's .venv has viztracer
pinned) in a subprocess, with VizTracer's defaults (C functions and import machinery
included), by the same commands as ``tools/record_traces.py`` (imported from there, so the
test traces and the benchmark traces are made alike):

- ``deep``: ``python -m json.tool`` on a JSON document nested 105 levels deep: one
  ``_iterencode_dict`` generator per level, so the trace is ~118 levels deep, ~46k calls,
  ~0.5 s to record.
- ``threads``: ``examples/threads_pipeline.py`` (MainThread, parse_0..2, writer; Lock, RLock,
  bounded Queue, Condition, files), a smaller run (``--docs 24 --batch 8``), ~1-2 s.
- ``json pair``: two runs of the same program on two inputs, for comparisons:
  ``python -m json.tool`` on a list of flat records (A) and on a document of nested records
  with floats, booleans, nulls and non-ASCII text (B), ~0.5 s each.

- ``numba jit``: three threads jit-compiling with numba behind its global compiler lock
  (the suite's ``numba_jit``): real lock waits between threads, ~10^6 calls, ~10 s.

- ``docutils pool``: docutils (a third-party program, pinned in requirements-dev.txt)
  turning generated reStructuredText documents into HTML in a ``ThreadPoolExecutor`` (the
  suite's ``docutils_pool`` program, smaller documents): 4-5 threads, 100+ levels in every
  worker, ~3-5·10^5 calls, ~10 s to record; and a second run on other documents with fewer
  workers (the B side of a deep comparison).

No network and nothing beyond the project's .venv is needed.  The session fixtures
``deep_trace_path``, ``threads_trace_path``, ``json_pair_paths`` and
``docutils_pool_paths`` are in conftest.py.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
#: seconds a recording may take before the fixture fails (they take 0.5-2 s)
RECORD_TIMEOUT = 120
THREADS_ARGS = ["--docs", "24", "--batch", "8"]

_recorder = None


def recorder():
    """tools/record_traces.py as a module (the suite's commands and document generators)."""
    global _recorder
    if _recorder is None:
        spec = importlib.util.spec_from_file_location("record_traces", REPO / "tools" / "record_traces.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _recorder = mod
    return _recorder


def viztracer_missing() -> str | None:
    """Why VizTracer cannot record here, or None if it can."""
    if importlib.util.find_spec("viztracer") is None:
        return (f"viztracer is not installed for {sys.executable} "
                "(it is pinned in requirements-dev.txt: pip install viztracer==1.1.1)")
    return None


def record_viztracer(out: pathlib.Path, argv: list, cwd: pathlib.Path,
                     timeout: float = RECORD_TIMEOUT, options: tuple = ()) -> pathlib.Path:
    """Record ``python <argv>`` with VizTracer into ``out``; raise RuntimeError naming the
    command, its exit status and its output tail on failure or timeout."""
    # ``options`` go after the command's defaults (as its ``flags``), so they win: argparse
    # keeps an option's last value
    cmd = recorder().viztracer_command(sys.executable, str(out), argv, flags=tuple(options))
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    try:
        p = subprocess.run(cmd, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"recording timed out after {timeout:.0f} s: {' '.join(cmd)}") from None
    if p.returncode != 0 or not out.exists() or out.stat().st_size == 0:  # VizTracer exits 0 when its dump fails
        tail = p.stdout.decode("utf-8", "replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{tail}")
    if recorder().viztracer_overflowed(str(out)):
        raise RuntimeError(f"VizTracer's buffer overflowed (the run's start dropped): give it more "
                           f"--tracer_entries: {' '.join(cmd)}")
    return out


def record_viztracer_args(out: pathlib.Path, argv: list, cwd: pathlib.Path,
                          timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """`record_viztracer` with ``--log_func_args`` (the ``self`` reprs name sync objects)."""
    return record_viztracer(out, argv, cwd, timeout, ("--log_func_args",))


def record_threads_args(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """examples/threads_pipeline.py recorded with ``--log_func_args`` (for the thread view)."""
    return record_viztracer_args(out_dir / "threads_pipeline_args.json",
                                 [str(REPO / "examples" / "threads_pipeline.py")] + THREADS_ARGS, out_dir, timeout)


def record_sync_program(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """tests/support/sync_program.py (known hand-offs) recorded with ``--log_func_args``."""
    return record_viztracer_args(out_dir / "sync_program.json", [str(REPO / "tests" / "support" / "sync_program.py")], out_dir,
                                 timeout)


def record_numba_jit(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """The suite's ``numba_jit`` program (three threads jit-compiling behind numba's compiler
    lock) into ``out_dir/numba_jit.json`` (~10^6 calls, ~10 s)."""
    prog = out_dir / "numba_jit.py"
    prog.write_text(recorder().NUMBA_JIT_PROGRAM, encoding="utf-8")
    return record_viztracer(out_dir / "numba_jit.json", [str(prog)], out_dir, timeout,
                            ("--tracer_entries", "3000000"))


def record_deep(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """Record ``json.tool`` on a 105-level JSON document into ``out_dir/deep_json_tool.json``."""
    rec = recorder()
    doc = out_dir / "deep.json"
    doc.write_text(rec.deep_json_document(), encoding="utf-8")
    return record_viztracer(out_dir / "deep_json_tool.json",
                            ["-m", "json.tool", str(doc), str(out_dir / "deep.out.json")], out_dir, timeout)


def record_threads(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> pathlib.Path:
    """Record examples/threads_pipeline.py (all threads) into ``out_dir/threads_pipeline.json``."""
    return record_viztracer(out_dir / "threads_pipeline.json",
                            [str(REPO / "examples" / "threads_pipeline.py")] + THREADS_ARGS, out_dir, timeout)


def json_pair_documents() -> tuple:
    """Two inputs of json.tool that take partly different code paths: (A, B) as JSON text."""
    import json

    a = [{"id": i, "name": f"item{i}", "tags": ["x", "y"]} for i in range(200)]
    b = {"title": "r\u00e9sum\u00e9 \u00fcber alles",
         "records": [{"id": i, "value": i * 0.5, "nested": {"ok": i % 2 == 0, "note": None}} for i in range(300)]}
    return json.dumps(a), json.dumps(b)


def record_json_pair(out_dir: pathlib.Path, timeout: float = RECORD_TIMEOUT) -> tuple:
    """Record json.tool on the two documents of `json_pair_documents` into
    ``out_dir/json_tool_{a,b}.json``; (path A, path B, seconds of the slower recording)."""
    import time

    out, slowest = [], 0.0
    for tag, text in zip("ab", json_pair_documents()):
        doc = out_dir / f"doc_{tag}.json"
        doc.write_text(text, encoding="utf-8")
        t = time.perf_counter()
        out.append(record_viztracer(out_dir / f"json_tool_{tag}.json",
                                    ["-m", "json.tool", str(doc), str(out_dir / f"doc_{tag}.out.json")],
                                    out_dir, timeout))
        slowest = max(slowest, time.perf_counter() - t)
    return out[0], out[1], slowest


def docutils_missing() -> str | None:
    """Why docutils cannot be traced here, or None if it can."""
    why = viztracer_missing()
    if why:
        return why
    if importlib.util.find_spec("docutils") is None:
        return (f"docutils is not installed for {sys.executable} "
                "(it is pinned in requirements-dev.txt: pip install docutils==0.23)")
    return None


def record_docutils_pool(out_dir: pathlib.Path, timeout: float = 300) -> tuple:
    """docutils in a thread pool, twice: A (4 workers, one document each) and B (2 workers,
    other documents); the suite's program and document generator.  (path A, path B)."""
    rec = recorder()
    out = []
    for tag, workers, seed0 in (("a", 4, 11), ("b", 2, 41)):
        work = out_dir / f"pool-{tag}"  # not an identifier: the program is module "docutils_pool", not "pool_a.…"
        work.mkdir(exist_ok=True)
        prog = rec._write(str(work / "docutils_pool.py"), rec.DOCUTILS_POOL_PROGRAM)
        docs = [rec._write(str(work / f"doc{k}.rst"), rec.rst_document(1, seed=seed0 + k)) for k in range(workers)]
        out.append(record_viztracer(out_dir / f"docutils_pool_{tag}.json", [prog] + docs, work, timeout,
                                    ("--tracer_entries", "3000000")))
    return tuple(out)


def record_docutils_pool_wide(out_dir: pathlib.Path, workers: int = 16, timeout: float = 300) -> pathlib.Path:
    """docutils in a thread pool of ``workers`` workers (``workers`` + 1 threads, 30+ levels
    each), one short document per worker: many busy lanes in one figure."""
    rec = recorder()
    work = out_dir / "pool-wide"
    work.mkdir(exist_ok=True)
    program = rec.DOCUTILS_POOL_PROGRAM.replace("max_workers=4", f"max_workers={int(workers)}")
    prog = rec._write(str(work / "docutils_pool.py"), program)
    docs = [rec._write(str(work / f"doc{k}.rst"), rec.rst_document(1, seed=11 + k)) for k in range(workers)]
    return record_viztracer(out_dir / f"docutils_pool_{workers}.json", [prog] + docs, work, timeout,
                            ("--tracer_entries", "3000000"))


def record_http_threads(out_dir: pathlib.Path, pages=(24, 16), timeout: float = 300) -> tuple:
    """A threading HTTP server rendering docutils pages for six client threads over loopback
    sockets, run twice (``pages`` requests each: A and B of a comparison): a thread per
    request (``pages`` + 8 threads, 70+ levels); the suite's program
    (`tools/record_traces.py` HTTP_THREADS_PROGRAM).  (path A, path B)."""
    rec = recorder()
    work = out_dir / "http-work"
    work.mkdir(exist_ok=True)
    prog = rec._write(str(work / "http_threads.py"), rec.HTTP_THREADS_PROGRAM)
    # VizTracer's default buffer (10^6 entries) holds these runs (~520k calls; an overflow is
    # refused)
    return tuple(record_viztracer(out_dir / f"http_threads_{tag}.json", [prog, str(int(n))], work, timeout)
                 for tag, n in zip("ab", pages))


def record_counters(out_dir: pathlib.Path, timeout: float = 300) -> pathlib.Path:
    """docutils on 3 workers while the main thread samples memory, live objects and threads
    as VizTracer counters, with garbage collections logged (``--log_gc``); the suite's
    program (`tools/record_traces.py` COUNTERS_PROGRAM)."""
    rec = recorder()
    work = out_dir / "counters-work"
    work.mkdir(exist_ok=True)
    prog = rec._write(str(work / "docutils_counters.py"), rec.COUNTERS_PROGRAM)
    docs = [rec._write(str(work / f"doc{k}.rst"), rec.rst_document(1, seed=70 + k)) for k in range(3)]
    # VizTracer's --log_gc callback, running while worker threads build tuples, now and then
    # makes the traced program fail inside CPython ("SystemError: Objects/tupleobject.c:
    # bad argument to internal function", twice in one day of suite runs): the recording is made
    # again, at most three times, and the last failure is raised
    for attempt in range(3):
        try:
            return record_viztracer(out_dir / "docutils_counters.json", [prog] + docs, work, timeout,
                                    ("--tracer_entries", "3000000", "--log_gc"))
        except RuntimeError as e:
            if attempt == 2 or "timed out" in str(e):
                raise


def drop_file_info(path: pathlib.Path) -> pathlib.Path:
    """Remove VizTracer's ``file_info`` member (the source text of every traced file, which
    TraceVis3D never reads) from the trace at ``path``, in place; the event array and
    ``viztracer_metadata`` keep their bytes.  For a committed recording of a third-party program:
    networkx's recording held 1.35 MB (gzipped) of networkx's and the standard library's sources
    beside 1.8 MB of events.  Raises RuntimeError when the file does not end in that member."""
    import json

    data = path.read_bytes()
    k = data.rfind(b',"file_info":')
    if k < 0 or not data.rstrip().endswith(b"}}"):
        raise RuntimeError(f"{path}: no file_info member at the end of the trace")
    kept = data[:k] + b"}"
    try:
        doc = json.loads(kept)
        if "traceEvents" not in doc or "file_info" not in json.loads(data):
            raise ValueError("not a VizTracer trace with file_info")
    except ValueError as e:
        raise RuntimeError(f"{path}: file_info could not be cut off: {e}") from None
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(kept)
    os.replace(tmp, path)
    return path


def record_networkx(out_dir: pathlib.Path, timeout: float = 300) -> tuple:
    """Issue 82's crowded Python trace: `tools/record_networkx.py`'s program (betweenness,
    Louvain, minimum spanning tree, all-pairs shortest path lengths) on networkx's karate-club
    graph and on the Les Misérables graph, under this interpreter (networkx importable: it is
    pinned in requirements-dev.txt), VizTracer's file_info dropped (`drop_file_info`).
    (path karate, path lesmis)."""
    spec = importlib.util.spec_from_file_location("record_networkx", REPO / "tools" / "record_networkx.py")
    rec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rec)
    why = rec.networkx_missing()
    if why:
        raise RuntimeError(why)
    return tuple(drop_file_info(pathlib.Path(rec.record(out_dir, graph, timeout=timeout)))
                 for graph in ("karate", "lesmis"))
