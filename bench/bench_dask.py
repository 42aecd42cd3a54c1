"""Frames of an animation rendered by Dask workers against the same frames rendered by one
process, in the same run (issue 72).

    python bench/bench_dask.py [--trace T.json] [--frames 24] [--resolution 640x360]

The trace (default: ``python -m pydoc -w email.message`` recorded under VizTracer here) grows
over ``--frames`` frames (Workbench).  Three runs of ``render-animation``, each a fresh
process that builds the scene: this process alone, ``--workers 1`` and ``--workers 2``
(an embedded LocalCluster).  The render times are the commands' own ("rendered N frames in
T s": frames only, not the scene build, the cluster's start or the encode); the CLI's CPU is
the command process's own (its workers are other processes).  One table:

- frames/s and the ratio to the one-process render;
- scaling efficiency with 2 workers = t(one process) / (2 · t(2 workers)) (goal ≥ 0.8 on
  Workbench frames), and with 1 worker (the cluster's overhead alone);
- the CLI's CPU time with 2 workers / the one-process command's CPU time (goal < 50 %);
- the serial part s of the 2-worker render (Amdahl: t(2) = t(1)·(s + (1 − s)/2)) and what
  it predicts for N workers: speed-up 1 / (s + (1 − s)/N).

Frames of the three runs are compared pixel for pixel (they must be equal).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record_pydoc(folder: str) -> str:
    out = os.path.join(folder, "pydoc.json")
    subprocess.run([sys.executable, "-m", "viztracer", "--quiet", "--tracer_entries", "1000000", "-o", out,
                    "-m", "pydoc", "-w", "email.message"], cwd=folder, check=True, capture_output=True, timeout=300)
    return out


def run(trace: str, out: str, frames: int, resolution: str, extra: list) -> dict:
    """One render-animation process: its render seconds, its own CPU seconds, its stderr."""
    env = dict(os.environ, PYTHONPATH=REPO)
    env.setdefault("NUMBA_CACHE_DIR", os.path.join(REPO, "build", "numba-cache"))
    cmd = [sys.executable, "-m", "tracevis3d", "render-animation", trace, "-o", out, "--seconds", str(frames / 12),
           "--fps", "12", "--resolution", resolution, "--samples", "1", *extra]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _, err = p.communicate(timeout=3600)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-3000:]}")
    m = re.search(r"rendered (\d+) frames in ([\d.]+) s", err) or re.search(
        r"rendered (\d+) frames at [\d.]+ frames/s in ([\d.]+) s", err)
    cpu = re.search(r"this process: ([\d.]+) s CPU", err)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # cumulative: the caller takes differences
    return {"frames": int(m.group(1)), "seconds": float(m.group(2)), "cpu": float(cpu.group(1)) if cpu else None,
            "children_cpu": ru.ru_utime + ru.ru_stime, "err": err}


def png_pixels(path: str) -> bytes:
    """The image data of a PNG (its IDAT chunks joined): equal for equal pixels written by the same
    encoder, whatever its text chunks say (Blender stamps the render time there)."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    pos, out = 8, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            out.append(data[pos + 8:pos + 8 + n])
        pos += 12 + n
    return b"".join(out)


def same_frames(a: str, b: str) -> bool:
    names = sorted(os.listdir(a))
    return names == sorted(os.listdir(b)) and all(
        png_pixels(os.path.join(a, n)) == png_pixels(os.path.join(b, n)) for n in names)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--resolution", default="640x360")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as work:
        trace = args.trace or record_pydoc(work)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        one = run(trace, os.path.join(work, "one"), args.frames, args.resolution, [])
        one["cpu"] = one["children_cpu"] - (before.ru_utime + before.ru_stime)  # no children of its own
        w1 = run(trace, os.path.join(work, "w1"), args.frames, args.resolution, ["--workers", "1"])
        w2 = run(trace, os.path.join(work, "w2"), args.frames, args.resolution, ["--workers", "2"])
        equal = same_frames(os.path.join(work, "one"), os.path.join(work, "w1")) and same_frames(
            os.path.join(work, "one"), os.path.join(work, "w2"))
    n = one["frames"]
    t1, tw1, tw2 = one["seconds"], w1["seconds"], w2["seconds"]
    s = min(1.0, max(0.0, 2 * tw2 / tw1 - 1))  # Amdahl's serial part from t(1 worker) and t(2 workers)
    print(f"{n} frames of a growth at {args.resolution}, Workbench, {os.path.basename(trace)}; "
          f"{os.cpu_count()} CPU cores; frames equal to the one-process render: {equal}")
    print("| run | render s | frames/s | ratio to one process | scaling efficiency | CLI CPU s | CLI CPU / one process |")
    print("|---|---|---|---|---|---|---|")
    print(f"| one process | {t1:.1f} | {n / t1:.2f} | 1.00 | | {one['cpu']:.1f} | 100 % |")
    for name, r, k in (("--workers 1", w1, 1), ("--workers 2", w2, 2)):
        print(f"| {name} | {r['seconds']:.1f} | {n / r['seconds']:.2f} | {t1 / r['seconds']:.2f} | "
              f"{t1 / (k * r['seconds']):.2f} | {r['cpu']:.1f} | {100 * r['cpu'] / one['cpu']:.0f} % |")
    print(f"Amdahl serial part (from 1 and 2 workers): s = {s:.2f}; predicted speed-up over 1 worker: "
          + ", ".join(f"N={k}: {1 / (s + (1 - s) / k):.1f}x" for k in (4, 8, 16, 32)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
