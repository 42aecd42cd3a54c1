#!/usr/bin/env python3
"""Record the real traces the figure, layout and analysis tests read, once, into tests/data/recorded.

    .venv/bin/python tools/record_test_traces.py [NAME ...]     # default: every name of RECORDINGS

Record on an idle machine (on a shared one give the recordings the CPU: ``nice -n -20``): the
figures are of the program as it runs undisturbed (json.tool's 105-level run takes ~35 ms then;
under a load of 17 on 2 cores it took 120-590 ms and its figure named 14 to 52 functions).

Each is recorded by the tests' own recipe (`tests/support/realtraces.py`, ``record_<name>``: the
commands of tools/record_traces.py, VizTracer's defaults) and written gzipped
(``tests/data/recorded/<file>.gz``, mtime 0; one over 20 MB xz-compressed, ``<file>.xz``); ``manifest.json`` lists each with what it holds
(calls, threads, depth, the recording's seconds, VizTracer and Python versions) and README.md
says the same for people.  The tests' session fixtures (tests/conftest.py, `COMMITTED`) inflate
them into the session's folder: a figure test reads the same bytes on every run, so its bounds
are about the figure, not about how busy the machine was when the program ran.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import lzma
import os
import pathlib
import platform
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "recorded"
#: name -> what the recording is (the README's words); `realtraces.record_<name>` records it
RECORDINGS = {
    "deep": "json.tool on a JSON document nested 105 levels deep (one `_iterencode_dict` generator per "
            "level: ~118 levels)",
    "threads": "examples/threads_pipeline.py --docs 24 --batch 8 (MainThread, parse_0..2, writer; Lock, "
               "RLock, bounded Queue, Condition, files)",
    "json_pair": "json.tool on two documents (A: flat records; B: nested records with floats, booleans, "
                 "nulls and non-ASCII text): one program on two inputs",
    "sync_program": "tests/support/sync_program.py with --log_func_args (producer, queue, consumer, a "
                    "Condition: known hand-offs)",
    "networkx": "tools/record_networkx.py's program (betweenness, Louvain, minimum spanning tree, all-pairs "
                "shortest path lengths) on the karate-club graph and on the Les Misérables graph (issue 82's "
                "crowded trace: importing networkx is most of each run); VizTracer's file_info (the traced "
                "files' sources) dropped",
    "docutils_pool": "docutils in a thread pool, twice: A (4 workers, one generated reStructuredText document "
                     "each) and B (2 workers, other documents): one program on two inputs, 100+ levels; "
                     "VizTracer's file_info dropped",
    "docutils_pool_wide": "docutils in a thread pool of 16 workers, one short document each (17 threads, 30+ "
                          "levels each); VizTracer's file_info dropped",
    "http_threads": "a threading HTTP server (a thread per request) rendering docutils pages for six client "
                    "threads over loopback, twice (A: 24 requests, B: 16): 30+ short threads, 70+ levels; "
                    "VizTracer's file_info dropped",
    "counters": "docutils on 3 workers while the main thread samples memory, live objects and threads as "
                "VizTracer counters, garbage collections logged (--log_gc); VizTracer's file_info dropped",
    "numba_jit": "three threads jit-compiling numba functions behind numba's compiler lock (~10^6 calls); "
                 "VizTracer's file_info dropped",
}
#: recordings whose traced sources VizTracer's ``file_info`` would carry (third-party code: the
#: tests never read it, and it is megabytes)
DROP_FILE_INFO = {"docutils_pool", "docutils_pool_wide", "http_threads", "counters", "numba_jit"}
#: a file larger than this (bytes) is written xz-compressed (half gzip's size: the 10^5-10^6-call
#: recordings are 45-180 MB of JSON), a smaller one gzipped
XZ_ABOVE = 20_000_000


def _realtraces():
    spec = importlib.util.spec_from_file_location("realtraces", REPO / "tests" / "support" / "realtraces.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _summary(path: pathlib.Path) -> dict:
    """What the file holds, as TraceVis3D reads it."""
    sys.path.insert(0, str(REPO))  # a tool run from the checkout (the package is not installed)
    import tracevis3d

    t = tracevis3d.load(str(path))
    return {"calls": int(len(t)), "threads": int(t.n_threads), "depth": int(t.depth.max()) + 1 if len(t) else 0}


def record(name: str, out: pathlib.Path = OUT) -> dict:
    """Record ``name`` and write its gzipped file(s) into ``out``; its manifest entry."""
    rt = _realtraces()
    with tempfile.TemporaryDirectory(prefix=f"tv3d-rec-{name}-") as tmp:
        t0 = time.perf_counter()
        got = getattr(rt, f"record_{name}")(pathlib.Path(tmp))
        seconds = time.perf_counter() - t0
        paths = [p for p in (got if isinstance(got, tuple) else (got,)) if isinstance(p, pathlib.Path)]
        files = []
        for p in paths:
            if name in DROP_FILE_INFO:
                rt.drop_file_info(p)
            data = p.read_bytes()
            if len(data) > XZ_ABOVE:
                packed, target = lzma.compress(data, preset=6), out / (p.name + ".xz")
            else:
                packed, target = gzip.compress(data, compresslevel=9, mtime=0), out / (p.name + ".gz")
            out.mkdir(parents=True, exist_ok=True)
            tmp_target = target.with_name(target.name + ".tmp")
            tmp_target.write_bytes(packed)
            os.replace(tmp_target, target)
            files.append({"file": target.name, "bytes": len(packed), "sha256": hashlib.sha256(packed).hexdigest(),
                          **_summary(p)})
    import viztracer

    return {"what": RECORDINGS[name], "recipe": f"tests/support/realtraces.py record_{name}", "files": files,
            "seconds": round(seconds, 2), "load_average": round(os.getloadavg()[0], 1),
            "niceness": os.nice(0), "viztracer": viztracer.__version__,
            "python": platform.python_version(), "recorded": time.strftime("%Y-%m-%d")}


def write_readme(manifest: dict, out: pathlib.Path = OUT) -> None:
    rows = []
    for name, m in manifest.items():
        for f in m["files"]:
            rows.append(f"| `{f['file']}` | {name} | {f['calls']:,} | {f['threads']} | {f['depth']} | "
                        f"{f['bytes'] / 1e3:.0f} kB |")
    text = """# Real recordings the tests read

