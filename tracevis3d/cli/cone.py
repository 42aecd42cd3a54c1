"""``render-cone TRACE -o fig.png``: the cone tree of the calling-context tree (`layout.cone`),
rendered by `cli.render.render_view`; its own are the parser and `describe`."""
from __future__ import annotations


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


def describe(info: dict, params, trace, args) -> tuple:
    """The calling contexts drawn, partially expanded, labelled (`cli.render.describe_view`)."""
    m = info["meta"]
    return [f"scene: {m['n_nodes']} of {m['n_contexts']} calling contexts, {m['n_partial']} partially "
            f"expanded, {m['n_labels']} labels in {info['timings']['total']:.2f} s"], []


def render_cone(args) -> str:
    from .render import render_view

    return render_view("cone", args)


COMMANDS = {"render-cone": render_cone}
