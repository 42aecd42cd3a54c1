"""Issue 78's 29 cases against its goal, one markdown table (and two of them grown to 20 MB).

Goal: every case gives a one-line error naming the file (or peer) and the position, or a valid
result, within 5 s and 2 GiB, for any input under 20 MB; never a traceback, never a hang.

Each case's reproducer is built here from the builders the tests use (tests/support/
hostile_numbers.py, hostile_memory.py; peers as the tests play them: a raw TCP server that never
speaks, a memray sender, an HTTP Flamenco Manager, a real ``dask scheduler`` and ``dask worker``)
and run in a fresh process (what a user runs: ``tracevis3d.load`` or ``load_memory`` in a new
interpreter, a ``python -m tracevis3d`` command, tools/flamenco/submit.py) under ``nice`` and a
hard timeout (its process group killed).  The peers run in this process (or their own), so the
case's figures are the command's alone: wall seconds from start to exit (the interpreter's start
and imports included), CPU seconds (user + system) and peak RSS from ``os.wait4``'s rusage of
that child (``ru_maxrss``, what ``RUSAGE_CHILDREN`` reports, per child).

A case past 5 s is run once more and the second run reported, the first run's wall time beside
it: a kernel module edited since the shared numba cache was filled compiles on its first use.

The peers' deadlines are set short by their options (``--connect-timeout 2``, a task deadline of
2 s, Flamenco's ``--timeout 2``): the goal asks for a deadline the user can set, and the case's
time is then that deadline plus the command's start.

Usage:  .venv/bin/python tools/hostile_table.py [--timeout 60] [--only SUBSTRING ...] [--keep DIR]
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "support"))

import hostile_memory as hm  # noqa: E402
import hostile_numbers as hn  # noqa: E402

GOAL_S, GOAL_BYTES, GOAL_INPUT = 5.0, 2 << 30, 20_000_000
SUBMIT = REPO / "tools" / "flamenco" / "submit.py"

# ----------------------------------------------------------------------------- what a child runs
_LOAD = r"""
import sys
import tracevis3d
from tracevis3d.model import TraceFormatError
p = sys.argv[1]
try:
    t = tracevis3d.load(p, warn=False)
    t.check()
except TraceFormatError as e:
    print("ERROR " + str(e))
    sys.exit(0)
reps = sorted(t.meta.get("repairs", {}))
print(f"VALID {len(t):,} calls, {t.n_threads:,} threads" + (f"; repairs {', '.join(reps)}" if reps else ""))
"""

_MEMORY = r"""
import sys
from tracevis3d.errors import TraceFormatError
from tracevis3d.io import load_memory
p = sys.argv[1]
try:
    cap = load_memory(p, warn=False)
except TraceFormatError as e:
    print("ERROR " + str(e))
    sys.exit(0)
print(f"VALID {cap.n_ranges:,} allocation ranges")
"""

_LIVE = r"""
import sys
from tracevis3d.errors import TraceFormatError
from tracevis3d.io.memray_live import MemrayLiveStream
try:
    with MemrayLiveStream(int(sys.argv[1]), connect_timeout=30) as stream:
        while not stream.finished:
            stream.poll(timeout=0.5)
        cap = stream.capture()
except TraceFormatError as e:
    print("ERROR " + str(e))
    sys.exit(0)
print(f"VALID {cap.n_ranges:,} allocation ranges, running={cap.meta['running']}")
"""

_TASK = r"""
import sys, time
from tracevis3d.cluster import ClusterError, Deadlines, connected, run_tasks
try:
    with connected(sys.argv[1], deadlines=Deadlines(connect=10.0, task=2.0)) as s:
        failed = run_tasks(s, time.sleep, [(3600,)], lambda i, r: None)
except ClusterError as e:
    print("ERROR " + str(e))
    sys.exit(0)
