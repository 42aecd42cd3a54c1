"""Long work as jobs that never block the caller: a step generator advanced by `Job.poll`.

A job is a generator function ``steps(job)``.  Everything it runs between two ``yield``s
runs inside `Job.poll`, on the caller's (main) thread, so it must be short (write a chunk
of data blocks, then yield).  Heavy work is handed off with ``result = yield
job.off_main(fn, *args)``: ``fn`` runs in a worker thread (numba kernels release the GIL:
``nogil=True``) and the generator resumes with its result (or its exception) at the first
poll after it finished.  ``job.report(fraction, text)`` sets the progress the CLI, the
status bar and the panel show.

Blender's UI polls from a modal operator's timer; ``bpy.app.timers`` never fire in
background mode, so scripts and tests call ``poll()`` in a loop (or `Job.run`), which is
exactly the code the UI drives::

    job = Job("import", steps_fn, *args)
    while job.poll(timeout=0.05):
        print(job.fraction, job.text)
    job.result            # or job.error / job.state

Cancel: `Job.cancel` closes the generator at once, on the calling thread (its ``finally``
blocks / `on_cleanup` callbacks remove anything half-built); a worker that is still
computing cannot be interrupted, its result is dropped and the job stays ``cancelling``
until the thread has returned, so a queued job never runs beside it.

A worker never touches bpy.  And the main thread never calls an operator inside
``context.temp_override`` (the writer selects objects instead): bpy 5.0 crashes with a
segmentation fault when a worker (any Python thread) runs Python beside such a call (seen in
CI; a plain operator call, a render or a save beside the same thread do not crash;
tests/test_writer_threads.py).

One at a time: `JobQueue.submit` refuses a second job while one runs (`Busy`, a message
naming the running job), or queues it with ``queue=True``; `JobQueue.poll` advances the
current job and starts the next queued one when it ends.
"""
from __future__ import annotations

import threading
import time
from collections import deque

PENDING, RUNNING, CANCELLING = "pending", "running", "cancelling"
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
FINISHED_STATES = (DONE, FAILED, CANCELLED)

__all__ = ["Job", "JobQueue", "Busy", "OffMain", "time_sliced", "FINISHED_STATES",
           "PENDING", "RUNNING", "CANCELLING", "DONE", "FAILED", "CANCELLED"]


class Busy(RuntimeError):
    """A job was submitted while another one runs (and was not queued)."""


class OffMain:
    """Work for a worker thread: ``fn(*args, **kwargs)``; see `Job.off_main`."""

    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.done = threading.Event()
        self.result = None
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start(self, name: str) -> None:
        """Run in a daemon thread (a cancelled job's thread finishes on its own)."""
        def target():
            try:
                self.result = self.fn(*self.args, **self.kwargs)
            except BaseException as e:  # noqa: BLE001  handed to the generator
                self.error = e
            finally:
                self.done.set()

        self.thread = threading.Thread(target=target, name=f"tracevis3d-{name}", daemon=True)
        self.thread.start()


