#!/usr/bin/env python3
"""The kernel signatures only the tests use, compiled before the tests run (``make test``).

    python tools/test_signatures.py --compile NUMBA_CACHE_DIR      # scripts/test.sh, after --seed
    python tools/test_signatures.py --update build/test-logs/compile-log.jsonl ...

The seeded cache (tools/kernel_caches.py --seed) holds what the warm-up compiles: the kernels a
user's first figure needs.  The unit tests call some kernels with argument types no figure
uses (the brute-force twins' small arrays, uint16 postings, a chunked scan forced on a small
file): ~180 + 130 signatures, 52 CPU s that landed in whichever test called each first, on the
two unit sessions' wall time (2 min 32 s of a 2 min budget, issue 80).  They are listed in
`SIGNATURES` (``module:qualname<TAB>repr of the argument types``, made by ``--update`` from the
compile log that ``TV3D_COMPILE_LOG`` writes, `tests/support/compile_log.py`) and compiled here
into the tests' cache, in two processes (one a core, each its own modules: no two processes
write one kernel's index), for this CPU as the tests run them.  A signature the tests no
longer meet costs its compile and nothing else; one that no longer compiles (a kernel changed)
is reported in one line and skipped: the test that meets it compiles what it needs, and the
session's summary names it, as before.  Only the package's own kernels are listed (the tests'
twins in tests/support compile in the tests).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIGNATURES = REPO / "tests" / "support" / "test_signatures.txt"
HEADER = ("# kernel signatures the tests use beyond the warm-up's, compiled before the tests "
          "(tools/test_signatures.py)\n")
#: processes compiling side by side (the machines make test is sized for have two cores)
JOBS = 2


def _types_namespace() -> dict:
    from numba.core import types

    namespace = {name: getattr(types, name) for name in dir(types) if not name.startswith("_")}
    namespace["bool"] = types.boolean  # (its repr; the name is Python's own type otherwise)
    return namespace


def parse(text: str) -> list[tuple[str, str, str]]:
    """The (module, qualname, argument types' repr) rows of a signatures file's ``text``."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        where, _, types = line.partition("\t")
        module, _, qualname = where.partition(":")
        rows.append((module, qualname, types))
    return rows


def _dispatcher_name(module, function_name: str) -> str | None:
    """The name in ``module`` of the cached dispatcher of its function ``function_name`` (a
    kernel's name, or the name of a dispatcher made of a plain function: ``shape_take =
    njit(cache=True)(_shape_take)``), or None."""
    from numba.core.caching import NullCache

    got = getattr(module, function_name, None)
    if hasattr(got, "compile") and hasattr(got, "py_func"):
        return function_name
    for name, value in sorted(vars(module).items()):
        if getattr(getattr(value, "py_func", None), "__name__", None) == function_name \
                and not isinstance(getattr(value, "_cache", NullCache()), NullCache):
            return name
    return None


def update(logs: list[Path], out: Path = SIGNATURES) -> int:
    """Rewrite ``out`` from compile logs (JSON lines of `tests/support/compile_log.py`), adding
    to what it lists: the package's kernels whose argument types read back equal (eval in
    numba's types); returns how many rows it holds."""
    import importlib

    sys.path.insert(0, str(REPO))  # a tool run from the checkout (the package is not installed)
    namespace = _types_namespace()
    rows = set(parse(out.read_text())) if out.is_file() else set()
    for log in logs:
        for line in Path(log).read_text().splitlines():
            rec = json.loads(line)
            module, _, qualname = rec["kernel"].rpartition(".")
            if "types" not in rec or not module.startswith("tracevis3d.") or "<locals>" in rec["kernel"]:
                continue
            try:
                if eval(rec["types"], namespace) is None:  # noqa: S307 - numba's own reprs, from our logs
                    continue
            except Exception:  # a type whose repr is not its constructor (records, literals): left to the test
                continue
            name = _dispatcher_name(importlib.import_module(module), qualname)
            if name is not None:  # (else a kernel made inside another: compiled with it)
                rows.add((module, name, rec["types"]))
    text = HEADER + "".join(f"{m}:{q}\t{t}\n" for m, q, t in sorted(rows))
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    return len(rows)


def compile_rows(rows: list[tuple[str, str, str]]) -> tuple[int, list[str]]:
    """Compile (or load from the cache) each row's signature in this process: (how many are
    in the cache now, one line for each that could not be)."""
    import importlib

    namespace = _types_namespace()
    done, problems = 0, []
    for module, qualname, types in rows:
        try:
            kernel = getattr(importlib.import_module(module), qualname)
            kernel.compile(eval(types, namespace))  # noqa: S307 - the committed list's numba reprs
            done += 1
        except Exception as e:  # a kernel renamed or changed since the list was made
            problems.append(f"{module}:{qualname} {types[:80]}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
    return done, problems


def _child(rows_file: str) -> int:
    rows = [tuple(r) for r in json.loads(Path(rows_file).read_text())]
    done, problems = compile_rows(rows)
    print(json.dumps({"done": done, "problems": problems}))
    return 0


def compile_all(cache_dir: Path, signatures: Path = SIGNATURES, jobs: int = JOBS) -> str:
    """Every listed signature compiled into ``cache_dir`` (numba's cache folder of the tests),
    its modules dealt to ``jobs`` processes by their numbers of signatures; a one-line summary
    (and a line for each signature that could not be compiled)."""
    if not signatures.is_file():
        return f"test signatures: none listed ({signatures} is missing)"
    rows = parse(signatures.read_text())
    by_module: dict = {}
    for row in rows:
        by_module.setdefault(row[0], []).append(row)
    shares = [[] for _ in range(max(1, jobs))]
    for module_rows in sorted(by_module.values(), key=len, reverse=True):
        min(shares, key=len).extend(module_rows)
    t0 = time.perf_counter()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done, problems = 0, []
    with tempfile.TemporaryDirectory(prefix="tv3d-test-signatures-") as tmp:
        procs = []
        for k, share in enumerate(s for s in shares if s):
            rows_file = Path(tmp) / f"share{k}.json"
            rows_file.write_text(json.dumps(share))
            procs.append(subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", str(rows_file)],
                                          env=env, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        for proc in procs:
            out, err = proc.communicate(timeout=1800)
            lines = out.strip().splitlines()
            if proc.returncode != 0 or not lines:
                problems.append(f"a compiling process failed (exit {proc.returncode}): "
                                f"{(err.strip().splitlines() or ['no output'])[-1]}")
                continue
            rep = json.loads(lines[-1])
            done += rep["done"]
            problems += rep["problems"]
    summary = (f"test signatures: {done} of {len(rows)} in {cache_dir} after {time.perf_counter() - t0:.0f} s "
               f"({len(procs)} processes)")
    return "\n".join([summary] + [f"  not compiled: {p}" for p in problems])


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compile", type=Path, metavar="NUMBA_CACHE_DIR", help="compile the listed signatures into it")
    ap.add_argument("--update", type=Path, nargs="+", metavar="COMPILE_LOG",
                    help="add the signatures of these compile logs (TV3D_COMPILE_LOG) to the list")
    ap.add_argument("--signatures", type=Path, default=SIGNATURES, metavar="FILE",
                    help=f"the list to compile (default: {SIGNATURES.relative_to(REPO)})")
    ap.add_argument("--jobs", type=int, default=JOBS, help=f"processes side by side (default {JOBS})")
    ap.add_argument("--child", metavar="ROWS_JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child)
    if args.update:
        print(f"test signatures: {update(args.update)} listed in {SIGNATURES.relative_to(REPO)}")
        return 0
    if args.compile:
        print(compile_all(args.compile.resolve(), args.signatures.resolve(), max(1, args.jobs)))
        return 0
    ap.error("--compile or --update is needed")
    return 2


if __name__ == "__main__":
    sys.exit(main())
