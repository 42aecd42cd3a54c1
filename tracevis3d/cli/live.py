"""The live-feed commands of the command line (``python -m tracevis3d replay|render-live``):
one module of the `tracevis3d.cli` package, which adds their parsers and COMMANDS entries."""
from __future__ import annotations

import os

from .common import CLIError, load_trace, progress


def add_parsers(sub) -> None:
    from ..params.cli import add_command
    from ..params.live import REPLAY

    add_command(sub, "replay", help="play a recorded trace through the live protocol (ZeroMQ)",
                description="Send TRACE's calls to ENDPOINT in time order as the live protocol "
                            "(docs/live-protocol.md) would from the running program.",
                positionals=[("trace", "TRACE", "the recorded trace (any format render-icicle reads)"),
                             ("endpoint", "ENDPOINT", "e.g. tcp://127.0.0.1:5599")],
                schemas=[REPLAY])
    add_render_live_parser(sub)


def _curve(args):
    if not args.curve_server_key:
        return None
    from ..live.transport import Curve

    if args.bind and not args.curve_clients:
        raise CLIError("--curve-server-key: binding with CURVE needs --curve-clients FOLDER (the public "
                       "certificates of the peers admitted)", 2)
    try:
        if args.bind:
            return Curve.server_from_file(args.curve_server_key, args.curve_clients)
        return Curve.client_from_file(args.curve_server_key, args.curve_client_key)
    except (OSError, ValueError) as e:
        raise CLIError(f"--curve-server-key: {e}", 2) from None


def _environment_error(e: BaseException) -> bool:
    """A ZeroMQ error (address in use, no such interface, too many files): the machine's
    state, not a bug -- exit 2 with one line."""
    try:
        import zmq
    except ImportError:  # pragma: no cover
        return False
    return isinstance(e, zmq.ZMQError)


def replay(args) -> str:
    from ..live.replay import replay as play
    from ..live.transport import EndpointError, check_endpoint

    curve = _curve(args)
    try:
        check_endpoint(args.endpoint, curve)
    except EndpointError as e:
        raise CLIError(str(e), 2) from None
    trace = load_trace(args.trace, 0.0, 0.1)
    progress(0.1, f"replaying {len(trace)} calls of {len(trace.thread_names)} threads to {args.endpoint}"
                   f" at {'full speed' if args.speed == 0 else f'{args.speed:g}x'}")
    last = [0.1]

    def replayed(f):
        if f - last[0] >= 0.1:
            last[0] = f
            progress(f, "replaying")

    try:
        r = play(trace, args.endpoint, speed=args.speed, bind=args.bind, curve=curve,
                 wait_subscriber=args.wait, progress=replayed)
    except EndpointError as e:
        raise CLIError(str(e), 2) from None
    except ValueError as e:  # times the protocol cannot carry: one line
        raise CLIError(str(e), 1) from None
    except Exception as e:
        if _environment_error(e):
            raise CLIError(f"{args.endpoint}: {' '.join(str(e).split())}", 2) from None
        raise
    moved = (f"; times moved by {-r['shifted_us']:.6g} µs (beyond the protocol's 64-bit ns clock)"
             if r.get("shifted_us") else "")
    return f"{r['sent']} events sent, {r['dropped']} dropped, {r['messages']} messages{moved}"


COMMANDS = {"replay": replay}


def add_render_live_parser(sub) -> None:
    from .common import add_view_command

    add_view_command(sub, "render-live",
                     "Listen at ENDPOINT (binds; programs and `replay` connect), grow the\n"
                     "scene as calls arrive and render FPS frames per second for SECONDS\n"
                     "seconds into the folder -o (frame_00000.png, ...), or into a video\n"
                     "when -o ends in .mp4, .mkv, .mov or .webm (Blender's FFmpeg).", epilog="",
                     positionals=[("endpoint", "ENDPOINT", "the endpoint to listen at, e.g. tcp://127.0.0.1:5599")])


def live_params(args):
    """The `LiveParams` of render-live's options (offline: colours and clusters at every frame)."""
    from ..params.cli import values
    from ..params.live import LIVE, LiveParams

    return LiveParams(**values(args, LIVE), recolour_seconds=0.0, cluster_seconds=0.0).validate()


def render_live(args) -> str:
    import time

    from .common import fresh_scene
    from ..live.session import LiveSession
    from ..live.transport import EndpointError

    from ..blender.render import VIDEO_FORMATS

    out = os.path.abspath(args.output)
    video = os.path.splitext(out)[1].lower() in VIDEO_FORMATS
    if video:
        if os.path.isdir(out):
            raise CLIError(f"-o {out}: a folder, not a video file", 2)
        if not os.path.isdir(os.path.dirname(out)):
            raise CLIError(f"-o {out}: no folder {os.path.dirname(out)}", 2)
    elif os.path.exists(out) and not os.path.isdir(out):
        raise CLIError(f"-o must be a folder or a video file (.mp4, .mkv, .mov, .webm): {out} is a file", 2)
    args.bind = not args.connect
    curve = _curve(args)
    try:
        sess = LiveSession(args.endpoint, bind=args.bind, curve=curve)
    except (EndpointError, Exception) as e:  # zmq errors: address in use, bad address
        raise CLIError(f"{args.endpoint}: {e}", 2) from None
    import shutil
    import tempfile

    frames_dir = tempfile.mkdtemp(prefix="tv3d-live-frames-") if video else out
    os.makedirs(frames_dir, exist_ok=True)
    try:
        scene = fresh_scene()
        from ..blender.live_view import LiveView
        from ..blender.render import render_figure
        view = LiveView(live_params(args), scene=scene)
        n_frames = max(1, int(round(args.seconds * args.fps)))
        progress(0.0, f"listening at {sess.endpoint}; {n_frames} frames at {args.fps:g} fps")
        t0 = time.perf_counter()
        k = 0
        while k < n_frames or (args.until_end and (not sess.sessions or not all(
                x.ended for x in sess.sessions.values())) and time.perf_counter() - t0 < args.seconds + 600):
            due = t0 + k / args.fps
            while True:
                left = due - time.perf_counter()
                sess.poll_once(max_messages=500, max_seconds=0.02, wait=min(max(left, 0.0), 0.02))
                if left <= 0:
                    break
            view.update(sess, force_labels=True)
            render_figure(os.path.join(frames_dir, f"frame_{k:05d}.png"), resolution=args.resolution, scene=scene)
            if k % max(1, n_frames // 10) == 0:
                progress(min(k / n_frames, 1.0), f"frame {k}: {sess.status()}")
            k += 1
        st = view.stats
        if video:
            from ..blender.render import encode_video

            progress(0.95, f"encoding {k} frames into {out}")
            encode_video([os.path.join(frames_dir, f"frame_{j:05d}.png") for j in range(k)], out, args.fps,
                         args.resolution)
        return (f"{k} frames in {out}: {sess.status()}; longest scene update "
                f"{st['longest_update'] * 1000:.1f} ms")
    finally:
        sess.close()
        if video:
            shutil.rmtree(frames_dir, ignore_errors=True)


COMMANDS["render-live"] = render_live
