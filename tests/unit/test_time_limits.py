"""The tests' hang guard (tests/support/time_limits.py) nests inside pytest-timeout's SIGALRM
timer without cancelling it, and still stops a block that hangs."""
import signal

import pytest

from time_limits import time_limit


class _Outer(Exception):
    pass


def _outer_handler(signum, frame):
    raise _Outer()


def test_a_hanging_block_raises_timeout_error():
    with pytest.raises(TimeoutError, match="a hang"):
        with time_limit(0.05):
            signal.pause()  # waits for a signal: only the guard's alarm ends it


def test_the_outer_timer_and_its_handler_are_kept():
    old = signal.signal(signal.SIGALRM, _outer_handler)
    saved = signal.setitimer(signal.ITIMER_REAL, 0)  # pytest-timeout's own timer, put back below
    try:
        signal.setitimer(signal.ITIMER_REAL, 1000.0)
        with time_limit(30):
            assert signal.getsignal(signal.SIGALRM) is not _outer_handler
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left <= 1000.0 and signal.getsignal(signal.SIGALRM) is _outer_handler
        with time_limit(5000):  # the outer deadline comes first: left alone
            assert signal.getsignal(signal.SIGALRM) is _outer_handler
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= left
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if saved[0]:
            signal.setitimer(signal.ITIMER_REAL, *saved)
