"""``render-animation TRACE -o out.mp4|FOLDER``: a figure that moves.

The view is built as its ``render-*`` command builds it (the same options), then animated
as data (`blender.animate`: Geometry Nodes on per-call attributes, camera F-curves) and
rendered frame by frame (`blender.anim_render`); ``--save`` writes the animated .blend,
which plays and renders in any Blender, without TraceVis3D and without the trace."""
from __future__ import annotations

import os
import time

from .common import (FOOTER, TRACE_HELP, CLIError, HelpFormatter, choose_device_or_exit, fill_scene_settings,
                     params_and_trace, progress)

EXAMPLES = """examples:
  python -m tracevis3d render-animation trace.json -o growth.mp4 --seconds 8 --fps 24
  python -m tracevis3d render-animation trace.json -o frames/ --kind flythrough --frames 1-120
  python -m tracevis3d render-animation trace.json -o spin.mp4 --kind turntable --save spin.blend
  python -m tracevis3d render-animation trace.json -o into.mp4 --kind flythrough --zoom-window 40ms:41ms
  python -m tracevis3d render-animation a.json b.json -o reveal.mp4 --reveal-order change
  python -m tracevis3d render-animation trace.json -o handoffs.mp4 --view threads
""" + FOOTER


def add_animation_parser(sub) -> None:
    from ..params.animation import ANIMATION, ANIMATION_RENDER, ANIMATION_VIEWS
    from ..params.cli import add_command

    r = add_command(sub, "render-animation", help="render an animation of a figure (growth, fly-through, turntable)",
                description="Render an animation of a trace's figure to a video or a folder of PNG frames:\n"
                            "calls growing over time, a camera flying along time, or an orbit.",
                epilog=EXAMPLES, formatter=HelpFormatter,
                positionals=[("trace", "TRACE", TRACE_HELP),
                             ("trace_b", "TRACE_B", "a second run of the program: the comparison of the two", "?")],
                schemas=[ANIMATION, ANIMATION_RENDER, *ANIMATION_VIEWS])
    from .cluster_render import add_cluster_options

    add_cluster_options(r, "frames")


def _checked_target(args) -> tuple:
    """(absolute output, is it a video, absolute --save or None); CLIError 2 when wrong."""
    from ..params.animation import VIDEO_EXTENSIONS, is_video

    out = os.path.abspath(args.output)
    video = is_video(out)
    ext = os.path.splitext(out)[1].lower()
    if not video and ext and not os.path.isdir(out):
        raise CLIError(f"{args.output}: an animation goes to a video ({', '.join(VIDEO_EXTENSIONS)}) "
                       "or a folder for PNG frames", 2)
    parent = os.path.dirname(out.rstrip(os.sep))
    if not os.path.isdir(parent):
        raise CLIError(f"output folder does not exist: {parent}", 2)
    if video and os.path.isdir(out):
        raise CLIError(f"output path is a folder, not a video file: {out}", 2)
    from .common import checked_render_memory, checked_save

    checked_render_memory(args)
    return out, video, checked_save(args)


def view_kinds() -> dict:
    """view -> the animations it has ("auto" is the first): the view registry's
    (`tracevis3d.views.View.animations`)."""
    from ..views import views

    return {v.name: v.animations for v in views(animated=True)}


def _view(args) -> str:
    from ..views import view as view_of

    two = args.trace_b is not None
    view = args.view if args.view != "auto" else ("compare" if two else "icicle")
    two_traces = view_of(view).two_traces
    if two_traces and not two:
        raise CLIError(f"--view {view} needs two traces: TRACE TRACE_B", 2)
    if not two_traces and two:
        raise CLIError(f"two traces make a comparison: leave --view out or write --view compare (not {view})", 2)
    kinds = view_kinds()[view]
    kind = args.kind if args.kind != "auto" else kinds[0]
    if args.zoom_window is not None and (kind != "flythrough" or view != "icicle"):
        raise CLIError(f"--zoom-window is flown into by the icicle's flythrough: --kind flythrough (not the "
                       f"{view} view's {kind})", 2)
    if kind not in kinds:
        if kind == "reveal":
            raise CLIError("--kind reveal needs two traces (the comparison's tubes appear from A to B)", 2)
        if kind == "handoffs":
            raise CLIError("--kind handoffs needs the thread view: --view threads", 2)
        raise CLIError(f"--kind {kind} of the {view} view is not available yet; "
                       f"use {', '.join(kinds)}", 2)
    return view, kind


