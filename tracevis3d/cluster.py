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

Deadlines (issue 78).  Every peer is waited for at most as long as the user says
(`params.cluster.CLUSTER_SCHEMA`: ``--connect-timeout``, ``--worker-timeout``,
``--task-timeout``): the scheduler to connect, speak Dask's handshake (checked first by
`_handshake`: Dask's own client waits for it without end) and answer each call; the workers to
join, answer the probe, take a file and give a result; and the tasks to finish (no task finished
for ``task_timeout`` while tasks are out: the worker that holds one and never finishes it).  Each
ends in one line naming the peer, what it did not do and in how long.  Addresses: ``tcp://``,
``ws://``, and ``tls://``/``wss://`` with the Dask configuration's TLS settings
(``distributed.comm.tls.*``, `_security`); ``ucx://`` where its package is installed; anything
else is refused in one line saying what is supported.

Workers render one task at a time (bpy is one interpreter state: `blender.cluster_worker`
holds a lock), so ``dask worker --nthreads 1`` is the right worker; more threads only wait.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import time

from .params.cluster import CLUSTER_SCHEMA

#: the deadlines' defaults (s), declared once in the schema: the scheduler's, the workers', a task's
CONNECT_TIMEOUT = CLUSTER_SCHEMA.by_name["connect_timeout"].default
WORKER_TIMEOUT = CLUSTER_SCHEMA.by_name["worker_timeout"].default
TASK_TIMEOUT = CLUSTER_SCHEMA.by_name["task_timeout"].default
#: Dask's comm schemes an address may name; those after the first two need settings or a package
SCHEMES = ("tcp", "ws", "tls", "wss", "ucx")
#: schemes that encrypt: the Dask configuration's TLS settings are needed
TLS_SCHEMES = ("tls", "wss")
SUPPORTED = "tcp://host:port, ws://host:port, tls:// or wss:// (with Dask's TLS settings), local:N"


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
    scheme, _, rest = text.partition("://")
    if scheme.lower() not in SCHEMES:
        raise ValueError(f"--scheduler {spec}: Dask does not speak {scheme}:// here; give {SUPPORTED}")
    port = rest.rsplit(":", 1)[1] if ":" in rest.lstrip("[").split("]")[-1] else ""
    if not rest.strip() or (port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535)):
        raise ValueError(f"--scheduler {spec}: the address needs a host and a port 1-65535 ({scheme}://host:port)")
    return "remote", scheme.lower() + "://" + rest


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


class Deadlines:
    """The seconds each peer is waited for (module docstring): ``connect`` (the scheduler),
    ``worker`` (the workers), ``task`` (no task finished for that long)."""

    def __init__(self, connect: float = CONNECT_TIMEOUT, worker: float = WORKER_TIMEOUT, task: float = TASK_TIMEOUT):
        self.connect, self.worker, self.task = float(connect), float(worker), float(task)

    @classmethod
    def of(cls, options) -> "Deadlines":
        """From parsed options or a dict with ``connect_timeout``, ``worker_timeout``,
        ``task_timeout`` (a missing or None one: its default)."""
        def get(name, default):
            v = options.get(name) if isinstance(options, dict) else getattr(options, name, None)
            return default if v is None else v

        return cls(get("connect_timeout", CONNECT_TIMEOUT), get("worker_timeout", WORKER_TIMEOUT),
                   get("task_timeout", TASK_TIMEOUT))


class Session:
    """An open client: ``client``, the scheduler's ``address`` as the user named it, whether the
    cluster is this process's own (``local``: workers share its file system), its `Deadlines`."""

    def __init__(self, client, address: str, local: bool, cluster=None, deadlines: Deadlines | None = None):
        self.client, self.address, self.local, self.cluster = client, address, local, cluster
        self.deadlines = deadlines or Deadlines()
        self.workers: list = []  # the workers that render (`render_workers`)
        self.unfit: list = []  # those that cannot


class _Late(Exception):
    """A call that did not return within its deadline (`_within`)."""


