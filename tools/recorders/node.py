"""Node.js's V8 CPU profiler (``node --cpu-prof``) on `programs/cpuprof_work.js`: one
``.cpuprofile`` per JavaScript thread (the main thread and a worker thread)."""
from __future__ import annotations

import glob
import os
import shutil
import tempfile

from .common import (FORMAT_TIMEOUT, check_output, child_env, program_path, require_tool, run_tool, tool_version,
                     write_record)

INSTALL_NODE = "Debian: apt-get install nodejs"
PROGRAM = "cpuprof_work.js"


def record_node_cpuprofile(out_dir: str, interval_us: int = 250, timeout: float = FORMAT_TIMEOUT) -> str:
    """``node --cpu-prof`` on `programs/cpuprof_work.js`, sampled every ``interval_us``:
    ``node.cpuprofile`` (the main thread, the path returned) and ``node_worker.cpuprofile`` (its
    worker thread) in ``out_dir``.  Raises `RecordingSkipped` without node."""
    node = require_tool(("node", "nodejs"), INSTALL_NODE)
    os.makedirs(out_dir, exist_ok=True)
    main, worker = os.path.join(out_dir, "node.cpuprofile"), os.path.join(out_dir, "node_worker.cpuprofile")
    with tempfile.TemporaryDirectory(prefix="node-") as work:
        prof = os.path.join(work, "prof")
        cmd = [node, "--cpu-prof", "--cpu-prof-dir", prof, "--cpu-prof-interval", str(int(interval_us)),
               program_path(PROGRAM)]
        log, secs = run_tool(cmd, work, timeout, child_env())
        # CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile: thread 0 is the main thread
        made = sorted(glob.glob(os.path.join(prof, "*.cpuprofile")), key=lambda p: int(p.split(".")[-3]))
        if len(made) < 2:
            raise RuntimeError(f"{' '.join(cmd)} wrote {len(made)} profiles, expected 2 (main thread, worker):\n"
                               f"{log[-2000:]}")
        shutil.move(made[0], main)
        shutil.move(made[1], worker)
    for p in (main, worker):
        check_output(p, 2000, "a V8 CPU profile")
    write_record(main + ".record.json", {
        "name": "node_cpuprofile", "tool": "node", "version": "node " + tool_version([node, "--version"]),
        "command": ["node", "--cpu-prof", "--cpu-prof-dir", "prof", "--cpu-prof-interval", str(int(interval_us)),
                    "tools/recorders/programs/" + PROGRAM],
        "program": "tools/recorders/programs/" + PROGRAM, "seconds": round(secs, 2),
        "files": ["node.cpuprofile", "node_worker.cpuprofile"], "tool_log": log.strip()[-1500:]})
    return main
