"""Real Dask processes for the cluster tests: a ``dask scheduler`` and ``dask worker``s on
loopback, each in its own process group (killed whole on stop), started with this
interpreter and the repository on their path (what an installed worker has)."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0


def worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskProcesses:
    """A scheduler and ``n`` workers (``--nthreads 1``), started by `start`, killed by `stop`."""

    def __init__(self, folder: pathlib.Path, n_workers: int = 2, worker_args=()):
        self.folder, self.n = pathlib.Path(folder), n_workers
        self.worker_args = list(worker_args)  # more options of every ``dask worker`` (``--preload M``)
        self.scheduler = None
        self.workers: list = []
        self.address = None

    def _spawn(self, args: list, log: str) -> subprocess.Popen:
        out = open(self.folder / log, "wb")
        try:
            return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=out, stderr=subprocess.STDOUT,
                                    env=worker_env(), cwd=str(self.folder), start_new_session=True)
        finally:
            out.close()

    def start(self) -> "DaskProcesses":
        info = self.folder / "scheduler.json"
        self.scheduler = self._spawn(["scheduler", "--host", "127.0.0.1", "--port", str(free_port()),
                                      "--no-dashboard", "--scheduler-file", str(info)], "scheduler.log")
        deadline = time.monotonic() + START_TIMEOUT
        while not info.exists() or not info.read_text().strip():
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("dask scheduler did not start: " + (self.folder / "scheduler.log").read_text()[-2000:])
            time.sleep(0.1)  # polling a file the process writes (not synchronising on time)
        self.address = json.loads(info.read_text())["address"]
        for k in range(self.n):
            self.add_worker(f"w{k}")
        from distributed import Client

        with Client(self.address, timeout="20s") as c:
            c.wait_for_workers(self.n, timeout=START_TIMEOUT)
        return self

    def add_worker(self, name: str) -> subprocess.Popen:
        p = self._spawn(["worker", self.address, "--nthreads", "1", "--nworkers", "1", "--name", name,
                         "--no-dashboard", "--death-timeout", "120", *self.worker_args], f"{name}.log")
        self.workers.append(p)
        return p

    def kill_worker(self, k: int) -> None:
        """Kill worker ``k``'s whole process group (its nanny too: it does not come back)."""
        try:
            os.killpg(self.workers[k].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.workers[k].wait(timeout=30)

    def stop(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p is not None and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=30)
