"""The overview's stages that read the calls a chunk at a time (`colour.function_area`, the
legend's areas, `geometry.drawn_level_ids`, `fold.window_context`, the measures, the label
faces, the inset's and callouts' reads) give the figure they give in one chunk: the icicle of
a synthetic trace with every chunk a few dozen calls against every chunk larger than the
trace, array for array; and the helpers against the formulas they replace."""
import dataclasses

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout import colour, fold, geometry, icicle, icicle_measure, labels
from tracevis3d.layout.colour import _folded_calls, function_area
from tracevis3d.layout.geometry import dense_ranks, drawn_level_ids
from tracevis3d.naming import function_table
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.model import KIND_WAIT

CHUNKS = {(labels, "FACE_CHUNK"): 37, (colour, "COLOUR_CHUNK"): 113, (geometry, "DRAWN_CHUNK"): 101,
          (fold, "CONTEXT_CHUNK"): 89, (icicle_measure, "MEASURE_CHUNK"): 83}


def figure_arrays(spec) -> dict:
    out = {"meta": repr(sorted(spec.meta.items())), "legend": repr(spec.legend), "camera": repr(spec.camera)}
    for k, layer in enumerate(spec.layers):
        for f in dataclasses.fields(layer):
            v = getattr(layer, f.name)
            for name, a in (v.items() if isinstance(v, dict) else [("", v)]):
                out[f"{k}.{f.name}.{name}"] = a
    for f in dataclasses.fields(spec.labels):
        out["labels." + f.name] = getattr(spec.labels, f.name)
    return out


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return type(a) is type(b) and a == b


@pytest.mark.timeout(300)
@pytest.mark.parametrize("measure", ["self", "inclusive"])
def test_small_chunks_draw_the_same_figure(monkeypatch, measure):
    params = IcicleParams(extrude_measure=measure)
    monkeypatch.setattr(icicle, "GATHERED_MAX_CALLS", 0)  # the drawn calls read where indexed (a 10^8 figure's)
    for (mod, name) in CHUNKS:
        monkeypatch.setattr(mod, name, 1 << 30)
    whole = figure_arrays(icicle.icicle_layout(tracevis3d.synthetic(6000, threads=3, seed=4), params))
    for (mod, name), size in CHUNKS.items():
        monkeypatch.setattr(mod, name, size)
    chunked = figure_arrays(icicle.icicle_layout(tracevis3d.synthetic(6000, threads=3, seed=4), params))
    assert whole.keys() == chunked.keys()
    assert [k for k in whole if not same(whole[k], chunked[k])] == []
    assert len(whole["labels.texts"]) > 0


@pytest.mark.timeout(120)
def test_function_area_is_the_sums_of_the_free_calls_areas(monkeypatch):
    monkeypatch.setattr(colour, "COLOUR_CHUNK", 97)
    tr = tracevis3d.synthetic(3000, threads=2, seed=2)
    ft = function_table(tr)
    wait = tr.kind == KIND_WAIT
    free = ~(wait | (ft.infra[tr.func] & ~wait))
    area = (tr.end - tr.start) * np.where(_folded_calls(tr, "auto"), colour.FOLDED_AREA, 1.0)
    want = np.bincount(tr.func[free], weights=area[free], minlength=tr.n_functions)
    got = function_area(tr, "auto", ft)
    assert got.dtype == want.dtype and np.array_equal(got, want)  # bit for bit, not close


@pytest.mark.timeout(60)
@pytest.mark.parametrize("spread", [3.0, 1e6])  # a presence table; a range too wide for one (sorted)
def test_drawn_level_ids_are_the_dense_ranks_of_the_keys(monkeypatch, spread):
    monkeypatch.setattr(geometry, "DRAWN_CHUNK", 41)
    rng = np.random.default_rng(7)
    bottom = np.round(rng.random(2000) * spread * 8) / 8
    local = np.flatnonzero(rng.random(2000) < 0.6).astype(np.int32)
    want = dense_ranks(np.rint(bottom[local] * 4096.0).astype(np.int64)).astype(np.int32)
    got = drawn_level_ids(bottom, local)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    assert drawn_level_ids(bottom, local[:0]).shape == (0,)


