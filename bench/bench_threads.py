"""Thread view (issue 12) at SyncTrace's Firefox scale: analysis + layout + Blender build.

    PYTHONPATH=. .venv/bin/python bench/bench_threads.py [--sizes 1000000,14000000] [--threads 43] [--no-blender]

For each size: a synthetic trace with locks, queues, events and conditions
(`tracevis3d.synthetic(..., sync=True)`: every wait has a release of its object on another
thread inside it, ``meta["sync_pairs"]``), then

- ``sync``: `tracevis3d.synchronisation` (object attribution, sweep per object, outermost
  pairs, dur_w/r/o, pair totals); checked: every true pair is found;
- ``layout``: `threads_layout` at 1920x1080 (ring, clusters, curves, icicle wall);
- ``build``: `write_scene_spec` into Blender (the bpy module, headless);
- ``path``: `tracevis3d.critical_path` on that analysis (the hand-offs it reuses, the walk
  back from the end, the segments split at every innermost call: `analysis.critical_path`),
  beside ``sync`` (``path/sync``); goal at 10^6 calls and 8 threads: ≤ 2 s;
- ``sweep`` vs ``brute``: the correspondence kernel against the brute force (all wait ×
  release pairs of each object, a numba twin) on the same (call, object) lists, in the same
  run (the brute force only up to ``--brute-max`` waits x releases per object in all).
Peak memory (ru_maxrss) after each size.  Goals: 14M calls ≤ 30 s end to end, ≤ 16 GB;
1M ≤ 3 s (synthesis not counted: it stands for loading).
"""
from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time

import numpy as np
from numba import njit

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # bench scripts run from a checkout (not product code): `make bench` sets no PYTHONPATH


@njit(cache=True)
def brute_count(w_call, w_obj, r_call, r_obj, start, end, thread):
    """Eq. 6-7 by definition, pair by pair within each object: O(sum |W_o| |R_o|)."""
    n = 0
    a = 0
    nw, nr = w_call.shape[0], r_call.shape[0]
    k = 0
    while k < nw:
        o = w_obj[k]
        k2 = k
        while k2 < nw and w_obj[k2] == o:
            k2 += 1
        while a < nr and r_obj[a] < o:
            a += 1
        b = a
        while b < nr and r_obj[b] == o:
            b += 1
        for i in range(k, k2):
            w = w_call[i]
            for j in range(a, b):
                r = r_call[j]
                if thread[r] != thread[w] and start[w] <= start[r] <= end[w]:
                    n += 1
        k = k2
    return n


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def run(n: int, threads: int, blender: bool, brute_max: float) -> dict:
    import tracevis3d
    from tracevis3d.analysis.synchronisation import _pairs, attribute_objects
    from tracevis3d.kernels.correspondence import correspondences
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.layout.threads_params import ThreadsParams

    t = time.perf_counter()
    tr = tracevis3d.synthetic(n, threads=threads, seed=3, sync=True)
    row = {"calls": len(tr), "threads": tr.n_threads, "synth_s": time.perf_counter() - t}
    t = time.perf_counter()
    sync = tracevis3d.synchronisation(tr)
    row["sync_s"] = time.perf_counter() - t
    truth = np.asarray(tr.meta.get("sync_pairs", np.zeros((0, 2))), np.int64)
    found = set((sync.wait_call.astype(np.int64) * len(tr) + sync.release_call).tolist())
    row["true_pairs"] = len(truth)
    row["true_found"] = int(sum((int(a) * len(tr) + int(b)) in found for a, b in truth))
    row["corr"], row["handoffs"] = len(sync), int(sync.primary.sum())
    from tracevis3d.analysis.critical_path import critical_path

    t = time.perf_counter()
    cp = critical_path(tr, sync)
    row["path_s"] = time.perf_counter() - t
    row["path_segs"], row["path_hand"] = len(cp), int(cp.handoffs.size)
    del cp
    t = time.perf_counter()
    spec = threads_layout(tr, ThreadsParams(), sync)
    row["layout_s"] = time.perf_counter() - t
    row["sectors"] = sum(len(x) for x in spec.layers if type(x).__name__ == "SectorLayer")
    row["curves"] = spec.meta["n_curves"] + spec.meta["n_compound"]
    if blender:
        import bpy  # noqa: F401
        from tracevis3d.blender.writer import write_scene_spec

        t = time.perf_counter()
        write_scene_spec(spec)
        row["build_s"] = time.perf_counter() - t
    row["end_to_end_s"] = row["sync_s"] + row["layout_s"] + row.get("build_s", 0.0)
    # the sweep against the brute force on the same pair lists
    obj_ptr, obj_ids, _, _ = attribute_objects(tr)
    wc, wo = _pairs(tr, obj_ptr, obj_ids, 1)
    rc, ro = _pairs(tr, obj_ptr, obj_ids, 2)
    t = time.perf_counter()
    w, _, _, dropped = correspondences(wc, wo, rc, ro, tr.start, tr.end, tr.thread, 10 ** 9)
    row["sweep_s"] = time.perf_counter() - t
    work = float(sum(np.sum(wo == o) * np.sum(ro == o) for o in np.unique(wo))) if wo.size < 5e6 else np.inf
    row["brute_pairs"] = work
    if work <= brute_max:
        t = time.perf_counter()
        nb = brute_count(wc, wo, rc, ro, tr.start, tr.end, tr.thread)
        row["brute_s"] = time.perf_counter() - t
        assert nb == w.size, (nb, w.size)
    row["rss_gb"] = rss_gb()
    del spec, sync, tr
    return row