Recorded once by `.venv/bin/python tools/record_test_traces.py` (each by the tests' own recipe,
`tests/support/realtraces.py`: VizTracer with its defaults, C functions and import machinery
included) and committed, gzipped (those over 20 MB xz-compressed): a figure, layout or analysis test reads the same recording on
every run (tests/conftest.py `COMMITTED` inflates each into the session's folder once), so a
bound it sets is about the figure, not about how loaded the machine was while the program ran
(a json.tool trace recorded during the session named 21 functions on a busy machine, 22 on an
idle one).  The recorders themselves are still tested on fresh recordings
(tests/realtraces/test_realtraces.py: a valid trace with the functions the program ran).

`manifest.json` lists each file with its recipe, what TraceVis3D reads from it, the load average
and niceness it was recorded at and the VizTracer and Python versions that recorded it.  Record
again (all, or some names) with the command above, on an idle machine or with `nice -n -20` (a
program recorded beside busy processes runs 3-15 times slower, unevenly, and its figure is of
that: the deep json.tool run named 14 to 52 functions over four such recordings); the figure
tests' bounds then need checking against the new recordings.

`memory_calls_run.bin.gz` and `memory_calls_calls.json.gz` are memray's capture and py-spy's
Chrome trace of one run of `tests/support/memray_captures.py`'s `DEEP_JSON_PROGRAM`
(`record_memory_and_calls`, recorded the same way and committed beside these; not in the
manifest: that module reads them).

**Licence.**  Recordings of the Python standard library, of networkx (BSD-3-Clause), docutils
(public domain and BSD-2-Clause) and numba (BSD-2-Clause) run by this project's own programs:
the files hold those packages' function names and file paths, no source (VizTracer's
`file_info` is dropped); made for this project and distributed under the project's licence.

| file | recording | calls | threads | depth | size |
|---|---|---|---|---|---|
""" + "\n".join(rows) + "\n\n" + "\n".join(f"- **{name}**: {m['what']}." for name, m in manifest.items()) + "\n"
    (out / "README.md").write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(RECORDINGS)
    unknown = [n for n in names if n not in RECORDINGS]
    if unknown:
        print(f"record_test_traces: error: unknown recording(s) {unknown}; known: {', '.join(RECORDINGS)}",
              file=sys.stderr)
        return 2
    path = OUT / "manifest.json"
    manifest = json.loads(path.read_text()) if path.is_file() else {}
    for name in names:
        manifest[name] = record(name)
        print(f"{name}: " + ", ".join(f"{f['file']} ({f['calls']:,} calls, {f['bytes'] / 1e3:.0f} kB)"
                                     for f in manifest[name]["files"]))
    manifest = {k: manifest[k] for k in RECORDINGS if k in manifest}
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    write_readme(manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
