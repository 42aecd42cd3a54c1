"""Every Dask peer under a deadline the user sets (issue 78, case 4): real peers on loopback.

- a "scheduler" that accepts the connection and never speaks (a raw TCP server): Dask's client
  waits for its handshake without end; `cluster.connected` gives up after ``--connect-timeout``
  with one line, and so do ``render-animation`` and ``render-batch`` (exit 1, never a hang);
- a real ``dask scheduler`` and ``dask worker`` whose task never finishes (``time.sleep`` of an
  hour): `cluster.run_tasks` gives up after ``--task-timeout`` naming the worker that holds it;
- ``ucx://`` (its package is not installed), ``tls://`` without Dask's TLS settings: one line
  saying what is supported, exit 1 (was "internal error: TypeError", exit 3); ``tls://`` with
  them (certificates made by openssl, a real TLS scheduler) connects."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("distributed")

from dask_processes import DaskProcesses, free_port, worker_env  # noqa: E402
from time_limits import time_limit  # noqa: E402

from tracevis3d.cluster import ClusterError, Deadlines, connected, render_workers, run_tasks  # noqa: E402


class _Silent:
    """A TCP server on loopback that accepts every connection and never sends a byte."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.srv.settimeout(0.2)  # the accepting thread looks at `stop` this often
        self.stop = threading.Event()
        self.address = f"tcp://127.0.0.1:{self.srv.getsockname()[1]}"
        self.conns: list = []
        self.t = threading.Thread(target=self._accept, daemon=True)
        self.t.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                c, _ = self.srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        self.stop.set()
        self.t.join(10)
        self.srv.close()
        for c in self.conns:
            c.close()


@pytest.fixture
def silent():
    s = _Silent()
    yield s
    s.close()


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    path = tmp_path_factory.mktemp("trace") / "run.json"
    save_chrome(Trace.from_arrays([0, 1], [0.0, 10.0], [100.0, 50.0], [-1, 0], function_names=["main", "work"]), path)
    return path


@pytest.mark.timeout(120)
def test_a_scheduler_that_never_speaks_is_one_line_after_the_connect_deadline(silent):
    t = time.monotonic()
    with time_limit(60), pytest.raises(ClusterError) as e:
        with connected(silent.address, deadlines=Deadlines(connect=2.0)):
            pass
    msg = str(e.value)
    assert msg == (f"the Dask scheduler at {silent.address} accepted the connection but did not answer Dask's "
                   f"handshake within 2 s (--connect-timeout)"), msg
    assert time.monotonic() - t < 30  # the deadline, not the peer, ended it (a hang guard, not a timing)


def _cli(argv, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, argv)], capture_output=True, text=True,
                          env=worker_env(), timeout=timeout, cwd=str(cwd))


def _one_line(p, code=1) -> str:
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == code and len(lines) == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr[-3000:])
    return lines[0]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("command", ["render-animation", "render-batch"])
def test_the_commands_end_in_one_line_on_a_silent_scheduler(silent, trace, tmp_path, command):
    out = tmp_path / "out"
    extra = ["--seconds", "1", "--fps", "2"] if command == "render-animation" else ["--view", "icicle"]
    line = _one_line(_cli([command, trace, "-o", out, *extra, "--scheduler", silent.address,
                           "--connect-timeout", "3"], tmp_path))
    assert silent.address in line and "did not answer Dask's handshake within 3 s (--connect-timeout)" in line, line


@pytest.mark.timeout(300)
def test_unsupported_and_unconfigured_protocols_are_one_line(trace, tmp_path):
    """ucx:// without its package, tls:// without Dask's TLS settings: exit 1 and what is
    supported; an address of no Dask protocol: exit 2 (a bad option)."""
    env_tls = [k for k in os.environ if k.startswith("DASK_DISTRIBUTED__COMM__TLS")]
    if env_tls:
        pytest.skip(f"this environment sets Dask's TLS settings ({env_tls[0]})")
    base = ["render-batch", trace, "--view", "icicle", "-o", tmp_path / "out", "--connect-timeout", "3"]
    line = _one_line(_cli([*base, "--scheduler", "ucx://127.0.0.1:8786"], tmp_path))
    assert "ucx://" in line and "give tcp://host:port" in line and "internal error" not in line, line
    line = _one_line(_cli([*base, "--scheduler", "tls://127.0.0.1:8786"], tmp_path))
    assert "tls:// needs Dask's TLS settings: distributed.comm.tls.ca-file" in line, line
    line = _one_line(_cli([*base, "--scheduler", "http://127.0.0.1:8786"], tmp_path), code=2)
    assert "Dask does not speak http://" in line, line
    line = _one_line(_cli([*base, "--scheduler", "tcp://127.0.0.1:８７８６"], tmp_path), code=2)
    assert "a port 1-65535" in line, line


