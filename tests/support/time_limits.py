"""Hang guards for blocks inside a test, compatible with pytest-timeout.

pytest-timeout (pytest.ini: ``timeout_method = signal``) arms ``ITIMER_REAL`` with a SIGALRM
handler for the whole test.  A guard that set an alarm of its own and cleared it on leaving
would cancel that outer limit for the rest of the test, so `time_limit` keeps it: the outer
timer's time left is read first; when the outer deadline comes first, the guard leaves
everything as it is (the outer limit fails the test anyway); else it arms its own deadline and
on leaving puts back the outer handler and re-arms the outer timer with what is left of it.
Not a performance assertion: the limits are far above what the blocks take.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

__all__ = ["time_limit"]


@contextmanager
def time_limit(seconds: float):
    """Raise TimeoutError in the block once it has run ``seconds`` (a hang, not slowness).
    Off the main thread (where no signal can be delivered) the block runs unguarded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:  # the outer limit fires first: nothing to add
        yield
        return

    def hang(signum, frame):
        raise TimeoutError(f"took more than {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hang)
    began = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer_left:  # the outer timer again, with what is left of it (a tick when none is)
            left = max(outer_left - (time.monotonic() - began), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)
