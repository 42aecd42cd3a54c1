"""The live-feed commands of the CLI (``python -m tracevis3d replay|render-live``), kept out
of cli.py (one topic per module); cli.py adds their parsers and COMMANDS entries."""
from __future__ import annotations

import os
import sys

from .cli import CLIError, _check_trace, _load, _number, _progress


def _add_curve_args(r) -> None:
    r.add_argument("--bind", action="store_true",
                   help="bind the endpoint instead of connecting (default: connect)")
    r.add_argument("--curve-server-key", metavar="CERT",
                   help="CURVE: connecting, the binding side's public certificate; binding, this "
                        "side's secret certificate (required for a non-loopback endpoint)")


def add_parsers(sub) -> None:
    r = sub.add_parser("replay", help="play a recorded trace through the live protocol (ZeroMQ)",
                       description="Send TRACE's calls to ENDPOINT in time order as the live protocol "
                                   "(docs/live-protocol.md) would from the running program.")
    r.add_argument("trace", metavar="TRACE")
    r.add_argument("endpoint", metavar="ENDPOINT", help="e.g. tcp://127.0.0.1:5599")
    r.add_argument("--speed", type=_number(0.0, 1e9, "speed"), default=1.0, metavar="X",
                   help="1: the recorded pace, 2: twice as fast, 0: as fast as possible (default: 1)")
    r.add_argument("--wait", type=_number(0.0, 3600.0, "wait"), default=5.0, metavar="S",
                   help="wait up to S seconds for a viewer before starting (default: 5)")
    _add_curve_args(r)


def _curve(args):
    if not args.curve_server_key:
        return None
    from .live.transport import Curve

    try:
        if args.bind:
            return Curve.server_from_file(args.curve_server_key)
        return Curve.client_from_file(args.curve_server_key)
    except (OSError, ValueError) as e:
        raise CLIError(f"--curve-server-key: {e}", 2) from None


def replay(args) -> str:
    from .live.replay import replay as play
    from .live.transport import EndpointError, check_endpoint

    curve = _curve(args)
    try:
        check_endpoint(args.endpoint, curve)
    except EndpointError as e:
        raise CLIError(str(e), 2) from None
    _check_trace(args.trace)
    trace = _load(args.trace, 0.0, 0.1)
    _progress(0.1, f"replaying {len(trace)} calls of {len(trace.thread_names)} threads to {args.endpoint}"
                   f" at {'full speed' if args.speed == 0 else f'{args.speed:g}x'}")
    last = [0.1]

    def progress(f):
        if f - last[0] >= 0.1:
            last[0] = f
            _progress(f, "replaying")

    r = play(trace, args.endpoint, speed=args.speed, bind=args.bind, curve=curve,
             wait_subscriber=args.wait, progress=progress)
    return f"{r['sent']} events sent, {r['dropped']} dropped, {r['messages']} messages"


COMMANDS = {"replay": replay}
