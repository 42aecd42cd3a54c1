"""numba's runtime module read from the cache folder instead of compiled in every process
(`tracevis3d.kernels.nrt_cache`): real processes, the file written whole, a damaged file compiled
again, kernels that allocate and a kernel compiled afterwards (it links against the module)."""
import os
import subprocess
import sys

import pytest

from tracevis3d.kernels import nrt_cache

CHILD = r"""
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from numba.core.runtime import rtsys
from tracevis3d.kernels import nrt_cache
with global_compiler_lock:
    print("STATUS", nrt_cache.initialize(rtsys, cpu_target.target_context, sys.argv[2]))
    print("AGAIN", nrt_cache.initialize(rtsys, cpu_target.target_context, sys.argv[2]))
import tracevis3d
t = tracevis3d.load(sys.argv[1])  # cached kernels: arrays made, counted and freed by the runtime
print("DIGEST", hash((t.start.tobytes(), t.end.tobytes(), t.parent.tobytes(), tuple(t.function_names))))
if sys.argv[3] == "compile":  # (a compilation costs seconds: asked of one child)
    from numba import njit

    @njit
    def made(n):  # compiled now: linked against the runtime's module, its arrays counted
        parts = [np.arange(k) for k in range(n)]
        return sum([p.sum() for p in parts])

    print("COMPILED", int(made(6)))
"""


def _child(trace, cache_dir, compile_one=False):
    r = subprocess.run([sys.executable, "-c", CHILD, str(trace), str(cache_dir), "compile" if compile_one else "-"],
                       capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONHASHSEED="0"))
    assert r.returncode == 0, r.stderr[-2000:]
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


def test_pack_and_unpack_refuse_a_damaged_file():
    ser = ("nrt", "object", (b"\x7fELF" + bytes(range(200)), b"BC\xc0\xde" + b"x" * 50))
    data = nrt_cache.pack(ser)
    assert nrt_cache.unpack(data) == ser
    assert nrt_cache.unpack(data[:-1]) is None                     # cut short
    assert nrt_cache.unpack(data + b"\0") is None                  # grown
    flipped = bytearray(data)
    flipped[-7] ^= 0x20
    assert nrt_cache.unpack(bytes(flipped)) is None                # altered
    assert nrt_cache.unpack(b"TV3DNRT0" + data[8:]) is None       # another format's version
    assert nrt_cache.unpack(b"") is None
    with pytest.raises(ValueError):
        nrt_cache.pack(("nrt", "bitcode", (b"", b"")))


def test_the_runtime_module_is_compiled_once_then_loaded(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [' + ",".join(
        f'{{"ph": "X", "name": "f{k % 5}", "pid": 1, "tid": {k % 2}, "ts": {k}, "dur": 0.5}}' for k in range(300))
        + "]}")
    cache = tmp_path / "cache"
    cache.mkdir()
    first = _child(trace, cache)
    assert first["STATUS"] == "compiled" and first["AGAIN"] == "ready"
    files = sorted(p for p in cache.iterdir())
    assert len(files) == 1 and files[0].name.startswith("tracevis3d-nrt-") and files[0].suffix == ".bin"
    assert nrt_cache.unpack(files[0].read_bytes()) is not None    # written whole
    second = _child(trace, cache, compile_one=True)  # the loaded module: kernels run, and one compiles against it
    assert second["STATUS"] == "loaded"
    assert second["DIGEST"] == first["DIGEST"] and second["COMPILED"] == "20"
    # a damaged file: compiled again, and written again whole
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    third = _child(trace, cache)
    assert third["STATUS"] == "compiled" and third["DIGEST"] == first["DIGEST"]
    assert nrt_cache.unpack(files[0].read_bytes()) is not None
    assert _child(trace, cache)["STATUS"] == "loaded"
    assert sorted(p.name for p in cache.iterdir()) == [files[0].name]  # no temporary left


def test_an_unwritable_cache_folder_still_initialises(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text('[{"ph": "X", "name": "f", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]')
    missing = tmp_path / "no" / "such" / "folder"
    out = _child(trace, missing)
    assert out["STATUS"] == "compiled" and out["DIGEST"]
    assert not missing.exists()
