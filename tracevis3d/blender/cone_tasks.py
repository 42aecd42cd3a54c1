"""The cone-tree scene as a job (layout off the main thread, the scene in short steps), as
`tasks.build_steps` does for the icicle; records how it was built in ``scene[CONE_KEY]``."""
from __future__ import annotations

import json

import bpy

from ..jobs import Job
from .session import prepare_kernels
from .tasks import layout_and_write_steps, source_path

CONE_KEY = "tracevis3d_cone"


def _cone_layout(trace, params):
    from ..layout.cone import ConeParams, cone_layout

    params = ConeParams.given(params)
    return params, cone_layout(trace, params)


def cone_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                     trace_path=None, span=(0.0, 1.0)):
    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"cone tree of {len(trace):,} calls")
    params, _, _, out = yield from layout_and_write_steps(
        job, _cone_layout, (trace, params),
        lambda m: f"layout: {m['n_nodes']:,} of {m['n_contexts']:,} calling contexts", scene, collection_name, span)
    for key in ("node_positions", "node_radius", "node_parent"):  # arrays: not for the result's meta
        out["meta"].pop(key, None)
    path = source_path(trace_path if trace_path is not None else trace.meta.get("source"))
    scene[CONE_KEY] = json.dumps({"trace_path": path, "params": params.to_dict()})
    from .zoom_inputs import keep_trace

    keep_trace(scene, trace, path, CONE_KEY)  # for the zooms: a saved scene keeps a text trace's native copy
    return out


def cone_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None) -> Job:
    """A `Job` that builds the cone tree of a loaded trace (`cone_build_steps`)."""
    return Job("cone tree", cone_build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0))
