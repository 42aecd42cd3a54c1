"""``render-icicle TRACE -o fig.png``: the extruded icicle from the command line, rendered by
`cli.render.render_view`; its own are the parser and `describe`."""
from __future__ import annotations

from .common import FOOTER, add_view_command, view_params

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


def describe(info: dict, params, trace, args) -> tuple:
    """The scene's boxes and clusters, its detail inset; the critical path's shares when drawn
    (`cli.render.describe_view`)."""
    m = info["meta"]
    lines = [f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
             f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s"]
    if m.get("inset"):
        ins = m["inset"]
        lines.append(f"detail inset: {ins['caption']}, {ins['new_functions']} more functions named")
    elif m.get("inset_note"):
        lines.append(f"no detail inset: {m['inset_note']}")
    notes = []
    if params.critical_path:  # the path's shares as text too (computed once, by the build)
        from ..layout.critical_path import path_of

        notes.append(path_of(trace).summary())
    return lines, notes


def prepare(args, trace) -> dict:
    """The build job's keywords (`cli.render.render_view`): the trace's absolute path, which the
    scene records; the overview's colours kept for zooms only when the scene is saved
    (``--save``): a render that ends the process has no zoom to come."""
    import os

    return {"trace_path": os.path.abspath(args.trace), "keep_for_zooms": bool(args.save)}


def render_icicle(args) -> str:
    from .render import render_view

    return render_view("icicle", args)


COMMANDS = {"render-icicle": render_icicle}
