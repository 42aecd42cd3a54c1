"""The kernel-cache check every import runs (`kernel_cache.drop_stale_entries`) skips hashing the
sources when their file status is unchanged (`sources_stamp`), and still sees every edit."""
import os
import time

from tracevis3d import kernel_cache

OLD = time.time() - 3600  # sources older than the racy window: their stamp is trusted


def _package(root, body: str):
    root.mkdir(parents=True, exist_ok=True)
    src = root / "k.py"
    src.write_text("import numba\n\n\n@numba.njit\ndef f():\n    return " + body + "\n")
    os.utime(src, (OLD, OLD))
    return src


def _entry(cache, root):
    e = cache / kernel_cache.cache_subdir(str(root)) / "k.f-4.py311.nbi"
    e.parent.mkdir(parents=True, exist_ok=True)
    e.write_bytes(b"x")
    return e


def test_an_unchanged_stamp_skips_the_hashing(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "_RACY_NS", 0)  # sources written just now: trusted all the same
    cache, root = tmp_path / "cache", tmp_path / "pkg"
    _package(root, "1")
    _entry(cache, root)
    assert kernel_cache.drop_stale_entries(str(cache), str(root)) == 1  # no record yet
    _entry(cache, root)
    assert kernel_cache.drop_stale_entries(str(cache), str(root)) == 0  # recorded: kept, stamp written
    assert list(cache.glob("tracevis3d-stamps-*.sig"))

    def no_hashing(_root):
        raise AssertionError("hashed the sources though no file changed")

    monkeypatch.setattr(kernel_cache, "kernel_module_hashes", no_hashing)
    assert kernel_cache.drop_stale_entries(str(cache), str(root)) == 0


def test_an_edit_of_the_same_size_and_time_is_still_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "_RACY_NS", 0)
    cache, root = tmp_path / "cache", tmp_path / "pkg"
    src = _package(root, "1")
    kernel_cache.drop_stale_entries(str(cache), str(root))
    e = _entry(cache, root)
    assert kernel_cache.drop_stale_entries(str(cache), str(root)) == 0 and e.exists()
    new = root / "k.py.new"  # an editor's save: a new file of the same size and time renamed over it
    new.write_text(src.read_text().replace("return 1", "return 2"))
    os.utime(new, (OLD, OLD))
    os.replace(new, src)
    assert kernel_cache.drop_stale_entries(str(cache), str(root)) == 1 and not e.exists()


def test_a_source_changed_just_now_makes_no_stamp(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    _package(root, "1")  # written (its change time) just now: within the racy window
    assert kernel_cache.sources_stamp(str(root)) is None
    monkeypatch.setattr(kernel_cache, "_RACY_NS", 0)
    assert kernel_cache.sources_stamp(str(root)) is not None


def test_every_step_module_has_cache_entries_of_its_own():
    """`kernel_cache.STEP_KERNELS` / `STEP_WAYS` name the modules whose cache entries say that a
    step's code is ready.  A module without a cached kernel of its own (constants only, or
    helpers that are only ever inlined into their callers) never has an entry, so its step
    read as cold for ever: every first Perfetto load announced "preparing kernels", and the
    add-on's background warm-up started at every Blender start (kernels/perfetto_layout,
    constants only; kernels/repairs, one inlined helper)."""
    import re

    from tracevis3d import kernel_cache as kc

    own_entry = re.compile(r"^@(?:numba\.)?(?:njit|jit|cfunc)\((?![^)]*inline=\"always\")[^)]*cache=True", re.M)
    modules = {m for mods in kc.STEP_KERNELS.values() for m in mods}
    modules |= {m for ways in kc.STEP_WAYS.values() for mods in ways.values() for m in mods}
    without = [m for m in sorted(modules)
               if not own_entry.search(open(os.path.join(kc.package_root(), m + ".py"), encoding="utf-8").read())]
    assert not without, f"step modules that can have no cache entry of their own: {without}"


def test_the_shipped_tag_names_the_installed_numba_without_importing_it(tmp_path):
    """`kernel_cache.tag` reads numba's version from its dist-info folder (no `importlib.metadata`
    on a first load's path); the same as what `importlib.metadata` says."""
    import importlib.metadata
    import platform
    import sys

    from tracevis3d import kernel_cache

    want = importlib.metadata.version("numba")
    assert kernel_cache._numba_version() == want
    assert kernel_cache.tag() == f"py{sys.version_info[0]}.{sys.version_info[1]}-numba{want}-{platform.machine().lower()}"
    # a source tree (no shipped folder): nothing to install, said plainly
    rep = kernel_cache.install_shipped(str(tmp_path / "none"), str(tmp_path), str(tmp_path / "cache"))
    assert rep == {"installed": 0, "entries": 0, "skipped": "no pre-built kernels in this build"}


V3 = dict.fromkeys(["cx16", "popcnt", "sahf", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "bmi", "bmi2", "f16c",
                    "fma", "lzcnt", "movbe", "xsave", "sse", "sse2"], True)
V4 = dict(V3, avx512f=True, avx512bw=True, avx512cd=True, avx512dq=True, avx512vl=True)


def test_the_cpu_level_is_the_highest_whose_every_feature_is_there():
    """`kernel_cache.cpu_level`: the level whose code this CPU runs; one missing feature (or the
    OS not saving the AVX-512 registers, which LLVM reports as the features being absent) drops
    to the level below; numba told not to use AVX gets the generic kernels."""
    assert kernel_cache.cpu_level({}) == "generic"
    assert kernel_cache.cpu_level({"sse2": True, "avx": True}) == "generic"
    assert kernel_cache.cpu_level(V3) == "x86-64-v3"
    assert kernel_cache.cpu_level(dict(V3, fma=False)) == "generic"
    assert kernel_cache.cpu_level(dict(V3, movbe=False)) == "generic"
    assert kernel_cache.cpu_level(V4) == "x86-64-v4"
    assert kernel_cache.cpu_level(dict(V4, avx512vl=False)) == "x86-64-v3"
    assert kernel_cache.cpu_level(dict(V4, avx512bf16=True, amx_tile=True)) == "x86-64-v4"
    assert kernel_cache.cpu_level(V4, avx_enabled=False) == "generic"
    # the levels nest: each asks for everything the one below asks for
    (_, v3), (_, v4) = kernel_cache.CPU_LEVELS
    assert v3 < v4


def test_the_host_level_is_generic_where_the_user_chose_numbas_cpu(monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "CPU_NAME", "generic")
    monkeypatch.setattr(config, "CPU_FEATURES", "")
    assert kernel_cache.host_cpu_level() == "generic"
