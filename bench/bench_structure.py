"""The Compact Trace Format and the cone tree (issue 14), one table, peers measured in the same run.

    .venv/bin/python bench/bench_structure.py [--sizes 1000000,10000000] [--chrome-max 1000000]
                                              [--cone 1000000] [--no-blender]

Per trace (real traces from ../shared/realdata, and ``tracevis3d.synthetic(n, threads=4)``):
- DAG: distinct subtrees and the sharing ratio (calls per DAG node);
- conversion to the compact file (structure + save): seconds and calls/s, against SEAT's
  reported 2.4M calls in 14 s (2005: 0.17M calls/s);
- sizes: compact file, native file, gzip -6 of the native file, gzip -6 of the Chrome JSON
  (the real file's own bytes; for synthetic traces written by `io.chrome_writer`, up to
  ``--chrome-max`` calls: a 10M-event JSON is > 1 GB), with gzip's own time;
- load of the compact file against the native file (both validated).
Then the cone tree of a ``--cone``-call synthetic trace: calling-context tree, layout, and the
Blender build of its scene (real bpy), against the goal of 3 s.
"""
from __future__ import annotations

import argparse
import gzip
import pathlib
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
REAL = ["viztracer-examples/different_sorts.json", "viztracer-examples/multi_process_pool.json",
        "catapult/flow.json", "hta-trace-diff/control.json.gz"]


def _t(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def measure(name, trace, chrome_bytes, tmp: pathlib.Path) -> dict:
    import tracevis3d
    from tracevis3d.analysis.structure import structure_of
    from tracevis3d.io.compact import save_compact

    n = len(trace)
    st, t_struct = _t(structure_of, trace)
    cpath, npath = tmp / "t.tv3c", tmp / "t.tv3d.npz"
    _, t_save = _t(save_compact, trace, cpath, st)
    tracevis3d.save(trace, npath)
    native = npath.read_bytes()
    gz_native, t_gz = _t(gzip.compress, native, 6)
    row = dict(name=name, calls=n, nodes=st.n_distinct_subtrees, sharing=st.sharing_ratio,
               t_convert=t_struct + t_save, rate=n / max(t_struct + t_save, 1e-9),
               compact=cpath.stat().st_size, native=len(native), gz_native=len(gz_native), t_gz=t_gz,
               gz_chrome=None)
    del native, gz_native
    if chrome_bytes is not None:
        row["gz_chrome"] = len(chrome_bytes) if chrome_bytes[:2] == b"\x1f\x8b" else len(gzip.compress(chrome_bytes, 6))
    _, row["t_load_compact"] = _t(tracevis3d.load, cpath)
    _, row["t_load_native"] = _t(tracevis3d.load, npath)
    return row


def cone_bench(n: int, blender: bool) -> dict:
    import tracevis3d
    from tracevis3d.analysis.context import calling_context_tree
    from tracevis3d.layout.cone import ConeParams, cone_layout

    t = tracevis3d.synthetic(n, threads=4, seed=2)
    cone_layout(tracevis3d.synthetic(20_000, threads=2, seed=1), ConeParams())  # compile, warm
    _, t_cct = _t(calling_context_tree, t, None, True)
    spec, t_layout = _t(cone_layout, t, ConeParams())
    out = dict(calls=n, contexts=spec.meta["n_contexts"], nodes=spec.meta["n_nodes"], t_cct=t_cct,
               t_layout=t_layout, t_build=None)
    if blender:
        import bpy

        from tracevis3d.blender.writer import write_scene_spec

        bpy.ops.wm.read_factory_settings(use_empty=True)
        _, out["t_build"] = _t(write_scene_spec, spec)
    return out


def _mb(b):
    return "-" if b is None else f"{b / 1e6:.2f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--chrome-max", type=int, default=1_000_000)
    ap.add_argument("--cone", type=int, default=1_000_000)
    ap.add_argument("--no-blender", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    import warnings

    import tracevis3d
    from tracevis3d.io.chrome_writer import chrome_json_bytes

    warnings.simplefilter("ignore")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-bench-structure-"))
    real = REPO.parent / "shared" / "realdata"
    rows = []
    small = tracevis3d.synthetic(5000, seed=9)
    measure("warm-up", small, None, tmp)  # compile the kernels outside the timings
    for rel in REAL:
        p = real / rel
        if p.is_file():
            rows.append(measure(rel.split("/")[-1], tracevis3d.load(p), p.read_bytes(), tmp))
    for n in (int(x) for x in args.sizes.split(",") if x.strip()):
        t = tracevis3d.synthetic(n, threads=4, seed=1)
        chrome = chrome_json_bytes(t) if n <= args.chrome_max else None
        rows.append(measure(f"synthetic {n / 1e6:g}M", t, chrome, tmp))
        del t, chrome
    print(f"{'trace':26s} {'calls':>10s} {'DAG nodes':>10s} {'sharing':>8s} {'convert s':>9s} {'Mcalls/s':>8s} "
          f"{'vs SEAT':>7s} {'compact MB':>10s} {'native MB':>9s} {'gz native':>9s} {'gz chrome':>9s} "
          f"{'cmp/gzn':>7s} {'gzip s':>7s} {'load cmp s':>10s} {'load nat s':>10s}")
    seat = 2.4e6 / 14.0
    for r in rows:
        print(f"{r['name']:26s} {r['calls']:>10,} {r['nodes']:>10,} {r['sharing']:>8.1f} {r['t_convert']:>9.3f} "
              f"{r['rate'] / 1e6:>8.2f} {r['rate'] / seat:>6.1f}x {_mb(r['compact']):>10s} {_mb(r['native']):>9s} "
              f"{_mb(r['gz_native']):>9s} {_mb(r['gz_chrome']):>9s} {r['compact'] / r['gz_native']:>7.2f} "
              f"{r['t_gz']:>7.2f} {r['t_load_compact']:>10.3f} {r['t_load_native']:>10.3f}")
    if args.cone:
        c = cone_bench(args.cone, not args.no_blender)
        total = c["t_layout"] + (c["t_build"] or 0.0)
        print(f"\ncone tree of {c['calls']:,} calls: {c['contexts']:,} calling contexts, {c['nodes']} drawn; "
              f"CCT alone {c['t_cct']:.2f} s, layout (filters + CCT + prune + footprints + geometry + labels) "
              f"{c['t_layout']:.2f} s, Blender build "
              f"{'-' if c['t_build'] is None else format(c['t_build'], '.2f')} s; total {total:.2f} s "
              f"(goal 3 s: {'met' if total <= 3.0 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