def _within(seconds: float, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run in a thread of its own, waited for at most ``seconds``: its
    result, or its exception; `_Late` when it did not return in time (the thread is left to end
    when its peer gives up: Dask's calls that wait on a peer cannot be cancelled from here)."""
    import threading

    box: dict = {}
    done = threading.Event()

    def run():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=run, name="tracevis3d dask call", daemon=True).start()
    if not done.wait(seconds):
        raise _Late()
    if "error" in box:
        raise box.pop("error")
    return box["value"]


def _security(address: str):
    """The `distributed.Security` of a ``tls://``/``wss://`` address: the Dask configuration's TLS
    settings (``distributed.comm.tls.ca-file``, ``.client.cert``, ``.client.key``, or the
    ``DASK_DISTRIBUTED__COMM__TLS__*`` variables); None for the others.  `ClusterError` when they
    are missing or cannot be read."""
    scheme = address.split("://", 1)[0]
    if scheme not in TLS_SCHEMES:
        return None
    from distributed.security import Security

    try:
        sec = Security()
        ctx = sec.get_connection_args("client")["ssl_context"]
    except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
        raise ClusterError(f"--scheduler {address}: Dask's TLS settings cannot be used: {_one_line(e)}") from None
    if ctx is None:
        raise ClusterError(f"--scheduler {address}: {scheme}:// needs Dask's TLS settings: distributed.comm.tls.ca-file "
                           f"and distributed.comm.tls.client.cert (and .key) in the Dask configuration, or "
                           f"DASK_DISTRIBUTED__COMM__TLS__CA_FILE, ..._CLIENT__CERT, ..._CLIENT__KEY; or give "
                           f"tcp://") from None
    return sec


def _backend_refuses(address: str) -> str | None:
    """Why Dask cannot connect to ``address``'s scheme here (ucx:// without its package), or None."""
    from distributed.comm.registry import get_backend

    try:
        get_backend(address.split("://", 1)[0]).get_connector()
    except Exception as e:  # noqa: BLE001 - a backend whose package is missing fails in its own way
        return _one_line(e)
    return None


def _handshake(address: str, security, seconds: float) -> None:
    """Connect to ``address`` and check that a Dask scheduler answers there: Dask's handshake and
    an ``identity`` call, all within ``seconds`` (Dask's client waits for the handshake without
    end, so a peer that accepts and never speaks would hold it for as long as it keeps the
    socket).  `ClusterError` naming what the peer did not do."""
    import asyncio

    from distributed.comm import connect

    args = security.get_connection_args("client") if security is not None else {}
    stage = ["connect"]

    async def talk():
        comm = await connect(address, timeout=seconds, **args)
        try:
            stage[0] = "identity"
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        info = asyncio.run(asyncio.wait_for(talk(), seconds))
    except (asyncio.TimeoutError, TimeoutError):
        what = ("accepted the connection but did not answer Dask's handshake" if stage[0] == "connect"
                else "did not answer an identity call")
        raise ClusterError(f"the Dask scheduler at {address} {what} within {seconds:g} s (--connect-timeout)") from None
    except (OSError, ValueError, TypeError) as e:  # refused, closed, not Dask's wire format
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {_one_line(e)}") from None
    if not isinstance(info, dict) or info.get("type") != "Scheduler":
        kind = info.get("type") if isinstance(info, dict) else type(info).__name__
        raise ClusterError(f"the peer at {address} is not a Dask scheduler (it says it is a {str(kind)[:40]})")


def _client(value: str, deadlines: Deadlines, security):
    """Dask's client of the scheduler at ``value`` (`_handshake` checked first), made within the
    connect deadline."""
    from dask.distributed import Client

    why = _backend_refuses(value)
    if why is not None:
        raise ClusterError(f"--scheduler {value}: Dask cannot connect to {value.split('://')[0]}:// here ({why}); "
                           f"give {SUPPORTED}")
    _handshake(value, security, deadlines.connect)
    try:
        return _within(deadlines.connect + 5.0, Client, value, timeout=f"{deadlines.connect:g}s", security=security)
    except _Late:
        raise ClusterError(f"the Dask scheduler at {value} answered the handshake, then did not register this client "
                           f"within {deadlines.connect:g} s (--connect-timeout)") from None


@contextlib.contextmanager
def connected(spec: str, connect_timeout: float | None = None, deadlines: Deadlines | None = None):
    """A `Session` on the scheduler ``spec`` names (closed, and a local cluster stopped, on exit);
    `ClusterError` when it cannot be reached, does not answer within the deadlines, or Dask is
    not installed."""
    deadlines = deadlines or Deadlines()
    if connect_timeout is not None:
        deadlines.connect = float(connect_timeout)
    connect_timeout = deadlines.connect
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
            client = _client(value, deadlines, _security(value))
            address = value
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {value}: {_one_line(e)}") from None
    session = Session(client, address, kind == "local", cluster, deadlines)
    try:
        yield session
    finally:
        with contextlib.suppress(Exception):
            _within(10.0, client.close, timeout=5)
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


def render_workers(session: Session) -> dict:
    """{worker address: probe} of the workers that can render (bpy and TraceVis3D import);
    `ClusterError` naming the address when there are none (no worker within the worker deadline,
    no answer to the probe within it, or none can render: the first one's reason).  Also sets
    ``session.workers``."""
    client = session.client
    wait = session.deadlines.worker
    try:
        _within(wait + 5.0, client.wait_for_workers, 1, timeout=wait)
    except (TimeoutError, OSError, _Late) as e:
        raise ClusterError(f"the Dask scheduler at {session.address} has no workers "
                           f"(waited {wait:g} s, --worker-timeout{': ' + _one_line(e) if str(e) else ''})") from None
    try:
        info = _within(wait, client.run, _probe_function(), on_error="return")
    except _Late:
        raise ClusterError(f"the workers of the Dask scheduler at {session.address} did not answer the probe "
                           f"(import bpy and tracevis3d) within {wait:g} s (--worker-timeout)") from None
    except (TimeoutError, OSError) as e:  # a worker lost between the calls
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


class TaskStalled(ClusterError):
    """No task finished within the task deadline while tasks were out (`TaskRun.wait`)."""


class TaskRun:
    """Tasks ``fn(*args)`` (one per ``args`` of ``calls``) submitted to the session's rendering
    workers, collected without blocking the caller for longer than it asks (`wait`): the panel
    polls it between UI events, the command line in a loop.  Tasks are pure functions of their
    arguments, so a worker lost mid-task has its task run again elsewhere (Dask's own
    resubmission; ``retries`` more for a task that raised).  A run where no task finishes for
    the session's task deadline (a worker that took a task and never finishes it) raises
    `TaskStalled` from `wait`, naming the workers that hold the tasks left."""

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
        self.last_done = time.monotonic()  # when a task last finished (or the run began)

    def wait(self, timeout: float) -> list:
        """The tasks finished since the last call, waiting up to ``timeout`` s for a first one:
        [(index, result, None) or (index, None, one line of the error of a task that failed every
        try, or whose result did not come within the worker deadline)]; [] when none finished in
        time.  `TaskStalled` once none has finished for the task deadline."""
        from dask.distributed import wait

        done = [i for i, f in self.pending.items() if f.done()]
        if not done and self.pending:
            try:
                wait(list(self.pending.values()), timeout=timeout, return_when="FIRST_COMPLETED")
            except TimeoutError:
                self._check_stalled()
                return []
            done = [i for i, f in self.pending.items() if f.done()]
        out = []
        for i in done:
            fut = self.pending.pop(i)
            try:
                out.append((i, fut.result(timeout=self.session.deadlines.worker), None))
            except TimeoutError:
                out.append((i, None, f"its result did not come from the worker within "
                                     f"{self.session.deadlines.worker:g} s (--worker-timeout)"))
            except Exception as e:  # a task that failed every try (or a worker killed every time)
                out.append((i, None, _one_line(e)))
            fut.release()
        if out:
            self.last_done = time.monotonic()
        return out

    def _check_stalled(self) -> None:
        limit = self.session.deadlines.task
        if not self.pending or time.monotonic() - self.last_done <= limit:
            return
        keys = {f.key for f in self.pending.values()}
        try:
            held = _within(self.session.deadlines.connect, self.session.client.processing)
            who = sorted(w for w, ks in held.items() if keys & set(ks))
        except Exception:  # noqa: BLE001 - the scheduler does not say: the line says less
            who = None
        holders = "" if who is None else (f", held by {', '.join(who[:3])}{' and more' if len(who) > 3 else ''}"
                                          if who else ", none taken by a worker")
        raise TaskStalled(f"no task finished on the Dask cluster {self.session.address} in {limit:g} s "
                          f"(--task-timeout): {len(self.pending)} of {len(self.futures)} task(s) still out{holders}")

    def cancel(self) -> None:
        """Drop the tasks not finished yet (the workers stop them when they can)."""
        with contextlib.suppress(Exception):
            _within(self.session.deadlines.connect, self.session.client.cancel, list(self.pending.values()))
        self.pending.clear()


def run_tasks(session: Session, fn, calls: list, on_result, progress: Progress | None = None, count=None,
              retries: int = 2) -> list:
    """Run ``fn(*args)`` for each ``args`` in ``calls`` on the rendering workers (`TaskRun`) and
    call ``on_result(index, result)`` here as each finishes (any order); ``count(result)``: what
    a result adds to the progress (default 1).  Returns the indices that failed, with their
    errors: [(index, one line)]; the tasks left when none finished for the task deadline fail
    with its line (and are cancelled)."""
    run = TaskRun(session, fn, calls, retries)
    failed = []
    while run.pending:
        try:
            finished = run.wait(1.0)
        except TaskStalled as e:
            failed.extend((i, str(e)) for i in sorted(run.pending))
            run.cancel()
            break
        for i, res, why in finished:
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
    return scatter(session, data, f"the file {os.path.basename(path)}", broadcast=True), digest


def scatter(session: Session, data: bytes, what: str, broadcast: bool = False):
    """``data`` sent to the session's rendering workers (every one with ``broadcast``), within the
    worker deadline: its future; `ClusterError` naming ``what`` when they did not take it."""
    wait = session.deadlines.worker
    try:
        return _within(wait + 5.0, session.client.scatter, data, broadcast=broadcast, hash=False,
                       workers=session.workers or None, timeout=wait)
    except (TimeoutError, OSError, _Late) as e:
        raise ClusterError(f"the workers of the Dask scheduler at {session.address} did not take {what} "
                           f"({len(data):,} bytes) within {wait:g} s (--worker-timeout)"
                           f"{': ' + _one_line(e) if str(e) else ''}") from None
