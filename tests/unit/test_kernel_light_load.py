"""A process that only loads cached kernels does not pay for numba's compiler registries
(`tracevis3d.kernels._light_cache_loads`), and one that compiles afterwards still compiles."""
import os
import subprocess
import sys

import pytest

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


LINKED = r"""
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import tracevis3d
from tracevis3d.kernels import jsontokens, lazy_link
t = tracevis3d.load(sys.argv[1])
print("CALLS", len(t))
loaded = list(jsontokens.first_non_ws.overloads.values())
print("LOADED", len(loaded))
print("PENDING", all(lazy_link.pending_bitcode(cr.library) for cr in loaded))
from numba import njit

@njit
def after_spaces(b, i):
    return jsontokens.first_non_ws(b, i) * 10  # links the loaded kernel into new code

buf = np.frombuffer(b"   [1]", np.uint8)  # read-only, as the loads' buffers: the loaded signature
print("DIRECT", jsontokens.first_non_ws(buf, 0))
print("LINKED", after_spaces(buf, 0))
print("PENDING_AFTER", any(lazy_link.pending_bitcode(cr.library) for cr in loaded))
"""


def test_loaded_kernels_link_into_code_compiled_later(tmp_path):
    """`tracevis3d.kernels.lazy_link`: a kernel loaded from the cache keeps its linking module
    unread (the load's bitcode parse and symbol walk skipped), runs, and still links into a
    function compiled afterwards, whose call reads it then.  (``TRACEVIS3D_FULL_REFRESH``, which
    turns it off with the light load, is the test above.)"""
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",".join(
        f'{{"ph": "X", "name": "h{k % 4}", "pid": 1, "tid": 1, "ts": {k}, "dur": 0.5}}' for k in range(200))
        + "]}")

    def run(**env):
        r = subprocess.run([sys.executable, "-c", LINKED, str(path)], capture_output=True, text=True, timeout=900,
                           env=dict(os.environ, **env))
        assert r.returncode == 0, r.stderr[-2000:]
        return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)

    run()  # compiles what the cache lacks
    out = run()
    assert out["CALLS"] == "200" and out["LOADED"] != "0"
    assert out["PENDING"] == "True"  # loaded lazily
    assert out["DIRECT"] == "3" and out["LINKED"] == "30"
    assert out["PENDING_AFTER"] == "False"  # linking read the module


FOLDERS = r"""
import os, shutil, sys, tempfile, warnings
warnings.simplefilter("ignore")
made = []
real = tempfile.TemporaryFile
def counted(*a, **k):
    made.append(k.get("dir"))
    return real(*a, **k)
tempfile.TemporaryFile = counted
import numpy as np
from tracevis3d.kernels import jsontokens, jsonspans, sidetables  # 40-odd kernels, one cache folder
print("CHECKS", len(made), len(set(made)))
shutil.rmtree(os.environ["NUMBA_CACHE_DIR"])  # removed after the check: a save makes it again
print("FIRST", int(jsontokens.first_non_ws(np.frombuffer(b"   {", np.uint8), 0)))
print("SAVED", any(f.endswith(".nbi") for _, _, fs in os.walk(os.environ["NUMBA_CACHE_DIR"]) for f in fs))
"""


def test_a_cache_folder_is_checked_once_and_made_again_when_removed(tmp_path):
    """`tracevis3d.kernels._cache_folders_checked_once`: one writable-folder check per folder, not
    per kernel; a folder removed meanwhile is made again by the next save, as numba would."""
    cache = tmp_path / "cache"
    r = subprocess.run([sys.executable, "-c", FOLDERS], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)))
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert out["CHECKS"] == "1 1"
    assert out["FIRST"] == "3" and out["SAVED"] == "True"


YAML = r"""
import sys, warnings
warnings.simplefilter("ignore")
import tracevis3d.kernels
from numba.core import config
print("YAML_AFTER_NUMBA", "yaml" in sys.modules, config._HAVE_YAML, config.OPT)
from tracevis3d.kernels import jsontokens
import numpy as np
print("RUNS", int(jsontokens.first_non_ws(np.frombuffer(b"  [", np.uint8), 0)))
try:
    import yaml
    print("YAML_LATER", yaml.safe_load("a: 1") == {"a": 1})
except ImportError:
    print("YAML_LATER not installed")
"""


def test_numba_is_imported_without_yaml_unless_a_config_file_asks(tmp_path):
    """`tracevis3d.kernels._import_numba`: no PyYAML import for numba in a folder without
    ``.numba_config.yaml`` (yaml imports normally afterwards); with one, numba reads it."""
    pytest.importorskip("yaml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop("NUMBA_OPT", None)

    def run(cwd):
        r = subprocess.run([sys.executable, "-c", YAML], capture_output=True, text=True, timeout=900, env=env,
                           cwd=cwd)
        assert r.returncode == 0, r.stderr[-2000:]
        return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)

    plain = tmp_path / "plain"
    plain.mkdir()
    out = run(plain)
    assert out["YAML_AFTER_NUMBA"].split()[:2] == ["False", "False"]
    assert out["RUNS"] == "2" and out["YAML_LATER"] == "True"
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / ".numba_config.yaml").write_text("opt: '1'\n")  # (numba reads the level as text)
    out = run(configured)
    assert out["YAML_AFTER_NUMBA"] == "True True _OptLevel(1)"  # the file read: level 1, not 3
    assert out["RUNS"] == "2"


def test_the_yaml_refusal_is_for_the_importing_thread_only():
    from tracevis3d.kernels import _NoYamlForNumba
    import threading

    mine = _NoYamlForNumba(threading.get_ident())
    other = _NoYamlForNumba(threading.get_ident() + 1)
    done = _NoYamlForNumba(threading.get_ident())
    done.active = False  # after numba's import: inert, left in sys.meta_path
    assert done.find_spec("yaml") is None
    assert other.find_spec("yaml") is None and other.find_spec("yaml.cyaml") is None
    assert mine.find_spec("yamlish") is None and mine.find_spec("numpy") is None
    for name in ("yaml", "yaml.cyaml"):
        try:
            mine.find_spec(name)
        except ModuleNotFoundError as e:
            assert e.name == name
        else:
            raise AssertionError(f"{name} was not refused")
