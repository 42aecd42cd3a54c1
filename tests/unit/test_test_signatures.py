"""tools/test_signatures.py: the kernel signatures only the tests meet, listed from the compile log
and compiled before the tests (make test).  The committed list names live dispatchers with types
that read back; an update keeps the package's kernels and leaves the rest; the compile step
compiles a listed signature into the cache it is given, and names one that no longer compiles."""
import importlib
import importlib.util
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("test_signatures_tool", REPO / "tools" / "test_signatures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_listed_signature_names_a_cached_dispatcher_and_types_that_read_back():
    ts = _tool()
    rows = ts.parse(ts.SIGNATURES.read_text())
    assert len(rows) >= 50
    namespace = ts._types_namespace()
    for module, name, types in rows:
        kernel = getattr(importlib.import_module(module), name)
        assert hasattr(kernel, "compile") and kernel._cache.__class__.__name__ != "NullCache", (module, name)
        got = eval(types, namespace)
        assert isinstance(got, tuple) and repr(got) == types, (module, name, types)


def test_update_keeps_the_packages_kernels_and_leaves_the_rest(tmp_path):
    ts = _tool()
    arr = "(Array(int64, 1, 'C', False, aligned=True), Array(bool, 1, 'C', False, aligned=True))"
    log = tmp_path / "compile.jsonl"
    recs = [{"kernel": "tracevis3d.kernels.cone.close_under_parents", "types": arr},
            {"kernel": "tracevis3d.kernels.sideshape._shape_take", "types": "(int64,)"},  # made of a plain function
            {"kernel": "numba.np.arrayobj.ol_np_empty.<locals>.impl", "types": "(int64,)"},
            {"kernel": "gamma_twins.subtree_gamma_classes", "types": "(int64,)"},
            {"kernel": "tracevis3d.kernels.synth._grown", "types": "(int64, Literal[int](0))"},  # no constructor repr
            {"kernel": "tracevis3d.kernels.cone.close_under_parents"}]  # an old log: no types
    log.write_text("".join(json.dumps({"sig": "", "cpu_s": 0.1, "test": "t", **r}) + "\n" for r in recs))
    out = tmp_path / "sigs.txt"
    assert ts.update([log], out) == 2
    assert ts.parse(out.read_text()) == [("tracevis3d.kernels.cone", "close_under_parents", arr),
                                         ("tracevis3d.kernels.sideshape", "shape_take", "(int64,)")]
    assert ts.update([log], out) == 2  # (the list is a set)


@pytest.mark.timeout(300)
def test_compile_puts_a_listed_signature_into_the_cache_and_names_a_stale_one(tmp_path):
    ts = _tool()
    sigs = tmp_path / "sigs.txt"
    sigs.write_text(ts.HEADER
                    + "tracevis3d.kernels.cone:close_under_parents\t(Array(bool, 1, 'C', False, aligned=True), "
                      "Array(int32, 1, 'C', False, aligned=True))\n"
                    + "tracevis3d.kernels.cone:no_such_kernel\t(int64,)\n")
    cache = tmp_path / "cache"
    summary = ts.compile_all(cache, sigs, jobs=2)
    assert summary.startswith("test signatures: 1 of 2"), summary
    assert "not compiled: tracevis3d.kernels.cone:no_such_kernel" in summary
    assert any(p.name.startswith("cone.close_under_parents") and p.suffix == ".nbi" for p in cache.rglob("*.nbi")), \
        sorted(p.name for p in cache.rglob("*"))[:10]
