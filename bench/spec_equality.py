"""The figures of this tree against a git revision's: every SceneSpec array equal (issue 79's rule).

    .venv/bin/python bench/spec_equality.py [--base REV] [--cases real,synth1e6,native1e7]
                                            [--views icicle,threads,compare] [--native PATH]
    .venv/bin/python bench/spec_equality.py --caches build/numba-cache,build/bench-cache   # two CPUs' kernels

The revision is extracted once into ``build/spec-base-REV`` (its own numba cache beside it,
kept for the next run); with ``--files``, the peer is this tree with those files as they are
at the revision (``build/spec-base-files``): the change to them alone, while others edit the
rest of the tree.  Each tree runs the cases in a process of its own (PYTHONPATH = that
tree) and writes every array of each figure's `SceneSpec` (its layers' fields and attributes,
its labels, its legend, camera and meta) into an .npz; then the two are compared name by name,
exactly (dtype, shape and bytes; meta and the other values by their repr).  Cases:

- ``real``: every trace under ../shared/realdata and tests/data/formats that loads, each as an
  icicle (``icicle``), a thread view (``threads``), and (``compare``) the comparison of the
  HTA pair and of each of a few recordings with its `tracevis3d.perturb` copy;
- ``synth1e6``: `tracevis3d.synthetic` (10^6 calls, 4 threads): icicle, thread view, and its
  comparison with its perturbed copy (``compare``);
- ``native1e7``: the icicle of a 10^7-call native file opened mapped (``--native``, default
  bench_scale's ``build/scale/synthetic_10000000.tv3d.npz``; the whole-trace overview's path).

Prints one line per differing figure (the first names that differ) and a summary; exit 1 when
any differ.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
REALDATA = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))
FORMATS = REPO / "tests" / "data" / "formats"
COMPARE_REAL = ("viztracer-examples/different_sorts.json", "viztracer-examples/multi_process_pool.json",
                "catapult/big_trace.json")
NATIVE_1E7 = REPO / "build" / "scale" / "synthetic_10000000.tv3d.npz"
SKIP_SUFFIXES = (".py", ".js", ".go", ".c", ".html", ".md", ".toml")


def real_traces() -> list:
    out = []
    for root in (REALDATA, FORMATS):
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.name.startswith(("LICENSE", "README", "manifest")) and \
                    not p.name.endswith(SKIP_SUFFIXES):
                out.append(p)
    return out


def spec_arrays(spec) -> dict:
    """Every array of ``spec`` by name, and the repr of every other value (under ``repr:``)."""
    out = {}

    def put(name, v):
        if isinstance(v, np.ndarray):
            out[name] = v
        else:
            out["repr:" + name] = np.array(repr(v))

    for k, layer in enumerate(spec.layers):
        for f in dataclasses.fields(layer):
            v = getattr(layer, f.name)
            if isinstance(v, dict):
                for key, a in v.items():
                    put(f"layer{k}.{layer.name}.{f.name}.{key}", a)
            else:
                put(f"layer{k}.{getattr(layer, 'name', '')}.{f.name}", v)
    for f in dataclasses.fields(spec.labels):
        put("labels." + f.name, getattr(spec.labels, f.name))
    for name in ("legend", "materials", "camera", "lights", "resolution", "background"):
        put(name, getattr(spec, name, None))
    put("meta", sorted(spec.meta.items()))
    return out


def child(tree: str, cases: list, views: list, out: str, native: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    sys.path.insert(0, tree)
    import tracevis3d
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams

    assert pathlib.Path(tracevis3d.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve())
    outdir = pathlib.Path(out)

    def save(name, make):
        try:
            arrays = spec_arrays(make())
        except Exception as e:  # noqa: BLE001  (a trace a view refuses: the refusal is compared)
            arrays = {"repr:error": np.array(f"{type(e).__name__}: {e}")}
        np.savez(outdir / (name.replace("/", "__") + ".npz"), **arrays)

    def threads(tr):
        from tracevis3d.layout.threads import threads_layout

        return threads_layout(tr)

    def compare(a, b):
        from tracevis3d.layout.compare import compare_layout

        return compare_layout(tracevis3d.compare(a, b))

    if "real" in cases:
        for p in real_traces():
            try:
                tr = tracevis3d.load(p)
            except Exception:  # noqa: BLE001  (the hostile and unsupported files)
                continue
            rel = str(p.relative_to(REALDATA if p.is_relative_to(REALDATA) else FORMATS))
            if "icicle" in views:
                save(f"real.{rel}.icicle", lambda: icicle_layout(tr, IcicleParams()))
            if "threads" in views:
                save(f"real.{rel}.threads", lambda: threads(tr))
            if "compare" in views and rel in COMPARE_REAL:
                save(f"real.{rel}.compare", lambda: compare(tr, tracevis3d.perturb(tr, seed=2)))
        if "compare" in views:
            d = REALDATA / "hta-trace-diff"
            save("real.hta.compare", lambda: compare(tracevis3d.load(d / "control.json.gz"),
                                                     tracevis3d.load(d / "test.json.gz")))
    if "synth1e6" in cases:
        tr = tracevis3d.synthetic(1_000_000, threads=4, seed=1)
        if "icicle" in views:
            save("synth1e6.icicle", lambda: icicle_layout(tr, IcicleParams()))
        if "threads" in views:
            save("synth1e6.threads", lambda: threads(tr))
        if "compare" in views:
            save("synth1e6.compare", lambda: compare(tr, tracevis3d.perturb(tr, seed=2)))
    if "native1e7" in cases:
        tr = tracevis3d.load(native)
        save("native1e7.icicle", lambda: icicle_layout(tr, IcicleParams()))


def extract(rev: str) -> pathlib.Path:
    """The tree of ``rev`` (its tracevis3d package), extracted once under build/."""
    root = REPO / "build" / f"spec-base-{rev}"
    if not (root / "tracevis3d").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", rev, "tracevis3d"], cwd=REPO, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root


def this_tree_but(rev: str, files: list) -> pathlib.Path:
    """This tree's tracevis3d package with ``files`` (paths from the repository's root) as
    they are at ``rev`` (absent there: removed): the code before a change to those files
    alone, whatever else others change in the tree meanwhile.  Made in build/spec-base-files
    (modification times kept: numba recompiles only what changed since the last run)."""
    import shutil

    root = REPO / "build" / "spec-base-files"
    root.mkdir(parents=True, exist_ok=True)
    _mirror(REPO / "tracevis3d", root / "tracevis3d")
    for f in files:
        target = root / f
        old = subprocess.run(["git", "show", f"{rev}:{f}"], cwd=REPO, capture_output=True)
        if old.returncode != 0:
            target.unlink(missing_ok=True)
            continue
        if not target.exists() or target.read_bytes() != old.stdout:
            target.write_bytes(old.stdout)
    shutil.rmtree(root / "tracevis3d" / "_kernel_cache", ignore_errors=True)
    return root


def _mirror(src: pathlib.Path, dst: pathlib.Path) -> None:
    """``dst`` made a copy of ``src`` (files copied with their modification times where they
    differ in size or time; files ``src`` lacks removed; no __pycache__)."""
    import shutil

    want = set()
    for p in src.rglob("*"):
        if "__pycache__" in p.parts or not p.is_file():
            continue
        rel = p.relative_to(src)
        want.add(rel)
        q = dst / rel
        st = p.stat()
        if not q.exists() or q.stat().st_size != st.st_size or q.stat().st_mtime != st.st_mtime:
            q.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, q)
    for q in list(dst.rglob("*")) if dst.exists() else []:
        if q.is_file() and "__pycache__" not in q.parts and q.relative_to(dst) not in want:
            q.unlink()


def run_tree(tree: pathlib.Path, cache: pathlib.Path, args, out: pathlib.Path) -> None:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(tree))
    r = subprocess.run([sys.executable, __file__, "--child", str(tree), args.cases, args.views, str(out),
                        args.native], env=env, cwd=tree, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{tree}: failed\n{r.stderr[-3000:]}")


def differences(a: dict, b: dict) -> list:
    names = sorted(set(a) | set(b))
    bad = []
    for k in names:
        if k not in a or k not in b:
            bad.append(k)
            continue
        x, y = a[k], b[k]
        if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            bad.append(k)
    return bad


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tree, cases, views, out, native = sys.argv[2:7]
        child(tree, cases.split(","), views.split(","), out, native)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD", help="the git revision to compare with (default HEAD)")
    ap.add_argument("--cases", default="real,synth1e6,native1e7")
    ap.add_argument("--views", default="icicle,threads,compare")
    ap.add_argument("--native", default=str(NATIVE_1E7))
    ap.add_argument("--files", default="",
                    help="compare with this tree whose FILES (comma-separated, from the repository's root) are "
                         "those of --base: the change to those files alone (default: the whole package of --base)")
    ap.add_argument("--caches", default="",
                    help="instead of a revision: this tree twice, with these two numba caches (comma-separated; "
                         "kernels compiled for two CPUs: tools/kernel_caches.py --seed DIR --cpu generic / best)")
    args = ap.parse_args()
    if args.caches:
        first, second = (pathlib.Path(c).resolve() for c in args.caches.split(","))
        runs = ((REPO, first, "this"), (REPO, second, "base"))
        rev = f"this tree with {second}"
    else:
        rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=REPO, check=True, capture_output=True,
                             text=True).stdout.strip()
        files = [f for f in args.files.split(",") if f]
        base = this_tree_but(rev, files) if files else extract(rev)
        runs = ((REPO, REPO / "build" / "numba-cache", "this"), (base, base / "numba-cache", "base"))
    with tempfile.TemporaryDirectory(prefix="tv3d-spec-eq-") as tmp:
        outs = []
        for tree, cache, side in runs:
            out = pathlib.Path(tmp) / side
            out.mkdir()
            run_tree(tree, cache, args, out)
            outs.append(out)
        names = sorted(p.name for p in outs[0].glob("*.npz"))
        base_names = sorted(p.name for p in outs[1].glob("*.npz"))
        n_bad = 0
        for name in sorted(set(names) | set(base_names)):
            if name not in names or name not in base_names:
                print(f"DIFFERS {name}: only in {'this tree' if name in names else rev}")
                n_bad += 1
                continue
            with np.load(outs[0] / name) as a, np.load(outs[1] / name) as b:
                bad = differences(dict(a), dict(b))
            if bad:
                n_bad += 1
                print(f"DIFFERS {name}: {', '.join(bad[:6])}{' ...' if len(bad) > 6 else ''}")
        print(f"{len(names) - n_bad} of {len(set(names) | set(base_names))} figures equal to {rev}, array for array "
              f"(cases {args.cases}; views {args.views})")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
