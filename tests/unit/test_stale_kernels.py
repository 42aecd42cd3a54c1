"""A kernel that calls a kernel of another module must not keep the callee's old code after
that module changes (`kernel_cache.drop_stale_entries`, run by `_numba_env.configure`).

numba checks a cache entry against its own source file only; these tests run real numba in
fresh processes on a two-module package, with a real on-disk cache."""
import json
import os
import pathlib
import subprocess
import sys

from tracevis3d import kernel_cache

REPO = pathlib.Path(__file__).resolve().parents[2]

CALLER = """from numba import njit

from .callee import value


@njit(cache=True)
def caller():
    return value() + 100
"""
CALLEE = """from numba import njit


@njit(cache=True)
def value():
    return {}
"""
RUN = """import os, sys
from tracevis3d.kernel_cache import drop_stale_entries
if sys.argv[1] == "drop":
    print("removed", drop_stale_entries(os.environ["NUMBA_CACHE_DIR"], sys.argv[2]), file=sys.stderr)
from twomod.caller import caller
print(caller())
"""


def _package(tmp_path, callee_value: int) -> pathlib.Path:
    pkg = tmp_path / "src" / "twomod"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "caller.py").write_text(CALLER)
    (pkg / "callee.py").write_text(CALLEE.format(callee_value))
    return pkg


def _run(tmp_path, pkg, mode: str) -> int:
    # no bytecode cache for the two modules: a callee rewritten within the second its .pyc was
    # written, at the same size, would run its old bytecode (Python checks mtime in seconds and
    # size), whatever numba's cache holds: the test failed 3 runs in 6 where .pyc were written
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), str(pkg.parent)]))
    out = subprocess.run([sys.executable, "-c", RUN, mode, str(pkg)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_changed_callee_recompiles_its_callers(tmp_path):
    pkg = _package(tmp_path, 1)
    assert _run(tmp_path, pkg, "drop") == 101
    assert list((tmp_path / "cache").glob("*/caller.caller-*.nbi"))  # written to the cache
    _package(tmp_path, 2)  # only the callee's file changes
    assert _run(tmp_path, pkg, "keep") == 101  # numba alone: the caller's entry keeps the old callee
    assert _run(tmp_path, pkg, "drop") == 102  # dropped and recompiled
    assert _run(tmp_path, pkg, "drop") == 102  # unchanged sources: entries kept


def test_unchanged_sources_keep_entries_and_checkouts_do_not_disturb_each_other(tmp_path):
    cache = tmp_path / "cache"
    a, b = tmp_path / "a" / "pkg", tmp_path / "b" / "pkg"
    for root in (a, b):
        root.mkdir(parents=True)
        (root / "k.py").write_text("import numba\n\n\n@numba.njit\ndef f():\n    return 1\n")
        entry = cache / kernel_cache.cache_subdir(str(root)) / "k.f-1.py311.nbi"
        entry.parent.mkdir(parents=True)
        entry.write_bytes(b"x")
    assert kernel_cache.drop_stale_entries(str(cache), str(a)) == 1  # no record yet: dropped
    (cache / kernel_cache.cache_subdir(str(a)) / "k.f-1.py311.nbi").write_bytes(b"x")
    assert kernel_cache.drop_stale_entries(str(cache), str(a)) == 0  # same sources: kept
    assert kernel_cache.drop_stale_entries(str(cache), str(b)) == 1  # b's own record
    (b / "k.py").write_text("import numba  # changed\n\n\n@numba.njit\ndef f():\n    return 1\n")
    (cache / kernel_cache.cache_subdir(str(b)) / "k.f-1.py311.nbi").write_bytes(b"x")
    assert kernel_cache.drop_stale_entries(str(cache), str(b)) == 1
    assert kernel_cache.drop_stale_entries(str(cache), str(a)) == 0  # a untouched by b's change
    (a / "notes.py").write_text("x = 1  # mentions numba, compiles nothing\n")  # does not count
    assert kernel_cache.drop_stale_entries(str(cache), str(a)) == 0


def test_the_package_records_its_sources_in_the_cache_it_uses():
    cache = os.environ["NUMBA_CACHE_DIR"]
    import tracevis3d  # noqa: F401  configure() ran on import

    root = os.path.dirname(os.path.abspath(kernel_cache.__file__))
    marks = list(pathlib.Path(cache).glob("tracevis3d-sources-*.txt"))
    assert any(json.loads(m.read_text()) == kernel_cache.kernel_module_hashes(root) for m in marks), marks


def test_an_edit_drops_only_the_module_and_its_importers(tmp_path):
    """Editing one kernel module recompiles it and the kernels that import it (transitively),
    not every kernel: the others keep their entries."""
    cache = tmp_path / "cache"
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    kernel = "import numba\n{}\n\n@numba.njit\ndef f():\n    return 1\n"
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "base.py").write_text(kernel.format(""))
    (pkg / "mid.py").write_text(kernel.format("from .base import f as g"))
    (pkg / "sub" / "top.py").write_text(kernel.format("from .. import mid"))
    (pkg / "other.py").write_text(kernel.format("LIMIT = 3"))

    def entries():
        out = {}
        for stem, folder in (("base", pkg), ("mid", pkg), ("top", pkg / "sub"), ("other", pkg)):
            d = cache / kernel_cache.cache_subdir(str(folder))
            d.mkdir(parents=True, exist_ok=True)
            for suffix in ("f-5.py311.nbi", "f-5.py311.1.nbc"):
                (d / f"{stem}.{suffix}").write_bytes(b"x")
            out[stem] = d / f"{stem}.f-5.py311.nbi"
        return out

    entries()
    assert kernel_cache.drop_stale_entries(str(cache), str(pkg)) == 8  # no record yet: all
    files = entries()
    assert kernel_cache.drop_stale_entries(str(cache), str(pkg)) == 0
    (pkg / "base.py").write_text(kernel.format("# edited"))
    assert kernel_cache.drop_stale_entries(str(cache), str(pkg)) == 6  # base, mid and top
    assert files["other"].exists() and not files["top"].exists() and not files["mid"].exists()
    files = entries()
    (pkg / "other.py").write_text(kernel.format("LIMIT = 4"))
    assert kernel_cache.drop_stale_entries(str(cache), str(pkg)) == 2
    assert files["base"].exists() and files["top"].exists() and not files["other"].exists()