def _build_icicle(args, scene) -> dict:
    from .icicle import icicle_params
    from .render import build_view

    params, trace = params_and_trace(args, icicle_params)
    info = build_view("icicle", trace, params, scene, args.trace, 0.1, 0.5, trace_path=os.path.abspath(args.trace))
    fill_scene_settings(scene, "icicle")
    m = info["meta"]
    progress(0.5, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters in {info['timings']['total']:.2f} s")
    return m


def _build_compare(args, scene) -> dict:
    from ..params.cli import values
    from ..params.compare import COMPARE
    from ..params.icicle import ICICLE
    from .common import run_job
    from .compare import check_thread, load_pair, resolve_call_options
    from .render import build_view

    a, b = load_pair(args.trace, args.trace_b)
    check_thread(a, args.thread_a, args.trace)
    check_thread(b, args.thread_b, args.trace_b)
    from ..blender.tasks import compare_job

    paths = (os.path.abspath(args.trace), os.path.abspath(args.trace_b))
    cmp = run_job(compare_job(*paths, tau=args.tau), 0.1, 0.3)
    differ = [p.name for p in COMPARE if p.name in ICICLE.by_name and ICICLE[p.name] != p]
    params = values(args, COMPARE, skip=differ)  # those the icicle declares otherwise: the comparison's defaults
    resolve_call_options(cmp, params)
    info = build_view("compare", cmp, params, scene, f"{args.trace} vs {args.trace_b}", 0.3, 0.5, paths=paths)
    fill_scene_settings(scene, "compare")
    m = info["meta"]
    progress(0.5, f"scene: {m.get('n_tubes', 0)} tubes for {m.get('n_pairs_shown', 0)} matches "
                   f"in {info['timings']['total']:.2f} s")
    return m


def _build_one(args, scene, view: str) -> tuple:
    """Any other view of one trace (the thread view, the cone tree): its parameters and its
    build job are the view registry's (`tracevis3d.views`); (layout meta, trace)."""
    from ..params.animation import differing
    from ..views import view as view_of
    from .common import view_params
    from .render import build_view

    schema = view_of(view).params_class.SCHEMA
    params, trace = params_and_trace(args, lambda a: view_params(view, a, skip=differing(schema)))
    info = build_view(view, trace, params, scene, args.trace, 0.1, 0.5)
    progress(0.5, f"scene: {view} view in {info['timings']['total']:.2f} s")
    return info["meta"], trace


def render_animation(args) -> str:
    """The command; with ``--scheduler``/``--workers`` the frames are rendered by Dask workers
    (`cli.cluster_render`), the session opened before the trace is read."""
    import contextlib

    from .cluster_render import cluster_spec, open_cluster

    spec = cluster_spec(args)
    with contextlib.ExitStack() as stack:
        session = open_cluster(spec, stack, args) if spec else None
        return _render_animation(args, session)


def _render_animation(args, session) -> str:
    from ..params.animation import frame_count
    from .common import fresh_scene

    view, kind = _view(args)
    out, video, save = _checked_target(args)
    n = frame_count(args.seconds, args.fps)
    if args.frames is not None and args.frames[1] > n:
        raise CLIError(f"--frames {args.frames[0]}-{args.frames[1]}: the animation has frames 1-{n} "
                       f"({args.seconds:g} s at {args.fps} fps)", 2)
    try:
        from ..blender.render import current_scene, engine_id

        device_text = choose_device_or_exit(current_scene(), args.device, engine_id(args.engine))  # before the long work
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    scene = fresh_scene()
    trace = None
    if view == "icicle":
        m = _build_icicle(args, scene)
    elif view == "compare":
        m = _build_compare(args, scene)
    else:
        m, trace = _build_one(args, scene, view)
    from ..blender.animate import animate_scene

    t = time.perf_counter()
    try:
        anim = animate_scene(scene, kind, args.seconds, args.fps, args.easing, meta=m,
                             reveal_order=args.reveal_order, call_end=None if trace is None else trace.end,
                             zoom_window=args.zoom_window, zoom_levels=args.zoom_levels)
    except ValueError as e:
        raise CLIError(f"{args.trace}: {e}", 2) from None
    progress(0.55, f"{anim['kind']}: {n} frames at {args.fps} fps set up in {time.perf_counter() - t:.2f} s")
    if anim.get("refine"):
        z = anim["refine"]
        progress(0.55, f"flying into {z['window'][0]:,.0f}..{z['window'][1]:,.0f} µs ({z['magnification']:,.0f}x): "
                        f"{len(z['levels'])} refinement levels built in {z['seconds']:.2f} s, arriving at frame "
                        f"{anim['target']['frame']}")
    from ..blender.anim_render import render_frames, setup_animation_output

    try:
        setup_animation_output(out, scene, args.engine, args.resolution, args.samples, args.device)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    if save:
        from ..blender.render import save_blend

        from ..blender.anim_render import pack_fonts

        pack_fonts()
        if not save_blend(save, scene):
            raise CLIError(f"could not save {save}", 1)
        progress(0.56, f"saved {save}")
    a, b = args.frames or (1, n)
    progress(0.57, device_text)
    progress(0.57, f"rendering frames {a}-{b} at {args.resolution[0]}x{args.resolution[1]} with {args.engine}")
    t = time.perf_counter()
    if session is not None:
        from .cluster_render import render_frames_on_cluster

        return render_frames_on_cluster(session, scene, out, video, (a, b), args)
    try:
        res = render_frames(scene, (a, b))
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    dt = time.perf_counter() - t
    progress(1.0, f"rendered {b - a + 1} frames in {dt:.1f} s ({dt / (b - a + 1):.2f} s a frame)")
    if anim.get("target"):
        progress(1.0, f"fly-through target at frame {anim['target']['frame']}")
    return res["path"]
