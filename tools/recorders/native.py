"""Native profilers and tracers on `programs/native_work.c` (a quicksort, a binary tree, a hash table
of words, fib, two pthreads), compiled here with gcc: valgrind's callgrind, linux perf
(``perf record -g`` + ``perf script``) and uftrace (``-pg`` instrumentation, ``uftrace dump --chrome``)."""
from __future__ import annotations

import os
import subprocess
import tempfile

from .common import (FORMAT_TIMEOUT, RecordingSkipped, check_output, child_env, program_path, require_tool,
                     run_logged, run_tool, tool_version, write_record)

PROGRAM = "native_work.c"
PROGRAM_REL = "tools/recorders/programs/" + PROGRAM
INSTALL_GCC = "Debian: apt-get install gcc"


def compile_program(work: str, flags: tuple = (), name: str = "native_work", timeout: float = FORMAT_TIMEOUT) -> tuple:
    """Compile `programs/native_work.c` into ``work/name`` with ``-O1 -g -fno-omit-frame-pointer
    -pthread`` and ``flags``; (executable, the command as shown in the records)."""
    gcc = require_tool(("gcc", "cc"), INSTALL_GCC)
    exe = os.path.join(work, name)
    args = ["-O1", "-g", "-fno-omit-frame-pointer", *flags, "-pthread", "-o"]
    run_tool([gcc, *args, exe, program_path(PROGRAM)], work, timeout, child_env(), outputs=[exe])
    return exe, ["gcc", *args, name, PROGRAM_REL]


def record_callgrind(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """``valgrind --tool=callgrind`` on the program (its three threads in one profile):
    ``callgrind.out`` in ``out_dir``, the path.  Raises `RecordingSkipped` without valgrind or gcc."""
    valgrind = require_tool("valgrind", "Debian: apt-get install valgrind")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "callgrind.out")
    with tempfile.TemporaryDirectory(prefix="callgrind-") as work:
        exe, build = compile_program(work, timeout=timeout)
        cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + out, exe, "1"]
        log, secs = run_tool(cmd, work, timeout, child_env(), outputs=[out])
    check_output(out, 5000, "a callgrind profile")
    with open(out, "rb") as f:
        if not f.read(64).startswith(b"# callgrind format"):
            raise RuntimeError(f"{out}: not a callgrind profile")
    write_record(out + ".record.json", {
        "name": "callgrind", "tool": "valgrind", "version": tool_version([valgrind, "--version"]),
        "command": [*build, "&&", "valgrind", "--tool=callgrind", "--callgrind-out-file=callgrind.out",
                    "./native_work", "1"],
        "program": PROGRAM_REL, "seconds": round(secs, 2), "files": ["callgrind.out"],
        "tool_log": log.strip()[-1500:]})
    return out


def perf_paranoid() -> str:
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def record_perf(out_dir: str, frequency: int = 2000, scale: int = 6, timeout: float = FORMAT_TIMEOUT) -> str:
    """``perf record -g -F frequency`` on the program (``scale`` times its default work), then
    ``perf script``: ``perf.script.txt`` in ``out_dir``, the path.  Raises `RecordingSkipped` without
    perf, or when the kernel refuses (``perf_event_paranoid``, no perf events in a container)."""
    perf = require_tool("perf", "Debian: apt-get install linux-perf")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "perf.script.txt")
    # not "/tmp/perf-…": perf takes a program under that prefix for a JIT symbol map (perf-PID.map)
    # and names none of its functions
    with tempfile.TemporaryDirectory(prefix="tv3d-perf-rec-") as work:
        exe, build = compile_program(work, timeout=timeout)
        data = os.path.join(work, "perf.data")
        cmd = [perf, "record", "-g", "-F", str(int(frequency)), "-o", data, exe, str(int(scale))]
        rc, log, secs = run_logged(cmd, work, timeout, child_env())
        if rc != 0 or not os.path.exists(data):
            tail = " ".join(log.strip().splitlines()[-4:])[:500]
            if rc == -9:
                raise RuntimeError(f"{' '.join(cmd)} timed out:\n{log[-2000:]}")
            raise RecordingSkipped(f"perf may not record here (kernel.perf_event_paranoid = {perf_paranoid()}, "
                                   f"uid {os.getuid()}): {tail}")
        with open(out, "wb") as f:
            p = subprocess.run([perf, "script", "-i", data], cwd=work, stdout=f, stderr=subprocess.PIPE,
                               timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"perf script -i {data} exited {p.returncode}: "
                               f"{p.stderr.decode('utf-8', 'replace')[-2000:]}")
    check_output(out, 5000, "perf script's samples with call stacks")
    write_record(out + ".record.json", {
        "name": "perf", "tool": "perf", "version": tool_version([perf, "--version"]),
        "command": [*build, "&&", "perf", "record", "-g", "-F", str(int(frequency)), "-o", "perf.data",
                    "./native_work", str(int(scale)), "&&",
                    "perf", "script", "-i", "perf.data", ">", "perf.script.txt"],
        "perf_event_paranoid": perf_paranoid(), "program": PROGRAM_REL, "seconds": round(secs, 2),
        "files": ["perf.script.txt"], "tool_log": log.strip()[-1500:]})
    return out


def record_uftrace(out_dir: str, min_time: str = "10us", timeout: float = FORMAT_TIMEOUT) -> str:
    """``uftrace record -t min_time`` of the program compiled with ``-pg`` (every function call
    that took at least ``min_time``, in all three threads), then ``uftrace dump --chrome``:
    ``uftrace.json`` (Chrome Trace Event JSON) in ``out_dir``, the path."""
    uftrace = require_tool("uftrace", "Debian: apt-get install uftrace")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "uftrace.json")
    with tempfile.TemporaryDirectory(prefix="uftrace-") as work:
        exe, build = compile_program(work, ("-pg",), "native_work_pg", timeout=timeout)
        data = os.path.join(work, "uftrace.data")
        cmd = [uftrace, "record", "-t", min_time, "-d", data, exe, "1"]
        log, secs = run_tool(cmd, work, timeout, child_env(), outputs=[data])
        with open(out, "wb") as f:
            p = subprocess.run([uftrace, "dump", "-d", data, "--chrome"], cwd=work, stdout=f,
                               stderr=subprocess.PIPE, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"uftrace dump --chrome exited {p.returncode}: "
                               f"{p.stderr.decode('utf-8', 'replace')[-2000:]}")
    check_output(out, 5000, "uftrace's Chrome JSON")
    write_record(out + ".record.json", {
        "name": "uftrace", "tool": "uftrace", "version": tool_version([uftrace, "--version"]),
        "command": [*build, "&&", "uftrace", "record", "-t", min_time, "-d", "uftrace.data", "./native_work_pg", "1",
                    "&&", "uftrace", "dump", "-d", "uftrace.data", "--chrome", ">", "uftrace.json"],
        "program": PROGRAM_REL, "seconds": round(secs, 2), "files": ["uftrace.json"],
        "tool_log": log.strip()[-1500:]})
    return out
