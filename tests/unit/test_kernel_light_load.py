"""A process that only loads cached kernels does not pay for numba's compiler registries
(`tracevis3d.kernels._light_cache_loads`), and one that compiles afterwards still compiles."""
import os
import subprocess
import sys

CHILD = r"""
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import tracevis3d
t = tracevis3d.load(sys.argv[1])
print("CALLS", len(t))
print("REGISTRIES", "numba.np.linalg" in sys.modules)
from numba import njit

@njit
def biggest(a):
    return np.sort(a)[-1]  # needs the numpy registries: compiled after the light loads

print("COMPILED", float(biggest(np.array([3.0, 1.0]))))
print("REGISTRIES_AFTER", "numba.np.linalg" in sys.modules)
"""


def _run(path, **env):
    r = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, **env))
    assert r.returncode == 0, r.stderr[-2000:]
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


def test_a_load_from_the_cache_leaves_the_registries_alone(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",".join(
        f'{{"ph": "X", "name": "f{k % 5}", "pid": 1, "tid": {k % 2}, "ts": {k}, "dur": 0.5}}' for k in range(300))
        + "]}")
    _run(path)  # compiles what the cache lacks
    out = _run(path)
    assert out["CALLS"] == "300"
    assert out["REGISTRIES"] == "False"
    assert out["COMPILED"] == "3.0" and out["REGISTRIES_AFTER"] == "True"
    full = _run(path, TRACEVIS3D_FULL_REFRESH="1")  # numba's own load: the registries come with it
    assert full["CALLS"] == "300" and full["REGISTRIES"] == "True"


AHEAD = r"""
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import tracevis3d, tracevis3d.io as tio
tio.IMPORT_AHEAD_BYTES = int(sys.argv[2])
assert "tracevis3d.io.chrome" not in sys.modules
t = tracevis3d.load(sys.argv[1])
print("CALLS", len(t))
print("DIGEST", hash((t.start.tobytes(), t.end.tobytes(), t.parent.tobytes(), tuple(t.function_names))))
"""


def test_the_json_reader_imported_ahead_loads_the_same(tmp_path):
    """`io._import_reader_ahead`: the reader imported on a thread while the file is read."""
    path = tmp_path / "t.json"
    path.write_text("\ufeff [" + ",".join(
        f'{{"ph": "X", "name": "g{k % 7}", "pid": 1, "tid": {k % 3}, "ts": {k}, "dur": 0.5}}' for k in range(500))
        + "]", encoding="utf-8")
    outs = []
    for limit in ("0", str(1 << 62)):  # imported ahead / not
        r = subprocess.run([sys.executable, "-c", AHEAD, str(path), limit], capture_output=True, text=True,
                           timeout=900, env=dict(os.environ, PYTHONHASHSEED="0"))
        assert r.returncode == 0, r.stderr[-2000:]
        outs.append(r.stdout)
    assert "CALLS 500" in outs[0] and outs[0] == outs[1]
