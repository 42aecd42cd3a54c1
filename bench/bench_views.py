"""Every view on real, deep, multi-threaded traces, before and after (issue 19's table).

    .venv/bin/python tools/record_traces.py                  # once: records build/traces/*.json
    .venv/bin/python bench/bench_views.py [--before REV] [--only icicle,cone] [--traces DIR]
                                          [--reuse OLD.json] [--json OUT.json] [--docs DIR]

For each (view, trace) case: build the view with its defaults at 1920x1080 through the job
the panel and the CLI drive, render it with Workbench and measure it, with this tree and
with the version at ``--before`` (a git revision extracted to a temporary folder), each in a
fresh process (bench/view_driver.py), both measured by this tree's
`tracevis3d/blender/figure_report.py` (`view_measures`):

- *names ≥14 px*: labels of kind call, run, row, group (older versions: also cluster) whose
  projected text size is at least 14 px and that lie inside the image;
- *empty*: share of the frame's 40-px cells with nothing drawn; *margin*: the widest empty
  band between an image edge and anything drawn; *grey*: share of the icicle's pixels with
  OKLab chroma below 0.03;
- *layout+build s*: the layout (worker) and writing the scene, after the kernels are warm:
  the driver first builds the same view of a small synthetic trace in the same process
  (numba's cache loading is paid once per process, not per figure; the trace's own tables,
  e.g. its function table, are still built in the measured run) (the live view: the whole
  replay through the protocol into the growing view).

The peer is the version before: every row is a ratio or a difference to it, in the same run.
Prints one table; writes the PNGs under build/views/ (``--docs``: 1280-px JPEG copies).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

from benchio import write_json_whole  # noqa: E402 (bench/ is the script's folder)

REPO = pathlib.Path(__file__).resolve().parent.parent
DRIVER = REPO / "bench" / "view_driver.py"
REPORT = REPO / "tracevis3d" / "blender" / "figure_report.py"
BEFORE = "78e9afa"  # main before issue 19
REALDATA = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))

#: (view, traces): recorded by tools/record_traces.py (names) or real files (paths under realdata)
CASES = (
    ("icicle", ("docutils_pool",)), ("icicle", ("sympy_pool",)), ("icicle", ("docutils",)),
    ("icicle", ("networkx",)), ("icicle", ("sympy",)), ("icicle", ("threads",)),
    ("compare", ("docutils_b", "docutils")), ("compare", ("networkx", "networkx_b")),
    ("compare", ("hta-trace-diff/control.json.gz", "hta-trace-diff/test.json.gz")),
    ("threads", ("docutils_pool",)), ("threads", ("sympy_pool",)), ("threads", ("threads",)),
    ("threads", ("viztracer-examples/multithread.json",)), ("threads", ("hta-trace-diff/control.json.gz",)),
    ("cone", ("docutils",)), ("cone", ("sympy",)), ("cone", ("docutils_pool",)), ("cone", ("sympy_pool",)), ("cone", ("networkx",)),
    ("live", ("docutils_pool",)), ("live", ("threads",)),
    # deep single-thread recordings the views were not tuned on (the generality check)
    ("icicle", ("json_tool",)), ("icicle", ("pydoc",)), ("icicle", ("unittest",)),
    ("cone", ("json_tool",)), ("cone", ("pydoc",)), ("cone", ("unittest",)),
    # unlike tasks in one pool (8 threads, 2M calls), and an asyncio program (a lane per task)
    ("icicle", ("mixed_pool",)), ("threads", ("mixed_pool",)), ("cone", ("mixed_pool",)),
    ("compare", ("mixed_pool", "mixed_pool_b")),
    ("icicle", ("async_tasks",)), ("threads", ("async_tasks",)),
    # a threading HTTP server: a thread per request (44 threads, 76 levels)
    ("icicle", ("http_threads",)), ("threads", ("http_threads",)), ("cone", ("http_threads",)),
    ("compare", ("http_threads", "http_threads_b")), ("live", ("http_threads",)),
    # the live view where it was a strip over an empty frame (one lane) or named little
    ("live", ("json_tool",)), ("live", ("pydoc",)), ("live", ("mixed_pool",)),
    # a command that is mostly imports (pip's vendored libraries) and a recursive-descent parser
    ("icicle", ("pip_show",)), ("cone", ("pip_show",)),
    # black's recursive-descent parser in a thread pool; jinja2 + pygments in forked worker processes
    ("icicle", ("black_pool",)), ("threads", ("black_pool",)), ("cone", ("black_pool",)),
    ("compare", ("black_pool", "black_pool_b")), ("live", ("black_pool",)),
    ("icicle", ("jinja_procs",)), ("threads", ("jinja_procs",)), ("cone", ("jinja_procs",)),
    # a recursive descent through two functions, 2,700 levels in three threads
    ("icicle", ("deep_recursion",)), ("cone", ("deep_recursion",)), ("live", ("deep_recursion",)),
    # the standard library's ast in a thread pool: a visitor's recursion through three functions
    ("icicle", ("ast_pool",)), ("threads", ("ast_pool",)), ("cone", ("ast_pool",)),
    # nested XML written, gzipped, archived and parsed back by a pool, logging to a listener thread,
    # a child process per document (VizTracer follows them: 14 threads in 10 processes)
    ("icicle", ("xml_io_pool",)), ("threads", ("xml_io_pool",)), ("cone", ("xml_io_pool",)),
    ("compare", ("xml_io_pool", "xml_io_pool_b")), ("live", ("xml_io_pool",)),
    # a spawn-started process pool: three processes of one name ("python -c"), heartbeat threads
    ("icicle", ("spawn_pool",)), ("threads", ("spawn_pool",)), ("cone", ("spawn_pool",)),
    # producers other than VizTracer, recorded here (opt-in: record_traces.py --only chromium_page,jax_mlp):
    # Chromium's own start-up and a page load (84 threads in 9 processes), JAX's profiler (11 threads)
    ("icicle", ("chromium_page",)), ("threads", ("chromium_page",)), ("cone", ("chromium_page",)),
    ("icicle", ("jax_mlp",)), ("threads", ("jax_mlp",)), ("cone", ("jax_mlp",)),
    # torch.profiler with profile_memory (opt-in: record_traces.py --only torch_cnn): the allocator's track
    ("icicle", ("torch_cnn",)),
)
GOALS = {"icicle": (25, 0.50), "compare": (20, 0.50), "threads": (15, 0.50), "cone": (25, 0.55), "live": (10, 0.60)}


def trace_path(name: str, traces: pathlib.Path) -> pathlib.Path:
    if "/" in name:
        return REALDATA / name
    plain = traces / f"{name}.json"
    return plain if plain.exists() or not (traces / f"{name}.json.gz").exists() else traces / f"{name}.json.gz"


def extract(rev: str, dest: pathlib.Path) -> pathlib.Path:
    data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], check=True,
                          capture_output=True).stdout
    tar = dest / "tree.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as tf:
        tf.extractall(dest / "tree")
    return dest / "tree"


def run_view(root: pathlib.Path, view: str, paths: list, png: pathlib.Path, cache: pathlib.Path,
             timeout: float) -> dict:
    code = ("import runpy, sys; sys.argv = [sys.argv[0]] + sys.argv[1:]; "
            f"runpy.run_path({str(DRIVER)!r}, run_name='__main__')")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code, view, str(png), str(REPORT), *map(str, paths)], cwd=root,
                       capture_output=True, text=True, timeout=timeout, env=env)
    for line in r.stdout.splitlines():
        if line.startswith("VIEW_JSON "):
            return json.loads(line[len("VIEW_JSON "):])
    tail = (r.stderr or r.stdout).strip().splitlines()[-4:]
    return {"error": " | ".join(tail)[-300:]}


def to_jpeg(png: pathlib.Path, jpg: pathlib.Path, width: int = 1280) -> None:
    code = ("import bpy, sys; im = bpy.data.images.load(sys.argv[1]); w, h = im.size; "
            f"im.scale({width}, int(round(h * {width} / w))); im.filepath_raw = sys.argv[2]; "
            "im.file_format = 'JPEG'; im.save(quality=88)")
    subprocess.run([sys.executable, "-c", code, str(png), str(jpg)], check=True, capture_output=True, timeout=120)


def case_name(view: str, names: tuple) -> str:
    return f"{view}:" + "+".join(pathlib.Path(n).name.replace(".json.gz", "").replace(".json", "") for n in names)


def fmt_row(view, label, calls, ver, r, ref=None) -> str:
    if "error" in r:
        return f"| {view} | {label} | {calls} | {ver} | error: {r['error']} |||||||"
    goal_names, goal_empty = GOALS[view]
    names = f"{r['names']}" + ("" if r["names"] >= goal_names else " ✗")
    empty = f"{100 * r['empty_share']:.0f} %" + ("" if r["empty_share"] <= goal_empty else " ✗")
    margin = f"{100 * r['max_margin']:.0f} %" + ("" if r["max_margin"] <= 0.08 else " ✗")
    grey = f"{100 * r['grey_share']:.0f} %" if r.get("grey_share") is not None else ""
    lb = f"{r['layout_build_s']:.2f}"
    if ref is not None and "error" not in ref and ref.get("layout_build_s"):
        lb += f" ({r['layout_build_s'] / ref['layout_build_s']:.2f}×)"
    small = r.get("min_name_px")
    small = f"{small:.1f}" if small == small else "–"
    return (f"| {view} | {label} | {calls} | {ver} | {names} | {small} | {empty} | {margin} | {grey} | "
            f"{r['layout_s']:.2f} | {lb} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default=str(REPO / "build" / "traces"), help="folder of recorded traces")
    ap.add_argument("--only", help="comma-separated views or case names (view:trace)")
    ap.add_argument("--before", default=BEFORE, help="git revision to compare with (default %(default)s)")
    ap.add_argument("--no-before", action="store_true", help="measure this tree only")
    ap.add_argument("--no-after", action="store_true", help="measure the version before only")
    ap.add_argument("--reuse", help="take the before rows from this JSON (a previous --json)")
    ap.add_argument("--json", help="write all rows to this JSON file")
    ap.add_argument("--out", default=str(REPO / "build" / "views"), help="folder for the PNGs")
    ap.add_argument("--docs", help="also write 1280-px JPEG copies here")
    ap.add_argument("--timeout", type=float, default=1200.0)
    args = ap.parse_args(argv)
    traces = pathlib.Path(args.traces)
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only.split(",")) if args.only else None
    cases = [(v, n) for v, n in CASES if wanted is None or v in wanted or case_name(v, n) in wanted]
    missing = sorted({str(trace_path(x, traces)) for _, n in cases for x in n if not trace_path(x, traces).exists()})
    if missing:
        print(f"bench_views: missing traces (run tools/record_traces.py; realdata at {REALDATA}): "
              + ", ".join(missing), file=sys.stderr)
        cases = [(v, n) for v, n in cases if all(trace_path(x, traces).exists() for x in n)]
    reuse = json.loads(pathlib.Path(args.reuse).read_text()) if args.reuse else {}
    rows: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        before_root = None
        if not args.no_before and not reuse:
            before_root = extract(args.before, pathlib.Path(tmp))
        for view, names in cases:
            key = case_name(view, names)
            paths = [trace_path(x, traces) for x in names]
            res = {}
            versions = [] if args.no_after else [("after", REPO, REPO / "build" / "numba-cache")]
            if before_root is not None:
                versions.insert(0, ("before", before_root, REPO / "build" / "numba-cache-before"))
            for ver, root, cache in versions:
                png = out / f"{key.replace(':', '_').replace('+', '_vs_')}_{ver}.png"
                print(f"bench_views: {key} ({ver})", file=sys.stderr, flush=True)
                try:
                    res[ver] = run_view(root, view, paths, png, cache, args.timeout)
                except subprocess.TimeoutExpired:
                    res[ver] = {"error": f"timed out after {args.timeout:.0f} s"}
                if args.docs and "error" not in res[ver]:
                    pathlib.Path(args.docs).mkdir(parents=True, exist_ok=True)
                    to_jpeg(png, pathlib.Path(args.docs) / (png.stem + ".jpg"))
            if "before" not in res and key in reuse:
                res["before"] = reuse[key].get("before") or reuse[key].get("after") or {"error": "not measured"}
            rows[key] = res
    if args.json:
        write_json_whole(args.json, rows, indent=1)
    print("| view | trace | calls, levels, threads | version | names ≥14 px | smallest name px | empty | "
          "largest margin | grey | layout s | layout+build s (× before) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (view, names) in cases:
        key = case_name(view, names)
        res = rows.get(key, {})
        r0 = res.get("after") or res.get("before") or {}
        calls = "/".join(f"{c / 1000:.0f}k" for c in r0.get("calls", [])) if r0.get("calls") else "?"
        if r0.get("depth"):
            calls += f", {max(r0['depth'])}, {max(r0['threads'])}"
        label = key.split(":", 1)[1]
        for ver in ("before", "after"):
            if ver in res:
                print(fmt_row(view, label, calls, ver, res[ver], res.get("before") if ver == "after" else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
