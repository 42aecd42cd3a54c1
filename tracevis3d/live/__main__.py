"""``python -m tracevis3d.live run --endpoint E [--bind] script.py [args...]``: run a Python
script with its calls published live (docs/live-protocol.md).

``python -m tracevis3d.live record -o trace.json script.py [args...]`` runs the same tracer
into a file instead (the whole run in one piece, for comparison with what a viewer got).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys

from . import DEFAULT_ENDPOINT


def _parser() -> argparse.ArgumentParser:
    from ..params.cli import add_command
    from ..params.live import RECORD, publisher_schema

    p = argparse.ArgumentParser(prog="python -m tracevis3d.live")
    sub = p.add_subparsers(dest="command", required=True)
    script = [("script", "SCRIPT", "the Python script to run"),
              ("args", "ARGS", "its arguments", argparse.REMAINDER)]
    add_command(sub, "run", help="run a script and publish its calls live", description=None,
                positionals=script, schemas=[publisher_schema(DEFAULT_ENDPOINT)])
    add_command(sub, "record", help="run a script with the same tracer into a Chrome JSON file", description=None,
                positionals=script, schemas=[RECORD])
    return p


def _run_script(script: str, args: list) -> int:
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # what `python script.py` does
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    if not os.path.isfile(a.script):
        sys.stderr.write(f"tracevis3d.live: {a.script}: no such file\n")
        return 2
    if a.command == "record":
        from .record import record

        with record(a.output):
            return _run_script(a.script, a.args)
    from .publisher import Publisher
    from .transport import Curve, EndpointError

    curve = None
    try:
        if a.curve_server_key:
            curve = (Curve.server_from_file(a.curve_server_key, a.curve_clients) if a.bind
                     else Curve.client_from_file(a.curve_server_key, a.curve_client_key))
    except EndpointError as e:
        print(f"tracevis3d.live: {e}", file=sys.stderr)
        return 2
    try:
        # not the `publish` context manager: its frames would be the first calls of the run
        pub = Publisher(a.endpoint, bind=a.bind, curve=curve, program=os.path.basename(a.script),
                        wait_subscriber=a.wait_subscriber, linger=a.linger, max_pending=a.max_pending).start()
    except EndpointError as e:
        sys.stderr.write(f"tracevis3d.live: {e}\n")
        return 2
    code = 1
    try:
        code = _run_script(a.script, a.args)
    finally:
        pub.stop()
        s = pub.stats
        inside = s.get("dropped_in_program", 0)
        sys.stderr.write(f"tracevis3d.live: {s.get('events_sent', 0)} events sent, "
                         f"{s.get('dropped_events', 0)} dropped"
                         + (f" ({inside} before sending: the sender fell behind)" if inside else "") + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
