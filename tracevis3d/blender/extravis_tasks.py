"""The EXTRAVIS scene as a job (layout off the main thread, the scene in short steps), as
`cone_tasks` does for the cone tree; records how it was built in ``scene[EXTRAVIS_KEY]``."""
from __future__ import annotations

import json

import bpy

from ..jobs import Job
from .session import prepare_kernels
from .tasks import layout_and_write_steps, source_path

EXTRAVIS_KEY = "tracevis3d_extravis"


def _extravis_layout(trace, params):
    from ..layout.extravis import extravis_layout
    from ..params.extravis import ExtravisParams

    if isinstance(params, dict):
        params = ExtravisParams(**params)
    params = (params or ExtravisParams()).validate()
    return params, extravis_layout(trace, params)


def extravis_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                         trace_path=None, span=(0.0, 1.0)):
    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"EXTRAVIS view of {len(trace):,} calls")
    params, _, _, out = yield from layout_and_write_steps(
        job, _extravis_layout, (trace, params),
        lambda m: f"layout: {m['n_tubes']:,} relation tubes, {m['n_calls']:,} calls in a "
                  f"{m['mural_px'][0]}x{m['mural_px'][1]} mural", scene, collection_name, span)
    path = source_path(trace_path if trace_path is not None else trace.meta.get("source"))
    scene[EXTRAVIS_KEY] = json.dumps({"trace_path": path, "params": params.to_dict()})
    return out


def extravis_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None) -> Job:
    """A `Job` that builds the EXTRAVIS view of a loaded trace (`extravis_build_steps`)."""
    return Job("EXTRAVIS view", extravis_build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0))
