"""The thread view as a `Job`: analysis and layout in a worker, the scene in short
main-thread steps (the pattern of `tasks.build_steps`)."""
from __future__ import annotations

import time
import weakref

import bpy

from ..jobs import Job
from .tasks import layout_and_write_steps

THREADS_KEY = "tv3d_threads"
_SYNC: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def last_sync(trace):
    """The `Synchronisation` last computed for ``trace`` in this session, or None."""
    return _SYNC.get(trace) if trace is not None else None


def analysed_traces() -> list:
    """The traces whose `Synchronisation` this session keeps (`last_sync`)."""
    return list(_SYNC.keys())


def _analyse_and_layout(trace, params, sync=None):
    from ..analysis.synchronisation import synchronisation
    from ..layout.threads import threads_layout
    from ..layout.threads_params import ThreadsParams

    params = ThreadsParams.given(params)
    t = time.perf_counter()
    sync = sync if sync is not None else synchronisation(trace)
    t_sync = time.perf_counter() - t
    return params, threads_layout(trace, params, sync), sync, t_sync


def threads_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                        sync=None, remove_startup: bool = False):
    """Analysis + layout (worker), then the scene; returns {collection, objects, timings,
    meta, sync}.  Records the parameters in ``scene[THREADS_KEY]`` (JSON)."""
    import json

    from ..kernel_cache import cold_note

    scene = scene or bpy.context.scene
    job.report(0.0, f"{cold_note('layout')}who waits on whom in {len(trace):,} calls")
    params, _, (sync, t_sync), out = yield from layout_and_write_steps(
        job, _analyse_and_layout, (trace, params, sync),
        lambda m, sync, _t: (f"layout: {len(sync):,} correspondences, {m['n_curves']:,} curves, "
                             f"{m['n_compound']:,} compound curves"),
        scene, collection_name, remove_startup=remove_startup)
    out["timings"].update(synchronisation=t_sync, layout=out["timings"]["layout"] - t_sync)
    out["sync"] = sync
    _SYNC[trace] = sync
    scene[THREADS_KEY] = json.dumps({"params": params.to_dict(), "source": trace.meta.get("source")}, default=str)
    return out


def threads_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", sync=None,
                      remove_startup: bool = False) -> Job:
    return Job("threads scene", threads_build_steps, trace, params, scene, collection_name, sync, remove_startup)