def sectors_vs_instances(n: int) -> dict:
    """Write n ring sectors as one generated mesh (`blender.rings`) and, for comparison, the
    same arcs as instanced boxes (one straight box per arc segment, the instancing route's
    lower bound: the instancer has no rotation, so this understates its cost); seconds of
    writing and of one 640x360 Workbench render each."""
    import bpy

    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.rings import write_mesh_layer_steps
    from tracevis3d.blender.writer import drain, ensure_collection, ensure_material, write_layer
    from tracevis3d.kernels.ring import sector_segments
    from tracevis3d.layout.spec import InstanceLayer, MaterialSpec, SectorLayer

    rng = np.random.default_rng(1)
    a0 = np.sort(rng.uniform(0, 2 * np.pi, n))
    a1 = a0 + rng.uniform(1e-4, 0.05, n)
    lvl = rng.integers(0, 12, n)
    f32 = np.float32
    lay = SectorLayer("bench_sectors", np.stack([a0, a1], 1).astype(f32), np.stack([10 + lvl, 10.88 + lvl], 1).astype(f32),
                      np.stack([np.zeros(n), rng.uniform(0.2, 1.3, n)], 1).astype(f32),
                      np.ones((n, 4), f32), np.zeros(n, np.int32), ["TV3D_bench"])
    ensure_material(MaterialSpec("TV3D_bench", (0.6, 0.3, 0.2, 1.0), kind="tube", cushion=False))
    coll = ensure_collection("TV3D_bench")
    out = {"sectors": n}
    t = time.perf_counter()
    ob = drain(write_mesh_layer_steps(lay, coll, "bench_mesh"))
    out["mesh_write_s"] = time.perf_counter() - t
    render_figure("/tmp/tv3d_bench_sectors.png", resolution=(640, 360))  # first render: draw caches
    t = time.perf_counter()
    render_figure("/tmp/tv3d_bench_sectors.png", resolution=(640, 360))
    out["mesh_render_s"] = time.perf_counter() - t
    bpy.data.objects.remove(ob)
    k = sector_segments(a0, a1, np.radians(2.0))
    seg = np.repeat(np.arange(n), k)
    j = np.arange(seg.size) - np.repeat(np.cumsum(k) - k, k)
    mid = a0[seg] + (a1[seg] - a0[seg]) * (j + 0.5) / k[seg]
    r = 10.44 + lvl[seg]
    pos = np.stack([r * np.cos(mid), r * np.sin(mid), 0.4 * np.ones(seg.size)], 1).astype(f32)
    size = np.stack([(a1[seg] - a0[seg]) / k[seg] * r, 0.88 * np.ones(seg.size), 0.8 * np.ones(seg.size)], 1)
    inst = InstanceLayer("bench_boxes", pos, size.astype(f32), np.ones((seg.size, 4), f32),
                         np.zeros(seg.size, np.int32), ["TV3D_bench"], {"call_index": seg.astype(np.int32)})
    t = time.perf_counter()
    ob = write_layer(inst, coll, "bench_boxes")
    out["instances"] = int(seg.size)
    out["instances_write_s"] = time.perf_counter() - t
    render_figure("/tmp/tv3d_bench_sectors.png", resolution=(640, 360))
    t = time.perf_counter()
    render_figure("/tmp/tv3d_bench_sectors.png", resolution=(640, 360))
    out["instances_render_s"] = time.perf_counter() - t
    bpy.data.objects.remove(ob)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,14000000")
    ap.add_argument("--threads", type=int, default=43)
    ap.add_argument("--no-blender", action="store_true")
    ap.add_argument("--brute-max", type=float, default=4e9, help="largest brute force (pairs tested) to run")
    ap.add_argument("--sectors", type=int, default=0, metavar="N",
                    help="only compare writing N sectors as one mesh vs instanced boxes (Blender)")
    args = ap.parse_args(argv)
    if args.sectors:
        sectors_vs_instances(1000)  # warm up
        print(sectors_vs_instances(args.sectors))
        return 0
    # warm the kernels on a small trace (compilation is not what we measure)
    run(20_000, 4, not args.no_blender, 1e9)
    cols = ("calls", "threads", "synth_s", "sync_s", "path_s", "layout_s", "build_s", "end_to_end_s", "corr",
            "handoffs", "path_segs", "path_hand", "true_pairs", "true_found", "sectors", "curves", "sweep_s", "brute_s",
            "rss_gb")
    print(" | ".join(f"{c:>12}" for c in cols + ("path/sync", "brute/sweep",)))
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n, args.threads, not args.no_blender, args.brute_max)
        ratio = r["brute_s"] / max(r["sweep_s"], 1e-9) if "brute_s" in r else float("nan")
        cells = [f"{r[c]:>12.2f}" if isinstance(r.get(c), float) else f"{r.get(c, '-'):>12}" for c in cols]
        print(" | ".join(cells + [f"{r['path_s'] / max(r['sync_s'], 1e-9):>12.2f}", f"{ratio:>12.1f}"]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