print(("ERROR " + failed[0][1]) if failed else "VALID the task finished")
"""

_STALE = r"""
import os, re, sys
from tracevis3d.layout import refine
refine.FINGERPRINT_WHOLE, refine.FINGERPRINT_CHUNK = 64 << 10, 1 << 10  # a 1 MB file is "large"
p = sys.argv[1]
before = refine.content_fingerprint(p)
st = os.stat(p)
text = bytearray(open(p, "rb").read())
size, chunk = len(text), refine.FINGERPRINT_CHUNK
pieces = [((size - chunk) * k // (refine.FINGERPRINT_CHUNKS - 1), chunk) for k in range(refine.FINGERPRINT_CHUNKS)]
for m in re.finditer(rb'"name": ?"([a-zA-Z_.]+)"', bytes(text[size // 3:])):
    a, b = size // 3 + m.start(1), size // 3 + m.end(1)
    if all(b <= q or a >= q + n for q, n in pieces):
        break
else:
    raise SystemExit("no name outside the pieces")
text[b - 1:b] = b"Q"  # same size, outside every piece, the modification time put back
open(p, "wb").write(bytes(text))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
after = refine.content_fingerprint(p)
print("VALID the edit changes the fingerprint (the kept copy is rewritten)" if after != before
      else "ERROR " + p + ": the fingerprint did not change: the kept copy would be stale")
"""


# ----------------------------------------------------------------------------- peers (run in this process)
class _Silent:
    """A TCP server on loopback that accepts every connection and never sends a byte."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.srv.settimeout(0.2)
        self.stop, self.conns = threading.Event(), []
        self.address = f"tcp://127.0.0.1:{self.srv.getsockname()[1]}"
        self.t = threading.Thread(target=self._accept, daemon=True)
        self.t.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                self.conns.append(self.srv.accept()[0])
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.stop.set()
        self.t.join(10)
        self.srv.close()
        for c in self.conns:
            c.close()


class _Sender:
    """memray's live tracker's place: sends ``data`` to the first client, then closes."""

    def __init__(self, data: bytes):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.srv.settimeout(120)
        self.port = self.srv.getsockname()[1]
        self.t = threading.Thread(target=self._serve, args=(data,), daemon=True)
        self.t.start()

    def _serve(self, data):
        try:
            conn, _ = self.srv.accept()
        except OSError:
            return
        try:
            conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.srv.close()
        self.t.join(10)


class _Manager:
    """An HTTP server answering every GET with (status, content type, body)."""

    def __init__(self, answer):
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                code, ctype, body = answer
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.t = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.t.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _Dask:
    """A real scheduler and one worker (tests/support/dask_processes.py)."""

    def __init__(self, folder):
        from dask_processes import DaskProcesses

        self.procs = DaskProcesses(pathlib.Path(folder), 1).start()
        self.address = self.procs.address

    def close(self):
        self.procs.stop()


# ----------------------------------------------------------------------------- the cases
def _py(code: str, *args) -> list:
    return [sys.executable, "-c", code, *map(str, args)]


def _cli(*args) -> list:
    return [sys.executable, "-m", "tracevis3d", *map(str, args)]


def _submit(*args) -> list:
    return [sys.executable, str(SUBMIT), "--blend", "/shared/growth.blend", "--output-root", "/shared/out", *args]


def _small_trace(path: pathlib.Path, n: int = 200, threads: int = 1):
    sys.path.insert(0, str(REPO))
    import tracevis3d

    tracevis3d.save(tracevis3d.synthetic(n, threads=threads, seed=5), path, format="chrome")


def cases() -> list:
    """(number, name, kind, build) with kind one of "load", "memory", "argv"; ``build(dir)`` gives
    (argv or None, input bytes or None, the file's suffix, a peer to close or None, what the error
    must name: None for the file's path)."""
    c = []

    def file(num, name, kind, data_fn, suffix):
        c.append((num, name, kind, lambda d: (None, data_fn(), suffix, None, None)))

    file("1", "cProfile dump, root time 1.797e308 (tree fit's bound)", "load", hn.pstats_largest_float, ".prof")
    file("2a", "memray capture, 3000 allocations under one 99,999-frame stack", "memory",
         lambda: hm.deep_leaves(99_999, 3000), ".bin")

    def live(d):
        data = hm.deep_leaves(99_999, 3000)
        peer = _Sender(data)
        return _py(_LIVE, peer.port), data, None, peer, f"127.0.0.1:{peer.port}"

    c.append(("2b", "memray live peer, the same bytes (MemrayLiveStream.capture)", "argv", live))

    def render_live(d):
        data = hm.deep_leaves(99_999, 3000)
        peer = _Sender(data)
        return (_cli("render-memory", "--live-port", peer.port, "-o", d / "live.png", "--resolution", "320x180",
                     "--live-seconds", "30"), data, None, peer, f"{peer.port}")

    c.append(("2c", "render-memory --live-port, the same stream, ended", "argv", render_live))
    file("2d", "Chrome memory dump, 3000 heap entries under a 99,000-node heaps_v2 chain", "memory",
         lambda: hm.deep_heaps_v2(99_000, 3000), ".json")
    file("2e", "memray line table of 10^6 entries, 5000 frames", "memory",
         lambda: hm.long_line_table(1_000_000, 5000), ".bin")
    file("3", "marshal: code objects nested 15 deep, innermost broken", "load", lambda: hn.nested_code_dump(15), ".prof")

    def silent(command):
        def build(d):
            peer = _Silent()
            _small_trace(d / "run.json")
            extra = ["--seconds", "1", "--fps", "2"] if command == "render-animation" else ["--view", "icicle"]
            return (_cli(command, d / "run.json", "-o", d / "out", *extra, "--scheduler", peer.address,
                         "--connect-timeout", "2"), None, None, peer, peer.address)
        return build

    c.append(("4a", "render-animation --scheduler: a scheduler that never speaks", "argv", silent("render-animation")))
    c.append(("4b", "render-batch --scheduler: a scheduler that never speaks", "argv", silent("render-batch")))

    def worker(d):
        peer = _Dask(d)
        return _py(_TASK, peer.address), None, None, peer, peer.address

    c.append(("4c", "a Dask worker that takes a task and never finishes it", "argv", worker))

    def scheme(s):
        def build(d):
            _small_trace(d / "run.json")
            return (_cli("render-batch", d / "run.json", "--view", "icicle", "-o", d / "out", "--connect-timeout", "2",
                         "--scheduler", f"{s}://127.0.0.1:8786"), None, None, None, f"{s}://")
        return build

    c.append(("4d", "--scheduler tls://… without Dask's TLS settings", "argv", scheme("tls")))
    c.append(("4e", "--scheduler ucx://… (no ucx package)", "argv", scheme("ucx")))

    def stale(d):
        _small_trace(d / "big.json", 4000, 2)
        return _py(_STALE, d / "big.json"), (d / "big.json").read_bytes(), None, None, None

    c.append(("5", "kept copy: same-size edit outside the 64 sampled pieces", "argv", stale))
    file("6a", "callgrind pid: of 5,000 digits", "load", lambda: hn.callgrind_pid(hn.HUGE_5000), ".callgrind")
    file("6b", "yappi line in superscript digits", "load", lambda: hn.yappi_line(hn.SUPERSCRIPT), ".callgrind")
    file("6c", "yappi line of 5,000 digits", "load", lambda: hn.yappi_line(hn.HUGE_5000), ".callgrind")
    file("6d", "V8 log line past int64", "load", lambda: hn.v8log_line(hn.HUGE), ".json")
    file("6e", "Gecko location line of 5,000 digits", "load", lambda: hn.gecko_line(hn.HUGE_5000), ".json")
    file("6f", "GHC total ticks of 5,000 digits", "load", lambda: hn.ghc_total_ticks(hn.HUGE_5000), ".prof")
    file("6g", "speedscope 'Thread N' past int64", "load", lambda: hn.speedscope_thread(hn.HUGE), ".speedscope.json")
    file("6h", "py-spy 'process N:' of 5,000 digits", "load", lambda: hn.pyspy_process(hn.HUGE_5000), ".txt")
    file("6i", "Austin thread id past int64", "load", lambda: hn.austin_ids("7", hn.HUGE), ".austin")
    file("7a", "perf script, 200,000 threads of one event", "load", lambda: hn.perf_threads(200_000), ".perf.txt")
    file("7b", "speedscope, 100,000 profiles", "load", lambda: hn.speedscope_profiles(100_000), ".speedscope.json")
    file("7c", "Chrome trace, 20,000 V8 profiles (Profile + ProfileChunk)", "load",
         lambda: hn.chrome_v8_profiles(20_000), ".json")
    # the two slow ones of the last round, grown to just under 20 MB
    file("7b+", "speedscope, 75,000 evented profiles (under 20 MB)", "load",
         lambda: hn.speedscope_evented_profiles(75_000), ".speedscope.json")
    file("7c+", "Chrome trace, 32,000 V8 profiles (under 20 MB)", "load", lambda: hn.chrome_v8_profiles(32_000), ".json")

    def frames(text):
        return lambda d: (_submit("--frames", text, "--dry-run"), None, None, None, "--frames")

    c.append(("8a", "Flamenco --frames in non-ASCII digits (١-٣)", "argv", frames("\u0661-\u0663")))
    c.append(("8b", "Flamenco --frames open (1-)", "argv", frames("1-")))

    def manager(answer):
        def build(d):
            peer = _Manager(answer)
            return _submit("--frames", "1-30", "--manager", peer.url, "--timeout", "2"), None, None, peer, peer.url
        return build

    c.append(("8c", "Flamenco Manager answers HTML", "argv", manager((200, "text/html", b"<html>Flamenco?</html>"))))
    c.append(("8d", "Flamenco Manager answers a JSON list", "argv", manager((200, "application/json", b"[1, 2, 3]"))))
    return c


# ----------------------------------------------------------------------------- running one
def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    env.pop("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", None)
    return env


#: The launcher: a small process started before any reproducer is built, that starts each case
#: (one JSON line in: argv, folder, timeout) and answers its figures (one JSON line out).  On
#: Linux a child's ``ru_maxrss`` starts from the memory of the process it was forked from (exec
#: keeps the old image's high-water mark): forked from this process, after it built a 13 MB
#: reproducer, even ``submit.py --dry-run`` showed 244 MiB.
_LAUNCHER = r"""
import json, os, signal, subprocess, sys, threading, time
for line in sys.stdin:
    job = json.loads(line)
    out, err = open(job["folder"] + "/stdout", "wb"), open(job["folder"] + "/stderr", "wb")
    t0 = time.monotonic()
    proc = subprocess.Popen(job["argv"], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=job["env"],
                            cwd=job["folder"], start_new_session=True)
    killed = threading.Event()
    def kill(pid=proc.pid):
        killed.set()
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    timer = threading.Timer(job["timeout"], kill)
    timer.start()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # (reaped here: Popen must not wait again)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what the child left behind
    except ProcessLookupError:
        pass
    out.close()
    err.close()
    print(json.dumps({"rc": proc.returncode, "hang": killed.is_set(), "wall": wall,
                      "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss * 1024}), flush=True)
"""


class Launcher:
    """`_LAUNCHER` running: `run` starts one case in it."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def run(self, argv: list, folder: pathlib.Path, timeout: float) -> dict:
        """Run ``argv`` under ``nice`` in its own process group, killed after ``timeout`` s: its
        exit status, whether it was killed, wall s, CPU s, peak RSS (bytes, `os.wait4`), stdout
        and stderr."""
        job = {"argv": ["nice", "-n", "5", *argv], "folder": str(folder), "timeout": timeout, "env": _env()}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        r["stdout"] = (folder / "stdout").read_text(errors="replace")
        r["stderr"] = (folder / "stderr").read_text(errors="replace")
        return r

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(30)


def _run_case(launcher, d: pathlib.Path, kind: str, build, timeout: float) -> tuple:
    """Build the case in ``d`` (its peer started), run it, close its peer: (figures, input bytes, what
    the error must name)."""
    d.mkdir(exist_ok=True)
    peer = None
    try:
        cmd, data, suffix, peer, names = build(d)
        if cmd is None:  # a file to read
            p = d / f"input{suffix}"
            p.write_bytes(data)
            cmd, names = _py(_LOAD if kind == "load" else _MEMORY, p), str(p)
        return launcher.run(cmd, d, timeout), data, names
    finally:
        if peer is not None:
            peer.close()


def judge(r: dict, names: str) -> tuple:
    """(outcome, one line naming the file or peer?, a traceback or hang?)."""
    if r["hang"]:
        return f"HANG (killed after {r['wall']:.0f} s)", False, True
    lines = [ln for ln in r["stdout"].splitlines() if ln.startswith(("ERROR ", "VALID "))]
    if lines:
        ln = lines[-1]
        if ln.startswith("VALID "):
            return "valid: " + ln[6:], True, False
        msg = ln[6:]
        return msg, "\n" not in msg and names in msg, False
    err = [ln for ln in r["stderr"].splitlines() if ln.strip()]
    if err and err[0].startswith("usage: "):  # argparse: its usage, then the one line that says what is wrong
        err = [ln for ln in err if not ln.startswith(("usage: ", " "))]
    if "Traceback" in r["stderr"]:
        return "TRACEBACK " + (err[-1] if err else ""), False, True
    if r["rc"] == 0:
        said = [ln for ln in err if "final:" in ln] or err  # render-memory's last figure says what it drew
        return "valid" + (": " + said[-1].strip() if said else ""), True, False
    msg = err[-1] if err else f"exit {r['rc']} without a word"
    return f"(exit {r['rc']}) {msg}", len(err) == 1 and names in msg, False


def _cell(text: str, width: int = 150) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 1] + "…"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="hard limit of each case, s (a hang guard)")
    ap.add_argument("--only", nargs="*", default=[], help="the cases of these numbers (1, 2a, ...)")
    ap.add_argument("--keep", help="a folder to keep the reproducers in (else a temporary one)")
    a = ap.parse_args(argv)
    root = pathlib.Path(a.keep or tempfile.mkdtemp(prefix="hostile78-"))
    root.mkdir(parents=True, exist_ok=True)
    launcher = Launcher()  # before any reproducer is built (see `_LAUNCHER`)
    print("| case | what | input | outcome (first line of the error, or valid) | wall s | CPU s | peak RSS MiB "
          "| within goal | 1st run wall s |")
    print("|---|---|--:|---|--:|--:|--:|---|--:|")
    n_ok = n = 0
    for num, name, kind, build in cases():
        if a.only and num not in a.only:
            continue
        r, data, names = _run_case(launcher, root / f"case-{num}", kind, build, a.timeout)
        first = None
        if r["wall"] > GOAL_S and not r["hang"]:  # once more: a first use may compile kernels (see below)
            first, (r, data, names) = r["wall"], _run_case(launcher, root / f"case-{num}", kind, build, a.timeout)
        outcome, clear, broken = judge(r, names)
        size = len(data) if data is not None else 0
        ok = clear and not broken and r["wall"] <= GOAL_S and r["rss"] <= GOAL_BYTES and size < GOAL_INPUT
        n, n_ok = n + 1, n_ok + ok
        why = "" if ok else " (" + ", ".join(w for w, bad in (
            ("slow", r["wall"] > GOAL_S), ("memory", r["rss"] > GOAL_BYTES), ("hang/traceback", broken),
            ("not one line naming the input", not clear and not broken)) if bad) + ")"
        print(f"| {num} | {_cell(name, 80)} | {f'{size / 1e6:.2f} MB' if data is not None else '-'} | "
              f"{_cell(outcome)} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss'] / 2**20:.0f} | "
              f"{'yes' if ok else 'no' + why} | {'-' if first is None else f'{first:.2f}'} |", flush=True)
    launcher.close()
    print(f"\n{n_ok} of {n} cases within the goal (load: {os.getloadavg()[0]:.2f}; reproducers in {root}). "
          "A case past 5 s is run once more, its first wall time in the last column: a kernel module edited "
          "since the shared numba cache was filled compiles on its first use (seconds to minutes), once.")
    return 0 if n_ok == n else 1


if __name__ == "__main__":
    sys.exit(main())
