#!/usr/bin/env python3
"""Re-make the README's figures from real recordings, with the commands the README shows.

    .venv/bin/python tools/docs_figures.py [--out docs] [--only threads_pipeline,cone_tree]

Each figure is recorded with VizTracer (as tests/realtraces.py records them) into
build/docs-traces/, rendered with the project's CLI at 1920x1080 (Workbench) and written
as a JPEG under ``--out`` (the README's size).  Look at every image before committing it.

==================  ========================================================================
threads_pipeline    ``render-icicle`` of examples/threads_pipeline.py (``make demo``)
compare_json_tool   ``render-compare`` of json.tool on two documents (flat, nested records)
threads_view        ``render-threads`` of examples/threads_pipeline.py with --log_func_args
cone_tree           ``render-cone`` of json.tool on a 105-level document
counters_tracks     ``render-icicle`` of docutils on 3 workers sampling memory and objects,
                    with ``--log_gc`` (counter tracks under the lanes)
pytorch_flows       ``render-icicle`` of the real PyTorch profile ../shared/realdata/hta-trace-diff
                    (CPU→GPU flows as arcs; skipped when the file is absent)
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
    """tests/realtraces.py (the tests' recorders) as a module, loaded by path."""
    spec = importlib.util.spec_from_file_location("realtraces", REPO / "tests" / "realtraces.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

FIGURES = ("threads_pipeline", "compare_json_tool", "threads_view", "cone_tree", "counters_tracks", "pytorch_flows")
WIDTH = {"threads_pipeline": 1600, "compare_json_tool": 1600, "threads_view": 1920, "cone_tree": 1920,
         "counters_tracks": 1600, "pytorch_flows": 1600}


def render(args: list, png: pathlib.Path) -> None:
    cmd = [sys.executable, "-m", "tracevis3d", *args, "-o", str(png), "--resolution", "1920x1080"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")


def to_jpeg(png: pathlib.Path, jpg: pathlib.Path, width: int) -> None:
    code = ("import bpy, sys; im = bpy.data.images.load(sys.argv[1]); w, h = im.size; "
            "W = int(sys.argv[3]); im.scale(W, int(round(h * W / w))) if W != w else None; "
            "im.filepath_raw = sys.argv[2]; im.file_format = 'JPEG'; im.save(quality=88)")
    subprocess.run([sys.executable, "-c", code, str(png), str(jpg), str(width)], check=True, capture_output=True)


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
        elif name == "pytorch_flows":
            trace = REPO.parent / "shared" / "realdata" / "hta-trace-diff" / "control.json.gz"
            if not trace.exists():
                print(f"skipped {name}: {trace} not found")
                continue
            render(["render-icicle", str(trace)], png)
        else:
            raise SystemExit(f"unknown figure {name!r}; figures: {', '.join(FIGURES)}")
        to_jpeg(png, out / f"{name}.jpg", WIDTH[name])
        print(f"wrote {out / (name + '.jpg')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
