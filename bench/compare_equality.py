"""Equality check of `tracevis3d.compare` between two source trees (issue 26's exactness rule).

    git archive <base> tracevis3d | tar -x -C /tmp/base-compare
    .venv/bin/python bench/compare_equality.py --base /tmp/base-compare [--cases synth1e5,hta,...]
    .venv/bin/python bench/compare_equality.py --base . --old-cache build/numba-cache \
        --new-cache build/bench-cache          # generic kernels against this CPU's level

Every case runs once per tree, each in its own process (PYTHONPATH = that tree, its own numba
cache), and writes every array of the `Comparison` (and its scalar counts) to an .npz; then
the two are compared name by name:
- exactly (dtype, shape and bytes): classes, kept class pairs, kept call pairs, groups, tiers'
  results (``pairs``), partner counts, ``n_pairs_total``, ``class_pair_count``, repetitions,
  overview edges;
- the overview bars and deltas (``overview_a``/``_b``, ``overview_delta_a``/``_b``): the largest
  relative difference |new − old| / max(|old|, 1e-300) over the nonzero bars, and the zero bars
  must stay exactly zero; passes at ≤ 1e-6.
Cases (``--cases``, comma-separated): ``synth1e5`` / ``synth1e6`` (``tracevis3d.synthetic(n,
threads=4)`` against ``tracevis3d.perturb(a, seed=2)``), ``hta`` (the PyTorch pair under
../shared/realdata/hta-trace-diff), ``json`` / ``docutils`` (the tests' recorded A/B pairs,
recorded once into --rec with tests/support/realtraces.py when viztracer and docutils are there); each
with compare's defaults, and with ``keep_class_pairs=False`` (the streamed path) where the
defaults keep the class pairs.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
REALDATA = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))
INEXACT = ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b")
SKIP = ("a", "b", "functions", "params")


def load_case(tracevis3d, case: str, rec: pathlib.Path):
    if case.startswith("synth"):
        n = int(float(case[5:]))
        a = tracevis3d.synthetic(n, threads=4)
        return a, tracevis3d.perturb(a, seed=2)
    if case == "hta":
        d = REALDATA / "hta-trace-diff"
        return tracevis3d.load(d / "control.json.gz"), tracevis3d.load(d / "test.json.gz")
    paths = json.loads((rec / f"{case}.json").read_text())
    return tracevis3d.load(paths[0]), tracevis3d.load(paths[1])


def child(tree: str, case: str, options: dict, out: str, rec: str) -> None:
    import warnings

    warnings.simplefilter("ignore")          # the importers' repair notes
    sys.path.insert(0, tree)
    import tracevis3d

    assert pathlib.Path(tracevis3d.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve())
    a, b = load_case(tracevis3d, case, pathlib.Path(rec))
    c = tracevis3d.compare(a, b, **options)
    arrays = {}
    for name, v in vars(c).items():
        if name in SKIP or name.startswith("_"):
            continue
        if isinstance(v, np.ndarray):
            arrays[name] = v
        elif isinstance(v, (int, float, np.integer, np.floating)):
            arrays[name] = np.asarray(v)
    if c.class_pairs_kept:
        arrays["class_pairs"] = c.class_pairs
    np.savez(out, **arrays)


def record(rec: pathlib.Path) -> None:
    """The tests' recorded A/B pairs (json.tool, the docutils pool), once."""
    sys.path.insert(0, str(REPO / "tests" / "support"))
    import realtraces

    rec.mkdir(parents=True, exist_ok=True)
    if not (rec / "json.json").exists() and realtraces.viztracer_missing() is None:
        (rec / "json").mkdir(exist_ok=True)
        paths = realtraces.record_json_pair(rec / "json")
        (rec / "json.json").write_text(json.dumps([str(p) for p in paths]))
    if not (rec / "docutils.json").exists() and realtraces.docutils_missing() is None:
        (rec / "docutils").mkdir(exist_ok=True)
        paths = realtraces.record_docutils_pool(rec / "docutils")
        (rec / "docutils.json").write_text(json.dumps([str(p) for p in paths]))


