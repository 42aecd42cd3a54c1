"""What every recorder shares: the repository's paths, running a tool under a timeout, the trace
venvs, checking what a tool wrote, and the record written beside each recording."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "build", "traces")
#: the recordings of other tools' formats (`tools/recorders/format_suite.py`)
DEFAULT_FORMATS_OUT = os.path.join(DEFAULT_OUT, "formats")
#: where the small recordings are shipped for the tests (`format_suite.ship`)
SHIPPED_DIR = os.path.join(REPO, "tests", "data", "formats", "recorded")
#: the programs the new recorders run (sources: C, Go, JavaScript, HTML, Python)
PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
TRACE_VENV = os.path.join(REPO, "build", "trace-venv")
TRACE_REQUIREMENTS = os.path.join(REPO, "tools", "trace-requirements.txt")
#: JAX's profiler (`jax.profiler.trace`): a venv of its own, ~600 MB, made only when a JAX trace is asked for
JAX_VENV = os.path.join(REPO, "build", "jax-venv")
JAX_REQUIREMENTS = os.path.join(REPO, "tools", "jax-requirements.txt")
TORCH_VENV = os.path.join(REPO, "build", "torch-venv")
TORCH_REQUIREMENTS = os.path.join(REPO, "tools", "torch-requirements.txt")
THREADS_EXAMPLE = os.path.join(REPO, "examples", "threads_pipeline.py")
TIMEOUT = 900  # seconds per recording of the VizTracer suite
#: seconds per recording of another tool's format (they take 1-20 s here)
FORMAT_TIMEOUT = 300


class RecordingSkipped(Exception):
    """The tool cannot record here (not installed, not permitted); the message says why and how
    to install it."""


def write_text(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def program_path(name: str) -> str:
    """The path of a program of `PROGRAMS_DIR`."""
    return os.path.join(PROGRAMS_DIR, name)


def run_logged(cmd: list, cwd: str, timeout: float, env=None) -> tuple:
    """Run ``cmd``; return (returncode, combined output, seconds).  A run past ``timeout`` is
    killed and returns -9 with "(timed out after N s)" at the end of its output."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), time.perf_counter() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return -9, out + f"\n(timed out after {timeout:.0f} s)", time.perf_counter() - t0


def run_sampler(cmd: list, out: str, tool: str, timeout: float, prefix: str, retry_if: str = "") -> tuple:
    """Run a sampling profiler that attaches to its child (py-spy, Austin) in a temporary
    folder; return (its output, seconds).  A run that fails with a permission or ptrace complaint is
    `RecordingSkipped` (this machine forbids attaching), any other failure a RuntimeError with
    the command and the end of its output."""
    import tempfile

    for attempt in range(3 if retry_if else 1):  # ``retry_if``: a tool's known race, run again (twice)
        with tempfile.TemporaryDirectory(prefix=prefix) as work:
            rc, log, secs = run_logged(cmd, work, timeout, child_env())
        if rc == 0 or retry_if not in log:
            break
    if rc != 0 or not os.path.exists(out):
        reason = " ".join(log.strip().splitlines()[-3:])[:400]
        if "ermission" in log or "ptrace" in log.lower():
            raise RecordingSkipped(f"{tool} may not attach to the process here (ptrace): {reason}")
        raise RuntimeError(f"{' '.join(cmd)} exited {rc}:\n{log[-3000:]}")
    return log, secs


def run_tool(cmd: list, cwd: str, timeout: float, env=None, outputs=(), ok_codes=(0,)) -> tuple:
    """Run ``cmd`` and check that it exited with one of ``ok_codes`` and wrote every path of
    ``outputs``; return (output, seconds).  Raises RuntimeError naming the command, its exit
    status and its output's tail otherwise (a timeout included)."""
    rc, log, secs = run_logged(cmd, cwd, timeout, env)
    missing = [p for p in outputs if not os.path.exists(p)]
    if rc not in ok_codes or missing:
        what = f"exited {rc}" + (f", did not write {', '.join(missing)}" if missing else "")
        raise RuntimeError(f"{' '.join(map(str, cmd))} {what}:\n{log[-3000:]}")
    return log, secs


def child_env(**extra) -> dict:
    """The environment of a recorded program: this one without PYTHONPATH, a fixed hash seed."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def venv_python(venv: str) -> str:
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")


def ensure_trace_venv(venv: str = TRACE_VENV, requirements: str = TRACE_REQUIREMENTS) -> str:
    """Create ``venv`` and install ``requirements`` (pinned) unless already done; return its python."""
    with open(requirements, "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest()
    py = venv_python(venv)
    stamp_file = os.path.join(venv, "requirements.sha256")
    if os.path.exists(py) and os.path.exists(stamp_file) and open(stamp_file).read().strip() == stamp:
        return py
    base = getattr(sys, "_base_executable", None) or sys.executable
    print(f"record_traces: creating {venv} from {requirements} (once)", file=sys.stderr)
    if not os.path.exists(py):
        subprocess.run([base, "-m", "venv", venv], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", requirements],
                   check=True)
    with open(stamp_file, "w") as f:
        f.write(stamp + "\n")
    return py


def require_tool(names, install: str) -> str:
    """The path of the first of ``names`` (a name or a tuple of names) on PATH; raises
    `RecordingSkipped` saying how to ``install`` it when none is."""
    for name in (names,) if isinstance(names, str) else names:
        path = shutil.which(name)
        if path:
            return path
    raise RecordingSkipped(f"{names if isinstance(names, str) else ' / '.join(names)} is not installed "
                           f"({install})")


def tool_version(cmd: list, timeout: float = 60) -> str:
    """The first line ``cmd`` (``tool --version``) prints, '' when it cannot be run."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = [ln.strip() for ln in p.stdout.decode("utf-8", "replace").splitlines() if ln.strip()]
    # Chromium's wrapper script may print a shell warning first
    lines = [ln for ln in lines if "unexpected operator" not in ln] or lines
    return lines[0] if lines else ""


def check_output(path: str, min_bytes: int, what: str) -> str:
    """``path`` when it exists and holds at least ``min_bytes`` (inflated when it is gzip);
    raises RuntimeError saying ``what`` it should have been otherwise."""
    if not os.path.exists(path):
        raise RuntimeError(f"{path}: not written (expected {what})")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        with gzip.open(path, "rb") as f:
            size = len(f.read(min_bytes))
    if size < min_bytes:
        raise RuntimeError(f"{path}: only {size} bytes (expected {what}, at least {min_bytes} bytes)")
    return path


def write_record(path: str, record: dict) -> dict:
    """Write ``record`` (what was recorded, how: `format_suite`'s table and README read it) as
    JSON to ``path``; return it."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    return record


def trace_stats(path: str) -> dict:
    """Calls, depth (levels), threads and thread names of a recorded trace (loaded with tracevis3d)."""
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    import warnings

    import tracevis3d

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracevis3d.load(path)
    return {
        "calls": len(t),
        "depth": int(t.depth.max()) + 1 if len(t) else 0,
        "threads": t.n_threads,
        "thread_names": list(t.thread_names),
        "functions": t.n_functions,
        "repairs": {k: v["count"] for k, v in t.meta.get("repairs", {}).items()},
    }


def fmt_bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"
