"""Go's runtime/pprof: `programs/pprof_work.go` (six labelled goroutines: JSON, hashing and
sorting, a recursion) writes a CPU profile and a heap profile (profile.proto, gzipped)."""
from __future__ import annotations

import os
import tempfile

from .common import (FORMAT_TIMEOUT, check_output, child_env, program_path, require_tool, run_tool, tool_version,
                     write_record)

INSTALL_GO = "Debian: apt-get install golang-go"
PROGRAM = "pprof_work.go"


def record_go_pprof(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Build and run `programs/pprof_work.go`: ``go_cpu.pb.gz`` (CPU samples, the path returned) and
    ``go_heap.pb.gz`` (allocations still live at the end, sampled every 4 kB) in ``out_dir``.
    Raises `RecordingSkipped` without Go, RuntimeError when the program fails."""
    go = require_tool("go", INSTALL_GO)
    os.makedirs(out_dir, exist_ok=True)
    cpu, heap = os.path.join(out_dir, "go_cpu.pb.gz"), os.path.join(out_dir, "go_heap.pb.gz")
    for p in (cpu, heap):
        if os.path.exists(p):
            os.remove(p)
    with tempfile.TemporaryDirectory(prefix="go-") as work:
        # offline and self-contained: the build cache in the work folder, no module proxy
        env = child_env(GOCACHE=os.path.join(work, "cache"), GOPATH=os.path.join(work, "gopath"), GOPROXY="off",
                        GOFLAGS="", GO111MODULE="off", CGO_ENABLED=0)
        exe = os.path.join(work, "pprof_work")
        build_log, build_secs = run_tool([go, "build", "-o", exe, program_path(PROGRAM)], work, timeout, env,
                                         outputs=[exe])
        cmd = [exe, "-cpu", cpu, "-heap", heap]
        log, secs = run_tool(cmd, work, timeout, env, outputs=[cpu, heap])
    check_output(cpu, 1000, "a CPU profile of six goroutines")
    check_output(heap, 500, "a heap profile")
    write_record(cpu + ".record.json", {
        "name": "go_pprof", "tool": "go", "version": tool_version([go, "version"]),
        "command": ["go", "build", "-o", "pprof_work", "tools/recorders/programs/" + PROGRAM, "&&",
                    "./pprof_work", "-cpu", "go_cpu.pb.gz", "-heap", "go_heap.pb.gz"],
        "program": "tools/recorders/programs/" + PROGRAM, "seconds": round(secs, 2),
        "build_seconds": round(build_secs, 2), "files": ["go_cpu.pb.gz", "go_heap.pb.gz"],
        "tool_log": (build_log + log).strip()[-1500:]})
    return cpu
