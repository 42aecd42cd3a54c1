"""``render-icicle TRACE -o fig.png``: the extruded icicle from the command line."""
from __future__ import annotations

import os

from .common import (FOOTER, _build, _fill_scene_settings, _progress, _render_and_save, _start_render, add_view_command,
                     view_params)

EXAMPLES = """examples:
  python -m tracevis3d render-icicle trace.json -o fig.png
  python -m tracevis3d render-icicle trace.json.gz -o fig.jpg --threads MainThread --window 0:50ms
  blender --background --command tracevis3d render-icicle trace.json -o fig.exr --save scene.blend
""" + FOOTER


def add_parsers(sub) -> None:
    add_view_command(sub, "render-icicle",
                     "Render the extruded 3D icicle of a trace to an image: x is time,\n"
                     "height is stack depth, one lane per thread.", EXAMPLES)



def icicle_params(args):
    """The `IcicleParams` of the parsed arguments (ValueError on a bad combination)."""
    return view_params("icicle", args)


def render_icicle(args) -> str:
    out, save, params, trace, scene = _start_render(args, icicle_params)
    trace_path = os.path.abspath(args.trace)
    from ..blender.tasks import build_job

    info = _build(build_job(trace, params, scene=scene, trace_path=trace_path), args.trace, 0.1, 0.6)
    _fill_scene_settings(scene, "icicle")
    m = info["meta"]
    _progress(0.6, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
                   f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s")
    if m.get("inset"):
        ins = m["inset"]
        _progress(0.6, f"detail inset: {ins['caption']}, {ins['new_functions']} more functions named")
    elif m.get("inset_note"):
        _progress(0.6, f"no detail inset: {m['inset_note']}")
    if params.critical_path:  # the path's shares as text too (computed once, by the build)
        import sys

        from ..layout.critical_path import path_of

        sys.stderr.write(path_of(trace).summary() + "\n")
    return _render_and_save(args, scene, out, save)


COMMANDS = {"render-icicle": render_icicle}
