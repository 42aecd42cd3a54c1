"""Profilers whose files the readers met later: Xdebug's profiler (PHP, callgrind format), yappi
(Python, its callgrind output) and Austin (Python, collapsed stacks with process and thread
frames), each on a small program of `programs/`.

Xdebug needs ``php-cli`` and ``php-xdebug`` from apt (Debian); yappi and austin are installed
from tools/profilers-requirements.txt into build/profilers-venv on first use (pip; Austin 4's
binary wheel needs glibc 2.38: 3.7.0), whose Python runs the profiled program.  Each raises
`RecordingSkipped` when its tool is absent or cannot be installed.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

from .common import (run_sampler, FORMAT_TIMEOUT, REPO, RecordingSkipped, check_output, child_env, ensure_trace_venv,
                     program_path, require_tool, run_logged, run_tool, tool_version, write_record)

PROFILERS_VENV = os.path.join(REPO, "build", "profilers-venv")
PROFILERS_REQUIREMENTS = os.path.join(REPO, "tools", "profilers-requirements.txt")

INSTALL_XDEBUG = "Debian: apt-get install php-cli php-xdebug"
INSTALL_PROFILERS = "pip install -r tools/profilers-requirements.txt into build/profilers-venv"
PHP_PROGRAM = "php/php_work.php"
PHP_INCLUDE = "php/shapes.php"
PHP_ROUNDS = "3"
#: the Python program (a main thread and 3 workers) and its rounds
PY_PROGRAM = "sampled_work.py"
PY_ROUNDS = "2"


def _rel(name: str) -> str:
    return "tools/recorders/programs/" + name


def record_xdebug(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Xdebug's profiler (``xdebug.mode=profile``) on `programs/php/php_work.php` (recursion,
    classes, closures, an include, PHP's string and JSON functions): ``xdebug.cachegrind.out``
    in ``out_dir`` (Xdebug names it ``cachegrind.out.<pid>``), the path."""
    php = require_tool("php", INSTALL_XDEBUG)
    rc, mods, _ = run_logged([php, "-m"], out_dir if os.path.isdir(out_dir) else ".", 60)
    if rc != 0 or "xdebug" not in mods.lower():
        raise RecordingSkipped(f"PHP has no Xdebug module ({INSTALL_XDEBUG})")
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "xdebug.cachegrind.out")
    with tempfile.TemporaryDirectory(prefix="tv3d-xdebug-") as work:
        # the program runs from a copy: the names Xdebug writes hold its path ({closure:/…/php_work.php:3-5})
        for name in (PHP_PROGRAM, PHP_INCLUDE):
            shutil.copy(program_path(name), os.path.join(work, os.path.basename(name)))
        cmd = [php, "-d", "xdebug.mode=profile", "-d", f"xdebug.output_dir={work}",
               "-d", "xdebug.profiler_output_name=cachegrind.out.%p", "php_work.php", PHP_ROUNDS]
        log, secs = run_tool(cmd, work, timeout, child_env())
        written = glob.glob(os.path.join(work, "cachegrind.out.*"))
        if len(written) != 1:
            raise RuntimeError(f"{' '.join(cmd)}: expected one cachegrind.out.* in {work}, found {written}")
        shutil.copy(written[0], out)
    check_output(out, 5000, "Xdebug's profile (callgrind format)")
    write_record(out + ".record.json", {
        "name": "xdebug", "tool": "Xdebug",
        "version": tool_version([php, "-r", "echo 'Xdebug ' . phpversion('xdebug') . ', PHP ' . PHP_VERSION;"]),
        "command": ["php", "-d", "xdebug.mode=profile", "-d", "xdebug.output_dir=OUT", "-d",
                    "xdebug.profiler_output_name=cachegrind.out.%p", "php_work.php", PHP_ROUNDS],
        "program": _rel(PHP_PROGRAM), "seconds": round(secs, 2), "files": ["xdebug.cachegrind.out"],
        "tool_log": log.strip()[-1500:]})
    return out


