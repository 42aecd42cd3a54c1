"""Figures of real traces, before and after, next to speedscope's view of the same traces.

    .venv/bin/python tools/record_traces.py                       # once: records build/traces/*.json
    .venv/bin/python bench/bench_figures.py [--before REV] [--only json_tool,sympy] [--no-peer]
                                            [--docs docs/figures]

For each trace: render the default figure (1920x1080, Workbench) with this tree and with
the version at ``--before`` (a git revision, extracted to a temporary folder; default: the
commit before the figures work), each in a fresh process (bench/figure_driver.py), and
measure both with tracevis3d/blender/figure_report.py: labels on the icicle and their
smallest text size, grey share of the icicle's pixels, largest empty margin, layout and
render time.  With the peer (default on), speedscope's Time Order view of the same trace is
shot in headless Chromium (bench/peer_speedscope.py).  Prints one table; writes the PNGs
(and 1280-px JPEG copies under ``--docs``).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

from benchio import write_json_whole  # noqa: E402 (bench/ is the script's folder)

REPO = pathlib.Path(__file__).resolve().parent.parent
DRIVER = REPO / "bench" / "figure_driver.py"
REPORT = REPO / "tracevis3d" / "blender" / "figure_report.py"
TRACES = ("json_tool", "pydoc", "docutils", "sympy", "threads")
BEFORE = "9923ad2"  # main before the figures issue (issue 8)


def extract(rev: str, dest: pathlib.Path) -> pathlib.Path:
    """The tree of ``rev`` under ``dest`` (git archive, no checkout)."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], check=True,
                          capture_output=True).stdout
    tar = dest / "tree.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as tf:
        tf.extractall(dest / "tree")
    return dest / "tree"


def run_figure(root: pathlib.Path, trace: pathlib.Path, png: pathlib.Path, timeout: float) -> dict:
    code = ("import runpy, sys; sys.argv = [sys.argv[0]] + sys.argv[1:]; "
            f"runpy.run_path({str(DRIVER)!r}, run_name='__main__')")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, str(trace), str(png), str(REPORT)], cwd=root,
                       capture_output=True, text=True, timeout=timeout)
    for line in r.stdout.splitlines():
        if line.startswith("FIGURE_JSON "):
            out = json.loads(line[len("FIGURE_JSON "):])
            out["process_s"] = time.perf_counter() - t
            return out
    tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
    raise RuntimeError(f"figure of {trace.name} in {root} failed: {' | '.join(tail)}")


