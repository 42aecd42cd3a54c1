"""``render-cone TRACE -o fig.png``: the cone tree of the calling-context tree (`layout.cone`),
sharing render-icicle's output, load, build and render code (`cli`)."""
from __future__ import annotations

import os


def add_cone_parser(sub, cli) -> None:
    r = sub.add_parser(
        "render-cone", help="render the cone tree of a trace's calling contexts to an image",
        description="Render the call hierarchy as a 3D cone tree (Robertson et al. 1991): calls merged by "
                    "their path from the root (calling contexts), the largest by inclusive time drawn as "
                    "spheres at the apex of their cone, children on its base circle; nodes with more below "
                    "carry a dark stub (partially expanded).", formatter_class=cli._Help)
    r.add_argument("trace", metavar="TRACE", help="Chrome Trace Event JSON (.json, .json.gz), native or compact file")
    cli._add_output_args(r, "also save the scene as a .blend file; reopening it restores the session, search "
                            "history and bookmarks included (default: not saved)")
    g = r.add_argument_group("what to show")
    g.add_argument("--max-nodes", type=cli._int_at_least(1, "max nodes"), default=300, metavar="N",
                   help="calling contexts drawn, the largest by inclusive time (default: 300; cone trees "
                        "clutter past ~1000)")
    g.add_argument("--fold", type=cli._fold, default="auto", metavar="RULE",
                   help="merge calls away, their children hang from their caller: auto (runtime "
                        "infrastructure: imports, runpy, exec, thread start-up), none, or stack level ranges "
                        "A:B[,C:D] (default: auto)")
    cli._add_hide_args(g)
    cli._add_filter_args(g)
    cli._add_highlight_arg(g)
    g.add_argument("--expand-recursion", action="store_true",
                   help="one level per recursive call (default: direct recursion is one node, labelled '(N× recursive)')")
    g = r.add_argument_group("appearance")
    g.add_argument("--orientation", choices=["auto", "vertical", "horizontal"], default="auto",
                   help="vertical: root on top; horizontal: root on the left; auto: the one that shows the tree "
                        "larger (default: auto)")
    g.add_argument("--color-by", choices=["auto", "module", "function", "kind"], default="auto",
                   help="node colour (default: auto, module or function as in render-icicle)")
    cli._add_label_px_arg(g)
    g.add_argument("--max-labels", type=cli._int_at_least(0, "max labels"), default=60, metavar="N",
                   help="names on the N largest nodes that fit without overlapping (default: 60)")
    g.add_argument("--no-legend", action="store_true", help="no colour legend (default: legend on)")
    g.add_argument("--title", metavar="TEXT", help="figure title (default: automatic)")
    g.add_argument("--no-title", action="store_true", help="no figure title (default: title on)")


def cone_params(args):
    from ..layout.cone import ConeParams

    return ConeParams(max_nodes=args.max_nodes, orientation=args.orientation, fold=args.fold,
                      fold_recursion=not args.expand_recursion,
                      hide=list(args.hide),
                      hide_modules=list(args.hide_module), hide_utilities=args.hide_utilities,
                      collapse_patterns=args.collapse_patterns, highlight=list(args.highlight),
                      color_by=args.color_by,
                      resolution=args.resolution, label_px=args.label_px, max_labels=args.max_labels,
                      show_legend=not args.no_legend, show_title=not args.no_title, title=args.title).validate()


def render_cone(args) -> str:
    from . import common as cli

    out, save, params, trace, scene = cli._start_render(args, cone_params)
    trace_path = os.path.abspath(args.trace)
    from ..blender.cone_tasks import cone_build_job

    info = cli._build(cone_build_job(trace, params, scene=scene, trace_path=trace_path), args.trace, 0.1, 0.6)
    m = info["meta"]
    cli._progress(0.6, f"scene: {m['n_nodes']} of {m['n_contexts']} calling contexts, {m['n_partial']} partially "
                       f"expanded, {m['n_labels']} labels in {info['timings']['total']:.2f} s")
    return cli._render_and_save(args, scene, out, save)
