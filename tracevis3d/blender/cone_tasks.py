"""The cone-tree scene as a job (layout off the main thread, the scene in short steps), as
`tasks.build_steps` does for the icicle; records how it was built in ``scene[CONE_KEY]``."""
from __future__ import annotations

import json
import os
import time

import bpy

from ..jobs import Job
from .session import prepare_kernels
from .writer import write_scene_steps

CONE_KEY = "tracevis3d_cone"


def _cone_layout(trace, params):
    from ..layout.cone import ConeParams, cone_layout

    if isinstance(params, dict):
        params = ConeParams(**params)
    params = (params or ConeParams()).validate()
    return params, cone_layout(trace, params)


def cone_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                     trace_path=None, span=(0.0, 1.0)):
    scene = scene or bpy.context.scene
    a, b = span
    yield job.off_main(prepare_kernels)
    job.report(a, f"cone tree of {len(trace):,} calls")
    t0 = time.perf_counter()
    params, spec = yield job.off_main(_cone_layout, trace, params)
    t_layout = time.perf_counter() - t0
    m = spec.meta
    job.report(a + 0.3 * (b - a), f"layout: {m['n_nodes']:,} of {m['n_contexts']:,} calling contexts")
    out = yield from write_scene_steps(spec, collection_name, scene=scene, on_cleanup=job.on_cleanup,
                                       progress=lambda f, t: job.report(a + (0.3 + 0.7 * f) * (b - a), t))
    out["meta"] = {k: v for k, v in m.items() if k not in ("params", "node_positions", "node_radius", "node_parent")}
    out["timings"]["layout"] = t_layout
    path = trace_path if trace_path is not None else trace.meta.get("source")
    path = os.path.abspath(os.fspath(path)) if path and not str(path).startswith("<") else None
    scene[CONE_KEY] = json.dumps({"trace_path": path, "params": params.to_dict()})
    return out


def cone_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None) -> Job:
    """A `Job` that builds the cone tree of a loaded trace (`cone_build_steps`)."""
    return Job("cone tree", cone_build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0))
