#!/usr/bin/env python3
"""Re-make the figures of the README and docs/ from real recordings, with the commands the docs show.

    .venv/bin/python tools/docs_figures.py [--out docs] [--only threads_pipeline,cone_tree]

Each figure is recorded with VizTracer (as tests/support/realtraces.py records them) into
build/docs-traces/, rendered with the project's CLI at 1920x1080 (Workbench) and written
as a JPEG under ``--out`` (the size the docs show).  Look at every image before committing it.

==================  ========================================================================
threads_pipeline    ``render-icicle`` of examples/threads_pipeline.py (``make demo``)
compare_json_tool   ``render-compare`` of json.tool on two documents (flat, nested records)
threads_view        ``render-threads`` of examples/threads_pipeline.py with --log_func_args
cone_tree           ``render-cone`` of json.tool on a 105-level document
counters_tracks     ``render-icicle`` of docutils on 3 workers sampling memory and objects,
                    with ``--log_gc`` (counter tracks under the lanes)
pytorch_flows       ``render-icicle`` of the real PyTorch profile ../shared/realdata/hta-trace-diff
                    (CPU→GPU flows as arcs; skipped when the file is absent)
pytorch_flows_threads  ``render-threads`` of the same profile (each arc in the colour of the
                    stream it reaches)
extravis_icicle     ``render-extravis`` and ``render-icicle`` of the same window of docutils in a
                    thread pool, side by side in one JPEG (`side_by_side`, at most 300 KB)
memory_pydoc        ``render-memory`` of ``memray run --trace-python-allocators -m pydoc -w
                    email.message``
memory_icicle       ``render-memory --trace`` of a JSON program 110 levels deep run by ``memray run``
                    and sampled by py-spy in the same run (the icicle above the bands; skipped
                    without py-spy)
==================  ========================================================================
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def _realtraces():
    """tests/support/realtraces.py (the tests' recorders) as a module, loaded by path."""
    spec = importlib.util.spec_from_file_location("realtraces", REPO / "tests" / "support" / "realtraces.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

FIGURES = ("threads_pipeline", "compare_json_tool", "threads_view", "cone_tree", "counters_tracks", "pytorch_flows",
           "pytorch_flows_threads", "extravis_icicle", "memory_pydoc", "memory_icicle")
WIDTH = {"threads_pipeline": 1600, "compare_json_tool": 1600, "threads_view": 1920, "cone_tree": 1920,
         "counters_tracks": 1600, "pytorch_flows": 1600, "pytorch_flows_threads": 1600, "extravis_icicle": 2400,
         "memory_pydoc": 1600, "memory_icicle": 1600}


def render(args: list, png: pathlib.Path) -> None:
    cmd = [sys.executable, "-m", "tracevis3d", *args, "-o", str(png), "--resolution", "1920x1080"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")


def to_jpeg(png: pathlib.Path, jpg: pathlib.Path, width: int) -> None:
    code = ("import bpy, sys; im = bpy.data.images.load(sys.argv[1]); w, h = im.size; "
            "W = int(sys.argv[3]); im.scale(W, int(round(h * W / w))) if W != w else None; "
            "im.filepath_raw = sys.argv[2]; im.file_format = 'JPEG'; im.save(quality=80)")
    subprocess.run([sys.executable, "-c", code, str(png), str(jpg), str(width)], check=True, capture_output=True)


def side_by_side(pngs: list, jpg: pathlib.Path, width: int, gap: int = 40, max_bytes: int = 300_000) -> int:
    """Images side by side, tops aligned, on white with a thin grey rule in each ``gap``, as
    one JPEG ``width`` pixels wide at the best quality (90 down to 50) within ``max_bytes``
    (read and written with bpy's image pixels and numpy); returns its size in bytes."""
    import bpy
    import numpy as np

    parts = []
    for p in pngs:
        im = bpy.data.images.load(str(p), check_existing=False)
        w, h = im.size
        a = np.empty(w * h * 4, np.float32)
        im.pixels.foreach_get(a)
        bpy.data.images.remove(im)
        a = a.reshape(h, w, 4)  # rows bottom up
        parts.append(a[..., :3] * a[..., 3:] + (1.0 - a[..., 3:]))  # over white
    H = max(p.shape[0] for p in parts)
    W = sum(p.shape[1] for p in parts) + gap * (len(parts) - 1)
    canvas = np.ones((H, W, 4), np.float32)
    x = 0
    for k, p in enumerate(parts):
        h, w = p.shape[:2]
        canvas[H - h:, x:x + w, :3] = p  # the top rows are the last ones
        x += w
        if k < len(parts) - 1:
            canvas[int(0.06 * H):int(0.94 * H), x + gap // 2 - 1:x + gap // 2 + 1, :3] = 0.8
            x += gap
    out = bpy.data.images.new("tv3d_side_by_side", W, H, alpha=False)
    out.pixels.foreach_set(canvas.ravel())
    out.scale(width, int(round(H * width / W)))
    out.filepath_raw = str(jpg)
    out.file_format = "JPEG"
    for quality in (90, 85, 80, 75, 70, 60, 50):
        out.save(quality=quality)
        if jpg.stat().st_size <= max_bytes:
            break
    bpy.data.images.remove(out)
    return jpg.stat().st_size


def extravis_icicle(work: pathlib.Path, realtraces, jpg: pathlib.Path, window: str = "100ms:250ms") -> int:
    """EXTRAVIS' two views (class level) of a window of docutils in a 5-thread pool beside the
    icicle of the same window (docs/extravis.md); the JPEG's size."""
    trace = work / "docutils_pool_a.json"
    if not trace.exists():
        trace = realtraces.record_docutils_pool(work)[0]
    pngs = []
    for cmd, res, extra in (("render-extravis", "1920x1080", ["--level", "class"]), ("render-icicle", "1280x1080", [])):
        png = work / f"extravis_icicle_{cmd}.png"
        args = [sys.executable, "-m", "tracevis3d", cmd, str(trace), "--window", window, *extra, "--resolution", res,
                "-o", str(png)]
        r = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed:\n{r.stderr[-2000:]}")
        pngs.append(png)
    return side_by_side(pngs, jpg, WIDTH["extravis_icicle"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "docs"))
    ap.add_argument("--only", help="comma-separated: " + ",".join(FIGURES))
    args = ap.parse_args(argv)
    realtraces = _realtraces()
    work = REPO / "build" / "docs-traces"
    work.mkdir(parents=True, exist_ok=True)
    wanted = args.only.split(",") if args.only else FIGURES
    out = pathlib.Path(args.out)
    for name in wanted:
        png = work / f"{name}.png"
        if name == "threads_pipeline":
            trace = work / "threads_pipeline.json"
            if not trace.exists():
                realtraces.record_viztracer(trace, [str(REPO / "examples" / "threads_pipeline.py")], work)
            render(["render-icicle", str(trace)], png)
        elif name == "compare_json_tool":
            a, b = work / "json_tool_a.json", work / "json_tool_b.json"
            if not (a.exists() and b.exists()):
                a, b, _ = realtraces.record_json_pair(work)
            render(["render-compare", str(a), str(b)], png)
        elif name == "threads_view":
            trace = work / "threads_pipeline_args.json"
            if not trace.exists():
                trace = realtraces.record_threads_args(work)
            render(["render-threads", str(trace)], png)
        elif name == "cone_tree":
            trace = work / "deep_json_tool.json"
            if not trace.exists():
                trace = realtraces.record_deep(work)
            render(["render-cone", str(trace)], png)
        elif name == "counters_tracks":
            trace = work / "docutils_counters.json"
            if not trace.exists():
                trace = realtraces.record_counters(work)
            render(["render-icicle", str(trace)], png)
        elif name == "memory_pydoc":
            capture = work / "pydoc_memory.bin"
            if not capture.exists():
                subprocess.run([sys.executable, "-m", "memray", "run", "-q", "-f", "--trace-python-allocators",
                                "-o", str(capture), "-m", "pydoc", "-w", "email.message"], cwd=work, check=True,
                               capture_output=True)
            render(["render-memory", str(capture)], png)
        elif name == "memory_icicle":
            import shutil

            spec = importlib.util.spec_from_file_location("memray_captures",
                                                          REPO / "tests" / "support" / "memray_captures.py")
            captures = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(captures)
            spy = shutil.which("py-spy", path=str(pathlib.Path(sys.executable).parent))
            if spy is None:
                print(f"skipped {name}: py-spy not found")
                continue
            capture, calls = work / "memory_icicle" / "run.bin", work / "memory_icicle" / "calls.json"
            if not capture.exists() or not calls.exists():
                capture, calls = captures.record_memory_and_calls(str(work / "memory_icicle"), spy)
            render(["render-memory", str(capture), "--trace", str(calls)], png)
        elif name == "extravis_icicle":  # two renders composed: no single PNG to convert
            size = extravis_icicle(work, realtraces, out / f"{name}.jpg")
            print(f"wrote {out / (name + '.jpg')} ({size / 1e3:.0f} kB)")
            continue
        elif name in ("pytorch_flows", "pytorch_flows_threads"):
            trace = REPO.parent / "shared" / "realdata" / "hta-trace-diff" / "control.json.gz"
            if not trace.exists():
                print(f"skipped {name}: {trace} not found")
                continue
            render(["render-icicle" if name == "pytorch_flows" else "render-threads", str(trace)], png)
        else:
            raise SystemExit(f"unknown figure {name!r}; figures: {', '.join(FIGURES)}")
        to_jpeg(png, out / f"{name}.jpg", WIDTH[name])
        print(f"wrote {out / (name + '.jpg')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