def profilers_python() -> str:
    """The Python of build/profilers-venv (made on first use); `RecordingSkipped` when pip fails."""
    try:
        return ensure_trace_venv(PROFILERS_VENV, PROFILERS_REQUIREMENTS)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RecordingSkipped(f"cannot make {PROFILERS_VENV} ({INSTALL_PROFILERS}): {e}") from e


def record_yappi(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """yappi's command line (wall clock, all threads) on `programs/sampled_work.py` saving its
    callgrind file: ``yappi.callgrind`` in ``out_dir``, the path."""
    python = profilers_python()
    out_dir = os.path.abspath(out_dir)  # the tool runs in a temporary folder
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "yappi.callgrind")
    cmd = [python, "-m", "yappi", "-c", "wall", "-f", "callgrind", "-o", out, program_path(PY_PROGRAM),
           PY_ROUNDS]
    with tempfile.TemporaryDirectory(prefix="tv3d-yappi-") as work:
        log, secs = run_tool(cmd, work, timeout, child_env(), outputs=[out])
    check_output(out, 5000, "yappi's callgrind file")
    version = tool_version([python, "-c", "import importlib.metadata as m; print(m.version('yappi'))"])
    write_record(out + ".record.json", {
        "name": "yappi", "tool": "yappi", "version": version,
        "command": ["yappi", "-c", "wall", "-f", "callgrind", "-o", "yappi.callgrind", _rel(PY_PROGRAM), PY_ROUNDS],
        "program": _rel(PY_PROGRAM), "python": tool_version([python, "--version"]), "seconds": round(secs, 2),
        "files": ["yappi.callgrind"], "tool_log": log.strip()[-1500:]})
    return out


def austin_command(python: str) -> str:
    """austin beside ``python`` (the profilers venv's); `RecordingSkipped` if it cannot run here."""
    found = os.path.join(os.path.dirname(python), "austin")
    if not tool_version([found, "--version"]).startswith("austin"):
        raise RecordingSkipped(f"{found} does not run here ({INSTALL_PROFILERS}; Austin 4 needs glibc 2.38)")
    return found


def _record_austin(out_dir: str, out_name: str, options: list, timeout: float) -> str:
    python = profilers_python()
    austin = austin_command(python)
    out_dir = os.path.abspath(out_dir)  # the tool runs in a temporary folder
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, out_name)
    if os.path.exists(out):
        os.remove(out)
    cmd = [austin, *options, "-i", "1ms", "-o", out, python, program_path(PY_PROGRAM), PY_ROUNDS]
    # Austin 3.7 now and then looks at its child before the interpreter is mapped and says it
    # is "not a Python process" (1 run in 2 on a loaded machine): twice more, then fail
    log, secs = run_sampler(cmd, out, "austin", timeout, "tv3d-austin-", retry_if="not a Python")
    check_output(out, 2000, "Austin's collapsed stacks")
    write_record(out + ".record.json", {
        "name": os.path.splitext(out_name)[0], "tool": "Austin", "version": tool_version([austin, "--version"]),
        "command": ["austin", *options, "-i", "1ms", "-o", out_name, "python", _rel(PY_PROGRAM), PY_ROUNDS],
        "program": _rel(PY_PROGRAM), "python": tool_version([python, "--version"]), "seconds": round(secs, 2),
        "files": [out_name], "tool_log": log.strip()[-1500:]})
    return out


def record_austin_wall(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Austin sampling `programs/sampled_work.py` every 1 ms (wall time): collapsed stacks, each
    opening with ``P<pid>;T<interpreter>:<tid>``."""
    return _record_austin(out_dir, "austin.wall.txt", [], timeout)


def record_austin_memory(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Austin's memory mode (``-m``) on the same program: counts are bytes allocated (negative:
    freed) between samples."""
    return _record_austin(out_dir, "austin.memory.txt", ["-m"], timeout)