def test_level_key_ranks_round_half_to_even_and_refuse_what_is_not_a_key():
    """`kernels.drawn.level_key_ranks` (`drawn_level_ids`' pass): keys exactly halfway between
    two integers go to the even one, as ``np.rint``; a NaN or a key outside [lo, hi] is refused."""
    from tracevis3d.kernels.drawn import level_key_ranks

    rng = np.random.default_rng(3)
    bottom = (rng.integers(0, 40, 3000) + rng.choice([0.0, 0.5, 0.25], 3000)) / 4096.0
    local = np.flatnonzero(rng.random(3000) < 0.7)
    keys = np.rint(bottom * 4096.0).astype(np.int64)
    ok, got = level_key_ranks(bottom, local, 4096.0, int(keys.min()), int(keys.max()))
    assert ok and np.array_equal(got, dense_ranks(keys[local]).astype(np.int32))
    bad = bottom.copy()
    bad[local[5]] = np.nan
    assert not level_key_ranks(bad, local, 4096.0, int(keys.min()), int(keys.max()))[0]
    assert not level_key_ranks(bottom, local, 4096.0, int(keys.min()) + 1, int(keys.max()))[0]


def _hops_twin(trace, d, named_ids, which):
    """`callouts._hops_to_a_name` as numpy passes over the drawn calls' columns (its form
    before `kernels.drawn.mark_drawn_and_named`)."""
    from tracevis3d.layout.callouts import NAME_HOPS

    didx, dfold, dcid = np.asarray(d.idx), np.asarray(d.folded), np.asarray(d.call_id)
    drawn = np.zeros(len(trace), np.bool_)
    drawn[didx[~dfold]] = True
    named_ids = named_ids[named_ids >= 0].astype(np.int64)
    is_named = np.zeros(int(max(named_ids.max(initial=-1), dcid.max(initial=-1))) + 1, np.bool_)
    is_named[named_ids] = True
    named = np.zeros(len(trace), np.bool_)
    named[didx[is_named[dcid]]] = True
    hops = np.full(which.size, NAME_HOPS, np.int64)
    seen = np.zeros(which.size, np.int64)
    anc = trace.parent[didx[which]]
    for _ in range(4 * NAME_HOPS):
        live = (anc >= 0) & (hops == NAME_HOPS) & (seen < NAME_HOPS)
        a = np.maximum(anc, 0)
        seen += live & drawn[a]
        hops = np.where(live & named[a], np.minimum(seen, NAME_HOPS), hops)
        anc = np.where(live, trace.parent[a], -1)
    return hops


@pytest.mark.timeout(120)
@pytest.mark.parametrize("window", [None, (0.2, 0.6)])
def test_hops_to_a_name_read_in_place_are_the_numpy_passes(monkeypatch, window):
    """`callouts._hops_to_a_name` over the drawn calls gathered and read where they lie (a
    whole figure's and a window's, whose call ids are the loaded trace's), against its twin."""
    from tracevis3d.layout.callouts import _hops_to_a_name

    tr = tracevis3d.synthetic(6000, threads=3, seed=4)
    if window is not None:  # (µs from the trace's start)
        span = float(tr.end.max() - tr.start.min())
        window = (window[0] * span, window[1] * span)
    rng = np.random.default_rng(6)
    for gathered_max in (1 << 40, 0):
        monkeypatch.setattr(icicle, "GATHERED_MAX_CALLS", gathered_max)
        st = icicle.icicle_stages(tr, IcicleParams(time_window=window), 16.0, window_first=True)
        d, trace = st.drawn, st.sel.trace
        assert isinstance(d.idx, np.ndarray) == bool(gathered_max)
        assert (window is None) != bool((np.asarray(d.call_id) != np.asarray(d.idx)).any())  # (a window's ids)
        n = len(np.asarray(d.idx))
        named_ids = np.r_[rng.choice(np.asarray(d.call_id), 40), -1, 10 ** 9]
        which = rng.choice(n, 300)
        got = _hops_to_a_name(trace, d, named_ids, which)
        assert np.array_equal(got, _hops_twin(trace, d, named_ids, which))
        assert len(set(got.tolist())) > 1