def _certificates(folder) -> dict:
    """A certificate authority and a certificate it signed for 127.0.0.1 (openssl): the files."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    f = {k: str(folder / k) for k in ("ca.key", "ca.pem", "node.key", "node.csr", "node.pem", "ext.cnf")}
    with open(f["ext.cnf"], "w") as fh:
        fh.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for cmd in (["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f["ca.key"], "-out", f["ca.pem"],
                 "-days", "2", "-subj", "/CN=tv3d test CA"],
                ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", f["node.key"], "-out", f["node.csr"],
                 "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", f["node.csr"], "-CA", f["ca.pem"], "-CAkey", f["ca.key"], "-CAcreateserial",
                 "-out", f["node.pem"], "-days", "2", "-extfile", f["ext.cnf"]]):
        subprocess.run(["openssl", *cmd], check=True, capture_output=True, timeout=60)
    return f


@pytest.mark.timeout(300)
def test_tls_with_the_users_dask_settings_connects(tmp_path):
    """A real ``dask scheduler`` on tls:// (certificates made here): with Dask's TLS settings the
    session opens and asks it for workers (it has none: one line after --worker-timeout)."""
    import dask

    f = _certificates(tmp_path)
    port = free_port()
    log = open(tmp_path / "scheduler.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                             "--protocol", "tls", "--no-dashboard", "--tls-ca-file", f["ca.pem"], "--tls-cert",
                             f["node.pem"], "--tls-key", f["node.key"]], stdout=log, stderr=subprocess.STDOUT,
                            env=worker_env(), start_new_session=True)
    address = f"tls://127.0.0.1:{port}"
    try:
        settings = {"distributed.comm.tls.ca-file": f["ca.pem"], "distributed.comm.tls.client.cert": f["node.pem"],
                    "distributed.comm.tls.client.key": f["node.key"]}
        deadline = time.monotonic() + 60
        with dask.config.set(settings), time_limit(200):
            while True:  # the scheduler starts: retried until it answers (its log says when it listens)
                try:
                    with connected(address, deadlines=Deadlines(connect=5.0, worker=2.0)) as s:
                        info = s.client.scheduler_info()
                        with pytest.raises(ClusterError, match=r"has no workers \(waited 2 s, --worker-timeout"):
                            render_workers(s)
                    break
                except ClusterError as e:
                    if "cannot reach" not in str(e) or time.monotonic() > deadline:
                        raise
        assert info["address"] == address and info["type"] == "Scheduler"
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(30)
        log.close()


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_worker_that_never_finishes_its_task_is_given_up_after_the_task_deadline(tmp_path):
    """A real scheduler and worker; a task that sleeps a tenth of a second, then one that sleeps an
    hour: the short one's result arrives, then no task finishes for the task deadline: the
    sleeper fails with one line naming the worker that holds it, and is cancelled."""
    procs = DaskProcesses(tmp_path, 1).start()
    try:
        with time_limit(240), connected(procs.address, deadlines=Deadlines(connect=10.0, task=4.0)) as s:
            results = []
            workers = sorted(s.client.scheduler_info()["workers"])
            t = time.monotonic()
            failed = run_tasks(s, time.sleep, [(0.1,), (3600,)], lambda i, r: results.append(i))
            spent = time.monotonic() - t
        assert results == [0] and [i for i, _ in failed] == [1], (results, failed)
        why = failed[0][1]
        assert why.startswith(f"no task finished on the Dask cluster {procs.address} in 4 s (--task-timeout): "
                              f"1 of 2 task(s) still out, held by {workers[0]}"), why
        assert spent < 200, spent  # a hang guard: the deadline ended it
    finally:
        procs.stop()


def test_the_deadlines_are_declared_once_in_the_schema():
    from tracevis3d.cluster import CONNECT_TIMEOUT, TASK_TIMEOUT, WORKER_TIMEOUT
    from tracevis3d.params.cluster import CLUSTER_SCHEMA, FIGURES_CLUSTER_SCHEMA

    by = CLUSTER_SCHEMA.by_name
    assert (CONNECT_TIMEOUT, WORKER_TIMEOUT, TASK_TIMEOUT) == (by["connect_timeout"].default,
                                                              by["worker_timeout"].default,
                                                              by["task_timeout"].default)
    assert {"connect_timeout", "worker_timeout", "task_timeout"} <= set(FIGURES_CLUSTER_SCHEMA.by_name)
    d = Deadlines.of({"connect_timeout": 3.0, "task_timeout": None})
    assert (d.connect, d.worker, d.task) == (3.0, WORKER_TIMEOUT, TASK_TIMEOUT)
