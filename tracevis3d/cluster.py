"""Frames and figures rendered by Dask workers (issue 72), bpy-free on this side.

``--scheduler ADDRESS`` names a running Dask scheduler (``tcp://host:8786``; ``host:port``
means tcp); ``--scheduler local:N`` starts an embedded ``LocalCluster`` of N worker processes
(one thread each) for this command only.  `connected` opens the session, `render_workers`
finds the workers that can render (the ``bpy`` module and this package), `frame_chunks` splits
an animation's frames, `run_tasks` runs the tasks and reports progress.

Faults.  A task's result is the rendered bytes; the files are written here, by the client,
each whole or not at all (`io.atomic`), so a worker that dies mid-chunk leaves nothing half
written: Dask runs its task again on another worker and the frame is written once, when a
result arrives.  A scheduler that cannot be reached, one with no workers, and workers that
cannot render (no bpy, no TraceVis3D) end in a `ClusterError`: one line naming the address.

Workers render one task at a time (bpy is one interpreter state: `blender.cluster_worker`
holds a lock), so ``dask worker --nthreads 1`` is the right worker; more threads only wait.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import time

#: seconds to reach a scheduler, and to wait for its first worker
CONNECT_TIMEOUT = 10.0
WORKER_TIMEOUT = 15.0
#: seconds for the workers to answer the probe (they import bpy: ~1-3 s)
PROBE_TIMEOUT = 60.0


class ClusterError(RuntimeError):
    """A cluster that cannot render: one line naming its address."""


def parse_scheduler(spec: str) -> tuple:
    """("local", n) for ``local:N`` (``local``: one worker a CPU core), ("remote", address)
    for a scheduler address (``host:port`` gets ``tcp://``); ValueError when malformed."""
    text = str(spec).strip()
    if text == "local" or text.startswith("local:"):
        n = text[6:] if text.startswith("local:") else str(os.cpu_count() or 1)
        if not n.isdigit() or not 1 <= int(n) <= 256:
            raise ValueError(f"--scheduler {spec}: local:N needs N worker processes, 1-256")
        return "local", int(n)
    if not text:
        raise ValueError("--scheduler needs an address (tcp://host:8786) or local:N")
    if "://" not in text:
        if ":" not in text:
            raise ValueError(f"--scheduler {spec}: an address is host:port or tcp://host:port")
        text = "tcp://" + text
    return "remote", text


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


class Session:
    """An open client: ``client``, the scheduler's ``address`` as the user named it, whether the
    cluster is this process's own (``local``: workers share its file system)."""

    def __init__(self, client, address: str, local: bool, cluster=None):
        self.client, self.address, self.local, self.cluster = client, address, local, cluster
        self.workers: list = []  # the workers that render (`render_workers`)
        self.unfit: list = []  # those that cannot


@contextlib.contextmanager
def connected(spec: str, connect_timeout: float = CONNECT_TIMEOUT):
    """A `Session` on the scheduler ``spec`` names (closed, and a local cluster stopped, on exit);
    `ClusterError` when it cannot be reached or Dask is not installed."""
    kind, value = parse_scheduler(spec)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(f"--scheduler {spec}: Dask is not installed here "
                           "(pip install 'dask[distributed]', or tracevis3d[cluster])") from None
    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler",
                 "distributed.core", "distributed.comm", "distributed.client", "distributed.batched"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # the one line below says what failed
    cluster = None
    try:
        if kind == "local":
            cluster = LocalCluster(n_workers=value, threads_per_worker=1, processes=True, dashboard_address=":0",
                                   silence_logs=logging.CRITICAL, scheduler_port=0)
            client = Client(cluster, timeout=f"{connect_timeout:g}s")
            address = f"local:{value} ({cluster.scheduler_address})"
        else:
            client = Client(value, timeout=f"{connect_timeout:g}s")
            address = value
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {value}: {_one_line(e)}") from None
    session = Session(client, address, kind == "local", cluster)
    try:
        yield session
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=10)


