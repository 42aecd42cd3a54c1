"""What numba compiled while the tests ran (a pytest plugin: conftest's ``pytest_plugins``).

``make test`` seeds the kernel cache before pytest starts (tools/kernel_caches.py --seed), so a
test should load its kernels, not compile them: a kernel compiled during the session is one the
warm-up (`tracevis3d.warmup`) does not compile, or a signature it does not meet, and its compile
time lands in whichever test first calls it (``--durations`` then blames that test).  The
terminal summary says how many signatures compiled, their CPU seconds, and the slowest kernels
with the test that paid for each; nothing is printed when nothing compiled.  With
``TV3D_COMPILE_LOG=FILE`` every record (kernel, signature, CPU s, test) is also written to FILE
as JSON lines, to find the signatures the warm-up misses.
"""
from __future__ import annotations

import json
import os
import time

import pytest

_RECORDS: list = []  # (kernel, signature, exclusive CPU s, test node id, repr of the argument types)
_CURRENT = ["(collection)"]


def _listener():
    from numba.core import event

    class Exclusive(event.Listener):
        """CPU time of each compilation less that of the kernels it compiled inside (callees)."""

        def __init__(self):
            self.stack = []

        def on_start(self, ev):
            self.stack.append([time.thread_time(), 0.0])

        def on_end(self, ev):
            t0, inner = self.stack.pop()
            dt = time.thread_time() - t0
            if self.stack:
                self.stack[-1][1] += dt
            data = ev.data or {}
            func = getattr(data.get("dispatcher"), "py_func", None)
            name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"
            args = tuple(data.get("args", ()))
            _RECORDS.append((name, ", ".join(str(a) for a in args), dt - inner, _CURRENT[0], repr(args)))

    return Exclusive()


def pytest_configure(config):
    try:
        from numba.core import event
    except ImportError:
        return
    event.register("numba:compile", _listener())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _CURRENT[0] = item.nodeid
    yield
    _CURRENT[0] = "(between tests)"


def pytest_terminal_summary(terminalreporter):
    if not _RECORDS:
        return
    dump = os.environ.get("TV3D_COMPILE_LOG")
    if dump:
        with open(dump, "a") as f:
            for name, sig, dt, test, types in _RECORDS:
                f.write(json.dumps({"kernel": name, "sig": sig, "cpu_s": round(dt, 4), "test": test,
                                    "types": types}) + "\n")
    total = sum(r[2] for r in _RECORDS)
    per: dict = {}
    for name, _sig, dt, test, _types in _RECORDS:
        row = per.setdefault(name, [0.0, 0, test])
        row[0] += dt
        row[1] += 1
    tr = terminalreporter
    tr.write_sep("=", f"numba compiled {len(_RECORDS)} signatures of {len(per)} kernels in {total:.1f} CPU s "
                      "during the tests (not in the seeded cache)")
    for name, (dt, n, test) in sorted(per.items(), key=lambda kv: -kv[1][0])[:15]:
        tr.write_line(f"{dt:7.1f} s  {n:3d} sig  {name}  (first: {test})")