class Job:
    """One long task: ``steps(job, *args, **kwargs)`` is a generator (see the module doc).

    Attributes: ``state`` (pending, running, cancelling, done, failed, cancelled),
    ``fraction`` (0..1) and ``text`` (the current step, with counts), ``result`` (the
    generator's return value), ``error`` (the exception of a failed job), ``timings``
    (seconds per reported step), ``longest_step`` (the longest single `poll`, s, without
    the time spent waiting for a worker) and ``longest_text`` (the step it ended in).
    """

    def __init__(self, name: str, steps, *args, **kwargs):
        self.name = name
        self._steps, self._args, self._kwargs = steps, args, kwargs
        self._gen = None
        self._work: OffMain | None = None
        self._cleanups: list = []
        self.state = PENDING
        self.fraction = 0.0
        self.text = "waiting"
        self.result = None
        self.error: BaseException | None = None
        self.timings: dict = {}
        self.longest_step = 0.0
        self.longest_text = ""
        self._t_text = None
        self._waited = 0.0
        self.listeners: list = []  # fn(job) after every change of progress or state

    # ------------------------------------------------------------------ inside the steps
    def off_main(self, fn, *args, **kwargs) -> OffMain:
        """``result = yield job.off_main(fn, ...)``: run ``fn`` in a worker thread."""
        return OffMain(fn, args, kwargs)

    def report(self, fraction: float | None = None, text: str | None = None) -> None:
        """Set the progress shown to the user; a new text starts a new timed step."""
        if fraction is not None:
            self.fraction = min(max(float(fraction), 0.0), 1.0)
        if text is not None and text != self.text:
            self._close_timing()
            self.text = text
            self._t_text = time.perf_counter()
        self._notify()

    def on_cleanup(self, fn) -> None:
        """Call ``fn()`` if the job is cancelled or fails (last registered runs first)."""
        self._cleanups.append(fn)

    def cancelled(self) -> bool:
        """True once `cancel` was called (long Python loops in a worker may check it)."""
        return self.state in (CANCELLING, CANCELLED)

    # ------------------------------------------------------------------ driving
    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    def poll(self, timeout: float = 0.0) -> bool:
        """Advance the job by one short step; True while it is not finished.

        While a worker computes, ``poll`` returns at once (after waiting up to ``timeout``
        seconds for it, so a script's loop does not spin).
        """
        if self.finished:
            return False
        t0 = time.perf_counter()
        self._waited = 0.0
        try:
            self._advance(timeout)
        finally:
            dt = time.perf_counter() - t0 - self._waited
            if dt > self.longest_step:
                self.longest_step, self.longest_text = dt, self.text
        return not self.finished

    def _advance(self, timeout: float) -> None:
        if self.state == PENDING:
            self.state = RUNNING
            self._gen = self._steps(self, *self._args, **self._kwargs)
            self._step(None, None)
            return
        work = self._work
        if work is not None:
            t = time.perf_counter()
            ready = work.done.wait(timeout)
            self._waited = time.perf_counter() - t
            if not ready:
                return
            self._work = None
            if self.state == CANCELLING:
                self._finish(CANCELLED)
                return
            self._step(work.result, work.error)
            return
        self._step(None, None)

    def _step(self, value, error) -> None:
        """Run the generator to its next yield (on this thread)."""
        try:
            if error is not None:
                item = self._gen.throw(error)
            else:
                item = self._gen.send(value)
        except StopIteration as stop:
            self.result = stop.value
            self.fraction = 1.0
            self._finish(DONE)
            return
        except BaseException as e:  # noqa: BLE001  a failed step fails the job, one line to the user
            self.error = e
            self._run_cleanups()
            self._finish(FAILED)
            return
        if isinstance(item, OffMain):
            self._work = item
            item.start(self.name)

    def cancel(self) -> None:
        """Stop the job: clean up now; a running worker's result is dropped when it returns."""
        if self.finished or self.state == CANCELLING:
            return
        if self._gen is not None:
            try:
                self._gen.close()
            except Exception:  # noqa: BLE001  cleanup failures must not keep the job alive
                pass
        self._run_cleanups()
        self.text = "cancelled"
        if self._work is not None and not self._work.done.is_set():
            self.state = CANCELLING
            self._notify()
        else:
            self._work = None
            self._finish(CANCELLED)

    def run(self, interval: float = 0.05, on_progress=None):
        """Poll until finished (headless); the result, or the job's error raised."""
        while self.poll(timeout=interval):
            if on_progress is not None:
                on_progress(self)
        if self.state == FAILED:
            raise self.error
        return self.result

    # ------------------------------------------------------------------ internals
    def _run_cleanups(self) -> None:
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception:  # noqa: BLE001  the next cleanup still runs
                pass

    def _close_timing(self) -> None:
        if self._t_text is not None:
            self.timings[self.text] = self.timings.get(self.text, 0.0) + time.perf_counter() - self._t_text
            self._t_text = None

    def _finish(self, state: str) -> None:
        self._close_timing()
        self.state = state
        if state == CANCELLED:
            self.text = "cancelled"
        self._notify()

    def _notify(self) -> None:
        for fn in list(self.listeners):
            try:
                fn(self)
            except Exception:  # noqa: BLE001  a display must never break the job
                pass

    def __repr__(self) -> str:
        return f"<Job {self.name} {self.state} {self.fraction:.0%} {self.text!r}>"


class JobQueue:
    """Runs one job at a time; a second request is refused (`Busy`) or queued."""

    def __init__(self):
        self.current: Job | None = None
        self.waiting: deque[Job] = deque()

    def busy(self) -> bool:
        """True while a job runs (a cancelled one counts until its worker returned)."""
        return self.current is not None and not self.current.finished

    def submit(self, job: Job, queue: bool = False) -> Job:
        """Start ``job`` now if nothing runs; else queue it (``queue``) or raise `Busy`."""
        if self.busy():
            if not queue:
                raise Busy(f"'{self.current.name}' is still running ({self.current.text}); "
                           "wait for it or cancel it (Esc)")
            self.waiting.append(job)
            return job
        self.current = job
        return job

    def poll(self, timeout: float = 0.0) -> bool:
        """Advance the current job (start the next queued one when it ends); True while busy."""
        if self.current is not None and self.current.finished and self.waiting:
            self.current = self.waiting.popleft()
        if self.current is None:
            return False
        self.current.poll(timeout)
        if self.current.finished and self.waiting:
            self.current = self.waiting.popleft()
        return self.busy() or bool(self.waiting)

    def cancel_all(self) -> None:
        """Cancel the current job and drop the queued ones."""
        for job in list(self.waiting):
            job.cancel()
        self.waiting.clear()
        if self.current is not None:
            self.current.cancel()


def time_sliced(items, fn, budget: float = 0.02):
    """Call ``fn(item)`` for each item, yielding whenever ``budget`` seconds have passed.

    In a step generator, ``yield from time_sliced(labels, write_label)`` keeps every
    main-thread step near ``budget`` however many items there are.
    """
    t0 = time.perf_counter()
    for item in items:
        fn(item)
        if time.perf_counter() - t0 >= budget:
            yield
            t0 = time.perf_counter()
