"""``render-memory CAPTURE -o fig.png``: memory over time (Memcov Viz in 3D) of a memray capture,
sharing render-icicle's output checks, build and render code (`cli.common`)."""
from __future__ import annotations

import os
import time

EXAMPLES = """examples:
  python -m memray run -o run.bin program.py
  python -m tracevis3d render-memory run.bin -o memory.png
  python -m tracevis3d render-memory run.bin -o memory.png --group-by module --save memory.blend
  py-spy record --format chrometrace -o calls.json -- python -m memray run -o run.bin program.py
  python -m tracevis3d render-memory run.bin --trace calls.json -o memory.png
"""


def add_parsers(sub) -> None:
    from .common import FOOTER, add_view_command

    add_view_command(sub, "render-memory",
                     "Render memory over time (Memcov Viz in 3D) from a memray capture: every\n"
                     "allocation site a band as thick as the bytes it holds, stacked, time along x;\n"
                     "thin bands merged into grey aggregates, leaks and the high-water mark marked.",
                     EXAMPLES + FOOTER,
                     positionals=[("capture", "CAPTURE", "a memray capture (python -m memray run -o CAPTURE ...)")])
    from ..params.cli import add_options
    from ..params.memory import MEMORY_INPUTS

    add_options(sub.choices["render-memory"], (), [MEMORY_INPUTS], required=())


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
        from ..io.memray import load_memory

        return load_memory(path)
    except ImportError as e:
        raise CLIError(str(e), 1) from None
    except Exception as e:  # any reader failure is a bad input, reported on one line
        msg = " ".join(str(e).split()) or type(e).__name__
        for prefix in (f"{os.path.abspath(path)}: ", f"{path}: "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
        raise CLIError(f"cannot read capture {path}: {msg}", 1) from None


def render_memory(args) -> str:
    from . import common as cli

    out, save = cli._checked_outputs(args)
    try:
        params = memory_params(args)
    except ValueError as e:
        raise cli.CLIError(str(e), 2) from None
    t = time.perf_counter()
    capture = load_capture(args.capture)
    cli._progress(0.1, f"loaded {capture.n_allocations:,} allocator records, {capture.n_ranges:,} ranges, "
                       f"{capture.n_sites:,} sites in {time.perf_counter() - t:.2f} s")
    calls = None
    if getattr(args, "trace", None):
        calls = cli._load(args.trace)
        cli._progress(0.1, f"loaded {len(calls):,} calls of {args.trace}")
    scene = cli._scene()
    from ..blender.memory_tasks import memory_build_job

    info = cli._build(memory_build_job(capture, params, scene=scene, calls=calls), args.capture, 0.1, 0.6)
    m = info["meta"]
    if calls is not None:
        cli._progress(0.6, f"calls aligned on {m['calls_alignment']}: trace time = capture time + "
                           f"{m['calls_offset_us'] / 1e6:.3f} s; {m['n_strip_calls']:,} calls drawn")
    cli._progress(0.6, f"scene: {m['n_groups']:,} bands, {m['n_aggregates']:,} grey aggregates, {m['n_labels']} "
                       f"labels in {info['timings']['total']:.2f} s")
    cli._fill_scene_settings(scene, "memory")
    return cli._render_and_save(args, scene, out, save)


COMMANDS = {"render-memory": render_memory}
__all__ = ["add_parsers", "render_memory", "COMMANDS"]
