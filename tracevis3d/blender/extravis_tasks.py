"""The EXTRAVIS scene as a job (layout off the main thread, the scene in short steps), as
`cone_tasks` does for the cone tree; records how it was built in ``scene[EXTRAVIS_KEY]``
(the trace path, the parameters and ``views``: both, heb or sequence)."""
from __future__ import annotations

import json

import bpy

from ..jobs import Job
from .session import prepare_kernels
from .tasks import layout_and_write_steps, source_path

EXTRAVIS_KEY = "tracevis3d_extravis"


def _extravis_layout(trace, params, views="both"):
    from ..layout.extravis import extravis_layout
    from ..params.extravis import ExtravisParams

    if isinstance(params, dict):
        params = ExtravisParams(**params)
    params = (params or ExtravisParams()).validate()
    return params, extravis_layout(trace, params, views=views)


def extravis_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                         trace_path=None, span=(0.0, 1.0), views: str = "both"):
    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"EXTRAVIS view of {len(trace):,} calls")
    params, _, _, out = yield from layout_and_write_steps(
        job, _extravis_layout, (trace, params, views),
        lambda m: f"layout: {m['n_tubes']:,} relation tubes, {m['n_calls']:,} calls in a "
                  f"{m['mural_px'][0]}x{m['mural_px'][1]} mural", scene, collection_name, span)
    path = source_path(trace_path if trace_path is not None else trace.meta.get("source"))
    scene[EXTRAVIS_KEY] = json.dumps({"trace_path": path, "params": params.to_dict(), "views": views})
    return out


def read_extravis_record(scene) -> dict | None:
    """The scene's EXTRAVIS build record {"trace_path", "params": `ExtravisParams`, "views"},
    or None when the scene holds no EXTRAVIS view (or an unreadable record)."""
    from ..params.extravis import ExtravisParams

    raw = scene.get(EXTRAVIS_KEY) if scene is not None else None
    try:
        rec = json.loads(raw) if raw else None
        if not isinstance(rec, dict):
            return None
        return {"trace_path": rec.get("trace_path"), "params": ExtravisParams.from_known(rec.get("params") or {}),
                "views": rec.get("views", "both")}
    except (ValueError, TypeError):
        return None


def extravis_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None,
                       views: str = "both") -> Job:
    """A `Job` that builds the EXTRAVIS view of a loaded trace (`extravis_build_steps`);
    ``views``: both, heb or sequence (`layout.extravis.VIEWS`)."""
    return Job("EXTRAVIS view", extravis_build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0),
               views)