_PROBE_SOURCE = '''
def probe():
    import os, sys
    out = {"pid": os.getpid(), "python": sys.version.split()[0], "bpy": None, "tracevis3d": None, "why": ""}
    try:
        import tracevis3d
        out["tracevis3d"] = tracevis3d.__version__
    except Exception as e:
        out["why"] = "no tracevis3d (%s)" % type(e).__name__
        return out
    try:
        from tracevis3d.blender.cluster_worker import bpy_version
        out["bpy"] = bpy_version()
    except Exception as e:
        out["why"] = "no bpy module (%s)" % type(e).__name__
    return out
'''


def _probe_function():
    """The workers' probe, built outside any module so that it travels by value (a worker
    without TraceVis3D can run it and say so)."""
    ns = {"__name__": "__tracevis3d_probe__"}
    exec(compile(_PROBE_SOURCE, "<tracevis3d probe>", "exec"), ns)
    return ns["probe"]


def render_workers(session: Session, wait: float = WORKER_TIMEOUT, probe_timeout: float = PROBE_TIMEOUT) -> dict:
    """{worker address: probe} of the workers that can render (bpy and TraceVis3D import);
    `ClusterError` naming the address when there are none (no worker within ``wait`` s, or none
    can render: the first one's reason).  Also sets ``session.workers``."""
    client = session.client
    try:
        client.wait_for_workers(1, timeout=wait)
    except (TimeoutError, OSError) as e:
        raise ClusterError(f"the Dask scheduler at {session.address} has no workers "
                           f"(waited {wait:g} s: {_one_line(e)})") from None
    try:
        info = client.run(_probe_function(), on_error="return")
    except (TimeoutError, OSError) as e:  # pragma: no cover (a worker lost between the calls)
        raise ClusterError(f"the workers of the Dask scheduler at {session.address} did not answer: "
                           f"{_one_line(e)}") from None
    good, why = {}, []
    for addr, r in sorted(info.items()):
        if isinstance(r, BaseException):
            why.append(f"{addr}: {_one_line(r)}")
        elif r.get("bpy") and r.get("tracevis3d"):
            good[addr] = r
        else:
            why.append(f"{addr}: {r.get('why') or 'cannot render'}")
    if not good:
        raise ClusterError(f"no worker of the Dask scheduler at {session.address} can render "
                           f"({len(info)} worker(s); {why[0] if why else 'none answered'}): "
                           f"workers need tracevis3d[bpy,cluster]")
    if why:
        sys.stderr.write(f"[cluster] {len(why)} worker(s) cannot render and get no tasks: {why[0]}\n")
    session.workers = sorted(good)
    session.unfit = sorted(set(info) - set(good))
    return good


