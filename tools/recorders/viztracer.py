"""VizTracer: the command line that records a Python program, and whether its buffer overflowed."""
from __future__ import annotations

import os
import re

from .common import child_env, run_logged


def viztracer_command(python: str, out: str, argv: list, entries: int = 1_000_000, flags=()) -> list:
    """The VizTracer command line that records ``python <argv>`` into ``out`` (``flags``: more
    VizTracer options)."""
    cmd = [python, "-m", "viztracer", "--quiet", "--tracer_entries", str(int(entries)), *flags, "-o", out]
    if argv[:1] == ["-m"]:
        return cmd + ["-m"] + argv[1:]
    return cmd + ["--"] + argv


def viztracer_overflowed(path: str):
    """True if VizTracer's buffer overflowed (early entries dropped), False if not, None if the
    file does not say (not a VizTracer file).  Reads only the small metadata block."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        # viztracer_metadata follows the event array; file_info (sources) may follow it
        for span in (1 << 16, 1 << 22, size):
            f.seek(max(0, size - span))
            tail = f.read()
            k = tail.rfind(b'"viztracer_metadata"')
            if k >= 0:
                m = re.search(rb'"overflow"\s*:\s*(true|false)', tail[k: k + 4096])
                return None if m is None else m.group(1) == b"true"
    return None


def run_viztracer_spec(spec, python: str, argv: list, work: str, tmp: str, timeout: float) -> dict:
    """Record a suite `Spec` whose tool is VizTracer into ``tmp``; what `suite.record` keeps."""
    cmd = viztracer_command(python, tmp, argv, spec.entries, spec.flags)
    rc, log, secs = run_logged(cmd, work, timeout, child_env())
    if rc != 0 or not os.path.exists(tmp):
        raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}:\n{log[-3000:]}")
    return {"cmd": cmd, "log": log, "secs": secs, "tracer_entries": spec.entries,
            "overflow": viztracer_overflowed(tmp)}