def run_tree(tree: pathlib.Path, cache: str, case: str, options: dict, out: pathlib.Path, rec: pathlib.Path):
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=cache)
    cmd = [sys.executable, __file__, "--child", str(tree), "--case", case, "--options", json.dumps(options),
           "--out", str(out), "--rec", str(rec)]
    subprocess.run(cmd, env=env, check=True, cwd=tempfile.gettempdir())


def compare_files(old: pathlib.Path, new: pathlib.Path) -> tuple:
    """(names compared, failures, worst relative overview difference)."""
    x, y = np.load(old, allow_pickle=False), np.load(new, allow_pickle=False)
    fails = []
    if set(x.files) != set(y.files):
        fails.append(f"arrays differ: only old {sorted(set(x.files) - set(y.files))}, "
                     f"only new {sorted(set(y.files) - set(x.files))}")
    worst = 0.0
    for name in sorted(set(x.files) & set(y.files)):
        u, v = x[name], y[name]
        if u.dtype != v.dtype or u.shape != v.shape:
            fails.append(f"{name}: {u.dtype}{u.shape} vs {v.dtype}{v.shape}")
        elif name in INEXACT:
            if not np.array_equal(u == 0, v == 0):
                fails.append(f"{name}: zero bars differ")
            nz = u != 0
            if nz.any():
                rel = float(np.max(np.abs(v[nz] - u[nz]) / np.abs(u[nz])))
                worst = max(worst, rel)
                if rel > 1e-6:
                    fails.append(f"{name}: relative difference {rel:.3g}")
        elif u.tobytes() != v.tobytes():
            fails.append(f"{name}: not equal")
    return sorted(set(x.files) & set(y.files)), fails, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="the old tree (a folder holding tracevis3d/)")
    ap.add_argument("--new", default=str(REPO), help="the new tree (default: this checkout)")
    ap.add_argument("--cases", default="synth1e5,hta,json,docutils,synth1e6")
    ap.add_argument("--rec", default="/tmp/compare-equality-rec", help="where the recorded pairs are kept")
    ap.add_argument("--work", default="/tmp/compare-equality", help="where the .npz files go")
    ap.add_argument("--old-cache", default=None,
                    help="the old tree's numba cache (default: a fresh one under --work); with --base = --new, "
                         "two caches of one tree: kernels compiled for two CPUs (tools/kernel_caches.py --seed "
                         "DIR --cpu generic / best) give the same results")
    ap.add_argument("--new-cache", default=None, help="the new tree's numba cache (default: a fresh one under --work)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--case", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.case, json.loads(args.options), args.out, args.rec)
        return
    rec, work = pathlib.Path(args.rec), pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    record(rec)
    ok = True
    for case in args.cases.split(","):
        if case in ("json", "docutils") and not (rec / f"{case}.json").exists():
            print(f"{case}: not recorded here (viztracer or docutils missing): skipped")
            continue
        for options in ({}, {"keep_class_pairs": False}):
            tag = case + ("" if not options else "-not-kept")
            files = []
            for side, tree in (("old", args.base), ("new", args.new)):
                out = work / f"{tag}-{side}.npz"
                cache = (args.old_cache if side == "old" else args.new_cache) or str(work / f"numba-{side}")
                run_tree(pathlib.Path(tree), cache, case, options, out, rec)
                files.append(out)
            names, fails, worst = compare_files(*files)
            ok &= not fails
            kept = "class_pairs" in names
            print(f"{tag}: {len(names)} arrays compared ({'class pairs kept' if kept else 'class pairs not kept'}), "
                  f"overview worst relative difference {worst:.2e}: " + ("EQUAL" if not fails else "; ".join(fails)),
                  flush=True)
            if not kept and not options:
                break        # the defaults streamed already: the second run would be the same
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