def frame_chunks(a: int, b: int, n_workers: int, chunk: int | None = None) -> list:
    """Frames a..b in consecutive ranges [(a0, b0), ...]: ``chunk`` frames each, or by default
    about three chunks a worker (a dead worker's chunk is short to render again, and a slow
    one's share small) and at most 16 frames a chunk."""
    n = b - a + 1
    if n <= 0:
        return []
    if chunk is None:
        chunk = max(1, min(16, -(-n // max(1, 3 * n_workers))))
    chunk = max(1, int(chunk))
    return [(s, min(b, s + chunk - 1)) for s in range(a, b + 1, chunk)]


class Progress:
    """Frames (or figures) done of a total, their rate and each worker's share, on stderr."""

    def __init__(self, total: int, what: str = "frames", lo: float = 0.6, hi: float = 0.97, stream=None):
        self.total, self.what, self.lo, self.hi = int(total), what, lo, hi
        self.done = 0
        self.by_worker: dict = {}
        self.t0 = time.perf_counter()
        self.stream = stream or sys.stderr

    def add(self, n: int, worker: str) -> None:
        self.done += int(n)
        self.by_worker[worker] = self.by_worker.get(worker, 0) + int(n)
        self.stream.write(f"[{int(round(100 * (self.lo + (self.hi - self.lo) * self.done / max(self.total, 1)))):3d}%] "
                          f"{self.line()}\n")
        self.stream.flush()

    def rate(self) -> float:
        return self.done / max(time.perf_counter() - self.t0, 1e-9)

    def shares(self) -> str:
        return ", ".join(f"{w} {k} ({100 * k / max(self.done, 1):.0f} %)" for w, k in sorted(self.by_worker.items()))

    def line(self) -> str:
        return (f"{self.what} {self.done}/{self.total} at {self.rate():.2f} {self.what}/s; "
                f"workers: {self.shares()}")


_CALL_SOURCE = '''
def call(module, name, *args):
    import importlib
    return getattr(importlib.import_module(module), name)(*args)
'''


def by_name(fn):
    """A task that runs ``fn`` on a worker by its module and name there, built outside any
    module so that it travels by value: the client's copy of the package may live under another
    name (the Blender extension's ``bl_ext.<repo>.tracevis3d.tracevis3d``) than the workers'
    installed ``tracevis3d``, and a function pickled by reference would name the client's.
    ``(call, prefix)``: submit ``call(*prefix, *args)``."""
    module = fn.__module__
    k = module.find("tracevis3d.")
    if k > 0 and module[:k].endswith("."):  # the extension's copy: the workers' installed package
        module = module[k:]
    ns = {"__name__": "__tracevis3d_call__"}
    exec(compile(_CALL_SOURCE, "<tracevis3d call>", "exec"), ns)
    return ns["call"], (module, fn.__name__)


class TaskRun:
    """Tasks ``fn(*args)`` (one per ``args`` of ``calls``) submitted to the session's rendering
    workers, collected without blocking the caller for longer than it asks (`wait`): the panel
    polls it between UI events, the command line in a loop.  Tasks are pure functions of their
    arguments, so a worker lost mid-task has its task run again elsewhere (Dask's own
    resubmission; ``retries`` more for a task that raised)."""

    def __init__(self, session: Session, fn, calls: list, retries: int = 2):
        self.session = session
        call, prefix = by_name(fn)
        client = session.client
        # restricted to the rendering workers only where some cannot render: a restricted task waits for
        # its workers, and a worker restarted by its nanny comes back under another address
        only = session.workers if session.unfit else None
        self.futures = [client.submit(call, *prefix, *args, pure=False, workers=only, allow_other_workers=False,
                                      retries=retries, key=f"tv3d-{os.getpid()}-{time.time_ns()}-{i}")
                        for i, args in enumerate(calls)]
        self.pending = dict(enumerate(self.futures))

    def wait(self, timeout: float) -> list:
        """The tasks finished since the last call, waiting up to ``timeout`` s for a first one:
        [(index, result, None) or (index, None, one line of the error of a task that failed every
        try)]; [] when none finished in time."""
        from dask.distributed import wait

        done = [i for i, f in self.pending.items() if f.done()]
        if not done and self.pending:
            try:
                wait(list(self.pending.values()), timeout=timeout, return_when="FIRST_COMPLETED")
            except TimeoutError:
                return []
            done = [i for i, f in self.pending.items() if f.done()]
        out = []
        for i in done:
            fut = self.pending.pop(i)
            try:
                out.append((i, fut.result(), None))
            except Exception as e:  # a task that failed every try (or a worker killed every time)
                out.append((i, None, _one_line(e)))
            fut.release()
        return out

    def cancel(self) -> None:
        """Drop the tasks not finished yet (the workers stop them when they can)."""
        with contextlib.suppress(Exception):
            self.session.client.cancel(list(self.pending.values()))
        self.pending.clear()


def run_tasks(session: Session, fn, calls: list, on_result, progress: Progress | None = None, count=None,
              retries: int = 2) -> list:
    """Run ``fn(*args)`` for each ``args`` in ``calls`` on the rendering workers (`TaskRun`) and
    call ``on_result(index, result)`` here as each finishes (any order); ``count(result)``: what
    a result adds to the progress (default 1).  Returns the indices that failed, with their
    errors: [(index, one line)]."""
    run = TaskRun(session, fn, calls, retries)
    failed = []
    while run.pending:
        for i, res, why in run.wait(1.0):
            if why is not None:
                failed.append((i, why))
                continue
            on_result(i, res)
            if progress is not None:
                progress.add(count(res) if count else 1, res.get("worker", "?") if isinstance(res, dict) else "?")
    return failed


def ship_file(session: Session, path: str) -> tuple:
    """(what a task gets for the file ``path``, its SHA-256): the path itself when the workers
    share this machine's file system (a local cluster), else the file's bytes scattered to every
    worker once (a worker that joins later gets them from one that has them)."""
    import hashlib

    with open(path, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if session.local:
        return os.path.abspath(path), digest
    fut = session.client.scatter(data, broadcast=True, hash=False, workers=session.workers or None)
    return fut, digest
