"""The light load of cached kernels (`tracevis3d.kernels._light_cache_loads`) covers the package's
kernels outside ``tracevis3d.kernels`` too (`layout.cluster`'s): loading it from the cache does not
refresh numba's target context (the registries' imports: ~0.1 s of a 10^7 icicle's layout)."""
import os
import subprocess
import sys

CHILD = r"""
import numpy as np
import numba.core.base as base
calls = []
real = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: calls.append(1) or real(self)
from tracevis3d.layout.cluster import cluster_subpixel_calls
out = cluster_subpixel_calls(np.zeros(2), np.ones(2), np.zeros(2, np.int32), np.zeros(2, np.int32), np.ones(1),
                             np.ones(1), np.zeros(2, np.int64))
print("GROUPS", len(out[3]))
print("REFRESHES", len(calls))
"""


def _run(**env):
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, **env))
    assert r.returncode == 0, r.stderr[-2000:]
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


def test_a_layout_kernel_loads_without_the_refresh():
    _run()  # compiles what the cache lacks
    out = _run()
    assert out["REFRESHES"] == "0"
    assert _run(TRACEVIS3D_FULL_REFRESH="1")["REFRESHES"] != "0"  # numba's own load refreshes
