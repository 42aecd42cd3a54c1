"""``render-extravis TRACE -o fig.png``: EXTRAVIS (circular bundle view and massive sequence view
of one time window) from the command line, sharing render-icicle's output, load, build and
render code (`cli.common`)."""
from __future__ import annotations

import os

EXTRAVIS_EXAMPLES = """examples:
  python -m tracevis3d render-extravis trace.json -o extravis.png
  python -m tracevis3d render-extravis trace.json -o e.png --level class --beta 0.7 --power -2
  python -m tracevis3d render-extravis trace.json -o e.png --window 0:200ms --color-mode time
  python -m tracevis3d render-extravis trace.json -o e.png --highlight 'docutils\\.nodes'
"""


def add_extravis_parser(sub) -> None:
    from ..params.cli import add_command
    from ..params.extravis import EXTRAVIS
    from ..params.render import RENDER
    from .common import _Help

    add_command(sub, "render-extravis", help="render who calls whom and when (EXTRAVIS) to an image",
                description="Render EXTRAVIS' two linked views of one time window: the hierarchy's elements\n"
                            "on a circle with an icicle ring around them and a bundled tube for every\n"
                            "caller → callee pair (left), and every call as a row from its caller's column\n"
                            "to its callee's, the first at the top (right).",
                epilog=EXTRAVIS_EXAMPLES, formatter=_Help,
                positionals=[("trace", "TRACE", "trace file (Chrome JSON from VizTracer etc., .json.gz, native)")],
                schemas=[RENDER, EXTRAVIS])


def extravis_params(args):
    from ..params.cli import values
    from ..params.extravis import EXTRAVIS, ExtravisParams

    return ExtravisParams(**values(args, EXTRAVIS)).validate()


def render_extravis(args) -> str:
    from . import common as cli

    out, save, params, trace, scene = cli._start_render(args, extravis_params)
    from ..blender.extravis_tasks import extravis_build_job

    info = cli._build(extravis_build_job(trace, params, scene=scene, trace_path=os.path.abspath(args.trace)),
                      args.trace, 0.1, 0.6)
    m = info["meta"]
    cli._progress(0.6, f"scene: {m['n_tubes']:,} tubes of {m['n_pairs']:,} element pairs, {m['n_calls']:,} calls, "
                       f"{m['n_labels']} names in {info['timings']['total']:.2f} s")
    return cli._render_and_save(args, scene, out, save)


__all__ = ["add_extravis_parser", "render_extravis"]
