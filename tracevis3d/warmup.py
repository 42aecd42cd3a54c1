"""Compile (or load from the cache) every kernel a first user runs, on tiny made-up traces.

    python -m tracevis3d.warmup [--install] [--part 1-4] [load,layout,compare,structure,live]

Used twice:
- by ``tools/build_extension.py`` with ``NUMBA_CPU_NAME=generic`` and an empty
  ``NUMBA_CACHE_DIR``, to make the pre-built caches the extension zip carries
  (`tracevis3d.kernel_cache`);
- by the extension, in a background process started at enable when the cache is cold (a
  Python or platform the zip carries no caches for), so the kernels compile while the user
  reads the panel.
The traces are written here as Chrome JSON (no synthesis kernels needed): object and array
form, X and B/E events, metadata, args, instants and flows, two threads; the large-file
parallel scan is run too.  Each step prints one line: what it ran and how long it took.
A view's kernels are warmed by the function its registry entry names, in the step it names
(`tracevis3d.views.View.warm`, `View.warmup`; `step_functions`).
"""
from __future__ import annotations

import json
import os
import sys
import time

from .views import VIEWS, resolve

#: the steps: the loads and the formats, then the views' steps (`tracevis3d.views.View.warmup`,
#: each running the warm-up function of every view that names it, `View.warm`)
STEPS = ("load", "formats", *dict.fromkeys(v.warmup for v in VIEWS if v.warmup))


def chrome_events(n_roots: int = 30, seed: int = 1, fanout: int = 3, depth: int = 4) -> list:
    """A small VizTracer-like event list: two threads of nested X calls plus B/E, M, i, s/f."""
    import random

    rng = random.Random(seed)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "python"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}]
    funcs = [f"f{k} (/src/pkg/mod{k % 5}.py:{10 + k})" for k in range(24)]
    funcs += ["acquire (<built-in>)", "read (/usr/lib/python3.11/socket.py:700)", "wait (threading.py:300)"]

    def subtree(tid, t0, dur, d):
        ev.append({"ph": "X", "name": rng.choice(funcs), "ts": round(t0, 3), "dur": round(dur, 3),
                   "pid": 1, "tid": tid, **({"args": {"n": d}} if d == 1 else {})})
        if d >= depth:
            return
        k = rng.randint(1, fanout)
        step = dur / (k + 1)
        for j in range(k):
            subtree(tid, t0 + step * (j + 0.5), step * rng.uniform(0.2, 0.9), d + 1)

    t = 0.0
    for r in range(n_roots):
        for tid in (1, 2):
            subtree(tid, t, 1000.0, 0)
        ev.append({"ph": "B", "name": "sleep (time.py:1)", "ts": t + 1001, "pid": 1, "tid": 1})
        ev.append({"ph": "E", "name": "sleep (time.py:1)", "ts": t + 1050, "pid": 1, "tid": 1})
        t += 1100.0
    ev.append({"ph": "i", "name": "mark", "ts": 5.0, "pid": 1, "tid": 1, "s": "t"})
    ev.append({"ph": "s", "name": "flow", "id": 7, "ts": 12.0, "pid": 1, "tid": 1, "cat": "c"})
    ev.append({"ph": "f", "name": "flow", "id": 7, "ts": 13.0, "pid": 1, "tid": 2, "cat": "c", "bp": "e"})
    return ev


