"""Benchmark: the extruded icicle of a 1M-call trace inside Blender (bpy module, headless).

    .venv/bin/python bench/bench_icicle_blender.py [--calls 1000000] [--no-eevee] [--peer-calls N]
                                                   [--figure docs/icicle_1m.png]

Measures, in one run, on this machine:
- build_icicle (layout + writing point clouds, GN instancer, labels, camera) for the default
  scene (sub-pixel calls clustered at 1920x1080) and for the worst case with clustering
  off (one box per call);
- the peer: ``mesh.from_pydata`` of the SAME boxes (8 vertices, 6 quads each, lists built
  from the same numpy arrays, as a typical add-on does), timed the same way;
- process memory (RSS) per call after building and after evaluating the depsgraph;
- 1920x1080 renders: Workbench, EEVEE (first EEVEE render includes shader compilation);
- cold (empty numba cache) and warm import + first layout, in fresh subprocesses.
Prints one table; ratios are against the peer measured in the same run.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def log(msg: str) -> None:
    sys.stderr.write(f"[bench] {msg}\n")
    sys.stderr.flush()


def box_mesh_lists(positions: np.ndarray, scales: np.ndarray):
    """Vertices and faces of axis-aligned boxes as Python lists (the from_pydata input)."""
    s = np.array([[x, y, z] for x in (-.5, .5) for y in (-.5, .5) for z in (-.5, .5)], np.float32)
    v = (positions[:, None, :] + scales[:, None, :] * s[None]).reshape(-1, 3)
    q = np.array([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
    f = (np.arange(positions.shape[0])[:, None, None] * 8 + q[None]).reshape(-1, 4)
    return v.tolist(), f.tolist()


def peer_from_pydata(layers, name="peer"):
    import bpy

    t = time.perf_counter()
    pos = np.concatenate([lay.positions for lay in layers])
    sc = np.concatenate([lay.scales for lay in layers])
    verts, faces = box_mesh_lists(pos, sc)
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new(name, me)
    bpy.context.scene.collection.objects.link(ob)
    dt = time.perf_counter() - t
    del verts, faces
    bpy.data.objects.remove(ob)
    bpy.data.meshes.remove(me)
    return dt, pos.shape[0]


def evaluate():
    import bpy

    t = time.perf_counter()
    dg = bpy.context.evaluated_depsgraph_get()
    dg.update()
    n = sum(1 for i in dg.object_instances if i.is_instance)
    return time.perf_counter() - t, n


def cold_warm_import() -> tuple:
    code = ("import time; t=time.perf_counter(); import tracevis3d; "
            "from tracevis3d.layout import icicle_layout, IcicleParams; "
            "tr=tracevis3d.synthetic(2000, threads=2, seed=0); "
            "icicle_layout(tr, IcicleParams()); print(time.perf_counter()-t)")
    out = []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(2):  # first: empty cache (compile), second: cached
            env = dict(os.environ, NUMBA_CACHE_DIR=d, PYTHONPATH=str(REPO))
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
            out.append(float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else float("nan"))
    return tuple(out)


def run_case(case: str, n_calls: int, threads: int, eevee: bool, figure, peer_calls) -> dict:
    """One build in this (fresh) process; returns the figures as a dict."""
    import bpy

    import tracevis3d
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams, icicle_layout

    bpy.ops.wm.read_factory_settings(use_empty=True)
    t = time.perf_counter()
    tr = tracevis3d.synthetic(n_calls, threads=threads, seed=1)
    log(f"{case}: {tr} generated in {time.perf_counter() - t:.2f} s")
    icicle_layout(tracevis3d.synthetic(1000, threads=2, seed=0), IcicleParams())  # warm the kernels
    params = IcicleParams() if case == "default" else IcicleParams(cluster_px=0)
    res = {"case": case, "calls": len(tr)}
    rss0 = rss_mb()
    t = time.perf_counter()
    info = build_icicle(tr, params)
    res["build"] = time.perf_counter() - t
    res["rss_build_mb"] = rss_mb() - rss0
    res["eval"], res["instances"] = evaluate()
    res["rss_eval_mb"] = rss_mb() - rss0
    res["timings"] = info["timings"]
    m = info["meta"]
    res.update(boxes=m["n_boxes"], clusters=m["n_clusters"], merged=m["n_clustered_calls"],
               labels=len(info["objects"]["labels"]))
    log(f"{case}: build {res['build']:.2f} s, {m['n_boxes']} boxes + {m['n_clusters']} clusters, "
        f"timings {info['timings']}")
    out = pathlib.Path(figure) if figure else pathlib.Path(tempfile.gettempdir()) / f"tv3d_bench_{case}_wb.png"
    t = time.perf_counter()
    render_figure(out, engine="workbench", resolution=(1920, 1080))
    res["render_workbench"] = time.perf_counter() - t
    log(f"{case}: workbench {res['render_workbench']:.1f} s → {out}")
    if eevee:
        ee = pathlib.Path(tempfile.gettempdir()) / f"tv3d_bench_{case}_ee.png"
        t = time.perf_counter()
        render_figure(ee, engine="eevee", resolution=(1920, 1080), samples=16)
        res["render_eevee_first"] = time.perf_counter() - t
        t = time.perf_counter()
        render_figure(ee, engine="eevee", resolution=(1920, 1080), samples=16)
        res["render_eevee_again"] = time.perf_counter() - t
        log(f"{case}: eevee {res['render_eevee_first']:.1f} s / {res['render_eevee_again']:.1f} s → {ee}")
    # the peer: from_pydata of the same boxes, in the same process after clearing the scene
    spec = icicle_layout(tr, params)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    layers = [lay for lay in spec.layers if lay.name != "legend"]
    total = sum(len(lay) for lay in layers)
    if peer_calls and peer_calls < total:
        lay = layers[0]
        k = peer_calls
        layers = [type(lay)(lay.name, lay.positions[:k], lay.scales[:k], lay.colors[:k],
                            lay.material_index[:k], lay.materials)]
    log(f"{case}: peer from_pydata of {sum(len(x) for x in layers)} boxes ...")
    t_peer, nb = peer_from_pydata(layers)
    res["peer_boxes_measured"] = nb
    res["peer_boxes"] = total
    res["peer"] = t_peer * total / nb
    return res


def main(argv=None) -> int:
    import json

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--peer-calls", type=int, default=None,
                    help="boxes for the from_pydata peer (default: all; scaled linearly if fewer)")
    ap.add_argument("--no-eevee", action="store_true")
    ap.add_argument("--figure", default=None, help="also save the default Workbench 1920x1080 render here")
    ap.add_argument("--case", choices=["default", "flat"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:  # child process: one case, JSON on stdout
        r = run_case(args.case, args.calls, args.threads, not args.no_eevee,
                     args.figure if args.case == "default" else None, args.peer_calls)
        print("RESULT " + json.dumps(r))
        return 0

    results = {}
    for case in ("default", "flat"):  # fresh processes: memory figures are not polluted
        cmd = [sys.executable, __file__, "--case", case, "--calls", str(args.calls),
               "--threads", str(args.threads)]
        if args.no_eevee or case == "flat":
            cmd.append("--no-eevee")
        if args.peer_calls:
            cmd += ["--peer-calls", str(args.peer_calls)]
        if args.figure:
            cmd += ["--figure", str(pathlib.Path(args.figure).resolve())]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        sys.stderr.write("".join(ln + "\n" for ln in r.stderr.splitlines() if ln.startswith("[bench]")))
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
        if r.returncode != 0 or not line:
            sys.stderr.write(r.stderr[-3000:])
            return 1
        results[case] = json.loads(line[-1][7:])
    cold, warm = cold_warm_import()

    import bpy

    d, f = results["default"], results["flat"]
    n = d["calls"]
    rows = []  # (what, value, unit, peer, ratio, goal)

    def peer_label(r):
        s = f"{r['peer_boxes']} boxes"
        if r["peer_boxes_measured"] != r["peer_boxes"]:
            s += f", measured {r['peer_boxes_measured']} scaled"
        return s

    rows.append((f"build, default: {d['boxes']} boxes + {d['clusters']} clusters", d["build"], "s",
                 d["peer"], d["peer"] / d["build"], "<= 5 s"))
    rows.append((f"  ({d['merged']} sub-pixel calls merged, {d['labels']} labels)", None, "", None, None, ""))
    rows.append(("  of which layout (numpy/numba)", d["timings"]["layout"], "s", None, None, ""))
    w = d["build"] - d["timings"]["layout"]
    rows.append(("  writing into Blender only (build - layout)", w, "s", d["peer"], d["peer"] / w, ""))
    rows.append(("  depsgraph evaluation (instancing)", d["eval"], "s", None, None, ""))
    rows.append((f"  peer = from_pydata of the same {peer_label(d)}", d["peer"], "s", None, None, ""))
    rows.append(("build, clustering off: one box per call", f["build"], "s", f["peer"], f["peer"] / f["build"],
                 "<= 5 s, >= 10x"))
    rows.append(("  of which layout (numpy/numba)", f["timings"]["layout"], "s", None, None, ""))
    w = f["build"] - f["timings"]["layout"]
    rows.append(("  writing into Blender only (build - layout)", w, "s", f["peer"], f["peer"] / w, ""))
    rows.append(("  depsgraph evaluation (instancing)", f["eval"], "s", None, None, ""))
    rows.append((f"  peer = from_pydata of the same {peer_label(f)}", f["peer"], "s", None, None, ""))
    for r, nm in ((d, "default"), (f, "clustering off")):
        rows.append((f"memory (RSS) per call after build, {nm}", r["rss_build_mb"] * 2**20 / n, "B", None, None, ""))
        rows.append((f"memory (RSS) per call after evaluation, {nm}", r["rss_eval_mb"] * 2**20 / n, "B",
                     None, None, ""))
    rows.append(("render 1920x1080 Workbench, default scene", d["render_workbench"], "s", None, None, ""))
    if "render_eevee_first" in d:
        rows.append(("render 1920x1080 EEVEE 16 spp, default (incl. shader compile)", d["render_eevee_first"], "s",
                     None, None, ""))
        rows.append(("render 1920x1080 EEVEE 16 spp, default (shaders compiled)", d["render_eevee_again"], "s",
                     None, None, ""))
    rows.append(("render 1920x1080 Workbench, clustering off", f["render_workbench"], "s", None, None, ""))
    rows.append(("core import + first layout, numba compile (cold cache)", cold, "s", None, None, ""))
    rows.append(("core import + first layout, numba cache warm", warm, "s", None, None, ""))

    print(f"\nTraceVis3D icicle benchmark: {n} calls, {args.threads} threads, Blender {bpy.app.version_string}, "
          f"{os.cpu_count()} CPU(s), shared machine")
    print(f"{'figure':66s} {'value':>10s}  {'peer':>10s} {'ratio':>8s}  goal")
    print("-" * 110)
    for what, v, unit, peer, ratio, goal in rows:
        if v is None:
            print(what)
            continue
        val = f"{v:.3f} {unit}" if unit == "s" else f"{v:.0f} {unit}"
        ps = f"{peer:.3f} s" if peer is not None else ""
        rs = f"{ratio:.1f}x" if ratio is not None else ""
        print(f"{what:66s} {val:>10s}  {ps:>10s} {rs:>8s}  {goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
