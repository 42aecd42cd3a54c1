"""tracevis3d.kernels.cache_save: numba's cache saved safely by processes side by side (a data
file per key, data before index, under a lock), and a loaded entry of other argument types
compiled again instead of run."""
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tracevis3d.kernels import cache_save

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: open_depth (greatest depth + 2) on [0, 5] of each dtype: 7, in a fresh process with the cache
RUN = """
    import json, sys
    import numpy as np
    from tracevis3d.kernels.tree import open_depth
    out = {{dt: int(open_depth(np.array([0, 5], dt))) for dt in {dtypes!r}}}
    print(json.dumps({{"v": out, "hits": sum(open_depth._cache_hits.values()),
                      "misses": sum(open_depth._cache_misses.values())}}))
"""


def _python(code, cache, **kw):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=REPO)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def _run(code, cache):
    p = _python(code, cache)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.splitlines()[-1])


def _index(cache):
    (nbi,) = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs if f.startswith("tree.open_depth-")
              and f.endswith(".nbi")]
    return nbi


class _File:
    @staticmethod
    def _data_name(number):
        return f"kern.f-5.py311.{number}.nbc"


def test_each_key_names_its_own_data_file_whatever_the_index_holds():
    a, b = ("(array(int64, 1d, C),)", ("x86_64", "generic", ""), ("h1", "h2")), \
           ("(array(int32, 1d, C),)", ("x86_64", "generic", ""), ("h1", "h2"))
    # two processes that read the same stale index pick apart names (numba's own pick: ".1.nbc" for both)
    assert cache_save.data_name_of(_File, a, set()) != cache_save.data_name_of(_File, b, set())
    assert cache_save.data_name_of(_File, a, set()) == cache_save.data_name_of(_File, a, {"other.nbc"})
    taken = {cache_save.data_name_of(_File, a, set())}
    assert cache_save.data_name_of(_File, a, taken) not in taken  # taken by another key: a further number


@pytest.mark.timeout(600)
def test_an_entry_of_other_argument_types_is_compiled_again_not_run(tmp_path):
    """The race's damage made by hand: the int32 and int64 entries swap data files.  Run as numba
    loads it, the int64 call would run int32 code over int64 data (open_depth of [0, 5]: 2)."""
    cache = tmp_path / "cache"
    assert _run(RUN.format(dtypes=["int32", "int64"]), cache)["v"] == {"int32": 7, "int64": 7}
    nbi = _index(cache)
    with open(nbi, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    keys = list(overloads)
    assert len(keys) == 2
    overloads = {keys[0]: overloads[keys[1]], keys[1]: overloads[keys[0]]}
    with open(nbi, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, overloads), protocol=4))
    got = _run(RUN.format(dtypes=["int32", "int64"]), cache)
    assert got["v"] == {"int32": 7, "int64": 7}
    assert got["misses"] == 2  # both compiled again (and saved under names of their own)
    assert _run(RUN.format(dtypes=["int32", "int64"]), cache) == {"v": {"int32": 7, "int64": 7}, "hits": 2,
                                                                    "misses": 0}


@pytest.mark.timeout(600)
def test_processes_compiling_side_by_side_lose_no_entry_and_mix_no_code(tmp_path):
    """Four processes, each a new signature of one kernel, released together (they wait on their
    stdin): every signature then loads from the cache with its own code."""
    cache = tmp_path / "cache"
    dtypes = ["int8", "int16", "int32", "int64"]
    wait = "import sys, numpy, tracevis3d.kernels.tree\nsys.stdin.read(1)\n"
    procs = [_python(wait + textwrap.dedent(RUN.format(dtypes=[dt])), cache, stdin=subprocess.PIPE) for dt in dtypes]
    for p in procs:
        p.stdin.write("g")
        p.stdin.flush()
    for p, dt in zip(procs, dtypes):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        assert json.loads(out.splitlines()[-1])["v"] == {dt: 7}
    with open(_index(cache), "rb") as f:
        pickle.load(f)
        _, overloads = pickle.loads(f.read())
    assert len(overloads) == 4 and len(set(overloads.values())) == 4
    got = _run(RUN.format(dtypes=dtypes), cache)
    assert got == {"v": {dt: 7 for dt in dtypes}, "hits": 4, "misses": 0}
    assert np.all([os.path.exists(os.path.join(os.path.dirname(_index(cache)), n)) for n in overloads.values()])
