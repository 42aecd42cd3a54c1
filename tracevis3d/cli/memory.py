"""``render-memory CAPTURE -o fig.png``: memory over time (Memcov Viz in 3D) of a memray capture,
or of memray's live stream (``--live-port``): its own steps (the capture read, the calls trace
beside it, the live view) on the public pieces of `cli.common`; the build is the registry's
(`cli.render.build_view`), the scene's account its `describe`."""
from __future__ import annotations

import os
import time

EXAMPLES = """examples:
  python -m memray run -o run.bin program.py
  python -m tracevis3d render-memory run.bin -o memory.png
  python -m tracevis3d render-memory run.bin -o memory.png --group-by module --save memory.blend
  py-spy record --format chrometrace -o calls.json -- python -m memray run -o run.bin program.py
  python -m tracevis3d render-memory run.bin --trace calls.json -o memory.png
  python -m tracevis3d render-memory run.bin --trace calls.json --calls-view strip -o memory.png
  python -m memray run --live-remote --live-port 12345 program.py &
  python -m tracevis3d render-memory --live-port 12345 -o memory.png --live-frames frames/
"""


def add_parsers(sub) -> None:
    from .common import FOOTER, add_view_command

    add_view_command(sub, "render-memory",
                     "Render memory over time (Memcov Viz in 3D) from a memray capture: every\n"
                     "allocation site a band as thick as the bytes it holds, stacked, time along x;\n"
                     "thin bands merged into grey aggregates, leaks and the high-water mark marked.",
                     EXAMPLES + FOOTER,
                     positionals=[("capture", "CAPTURE", "a memray capture (python -m memray run -o CAPTURE ...), or "
                                                         "a Chrome JSON trace with memory-infra dumps; none with "
                                                         "--live-port", "?")])
    from ..params.cli import add_options
    from ..params.memory import MEMORY_LIVE

    add_options(sub.choices["render-memory"], (), [MEMORY_LIVE], required=())


def memory_params(args):
    from .common import view_params

    return view_params("memory", args)