def memory_infra_trace() -> dict:
    """A small Chrome trace with what the plain event list lacks: memory-infra dumps (``"ph": "v"``,
    allocators, process totals and a heap dump, as Chromium writes them: their counters in a
    Trace, their heaps a `MemoryCapture`) and a sampled profile (``samples`` over
    ``stackFrames``); a reader's kernels for these compile on their first use otherwise (a first
    memory dump's load compiled for 13 s)."""
    def size(v):
        return {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": format(v, "x")}}}

    def dump(ts, dumps):
        return {"args": {"dumps": {"level_of_detail": "detailed", **dumps}}, "cat": "disabled-by-default-memory-infra",
                "id": "0x1", "name": "periodic_interval", "ph": "v", "pid": 1, "tid": -1, "ts": ts}

    heaps = {"version": 1, "maps": {"strings": [{"id": 1, "string": "main"}, {"id": 2, "string": "parse"}],
                                    "nodes": [{"id": 10, "name_sid": 1}, {"id": 11, "name_sid": 2, "parent": 10}]},
             "allocators": {"malloc": {"nodes": [11, 10], "sizes": [100, 40], "counts": [2, 1], "types": [0, 0]}}}
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Browser"}},
          {"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 1000, "dur": 5000}]
    ev += [dump(1000 + 1000 * k, {"allocators": {"malloc": size(100 * (k + 1)), "v8": size(7 + k)},
                                  "process_totals": {"private_footprint_bytes": format(4096 * (k + 1), "x")}})
           for k in range(3)]
    ev.append(dump(4500, {"heaps_v2": heaps}))
    frames = {"1": {"name": "main", "category": "c"}, "2": {"name": "parse", "category": "c", "parent": "1"}}
    samples = [{"cpu": 0, "tid": 1, "ts": 1100 + 10 * k, "name": "cycles", "sf": 1 + k % 2, "weight": 1}
               for k in range(8)]
    return {"traceEvents": ev, "samples": samples, "stackFrames": frames}


def _warmup_bytes() -> dict:
    """The made-up traces as the importer meets them: object and array form, one with a
    repair (a call that overlaps its parent's end, as in the PyTorch traces: the repair names
    the event's line and column, `kernels.jsontokens.line_col`), each gzip-compressed too,
    and a second trace to compare with."""
    import gzip

    ev = chrome_events()
    obj = json.dumps({"traceEvents": ev, "displayTimeUnit": "ms"}).encode()
    arr = json.dumps(ev).encode()
    repaired = json.dumps(ev + [{"ph": "X", "name": "outer", "ts": 0.5, "dur": 10.0, "pid": 1, "tid": 3},
                                {"ph": "X", "name": "inner", "ts": 5.0, "dur": 10.0, "pid": 1, "tid": 3}]).encode()
    other = json.dumps(chrome_events(seed=2)).encode()
    plain = {"repaired": repaired, "object": obj, "array": arr, "other": other,
             "memory": json.dumps(memory_infra_trace()).encode()}
    return {"plain": plain, "packed": {k: gzip.compress(v, mtime=0) for k, v in plain.items()}}


def _load_each(forms: dict) -> tuple:
    """Load each form with one scan thread and with the two-thread scan of large files (on the
    small one); the object form and the other trace."""
    from .io import chrome, load_bytes, load_memory_bytes
    from .kernels import chrome_tree

    load_bytes(forms["repaired"], source="<warmup repaired>", warn=False)
    a = load_bytes(forms["object"], source="<warmup object>", warn=False)
    load_bytes(forms["array"], source="<warmup array>", warn=False)
    before = chrome.PARALLEL_SCAN_BYTES, chrome_tree.PARALLEL_BIND_POINTS
    # the two-thread scan of large files and the two-thread binding of many flow events, on the small one
    chrome.PARALLEL_SCAN_BYTES, chrome_tree.PARALLEL_BIND_POINTS = 0, 1
    try:
        for key in ("object", "array", "repaired"):
            load_bytes(forms[key], source="<warmup parallel>", warn=False)
    finally:
        chrome.PARALLEL_SCAN_BYTES, chrome_tree.PARALLEL_BIND_POINTS = before
    c = load_bytes(forms["other"], source="<warmup b>", warn=False)
    load_bytes(forms["memory"], source="<warmup memory-infra>", warn=False)  # the dumps' counters, the samples
    load_memory_bytes(forms["memory"], source="<warmup memory-infra>", warn=False)  # the heaps, as load_memory
    return a, c


def _load_all():
    """Load the made-up traces in every form the importer scans differently: a file's bytes and
    an inflated .json.gz (the first compare of two .json.gz files once compiled 26 JSON kernels
    that the plain forms had not; today both compile the same 237 signatures, measured with
    numba's compile events, but both stay, so that a form scanned differently again is warmed
    too).  Returns two traces."""
    from .kernels import sigbus_guard  # noqa: F401  (the command line's guard of mapped files, cached)

    forms = _warmup_bytes()
    _load_each(forms["plain"])
    return _load_each(forms["packed"])


def warm_icicle(trace, _other=None) -> None:
    """The icicle layout with the defaults and the options that run other kernels."""
    from .layout.icicle import icicle_layout
    from .params.icicle import IcicleParams

    for kw in ({}, {"color_by": "kind", "fold": "none"}, {"fold": "1:2", "hide": ["^f1 "],
                                                           "hide_modules": ["pkg.mod2"]},
               {"color_by": "self", "extrude_measure": "calls", "cluster_px": 0.0}):
        icicle_layout(trace, IcicleParams.from_dict(kw))
    from .layout import icicle

    gathered, icicle.GATHERED_MAX_CALLS = icicle.GATHERED_MAX_CALLS, 0  # the 10^7-call overview's reads in place
    try:
        icicle_layout(trace, IcicleParams())
    finally:
        icicle.GATHERED_MAX_CALLS = gathered
    _squeeze_search()
    _async_rows()
    _recursion_towers()
    _inset_stretch()
    _inset_over_calls_in_place()


def _recursion_towers() -> None:
    """The recursion stage's grouping (`kernels.recursion.running_max_by_segment`): only a
    trace with a recursion at least 12 levels deep runs it."""
    import numpy as np

    from .kernels.recursion import running_max_by_segment

    running_max_by_segment(np.zeros(2), np.ones(2, np.bool_))


def _inset_over_calls_in_place() -> None:
    """The inset planner's passes over calls read where they lie (`kernels.overview_drawn`:
    `unnamed_boxes`, `named_functions_of`): only a figure of more than `GATHERED_MAX_CALLS`
    calls with room for an inset runs them; the argument types are those of
    `layout.inset_plan` (int32 selections and ids, float64 times)."""
    import numpy as np

    from .kernels.overview_drawn import named_functions_of, unnamed_boxes

    i32, f64, yes = np.zeros(2, np.int32), np.zeros(2), np.zeros(2, np.bool_)
    unnamed_boxes(i32, i32, True, f64, np.ones(2), 0.0, 1.0, i32, i32, yes, np.full(2, -1, np.int32), yes, yes,
                  np.ones(2))
    named_functions_of(i32, i32, True, np.zeros(2, np.int64), i32, 0, np.ones(1, np.bool_), np.zeros(2, np.bool_))


def _inset_stretch() -> None:
    """The detail inset's stretch search (`kernels.stretch.best_stretch`): only a figure with a
    crowded stretch and free room runs it."""
    import numpy as np

    from .kernels.stretch import best_stretch

    best_stretch(np.zeros(2, np.int64), np.zeros(2), np.ones(2), np.zeros(2, np.int64), np.ones(2, np.bool_),
                 np.ones(1))


def _async_rows() -> None:
    """The async lanes' row packing (`kernels.rows.pack_rows`): only a trace with async
    slices runs it."""
    import numpy as np

    from .kernels.rows import merge_row_boxes, pack_rows

    row, _, _ = pack_rows(np.zeros(2), np.ones(2), 2)
    merge_row_boxes(np.zeros(2), np.ones(2), row, 2, 1.0)


def _squeeze_search() -> None:
    """The fold's squeeze bisection (`kernels.fold_reduce`: the reduced tree and its tops),
    which only a lane taller than its budget runs: a small trace never does, a real one often."""
    import numpy as np

    from .kernels.fold_reduce import envelope_tops, kept_tree, reduced_tops, subpixel_stubs, tiny_subtrees

    n, f8, b1, i4 = 3, np.float64, np.bool_, np.int32
    parent = np.array([-1, 0, 1], i4)  # the dtypes of `layout.fold.fold_levels`
    from .kernels.drawn import range_by_key

    range_by_key(np.zeros(2, np.int64), np.zeros(2, np.int64), 1)  # the label stage's slots per function
    local_end = np.array([3, 3, 3], i4)
    # the ring's cut (`layout.subpixel`): its envelopes go into the reduction
    env = subpixel_stubs(parent, local_end, np.array([2.0, 0.5, 0.1]), np.zeros(n, b1), 1.0, 16, 12)
    keep, env_first, env_count, pool_a, pool_b, pool_u = tiny_subtrees(
        parent, local_end, np.ones(n, f8), np.ones(n, f8), np.zeros(n, b1), np.zeros(n, b1),
        np.zeros(n, b1), 10.0, 8, 12, *env[1:6])
    kept, kept_parent = kept_tree(keep, parent)
    m = kept.size
    envelope_tops(np.ones(m, f8), np.zeros(m, i4), np.ones(m, f8), np.full(1, 10.0), np.ones((1, 5)),
                  env_first[kept], env_count[kept], pool_a, pool_b, pool_u)
    reduced_tops(kept_parent, np.zeros(m, i4), np.ones(m, f8), np.ones(m, f8), np.zeros(m, b1), np.zeros(m, b1),
                 np.zeros(m, b1), env_first[kept], env_count[kept], pool_a, pool_b, pool_u, np.full(1, np.inf),
                 np.full(1, 10.0), np.ones((1, 5)), np.empty(m, b1), np.empty(m, np.int8), np.empty(m, f8),
                 np.empty(m, i4), np.empty(m, f8), np.empty(m, f8), np.empty(m, b1), np.empty(m, i4))


def warm_threads(trace, _other=None) -> None:
    """The thread view: analysis, layout, and the ring/ribbon mesh kernels its writer uses."""
    import numpy as np

    from .analysis.synchronisation import synchronisation
    from .kernels.ring import ribbon_mesh, sector_mesh
    from .layout.threads import threads_layout
    from .layout.threads_params import ThreadsParams

    # the critical path on: its kernels too (`kernels.critical_path`)
    spec = threads_layout(trace, ThreadsParams(resolution=(320, 180), critical_path=True), synchronisation(trace))
    for lay in spec.layers:
        if type(lay).__name__ == "SectorLayer" and len(lay):
            a, r, h = (np.ascontiguousarray(x, np.float64) for x in (lay.angles, lay.radii, lay.heights))
            sector_mesh(0.0, 0.0, a[:, 0].copy(), a[:, 1].copy(), r[:, 0].copy(), r[:, 1].copy(), h[:, 0].copy(),
                        h[:, 1].copy(), 0.03)
        elif type(lay).__name__ == "CurveLayer":
            ribbon_mesh(np.zeros((1, 2, 3)), np.ones((1, 2, 3)))


def warm_extravis(trace, _other=None) -> None:
    """The EXTRAVIS view: hierarchy, call importance (`kernels.extravis.window_frequency`), the
    IBAA mural (`mural_ibaa`) and the bundles, in both colour modes."""
    from .layout.extravis import extravis_layout
    from .params.extravis import ExtravisParams

    for kw in ({}, {"color_mode": "time", "level": "class", "highlight": ["pkg"]}):
        extravis_layout(trace, ExtravisParams(resolution=(320, 180), **kw))


def _compare_scene(cmp) -> None:
    """The comparison scene's kernels: layout (control trees, bundles, tube widths, top-k)
    and the tube mesh the Blender writer makes from it."""
    import numpy as np

    from .kernels.tree import single_marked_descent
    from .kernels.tubes import ring_keep, tube_edges, tube_mesh
    from .layout.compare import CompareParams, compare_layout

    spec = compare_layout(cmp, CompareParams(resolution=(480, 270)))
    # the phase split's descent, which a small pair may not reach
    single_marked_descent(cmp.a.end_index, np.arange(len(cmp.a) + 1, dtype=np.int64), 0)
    tubes = next((layer for layer in spec.layers if layer.name == "tubes"), None)
    if tubes is not None and len(tubes):
        c, hx, hy = (np.ascontiguousarray(a, np.float64) for a in (tubes.centres, tubes.half_x, tubes.half_y))
        keep = ring_keep(c, hx, hy, float(tubes.ring_tolerance))
        rings = tube_mesh(c, hx, hy, tubes.sides_per_tube(), keep)[3]
        tube_edges(rings, tubes.sides_per_tube())


def _structure_all(trace, _other=None) -> None:
    """Compact DAG and file, filters (patterns, utilities, collapse), search (the cone tree:
    `warm_cone`, in the same step)."""
    import tempfile

    from .analysis.filters import FilterSpec, filter_trace, repeated_patterns
    from .analysis.search import search_calls
    from .analysis.structure import structure_of
    from .io.compact import load_compact, save_compact

    structure_of(trace)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "warmup.tv3c")
        save_compact(trace, p)
        with open(p, "rb") as f:
            load_compact(f.read(), source="<warmup compact>")
    repeated_patterns(trace, ignore_order=True, collapse_runs=True, max_depth=2)
    filter_trace(trace, FilterSpec(hide_utilities=2, collapse_patterns=True))
    search_calls(trace, "f1")


def warm_memory(trace, _other=None) -> None:
    """The memory view: our memray reader's scan (`kernels.memray_scan`) on a tiny capture made in
    code (`io.samples.memray`), its ranges and snapshots (`kernels.memcov`), and the view's layout
    grouped each way, alone and under the made-up trace's icicle and strip (a first capture had
    compiled for ~19 s in silence: the view had no warm-up)."""
    from .io import load_memory_bytes
    from .io.samples import memray
    from .layout.memory_calls import memory_figure
    from .params.memory import MemoryParams

    cap = load_memory_bytes(memray(), source="<warmup memray>", warn=False, reader="own")
    for group_by in ("site", "module", "range"):
        memory_figure(cap, MemoryParams(group_by=group_by, bins=64))
    if trace is not None:
        for calls_view in ("icicle", "strip"):
            memory_figure(cap, MemoryParams(calls_view=calls_view, bins=64), calls=trace)


def warm_cone(trace, _other=None) -> None:
    """The cone tree's layout."""
    from .layout.cone import ConeParams, cone_layout

    cone_layout(trace, ConeParams(max_nodes=40, hide_utilities=1, resolution=(640, 360)))


def warm_compare(a, b) -> None:
    """The comparison of the two made-up traces and its scene's kernels (`_compare`, `_compare_scene`)."""
    _compare_scene(_compare(a, b))


def _compare(a, b):
    """Both ways of consuming the class pairs: streamed and kept (the default on small traces)
    and fused into the join, not kept (`kernels.setjoin_fused`, the default on large ones),
    that one also past an overview budget (its sample drawn by rows' keys, `overview_rows.row_key`)."""
    from .analysis.comparison import compare_traces

    compare_traces(a, b, keep_class_pairs=False)
    compare_traces(a, b, keep_class_pairs=False, overview_budget=1)
    return compare_traces(a, b)


#: the warm-up in four parts for processes side by side (`tools/kernel_caches.py`, two at a time,
#: each with its own cache, merged at the end): part 1 compiles the loads alone (every part that
#: needs the made-up traces loads them, `TRACE_FREE_STEPS`); parts 3 and 4 start from a copy of
#: part 1's cache, so their loads read those kernels instead of compiling them again (two halves
#: that each loaded compiled the same 237 load signatures twice: ~85 CPU s of ~470); part 2 runs
#: beside part 1.  CPU seconds from an empty cache, generic CPU, quiet (each step's line prints
#: its own): load ~85, formats ~90, compare ~155, layout ~30, structure ~20, live ~2; so on two
#: cores 1 then 3 (~245 s) beside 2 then 4 (~145 s).  Together they compile the very signatures
#: the whole warm-up does.  A step of a view that none names runs in part 4.
PARTS = {1: (), 2: ("formats",), 3: ("compare",),
         4: tuple(s for s in STEPS[1:] if s not in ("formats", "compare"))}
#: the steps that need no made-up traces (a part of these only loads none)
TRACE_FREE_STEPS = ("formats",)
#: what a step runs besides its views' warm-up functions (`tracevis3d.views.View.warm`)
STEP_EXTRAS = {"formats": lambda _a, _b: _formats_all(), "structure": _structure_all}


def step_functions(step: str) -> list:
    """What warm-up step ``step`` runs, in order: its extras, then the warm-up function of every
    view whose step it is (registry order); each is called as ``f(trace_a, trace_b)``."""
    extra = [STEP_EXTRAS[step]] if step in STEP_EXTRAS else []
    return extra + [resolve(v.warm) for v in VIEWS if v.warmup == step and v.warm]


def run(steps=STEPS, out=sys.stderr, part: int = 0) -> dict:
    """Run the warm-up steps (``part`` 1-4: those of that part, `PARTS`); {step: seconds}."""
    times = {}
    a = c = None
    if part in (0, 1) or set(PARTS[part]) - set(TRACE_FREE_STEPS):
        t, cpu = time.perf_counter(), time.process_time()
        a, c = _load_all()
        times["load"] = time.perf_counter() - t
        # the CPU seconds too: on a loaded machine they, not the wall time, say what a step costs (`PARTS`)
        print(f"warmup: load kernels ready in {times['load']:.1f} s ({time.process_time() - cpu:.1f} s CPU)",
              file=out)
    for step in STEPS[1:]:
        if step in steps and (part == 0 or step in PARTS[part]):
            t, cpu = time.perf_counter(), time.process_time()
            for warm in step_functions(step):
                warm(a, c)
            times[step] = time.perf_counter() - t
            print(f"warmup: {step} kernels ready in {times[step]:.1f} s ({time.process_time() - cpu:.1f} s CPU)",
                  file=out)
    return times


def _formats_all() -> None:
    """Every format reader on a tiny file of its format (`warmup_formats.load_every_format`)."""
    from .warmup_formats import load_every_format

    failed = {k: v for k, v in load_every_format().items() if isinstance(v, str)}
    if failed:
        print(f"warmup: formats not warmed: {failed}", file=sys.stderr)


def warm_live(_a=None, _b=None) -> None:
    """The live subscriber's stack kernel (tracevis3d.kernels.live) on a few events, and the
    sub-pixel cluster kernel the live view runs at its slow rate."""
    import numpy as np

    from .layout.cluster import cluster_subpixel_calls
    from .live.session import warm_stack_kernel

    cluster_subpixel_calls(np.zeros(2), np.ones(2), np.zeros(2, np.int32), np.zeros(2, np.int32), np.ones(1),
                           np.ones(1), np.zeros(2, np.int64))
    warm_stack_kernel()


live_all = warm_live  # what the live view runs when it connects (`blender.live_view.LiveView`)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--install"]:  # the extension's background process: shipped caches first
        from .kernel_cache import ensure_installed

        argv = argv[1:]
        print(f"warmup: pre-built kernels: {ensure_installed()}", file=sys.stderr)
        try:
            os.nice(10)  # the user's own work comes first
        except (AttributeError, OSError):
            pass
    part = 0
    if argv[:1] == ["--part"]:  # tools/kernel_caches.py: one part, in a process of its own
        if len(argv) < 2 or argv[1] not in map(str, PARTS):
            print(f"tracevis3d.warmup: error: --part takes {', '.join(map(str, PARTS))}", file=sys.stderr)
            return 2
        part, argv = int(argv[1]), argv[2:]
    steps = tuple(argv[0].split(",")) if argv else STEPS
    unknown = set(steps) - set(STEPS)
    if unknown:
        print(f"tracevis3d.warmup: error: unknown step(s) {sorted(unknown)}; use {','.join(STEPS)}", file=sys.stderr)
        return 2
    run(steps, part=part)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
