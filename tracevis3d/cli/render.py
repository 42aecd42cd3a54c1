"""One public path from the command line to a figure: `render_view(view, args)`.

A view of the registry (`tracevis3d.views.VIEWS`) whose command draws one trace needs no code of
its own to be rendered: its outputs are checked (`common.checked_outputs`), its parameters made
from the arguments (`common.view_params`), its trace loaded (`common.params_and_trace`), a fresh
scene made, its build job (`View.job`) run, the scene described on stderr (`View.describe`), the
extension's panel filled (`common.fill_scene_settings`) and the figure rendered and saved
(`common.render_and_save`).  What a view adds is two hooks of its entry, both functions of its
command module:

- ``prepare(args, trace) -> dict``: the build job's keywords beyond ``(trace, params,
  scene=...)``, called once the trace is loaded and the scene made; it refuses a trace the view
  cannot draw with a `CLIError`.  Without one the job gets ``trace_path=`` (the trace's absolute
  path, which the scene records);
- ``describe(info, params, trace, args) -> (lines, notes)``: what the built scene holds, from the
  job's result ``info`` (``info["meta"]``, ``info["timings"]["total"]``): ``lines`` are progress
  lines, ``notes`` are written to stderr as they are (a summary, a note starting ``tracevis3d:
  note:``).

The commands whose input is no single trace (``render-compare``, ``render-memory``,
``render-live``) run their own steps on the same public pieces of `tracevis3d.cli.common`.
"""
from __future__ import annotations

import os
import sys

from .common import (build_scene, checked_outputs, fill_scene_settings, fresh_scene, params_and_trace, progress,
                     render_and_save, view_params)

__all__ = ["render_view", "build_view", "describe_view"]


def _view(view):
    from ..views import view as view_of

    return view_of(view) if isinstance(view, str) else view


def build_view(view, trace, params, scene, what: str, lo: float, hi: float, **job_options) -> dict:
    """Build ``view``'s scene of ``trace`` with ``params`` into ``scene`` by its job
    (`View.job`, with ``job_options``), progress scaled into [lo, hi]; the job's result
    (`common.build_scene`: a parameter the trace cannot satisfy exits 2 named after ``what``)."""
    from ..views import resolve

    return build_scene(resolve(_view(view).job)(trace, params, scene=scene, **job_options), what, lo, hi)


def describe_view(view, info: dict, params, trace, args, at: float = 0.6) -> None:
    """``view``'s account of the scene just built (`View.describe`): its lines as progress at
    ``at``, then its notes on stderr."""
    from ..views import resolve

    v = _view(view)
    if not v.describe:
        return
    lines, notes = resolve(v.describe)(info, params, trace, args)
    for line in lines:
        progress(at, line)
    for note in notes:
        sys.stderr.write(note + "\n")


def render_view(view, args) -> str:
    """Render ``view`` (a `views.View` or its name) of the trace ``args.trace`` with the parsed
    arguments ``args`` of its command to ``args.output`` (module docstring); the image's path.
    Exit codes as every command's: a bad argument is a `CLIError` 2, a trace that cannot be
    read or drawn 1."""
    from ..views import resolve

    v = _view(view)
    fig = checked_outputs(args)
    params, trace = params_and_trace(args, lambda a: view_params(v.name, a))
    scene = fresh_scene()
    options = resolve(v.prepare)(args, trace) if v.prepare else {"trace_path": os.path.abspath(args.trace)}
    info = build_view(v, trace, params, scene, args.trace, 0.1, 0.6, **options)
    describe_view(v, info, params, trace, args)
    fill_scene_settings(scene, v.name)
    return render_and_save(fig, scene)
