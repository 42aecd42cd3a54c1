"""Benchmark: animations of a 1M-call trace inside Blender (bpy module, headless; issue 23).

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_animation.py \
        [--calls 1000000] [--threads 4] [--eevee-res 960x540] [--no-eevee]

For the default scene (sub-pixel calls clustered at 1920x1080) and for the worst case
(clustering off: one box per call), on this machine:
- the still scene's build (`build_icicle`: layout + Blender data) and the set-up of a
  10 s, 30 fps growth / fly-through / turntable on it (`animate_scene`), and their ratio;
- a frame change (``scene.frame_set``, the depsgraph evaluated, no render), mean and max
  over 12 frames spread over the animation, growth (the Geometry Nodes work per frame);
- one 1920x1080 Workbench frame of the growth (mid-animation), and one EEVEE frame (of
  the default scene only, at ``--eevee-res``: 45-62 s a frame at 1920x1080 on a 2-core
  CPU; the first EEVEE frame includes the shader compile).
Prints one table.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def log(msg: str) -> None:
    sys.stderr.write(f"[bench] {msg}\n")
    sys.stderr.flush()


def frame_change_ms(scene, n_frames: int, samples: int = 12) -> tuple:
    """(mean, max) ms of ``scene.frame_set`` over frames spread over the animation."""
    import numpy as np

    frames = np.linspace(2, n_frames - 1, samples).round().astype(int)
    scene.frame_set(1)
    times = []
    for f in frames.tolist():
        t = time.perf_counter()
        scene.frame_set(f)
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.mean(times)), float(np.max(times))


def render_one(scene, frame: int, engine: str, res, folder: str) -> float:
    from tracevis3d.blender.anim_render import render_frames, setup_animation_output

    setup_animation_output(folder, scene, engine, res, None, "auto")
    t = time.perf_counter()
    render_frames(scene, (frame, frame))
    return time.perf_counter() - t


def case(trace, cluster: bool, eevee_res, rows: list, tmp: str) -> None:
    import bpy

    from tracevis3d.blender.animate import animate_scene
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams

    name = "default (clustered)" if cluster else "one box per call"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    params = IcicleParams() if cluster else IcicleParams(cluster_px=0.0)
    t = time.perf_counter()
    info = build_icicle(trace, params)
    t_still = time.perf_counter() - t
    boxes = info["meta"]["n_boxes"] + info["meta"]["n_clusters"]
    log(f"{name}: still scene {t_still:.2f} s, {boxes:,} boxes")
    scene = bpy.context.scene
    rows.append((name, "boxes in the scene", f"{boxes:,}", ""))
    rows.append((name, "still scene build (layout + Blender data)", f"{t_still:.2f} s", ""))
    for kind in ("flythrough", "turntable", "growth"):  # growth last: its frames are measured below
        t = time.perf_counter()
        anim = animate_scene(scene, kind, 10.0, 30, "eased", meta=info["meta"])
        dt = time.perf_counter() - t
        log(f"{name}: {kind} set-up {dt:.3f} s")
        rows.append((name, f"{kind} set-up, 10 s at 30 fps (300 frames)", f"{dt:.3f} s",
                     f"{t_still + dt:.2f} s = {(t_still + dt) / t_still:.3f}x the still; goal <= +2 s"))
    n = anim["frames"][1]
    mean, worst = frame_change_ms(scene, n)
    rows.append((name, "frame change (scene.frame_set), growth", f"{mean:.1f} ms mean, {worst:.1f} max",
                 "goal <= 20 ms"))
    log(f"{name}: frame change {mean:.1f} ms")
    t = render_one(scene, n // 2, "workbench", (1920, 1080), os.path.join(tmp, f"wb_{cluster}"))
    rows.append((name, "Workbench frame, 1920x1080 (growth, mid-animation)", f"{t:.2f} s", ""))
    log(f"{name}: workbench {t:.2f} s")
    if eevee_res is not None and cluster:
        t = render_one(scene, n // 2, "eevee", eevee_res, os.path.join(tmp, "eevee"))
        rows.append((name, f"EEVEE frame, {eevee_res[0]}x{eevee_res[1]} (first: with shader compile)",
                     f"{t:.1f} s", "one frame only"))
        log(f"{name}: eevee {t:.1f} s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--eevee-res", default="960x540")
    ap.add_argument("--no-eevee", action="store_true")
    a = ap.parse_args(argv)
    import tracevis3d

    t = time.perf_counter()
    trace = tracevis3d.synthetic(a.calls, threads=a.threads)
    log(f"synthetic trace: {len(trace):,} calls, {a.threads} threads in {time.perf_counter() - t:.1f} s")
    eevee = None if a.no_eevee else tuple(int(v) for v in a.eevee_res.split("x"))
    rows: list = []
    with tempfile.TemporaryDirectory() as tmp:
        case(trace, True, eevee, rows, tmp)
        case(trace, False, None, rows, tmp)
    w = [max(len(r[i]) for r in rows + [("scene", "measure", "value", "note")]) for i in range(4)]
    print(f"render-animation bench: {len(trace):,} calls, {a.threads} threads, bpy, this machine "
          f"({os.cpu_count()} CPUs)")
    for r in [("scene", "measure", "value", "note")] + rows:
        print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