def to_jpeg(png: pathlib.Path, jpg: pathlib.Path, width: int = 1280) -> None:
    """A smaller JPEG copy for the docs (Blender's image API, no extra dependency)."""
    code = (
        "import bpy, sys; im = bpy.data.images.load(sys.argv[1]); w, h = im.size; "
        f"im.scale({width}, int(round(h * {width} / w))); im.filepath_raw = sys.argv[2]; "
        "im.file_format = 'JPEG'; im.save(quality=88)")
    subprocess.run([sys.executable, "-c", code, str(png), str(jpg)], check=True, capture_output=True, timeout=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default=str(REPO / "build" / "traces"), help="folder of recorded traces")
    ap.add_argument("--only", help="comma-separated trace names (default: %s)" % ",".join(TRACES))
    ap.add_argument("--before", default=BEFORE, help="git revision to compare with (default %(default)s)")
    ap.add_argument("--no-before", action="store_true", help="measure this tree only")
    ap.add_argument("--no-peer", action="store_true", help="skip speedscope")
    ap.add_argument("--out", default=str(REPO / "build" / "figures"), help="folder for the PNGs")
    ap.add_argument("--docs", help="also write 1280-px JPEG copies here (e.g. docs/figures)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--reuse", help="take the before and speedscope rows (which do not depend on this tree) from "
                                    "an earlier run's bench_figures.json instead of measuring them again")
    ap.add_argument("--reuse-rows", default="before,speedscope", help="which rows --reuse takes (default %(default)s)")
    a = ap.parse_args(argv)
    names = a.only.split(",") if a.only else list(TRACES)
    tdir = pathlib.Path(a.traces)
    missing = [n for n in names if not (tdir / f"{n}.json").is_file()]
    if missing:
        print(f"missing traces {missing} in {tdir}: run .venv/bin/python tools/record_traces.py", file=sys.stderr)
        return 2
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    docs = pathlib.Path(a.docs) if a.docs else None
    if docs:
        docs.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-before-"))
    rows = []
    reused = {}
    if a.reuse:
        wanted = {x.strip() for x in a.reuse_rows.split(",")}
        for n, label, r in json.loads(pathlib.Path(a.reuse).read_text()):
            if label in wanted and label in ("before", "speedscope"):
                reused[(n, label)] = dict(r, reused=True)
    try:
        versions = [("after", REPO)]
        if not a.no_before and not reused:
            versions.insert(0, ("before", extract(a.before, tmp)))
        for n in names:
            trace = tdir / f"{n}.json"
            if (n, "before") in reused:
                rows.append((n, "before", reused[(n, "before")]))
            for label, root in versions:
                png = out / f"{n}_{label}.png"
                print(f"[{n}] {label} …", file=sys.stderr, flush=True)
                rep = run_figure(root, trace, png, a.timeout)
                rows.append((n, label, rep))
                if docs:
                    to_jpeg(png, docs / f"{n}_{label}.jpg")
            if (n, "speedscope") in reused:
                rows.append((n, "speedscope", reused[(n, "speedscope")]))
            elif not a.no_peer:
                from peer_speedscope import PeerError, screenshot

                png = out / f"{n}_speedscope.png"
                print(f"[{n}] speedscope …", file=sys.stderr, flush=True)
                try:
                    info = screenshot(str(trace), str(png), timeout=a.timeout)
                    lab = info.get("labels", {})
                    rows.append((n, "speedscope", {
                        "labels": lab.get("frame_labels"), "uncut": lab.get("full"),
                        "min_label_px": 10.0,  # speedscope's frame labels: 10 px monospace
                        "layout_s": info["times"]["profile_parsed_ms"] / 1e3,  # fetch + parse
                        "render_s": (info["times"]["first_render_ms"] - info["times"]["profile_parsed_ms"]) / 1e3,
                        "profile": info.get("profile", {}).get("name")}))
                    if docs:
                        to_jpeg(png, docs / f"{n}_speedscope.jpg")
                except PeerError as e:
                    rows.append((n, "speedscope", {"error": str(e)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _print_table(rows)
    write_json_whole(out / "bench_figures.json", rows, indent=1, default=str)
    return 0


def _fmt(v, f):
    return "" if v is None else (f.format(v) if isinstance(v, (int, float)) else str(v))


def _print_table(rows) -> None:
    print("| trace | calls | levels | threads | version | labels on the icicle | smallest label (px) | "
          "grey share | largest empty margin | layout s (speedscope: load+parse) | render s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    info = {}
    for n, label, r in rows:
        if "calls" in r:
            info[n] = r
    for n, label, r in rows:
        base = info.get(n, {})
        if "error" in r:
            print(f"| {n} | | | | {label} | failed: {r['error']} | | | | | |")
            continue
        label = label + (" (earlier run)" if r.get("reused") else "")
        n_labels = _fmt(r.get("labels"), "{}") + (f" ({r['uncut']} uncut)" if r.get("uncut") is not None else "")
        print(f"| {n} | {_fmt(base.get('calls'), '{:,}')} | {_fmt(base.get('depth'), '{}')} | "
              f"{_fmt(base.get('threads'), '{}')} | {label} | {n_labels} | "
              f"{_fmt(r.get('min_label_px'), '{:.1f}')} | {_fmt(r.get('grey_share'), '{:.0%}')} | "
              f"{_fmt(r.get('max_margin'), '{:.0%}')} | {_fmt(r.get('layout_s'), '{:.2f}')} | "
              f"{_fmt(r.get('render_s'), '{:.1f}')} |")


if __name__ == "__main__":
    sys.exit(main())
