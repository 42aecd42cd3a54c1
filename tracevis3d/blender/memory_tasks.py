"""The memory view's scene as a job (layout off the main thread, the scene in short steps), as
`tasks.build_steps` does for the icicle; records how it was built, and what picking a band
says, in ``scene[MEMORY_KEY]``.  `pick_band` answers a view ray with the band under it."""
from __future__ import annotations

import json

import numpy as np

import bpy

from ..jobs import Job
from .compat import positions_and_scales
from .session import load_steps, prepare_kernels
from .tasks import layout_and_write_steps, source_path

MEMORY_KEY = "tracevis3d_memory"


def _memory_layout(capture, params, calls=None, calls_offset_us=None):
    from ..layout.memory_calls import memory_figure
    from ..params.memory import MemoryParams

    params = MemoryParams.given(params)
    return params, memory_figure(capture, params, calls, calls_offset_us)


def memory_build_steps(job: Job, capture, params=None, scene=None, collection_name: str = "TraceVis3D",
                       span=(0.0, 1.0), calls=None, calls_offset_us=None):
    from ..params.memory import MemoryParams

    scene = scene or bpy.context.scene
    params = MemoryParams.given(params)
    if calls is None and params.calls_trace:  # the panel's and a script's call trace (the CLI loads its own)
        calls = yield from load_steps(job, params.calls_trace, (span[0], span[0] + 0.2 * (span[1] - span[0])))
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"memory view of {capture.n_ranges:,} ranges")
    params, spec, _, out = yield from layout_and_write_steps(
        job, _memory_layout, (capture, params, calls, calls_offset_us),
        lambda m: f"layout: {m['n_groups']:,} bands ({m['n_aggregates']:,} grey aggregates), {m['n_boxes']:,} columns",
        scene, collection_name, span)
    bands = out["meta"].pop("bands", None)
    live = capture.meta.get("live")  # a stream's capture (`io.memray_live`) has no file to reopen
    scene[MEMORY_KEY] = json.dumps({"capture_path": None if live else source_path(capture.source), "live": live,
                                    "params": params.to_dict(),
                                    "bin_ms": spec.meta["bin_ms"], "chart_w": spec.meta["chart_w"],
                                    "bytes_per_unit": spec.meta["bytes_per_unit"], "bands": bands})
    return out


def memory_build_job(capture, params=None, scene=None, collection_name: str = "TraceVis3D", calls=None) -> Job:
    """A `Job` that builds the memory view of a loaded `MemoryCapture` (`memory_build_steps`);
    ``calls``: a `Trace` of the same run, drawn above the bands on the capture's clock: its whole
    icicle, or a strip of its outermost calls (``params.calls_view``, `layout.memory_calls`);
    without it, the trace at ``params.calls_trace`` if one is named (loaded as the panel loads one)."""
    return Job("memory view", memory_build_steps, capture, params, scene, collection_name, (0.0, 1.0), calls)


def build_memory(capture, params=None, calls=None, scene=None, collection_name: str = "TraceVis3D",
                 progress=None) -> dict:
    """Write (or replace) the memory view of ``capture`` (a `MemoryCapture`, `tracevis3d.load_memory`)
    into the scene, as `scene.build_icicle` does for a trace: the build job run to its end.
    ``calls``: a `Trace` of the same run (or ``params.calls_trace``, a file), drawn above the bands
    as ``params.calls_view`` says (its whole icicle by default).  ``progress(fraction, text)`` is
    called for every step.  Returns the build's objects, timings and the layout's ``meta``."""
    job = memory_build_job(capture, params, scene=scene, collection_name=collection_name, calls=calls)
    if progress is not None:
        job.listeners.append(lambda j: progress(j.fraction, j.text))
    return job.run(interval=0.02)


def pick_band(origin, direction, scene=None, collection_name: str = "TraceVis3D") -> dict | None:
    """The band (or leak cap) the world-space ray hits first: its record from the build (name,
    peak bytes, first/last allocation, threads, heaviest stack; a single range's size and
    address) with the moment hit (``at_ms``), the bytes the band holds there (``held_bytes``)
    and the age of the band's memory then (``age_ms``: since its first allocation).  None when
    no band is hit."""
    from .raycast import mesh_attribute, world_ray, ray_box_hits
    from .writer import is_layer_object

    scene = scene or bpy.context.scene
    rec = json.loads(scene.get(MEMORY_KEY, "{}") or "{}")
    coll = bpy.data.collections.get(collection_name)
    if coll is None or not rec:
        return None
    best = (np.inf, None)
    for ob in coll.objects:
        if not is_layer_object(ob) or "band_index" not in ob.data.attributes:
            continue
        n = len(ob.data.attributes["band_index"].data)
        pos, sc = positions_and_scales(ob, n)
        o, d = world_ray(ob, origin, direction)
        t = ray_box_hits(o, d, pos.astype(np.float64), sc.astype(np.float64))
        k = int(np.argmin(t)) if n else -1
        if k >= 0 and np.isfinite(t[k]) and t[k] < best[0]:
            band = int(mesh_attribute(ob.data, "band_index", n, np.int32)[k])
            col = int(mesh_attribute(ob.data, "bin_index", n, np.int32)[k])
            best = (float(t[k]), (band, col, float(sc[k, 2]), ob.name))
    if best[1] is None:
        return None
    band, col, height, name = best[1]
    info = dict((rec.get("bands") or [{}] * (band + 1))[band] or {})
    at = (col + 0.5) * rec["bin_ms"]
    info.update({"kind": "band", "band": band, "object": name, "at_ms": at,
                 "held_bytes": height * rec["bytes_per_unit"], "distance": best[0]})
    if "first_ms" in info:
        info["age_ms"] = max(at - info["first_ms"], 0.0)
    return info
