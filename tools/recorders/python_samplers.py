"""Python's sampling profilers: py-spy (the suite's pyspy_threads as Chrome JSON; speedscope JSON and
collapsed stacks of `programs/sampled_work.py`) and pyinstrument (speedscope JSON)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile

from .common import (run_sampler, FORMAT_TIMEOUT, RecordingSkipped, check_output, child_env, ensure_trace_venv, program_path,
                     run_logged, run_tool, tool_version, write_record)

INSTALL_PYSPY = "pip install py-spy==0.4.3"
INSTALL_PYINSTRUMENT = "pip install pyinstrument==5.1.3"
#: the sampled program and its argument (rounds of work: ~2 s of CPU in 4 threads)
SAMPLED_PROGRAM = "sampled_work.py"
SAMPLED_ARGS = ["8"]


def run_pyspy_spec(spec, python: str, argv: list, work: str, tmp: str, timeout: float) -> dict:
    """The suite's pyspy_threads: py-spy of the trace venv sampling ``python argv`` into Chrome
    JSON (``--threads --idle``, 1000 Hz; ``--nonblocking`` when it may not stop the process).
    Raises `RecordingSkipped` when py-spy cannot attach here."""
    pyspy = os.path.join(os.path.dirname(ensure_trace_venv()), "py-spy")
    base = [pyspy, "record", "--format", "chrometrace", "--threads", "--idle", "--rate", "1000", "-o", tmp]
    tries = [base, base[:2] + ["--nonblocking"] + base[2:]]
    log = ""
    for cmd in tries:
        full = cmd + ["--", python] + argv
        rc, log, secs = run_logged(full, work, timeout, child_env())
        if rc == 0 and os.path.exists(tmp):
            break
    else:
        reason = " ".join(log.strip().splitlines()[-3:])[:400]
        raise RecordingSkipped(f"py-spy cannot record here: {reason}")
    return {"cmd": full, "log": log, "secs": secs, "py_spy_options": cmd[2:]}


def pyspy_command() -> str:
    """py-spy beside this interpreter (the project's .venv) or on PATH; `RecordingSkipped` if absent."""
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    found = here if os.path.exists(here) else shutil.which("py-spy")
    if not found:
        raise RecordingSkipped(f"py-spy is not installed ({INSTALL_PYSPY})")
    return found


def _record_pyspy(out_dir: str, fmt: str, out_name: str, timeout: float) -> str:
    pyspy = pyspy_command()
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, out_name)
    if os.path.exists(out):
        os.remove(out)
    cmd = [pyspy, "record", "--format", fmt, "--threads", "--idle", "--rate", "250", "-o", out, "--",
           sys.executable, program_path(SAMPLED_PROGRAM), *SAMPLED_ARGS]
    log, secs = run_sampler(cmd, out, "py-spy", timeout, "pyspy-")
    check_output(out, 2000, f"py-spy's {fmt} output")
    write_record(out + ".record.json", {
        "name": os.path.splitext(out_name)[0], "tool": "py-spy", "version": tool_version([pyspy, "--version"]),
        "command": ["py-spy", *cmd[1:cmd.index("-o") + 1], out_name, "--", "python",
                    "tools/recorders/programs/" + SAMPLED_PROGRAM, *SAMPLED_ARGS],
        "program": "tools/recorders/programs/" + SAMPLED_PROGRAM, "python": sys.version.split()[0],
        "seconds": round(secs, 2), "files": [out_name], "tool_log": log.strip()[-1500:]})
    return out


def record_pyspy_speedscope(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """py-spy sampling `programs/sampled_work.py` (4 threads) into speedscope JSON: one sampled
    profile per thread."""
    return _record_pyspy(out_dir, "speedscope", "pyspy.speedscope.json", timeout)


def record_pyspy_raw(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """py-spy sampling `programs/sampled_work.py` into collapsed stacks (``--format raw``; with
    ``--threads`` every stack's root frame names its thread)."""
    return _record_pyspy(out_dir, "raw", "pyspy.collapsed.txt", timeout)


def record_pyinstrument(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """pyinstrument profiling `programs/sampled_work.py` into speedscope JSON (``-r speedscope``:
    one evented profile; pyinstrument follows the thread it started in, the main thread)."""
    if importlib.util.find_spec("pyinstrument") is None:
        raise RecordingSkipped(f"pyinstrument is not installed for {sys.executable} ({INSTALL_PYINSTRUMENT})")
    os.makedirs(out_dir, exist_ok=True)
    out_name = "pyinstrument.speedscope.json"
    out = os.path.join(out_dir, out_name)
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, "-m", "pyinstrument", "-r", "speedscope", "-o", out,
           program_path(SAMPLED_PROGRAM), *SAMPLED_ARGS]
    with tempfile.TemporaryDirectory(prefix="pyinstrument-") as work:
        log, secs = run_tool(cmd, work, timeout, child_env(), outputs=[out])
    check_output(out, 500, "pyinstrument's speedscope JSON")
    version = tool_version([sys.executable, "-m", "pyinstrument", "--version"])
    write_record(out + ".record.json", {
        "name": "pyinstrument", "tool": "pyinstrument", "version": version,
        "command": ["pyinstrument", "-r", "speedscope", "-o", out_name,
                    "tools/recorders/programs/" + SAMPLED_PROGRAM, *SAMPLED_ARGS],
        "program": "tools/recorders/programs/" + SAMPLED_PROGRAM, "python": sys.version.split()[0],
        "seconds": round(secs, 2), "files": [out_name], "tool_log": log.strip()[-1500:]})
    return out
