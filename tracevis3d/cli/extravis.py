"""``render-extravis TRACE -o fig.png``: EXTRAVIS (circular bundle view and massive sequence view
of one time window) from the command line; ``render-heb`` and ``render-sequence``: one of the two
views alone, filling the figure (the same options, layout, build job and title/legend; only
``views`` differs, `layout.extravis.VIEWS`).  They are rendered by `cli.render.render_view`; their
own are the parsers, `prepare` (which views) and `describe`."""
from __future__ import annotations

import os

EXAMPLES = {
    "render-extravis": """examples:
  python -m tracevis3d render-extravis trace.json -o extravis.png
  python -m tracevis3d render-extravis trace.json -o e.png --level class --beta 0.7 --power -2
  python -m tracevis3d render-extravis trace.json -o e.png --window 0:200ms --color-mode time
  python -m tracevis3d render-extravis trace.json -o e.png --highlight 'docutils\\.nodes'
""",
    "render-heb": """examples:
  python -m tracevis3d render-heb trace.json -o heb.png --level class
  python -m tracevis3d render-heb trace.json -o heb.png --window 0:200ms --beta 0.6 --color-mode time
""",
    "render-sequence": """examples:
  python -m tracevis3d render-sequence trace.json -o seq.png --level module
  python -m tracevis3d render-sequence trace.json -o seq.png --window 50ms:250ms --power -2
"""}
#: command -> (views, description); the help lines are the registry's (`tracevis3d.views`)
VIEWS_OF = {
    "render-extravis": ("both", "Render EXTRAVIS' two linked views of one time window: the hierarchy's elements\n"
                                "on a circle with an icicle ring around them and a bundled tube for every\n"
                                "caller → callee pair (left), and every call as a row from its caller's column\n"
                                "to its callee's, the first at the top (right)."),
    "render-heb": ("heb", "Render EXTRAVIS' circular bundle view of one time window alone: the hierarchy's\n"
                          "elements on a circle with an icicle ring around them and a bundled tube for every\n"
                          "caller → callee pair, as wide as the calls it carries."),
    "render-sequence": ("sequence", "Render EXTRAVIS' massive sequence view of one time window alone: the hierarchy "
                                    "as\nan icicle along the top, every call a row from its caller's column to its\n"
                                    "callee's, the first at the top, rare calls kept visible."),
}


def add_parsers(sub) -> None:
    from .common import add_view_command

    for command, (_views, description) in VIEWS_OF.items():
        add_view_command(sub, command, description, EXAMPLES[command])


def extravis_params(args):
    from .common import view_params

    return view_params("extravis", args)


def _views(args) -> str:
    """The views ``args.command`` draws (`VIEWS_OF`)."""
    return VIEWS_OF.get(getattr(args, "command", None) or "render-extravis", VIEWS_OF["render-extravis"])[0]


def prepare(args, trace) -> dict:
    """The job's keywords: the trace's path (recorded by the scene) and the views the command draws."""
    return {"trace_path": os.path.abspath(args.trace), "views": _views(args)}


def describe(info: dict, params, trace, args) -> tuple:
    """The tubes, calls or mural of the views drawn, the names (`cli.render.describe_view`)."""
    m = info["meta"]
    what = {"both": f"{m['n_tubes']:,} tubes of {m['n_pairs']:,} element pairs, {m['n_calls']:,} calls",
            "heb": f"{m['n_tubes']:,} tubes of {m['n_pairs']:,} element pairs",
            "sequence": f"{m['n_calls']:,} calls in a {m['mural_px'][0]}x{m['mural_px'][1]} mural"}[_views(args)]
    return [f"scene: {what}, {m['n_labels']} names in {info['timings']['total']:.2f} s"], []


def render_extravis(args) -> str:
    """Any of the three commands (``args.command`` says which views)."""
    from .render import render_view

    return render_view("extravis", args)


COMMANDS = {command: render_extravis for command in VIEWS_OF}
__all__ = ["add_parsers", "render_extravis", "prepare", "describe", "COMMANDS"]
