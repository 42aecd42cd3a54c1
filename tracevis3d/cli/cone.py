"""``render-cone TRACE -o fig.png``: the cone tree of the calling-context tree (`layout.cone`),
sharing render-icicle's output, load, build and render code (`cli`)."""
from __future__ import annotations

import os


def add_parsers(sub) -> None:
    from .common import add_view_command

    add_view_command(sub, "render-cone",
                     "Render the call hierarchy as a 3D cone tree (Robertson et al. 1991): calls merged by "
                     "their path from the root (calling contexts), the largest by inclusive time drawn as "
                     "spheres at the apex of their cone, children on its base circle; nodes with more below "
                     "carry a dark stub (partially expanded).")



def cone_params(args):
    from .common import view_params

    return view_params("cone", args)


def render_cone(args) -> str:
    from . import common as cli

    out, save, params, trace, scene = cli._start_render(args, cone_params)
    trace_path = os.path.abspath(args.trace)
    from ..blender.cone_tasks import cone_build_job

    info = cli._build(cone_build_job(trace, params, scene=scene, trace_path=trace_path), args.trace, 0.1, 0.6)
    m = info["meta"]
    cli._progress(0.6, f"scene: {m['n_nodes']} of {m['n_contexts']} calling contexts, {m['n_partial']} partially "
                       f"expanded, {m['n_labels']} labels in {info['timings']['total']:.2f} s")
    cli._fill_scene_settings(scene, "cone")
    return cli._render_and_save(args, scene, out, save)


COMMANDS = {"render-cone": render_cone}
