"""`kernels.atomic.fetch_add`: the work queue's counter hands every item to exactly one of
several threads racing for them (real threads, the kernel without the GIL)."""
import threading

import numpy as np
from numba import njit

from tracevis3d.kernels.atomic import fetch_add


@njit(nogil=True)
def _take_all(counter, n, owner, me):
    """Items taken from ``counter`` until ``n`` are gone, each marked with ``me`` + 1 (added, so
    an item taken twice shows as a sum)."""
    taken = 0
    while True:
        i = fetch_add(counter, 0, 1)
        if i >= n:
            return taken
        owner[i] += me + 1
        taken += 1


def test_fetch_add_gives_each_item_to_one_thread():
    n, n_threads = 400_000, 4
    counter = np.zeros(1, np.int64)
    owner = np.zeros(n, np.int64)
    taken = [0] * n_threads

    def run(me):
        taken[me] = _take_all(counter, n, owner, me)
    _take_all(np.full(1, n, np.int64), n, owner, 0)       # compiled before the race
    threads = [threading.Thread(target=run, args=(me,)) for me in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(taken) == n and counter[0] == n + n_threads      # each thread's last try counts too
    assert np.all((owner >= 1) & (owner <= n_threads))
    assert np.array_equal(np.bincount(owner, minlength=n_threads + 1)[1:], taken)


def test_fetch_add_returns_the_value_before_and_adds_any_amount():
    @njit
    def steps(a):
        return fetch_add(a, 1, 5), fetch_add(a, 1, -2), a[1]
    a = np.array([7, 10, 3], np.int64)
    assert steps(a) == (10, 15, 13) and a.tolist() == [7, 13, 3]
