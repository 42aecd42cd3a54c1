"""``render-batch TRACES… --view VIEW -o DIR``: one figure per trace (per pair for ``compare``),
rendered in parallel by Dask workers (`tracevis3d.cluster`: ``--scheduler ADDRESS``, or an
embedded cluster of ``--workers N`` processes, by default one a core), with a manifest.

Each figure is its view's ``render-*`` command run by a worker (`cli.batch_worker.
render_figure`) with the options of ``--options``; a trace that fails is recorded in the
manifest with its exit code and its one-line error and never stops the others.  Images are
written here, each whole (`io.atomic`), named after their trace (``a_vs_b`` for a pair);
``DIR/manifest.json`` lists what was made and what failed and why.  Exit code 0 when every
figure was made, 1 when one failed (the manifest says which).
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import time

from .common import FOOTER, CLIError, HelpFormatter, progress

from ..params.cluster import BATCH_IMAGE_FORMATS
from ..params.cluster import BATCH_VIEW_COMMANDS as VIEW_COMMANDS

IMAGE_EXTENSIONS = tuple("." + f for f in BATCH_IMAGE_FORMATS)

EXAMPLES = """examples:
  python -m tracevis3d render-batch runs/*.json --view icicle -o figures/
  python -m tracevis3d render-batch a1.json b1.json a2.json b2.json --view compare -o diffs/ --workers 2
  python -m tracevis3d render-batch ci/*.json --view threads -o out/ --scheduler tcp://farm:8786 \\
      --options "--resolution 1280x720 --samples 8"
""" + FOOTER


def add_batch_parser(sub) -> None:
    from ..params.cli import add_options
    from ..params.cluster import BATCH_SCHEMA
    from .cluster_render import add_cluster_options

    r = sub.add_parser("render-batch", help="render one figure per trace (per pair for compare) in parallel",
                       description="Render one figure per trace (or per pair of traces for --view compare) in\n"
                                   "parallel on Dask workers, with a manifest of what was made and what failed.",
                       epilog=EXAMPLES, formatter_class=HelpFormatter)
    add_options(r, (("traces", "TRACE", "trace files (for compare: A B pairs, in order)", "+"),), [BATCH_SCHEMA],
                required=("output",))
    add_cluster_options(r, "figures")


def _jobs(args) -> list:
    """[(figure name, [trace paths])] of the batch; CLIError 2 when the traces do not fit the view."""
    traces = [os.path.abspath(t) for t in args.traces]
    if args.view == "compare":
        if len(traces) % 2:
            raise CLIError(f"--view compare takes traces in pairs (A B A B ...), got {len(traces)}", 2)
        groups = [traces[i:i + 2] for i in range(0, len(traces), 2)]
    else:
        groups = [[t] for t in traces]
    jobs, used = [], set()
    for g in groups:
        stem = "_vs_".join(os.path.basename(t).split(".")[0] or "trace" for t in g)
        name, k = stem, 2
        while name in used:
            name, k = f"{stem}_{k}", k + 1
        used.add(name)
        jobs.append((name, g))
    return jobs


def _inputs(session, paths: list) -> list:
    """[(name, what the worker reads)]: the path on a local cluster, else the file's bytes
    scattered to one worker (a missing or unreadable file: its error, in the manifest; workers
    that do not take it within --worker-timeout: `cluster.ClusterError`)."""
    from ..cluster import scatter

    out = []
    for p in paths:
        if session.local:
            out.append((p, p))
            continue
        with open(p, "rb") as f:
            data = f.read()
        out.append((p, scatter(session, data, f"the trace {os.path.basename(p)}")))
    return out


def render_batch(args) -> str:
    from ..cluster import ClusterError, Progress, run_tasks
    from ..io.atomic import replaced_whole, write_whole
    from .cluster_render import cluster_spec, open_cluster

    try:
        options = shlex.split(args.options)
    except ValueError as e:
        raise CLIError(f"--options: {e}", 2) from None
    if any(o in ("-o", "--output") for o in options):
        raise CLIError("--options: the output is the batch's (-o DIR); leave -o out", 2)
    jobs = _jobs(args)
    out = os.path.abspath(args.output)
    if os.path.exists(out) and not os.path.isdir(out):
        raise CLIError(f"output is not a folder: {out}", 2)
    if not os.path.isdir(os.path.dirname(out)):
        raise CLIError(f"output folder does not exist: {os.path.dirname(out)}", 2)
    os.makedirs(out, exist_ok=True)
    spec = cluster_spec(args) or f"local:{max(1, min(os.cpu_count() or 1, len(jobs)))}"
    ext = "." + args.format
    command = VIEW_COMMANDS[args.view]
    t0 = time.perf_counter()
    made, failed = [], []
    with contextlib.ExitStack() as stack:
        session = open_cluster(spec, stack, args)
        calls, pending = [], []
        for name, paths in jobs:
            try:
                calls.append((command, _inputs(session, paths), options, ext))
                pending.append((name, paths))
            except OSError as e:
                failed.append({"figure": name, "traces": paths, "code": 1,
                               "error": f"{e.filename or paths[0]}: {e.strerror or e}"})
            except ClusterError as e:  # the workers did not take a trace in time
                raise CLIError(str(e), 1) from None
        progress(0.05, f"{len(calls)} {args.view} figures to {len(session.workers)} worker(s) of {session.address}")
        prog = Progress(len(calls), "figures", 0.05, 0.98)

        def record(i, res):
            name, paths = pending[i]
            entry = {"figure": name, "traces": paths, "worker": res["worker"], "seconds": round(res["seconds"], 3)}
            if res["code"] == 0 and res["image"]:
                target = os.path.join(out, name + ext)
                with replaced_whole(target, suffix=ext, what="cannot write the figure") as tmp, open(tmp, "wb") as f:
                    f.write(res["image"])
                made.append(dict(entry, image=os.path.basename(target)))
            else:
                failed.append(dict(entry, code=res["code"], error=res["error"]))

        lost = run_tasks(session, _render_figure_task(), calls, record, prog)
        for i, why in lost:
            name, paths = pending[i]
            failed.append({"figure": name, "traces": paths, "code": 1, "error": f"the cluster did not render it: {why}"})
        address = session.address
    made.sort(key=lambda e: e["figure"])
    failed.sort(key=lambda e: e["figure"])
    manifest = {"view": args.view, "command": command, "options": options, "scheduler": address,
                "seconds": round(time.perf_counter() - t0, 3), "made": made, "failed": failed}
    path = os.path.join(out, "manifest.json")
    write_whole(path, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", what="cannot write the manifest")
    progress(1.0, f"{len(made)} figures made, {len(failed)} failed ({path})")
    if failed:
        first = failed[0]
        raise CLIError(f"{len(failed)} of {len(jobs)} figures failed (manifest: {path}); "
                       f"first: {first['figure']}: {first['error']}", 1)
    return path


def _render_figure_task():
    from .batch_worker import render_figure

    return render_figure
