"""V8 tick logs, pyinstrument JSON and GHC text reports recorded afresh with the tools installed
here (each test skips, saying which tool is missing): the program's own functions come back by
name, with the format's x axis.  The shipped recordings (tests/data/formats/v8log, pyinstrument,
ghc) are compared with naive twins in tests/unit; these check that today's tools still write
what the readers read."""
from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter

import pytest

import tracevis3d

NODE_PROGRAM = """
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sortMany() { const a = []; for (let i = 0; i < 300000; i++) a.push((i * 7919) % 100003);
  a.sort((x, y) => x - y); return a[5]; }
let t = 0; for (let k = 0; k < 8; k++) { t += fib(25) + sortMany(); }
console.log(t);
"""

HASKELL_PROGRAM = """module Main (main) where
import Data.List (foldl')
{-# NOINLINE fib #-}
fib :: Int -> Integer
fib n = if n < 2 then toInteger n else fib (n - 1) + fib (n - 2)
sumSquares :: Int -> Int
sumSquares n = foldl' (+) 0 [ i * i | i <- [1 .. n] ]
main :: IO ()
main = print (fib 27) >> print (sumSquares 3000000)
"""


def _self_by_name(trace) -> Counter:
    c = Counter()
    for f, s in zip(trace.func.tolist(), trace.self_time.tolist()):
        c[trace.function_names[f]] += s
    return c


@pytest.mark.timeout(300)
def test_node_prof_preprocessed(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    (tmp_path / "prog.js").write_text(NODE_PROGRAM)
    subprocess.run([node, "--prof", "prog.js"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    log = sorted(tmp_path.glob("isolate-*.log"))[0]
    out = subprocess.run([node, "--prof-process", "--preprocess", log.name], cwd=tmp_path, check=True,
                         capture_output=True, timeout=120).stdout
    (tmp_path / "prog.v8log.json").write_bytes(out)
    trace = tracevis3d.load(tmp_path / "prog.v8log.json", warn=False)
    assert trace.meta["format"] == "v8log-json" and not trace.meta.get("merged")
    names = set(trace.function_names)
    assert {"fib", "sortMany"} & names, sorted(names)[:40]
    with pytest.raises(tracevis3d.model.TraceFormatError, match="preprocess"):
        tracevis3d.load(log)  # the raw log: recognised, refused with what to do


@pytest.mark.timeout(300)
def test_pyinstrument_json_of_docutils(tmp_path):
    pytest.importorskip("pyinstrument", reason="pyinstrument is not installed")
    pytest.importorskip("docutils", reason="docutils is not installed")
    (tmp_path / "doc.rst").write_text("Title\n=====\n\n" + "Some *text* and a list:\n\n- a\n- b\n\n" * 200)
    subprocess.run([sys.executable, "-m", "pyinstrument", "-r", "json", "-o", "out.json", "-m", "docutils", "doc.rst",
                    "/dev/null"], cwd=tmp_path, check=True, capture_output=True, timeout=240)
    trace = tracevis3d.load(tmp_path / "out.json", warn=False)
    assert trace.meta["format"] == "pyinstrument" and trace.meta["x_unit"] == "µs"
    assert any(n.startswith("Publisher.") for n in trace.function_names)
    assert any(p[:1] == ("docutils",) for p in trace.function_paths)


@pytest.mark.timeout(600)
def test_ghc_text_report(tmp_path):
    ghc = shutil.which("ghc")
    if ghc is None:
        pytest.skip("ghc is not installed")
    (tmp_path / "prog.hs").write_text(HASKELL_PROGRAM)
    r = subprocess.run([ghc, "-O1", "-prof", "-fprof-auto", "-rtsopts", "prog.hs", "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=500)
    if r.returncode != 0:
        pytest.skip(f"ghc cannot build a profiled program here (ghc-prof missing?): {r.stderr.strip()[-200:]}")
    subprocess.run(["./prog", "+RTS", "-P", "-RTS"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    for measure, unit in (("ticks", "ticks"), ("alloc", "bytes")):
        trace = tracevis3d.load(tmp_path / "prog.prof", warn=False, measure=measure)
        assert trace.meta["format"] == "ghc-prof" and trace.meta["x_unit"] == unit
        assert {"Main.fib", "Main.sumSquares"} <= set(trace.function_names)
    assert _self_by_name(trace)["Main.sumSquares"] > 0