def load_capture(path: str):
    """The capture at ``path`` (CLIError 1 in one line when it cannot be read)."""
    from .common import CLIError

    if not os.path.exists(path):
        raise CLIError(f"capture file not found: {path}", 1)
    if os.path.isdir(path):
        raise CLIError(f"capture path is a folder, not a file: {path}", 1)
    try:
        from ..io import load_memory

        return load_memory(path)
    except ImportError as e:
        raise CLIError(str(e), 1) from None
    except Exception as e:  # any reader failure is a bad input, reported on one line
        msg = " ".join(str(e).split()) or type(e).__name__
        for prefix in (f"{os.path.abspath(path)}: ", f"{path}: "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
        raise CLIError(f"cannot read capture {path}: {msg}", 1) from None


def describe(info: dict, params, capture, args) -> tuple:
    """The calls' alignment when a calls trace is drawn; the bands, grey aggregates and labels
    (`cli.render.describe_view`)."""
    m = info["meta"]
    lines = []
    if params.calls_trace:
        lines.append(f"calls aligned on {m['calls_alignment']}: trace time = capture time + "
                     f"{m['calls_offset_us'] / 1e6:.3f} s; {m['n_calls_drawn']:,} calls drawn "
                     f"({'icicle' if params.calls_view == 'icicle' else 'strip'})")
    lines.append(f"scene: {m['n_groups']:,} bands, {m['n_aggregates']:,} grey aggregates, {m['n_labels']} "
                 f"labels in {info['timings']['total']:.2f} s")
    return lines, []


def render_memory(args) -> str:
    from . import common as cli
    from .render import build_view, describe_view

    fig = cli.checked_outputs(args)
    try:
        params = memory_params(args)
    except ValueError as e:
        raise cli.CLIError(str(e), 2) from None
    if args.live_port is not None:
        return render_memory_live(args, params, fig)
    if args.capture is None:
        raise cli.CLIError("render-memory needs a CAPTURE file, or --live-port PORT", 2)
    for opt in ("live_calls", "live_frames"):
        if getattr(args, opt) is not None:
            raise cli.CLIError(f"--{opt.replace('_', '-')} goes with --live-port", 2)
    t = time.perf_counter()
    capture = load_capture(args.capture)
    cli.progress(0.1, f"loaded {capture.n_allocations:,} allocator records, {capture.n_ranges:,} ranges, "
                      f"{capture.n_sites:,} sites in {time.perf_counter() - t:.2f} s")
    calls = None
    if params.calls_trace:
        calls = cli.load_trace(params.calls_trace)
        cli.progress(0.1, f"loaded {len(calls):,} calls of {params.calls_trace}")
    scene = cli.fresh_scene()
    info = build_view("memory", capture, params, scene, args.capture, 0.1, 0.6, calls=calls)
    describe_view("memory", info, params, capture, args)
    cli.fill_scene_settings(scene, "memory")
    return cli.render_and_save(fig, scene)


def render_memory_live(args, params, fig) -> str:
    """``render-memory --live-port PORT``: the figure rebuilt as the program runs
    (`blender.live_memory.LiveMemoryView`), rendered once its stream ended."""
    from . import common as cli
    from ..errors import TraceFormatError

    if args.capture is not None or params.calls_trace:
        raise cli.CLIError("--live-port reads memray's live stream: no CAPTURE and no --trace "
                           "(the call feed comes with --live-calls)", 2)
    frames = os.path.abspath(args.live_frames) if args.live_frames else None
    if frames and os.path.exists(frames) and not os.path.isdir(frames):
        raise cli.CLIError(f"--live-frames {frames}: a file, not a folder", 2)
    scene = cli.fresh_scene()
    calls = None
    if args.live_calls:
        from ..live.session import LiveSession

        try:
            calls = LiveSession(args.live_calls, bind=True)
        except Exception as e:  # zmq errors: address in use, bad address, not loopback
            raise cli.CLIError(f"--live-calls {args.live_calls}: {' '.join(str(e).split())}", 2) from None
    from ..blender.live_memory import LiveMemoryView
    from ..blender.render import render_figure

    view = None
    try:
        cli.progress(0.1, f"connecting to memray's live tracker at 127.0.0.1:{args.live_port}")
        try:
            view = LiveMemoryView(args.live_port, params, scene=scene, calls=calls,
                                  rebuild_seconds=args.rebuild_seconds, connect_timeout=min(args.live_seconds, 60.0))
        except TraceFormatError as e:
            raise cli.CLIError(str(e), 1) from None
        if frames:
            os.makedirs(frames, exist_ok=True)

        def built(v):
            s = v.stats
            m = v.info["meta"]
            cli.progress(0.3, f"rebuilt ({s['builds']}): {s['records_drawn']:,} records, {m['n_groups']:,} bands, "
                               f"peak {v.capture.peak_bytes:,} B, in {s['last_build_s']:.2f} s")
            if frames:
                render_figure(os.path.join(frames, f"frame_{s['builds'] - 1:05d}.png"), resolution=args.resolution,
                              scene=scene)

        try:
            ended = view.run(args.live_seconds, on_build=built)
        except TraceFormatError as e:
            raise cli.CLIError(str(e), 1) from None
        if not ended and view.stream.finished:  # the program ended in time: its figure is drawn whole
            cli.progress(0.5, f"memray live 127.0.0.1:{args.live_port}: the stream ended after "
                               f"{view.stats['bytes_received']:,} bytes; drawing all of it (past --live-seconds "
                               f"{args.live_seconds:g} s)")
            try:
                ended = view.run(float("inf"), on_build=built)
            except TraceFormatError as e:
                raise cli.CLIError(str(e), 1) from None
        if not ended:
            _live_not_ended(args, view, scene, fig)
        if view.capture is None:
            raise cli.CLIError(f"memray live 127.0.0.1:{args.live_port}: the stream ended without an allocation", 1)
        cap = view.capture
        if "no_trailer" in cap.meta["repairs"]:
            cli.progress(0.6, "the stream ended without memray's trailer (the program was killed?): drawn up to its end")
        cli.progress(0.6, f"final: {cap.n_allocations:,} allocator records, peak {cap.peak_bytes:,} B, leaked "
                           f"{cap.leaked_bytes:,} B; {view.stats['builds']} rebuilds, longest "
                           f"{view.stats['longest_build_s']:.2f} s")
        cli.fill_scene_settings(scene, "memory")
        return cli.render_and_save(fig, scene)
    finally:
        if view is not None:
            view.close()
        if calls is not None:
            calls.close()


def _live_not_ended(args, view, scene, fig) -> None:
    """``--live-seconds`` passed while the peer still sends (or never sent a byte): one line that
    says which, the figure drawn last rendered first when there is one (what arrived up to it);
    exit 1."""
    from . import common as cli

    peer = f"memray live 127.0.0.1:{args.live_port}"
    got, drawn = view.stats["bytes_received"], view.stats["bytes_drawn"]
    limit = f"--live-seconds {args.live_seconds:g} s"
    if got == 0:
        what = f"the peer accepted the connection and sent nothing within {limit}"
    else:
        what = f"the program still runs after {limit} ({got:,} bytes received)"
    if view.capture is None:
        raise cli.CLIError(f"{peer}: {what}; nothing drawn", 1)
    cli.progress(0.6, f"{peer}: {what}: rendering the figure of the first {drawn:,} bytes "
                       f"({view.capture.n_allocations:,} allocator records)")
    cli.fill_scene_settings(scene, "memory")
    path = cli.render_and_save(fig, scene)
    raise cli.CLIError(f"{peer}: {what}; {path} shows the first {drawn:,} bytes", 1)


COMMANDS = {"render-memory": render_memory}
__all__ = ["add_parsers", "render_memory", "COMMANDS"]
