"""EXTRAVIS's bands name a placeholder once: a C program's functions (uftrace) and most of a
browser's (Chromium) have no module, and their elements' three bands, on the ring and on the
sequence view's icicle, read "(no module)", "(no module)", "(no class)". The package band says
it; the module band under it and a class band that is not the leaves' band stay unnamed
(`layout.extravis_heb.band_label`); at class level "(no class)" names the leaves. A package
whose one module bears its name (callgrind's C file ``prog``, Go's ``main``) was named twice,
in two bands: its module, nearer the circle, names it."""
from pathlib import Path

import pytest

import tracevis3d
from tracevis3d.layout.extravis import extravis_layout

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "recorded"


def _element_texts(trace, views) -> list:
    spec = extravis_layout(trace, views=views)
    sets = spec.labels if isinstance(spec.labels, list) else [spec.labels]
    return [t for s in sets for t, k in zip(s.texts, s.kind) if k == "element"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("views", ["heb", "sequence"])
def test_a_c_programs_bands_say_no_module_once(views):
    trace = tracevis3d.load(DATA / "uftrace" / "uftrace.json.gz")
    texts = _element_texts(trace, views)
    assert texts.count("(no module)") == 1 and "(no class)" not in texts, texts
    assert {"main", "insert", "release"} <= {t.lstrip("…") for t in texts}, texts


@pytest.mark.timeout(300)
@pytest.mark.parametrize("views", ["heb", "sequence"])
def test_a_browsers_classes_of_no_module_are_named_in_the_leaves(views):
    trace = tracevis3d.load(DATA / "chromium" / "chromium_json.json.gz")
    texts = _element_texts(trace, views)
    assert texts.count("(no module)") == 1 and texts.count("(no class)") == 1, texts
    assert "v8" in texts, texts


@pytest.mark.timeout(300)
@pytest.mark.parametrize("views", ["heb", "sequence"])
@pytest.mark.parametrize("path,names", [
    (DATA.parent / "callgrind" / "prog.callgrind", ("prog", "pthread_create", "libc-start")),  # a C file's module
    (DATA.parent / "go" / "cpu.pprof", ("main", "runtime", "sort", "strings")),  # Go: package = module
], ids=["callgrind", "go"])
def test_a_package_of_one_module_of_its_name_is_named_once(path, names, views):
    texts = _element_texts(tracevis3d.load(path), views)
    for name in names:  # whole, or its end where the band is narrow ("…create")
        said = [t for t in texts if t == name or (t.startswith("…") and name.endswith(t[1:]))]
        assert len(said) <= 1, (name, texts)
    assert texts.count(names[0]) == 1, texts
