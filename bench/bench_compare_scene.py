"""The comparison scene end to end: compare + layout + Blender build, tubes drawn, memory, and
tube building against a naive peer (one bevelled Blender curve per match) in the same run.

    .venv/bin/python bench/bench_compare_scene.py [--sizes 150000,1000000] [--peer-tubes 10000]
                                                  [--render] [--figure docs/compare_hta.jpg]

Workloads (warm: each is measured after one untimed run on a small pair compiles the kernels):
the paper's case (150k calls each, 1.5k functions; TraceDiff Sec. V) and 1M-call pairs, both
``synthetic(n)`` against ``perturb(…, speed=…)`` (a second run that took longer); the real
HTA pair from ../shared/realdata when present.  Prints one table.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # bench scripts run from a checkout (not product code)


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def end_to_end(a, b, params=None, render=None):
    """(seconds per step, scene meta) of compare → layout → Blender build (→ render)."""
    import bpy

    import tracevis3d
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_compare
    from tracevis3d.layout.compare import CompareParams, compare_layout

    params = params or CompareParams()
    t = {}
    t0 = time.perf_counter()
    cmp = tracevis3d.compare(a, b, tau=0.2)
    t["compare"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    spec = compare_layout(cmp, params)
    t["layout"] = time.perf_counter() - t0
    bpy.ops.wm.read_factory_settings(use_empty=True)
    t0 = time.perf_counter()
    info = build_compare(cmp, params)
    t["build"] = time.perf_counter() - t0 - info["timings"].get("layout", 0.0)
    t["end_to_end"] = t["compare"] + t["layout"] + t["build"]
    if render:
        for engine in ("workbench", "eevee"):
            t0 = time.perf_counter()
            render_figure(render.with_suffix(f".{engine}.png"), engine=engine, resolution=params.resolution,
                          samples=16 if engine == "eevee" else None)
            t[f"render_{engine}"] = time.perf_counter() - t0
    return t, spec.meta, cmp


def naive_tubes(curves, half_x):
    """The peer: one Blender curve object per tube, a poly spline through its samples with a
    bevel as wide as its mean half-width (what a script without array writes would do)."""
    import bpy

    coll = bpy.data.collections.new("naive")
    bpy.context.scene.collection.children.link(coll)
    for k in range(curves.shape[0]):  # the peer's way: one object per tube, one point at a time
        cu = bpy.data.curves.new(f"t{k}", "CURVE")
        cu.dimensions = "3D"
        sp = cu.splines.new("POLY")
        sp.points.add(curves.shape[1] - 1)
        for i, p in enumerate(curves[k]):
            sp.points[i].co = (float(p[0]), float(p[1]), float(p[2]), 1.0)
        cu.bevel_depth = float(half_x[k].mean())
        cu.bevel_resolution = 2
        ob = bpy.data.objects.new(f"t{k}", cu)
        coll.objects.link(ob)
    bpy.context.view_layer.update()
    return coll


def tube_build_vs_peer(layer):
    """(ours s, peer s) to put the tubes of a real comparison layout into the scene, geometry
    evaluated: ours (`write_tube_steps`: one mesh, sides by pixel width) against one bevelled
    curve per tube through the same samples, as wide as the tube's mean half-width."""
    import bpy

    from tracevis3d.blender.tubes import write_tube_steps
    from tracevis3d.blender.writer import drain, ensure_material
    from tracevis3d.layout.spec import MaterialSpec, TubeLayer

    bpy.ops.wm.read_factory_settings(use_empty=True)
    ensure_material(MaterialSpec("TV3D_tube", (0.6, 0.6, 0.6, 1.0), kind="tube", from_attribute=False))
    layer = TubeLayer(layer.name, layer.centres, layer.half_x, layer.half_y, layer.colors,
                      layer.material_index * 0, ["TV3D_tube"], layer.attributes, sides=layer.sides,
                      face_colors=False, ring_tolerance=layer.ring_tolerance).validate()
    coll = bpy.data.collections.new("ours")
    bpy.context.scene.collection.children.link(coll)
    t0 = time.perf_counter()
    drain(write_tube_steps(layer, coll, "TV3D_tubes"))
    bpy.context.view_layer.update()
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive_tubes(layer.centres, layer.half_x)
    peer = time.perf_counter() - t0
    return ours, peer


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="150000,1000000", help="calls per trace of the synthetic pairs")
    ap.add_argument("--peer-tubes", type=int, default=10000)
    ap.add_argument("--render", action="store_true", help="also render each scene (Workbench and EEVEE)")
    ap.add_argument("--out", default=str(REPO / "build" / "compare_scene"))
    a = ap.parse_args(argv)
    import tracevis3d

    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    small = tracevis3d.synthetic(3000, seed=1)
    end_to_end(small, tracevis3d.perturb(small, seed=2))  # compile / warm everything once
    realdata = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))
    hta = realdata / "hta-trace-diff"
    if hta.is_dir():  # first: the peak memory column is the process's peak so far
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x, y = tracevis3d.load(hta / "control.json.gz"), tracevis3d.load(hta / "test.json.gz")
        t, meta, _ = end_to_end(x, y, render=out / "hta" if a.render else None)
        rows.append(("HTA control vs test (PyTorch)", t, meta, _rss_mb()))
    peer_layer = None
    for n in sorted(int(x) for x in a.sizes.split(",")):
        x = tracevis3d.synthetic(n, seed=1, n_functions=1500 if n <= 200_000 else None)
        y = tracevis3d.perturb(x, seed=2, speed=1.5)
        t, meta, cmp = end_to_end(x, y, render=out / f"synthetic_{n}" if a.render else None)
        rows.append((f"synthetic {n:,} vs perturbed", t, meta, _rss_mb()))
        if peer_layer is None:
            from tracevis3d.layout.compare import CompareParams, compare_layout

            peer_layer = compare_layout(cmp, CompareParams(max_tubes=a.peer_tubes)).layer("tubes")
        del cmp
    print("| workload | compare s | layout s | Blender build s | end to end s | tubes | matches in view | "
          "peak RSS MB | render Workbench s | render EEVEE s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, t, meta, rss in rows:
        print(f"| {name} | {t['compare']:.2f} | {t['layout']:.2f} | {t['build']:.2f} | {t['end_to_end']:.2f} | "
              f"{meta.get('n_tubes', 0):,} | {meta.get('n_pairs_shown', 0):,} | {rss:.0f} | "
              f"{t.get('render_workbench', float('nan')):.1f} | {t.get('render_eevee', float('nan')):.1f} |")
    ours, peer = tube_build_vs_peer(peer_layer)
    print()
    print("| tubes (of the first synthetic pair's layout) | ours: one mesh, foreach_set (s) | "
          "peer: one bevelled curve per tube (s) | peer ÷ ours |")
    print("|---|---|---|---|")
    print(f"| {len(peer_layer):,} | {ours:.2f} | {peer:.2f} | {peer / ours:.0f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
