"""Colours go to functions a reader can name: a Firefox profile recorded without symbols
(tests/data/formats/firefox/gecko-worker.json.gz: most frames are code addresses,
``0x7f57c92a3f14``) gave 14 of its 16 legend colours to addresses and drew its named functions
(``fib``, ``work``, ``WorkerPrivate::WaitForWorkerEvents``) in grey. Addresses now rank after every
named function (`layout.colour.ADDRESS_NAME`) and share "other"."""
from pathlib import Path

import pytest

import tracevis3d
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout.colour import ADDRESS_NAME

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"


def _legend(trace) -> list:
    spec = icicle_layout(trace, IcicleParams(resolution=(1920, 1080)))
    sets = spec.labels if isinstance(spec.labels, list) else [spec.labels]
    return [t for s in sets for t, k in zip(s.texts, s.kind) if k == "legend"]


def _coloured(trace) -> list:
    """The names of the legend's swatches that are not grey ("other", or one function past
    the palette named in grey)."""
    from tracevis3d.layout.colour import OTHER_RGB

    spec = icicle_layout(trace, IcicleParams(resolution=(1920, 1080)))
    return [e.name for e in spec.legend if e.kind == "swatch" and tuple(e.color[:3]) != tuple(OTHER_RGB)]


@pytest.mark.timeout(300)
def test_an_unsymbolicated_profile_colours_its_named_functions():
    trace = tracevis3d.load(DATA / "firefox" / "gecko-worker.json.gz")
    assert sum(bool(ADDRESS_NAME.fullmatch(n)) for n in trace.function_names) > 100  # mostly addresses
    legend = _legend(trace)
    assert legend[0] == "colour: function", legend
    assert not [t for t in legend if t.startswith("0x")], legend
    named = {t.split(" (", 1)[0] for t in legend}  # "fib (blob:2)": a worker script's function
    assert {"fib", "work", "sortMany"} <= named and any("WaitForWorkerEvents" in t for t in legend), legend


@pytest.mark.timeout(300)
def test_callgrinds_unknown_addresses_take_no_colour():
    trace = tracevis3d.load(DATA / "callgrind" / "prog.callgrind")
    coloured = _coloured(trace)
    assert not [t for t in coloured if t.startswith(("0x", "???"))], coloured
    assert {"main", "worker", "leaf_work"} <= {t.split(" (", 1)[0] for t in coloured}, coloured
