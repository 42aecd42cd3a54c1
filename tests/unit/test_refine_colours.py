"""The overview's colours kept for the first zoom (`tracevis3d.layout.refine.OverviewColours`,
issue 70): what the build keeps gives a window's calls the slots a fresh computation of the
overview's colour stage gives them, survives a round trip through its file, and a file of
another trace or another version is not taken."""
import dataclasses

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout import refine
from tracevis3d.layout.icicle import icicle_layout, icicle_stages
from tracevis3d.layout.labels import text_px
from tracevis3d.params.icicle import IcicleParams


@pytest.fixture(scope="module")
def trace():
    return tracevis3d.synthetic(30_000, threads=3, seed=4)


def _lookup_twin(trace, params, sel_in) -> np.ndarray:
    """Brute force: the overview's slot of each call of ``sel_in``, looked up one by one."""
    st = icicle_stages(trace, params, text_px(params), window_first=True, name_members=True)
    slot_of = {int(i): int(s) for i, s in zip(st.sel.original(st.sel.idx), st.colouring.slot)}
    other = len(st.colouring.slot_rgb) - 1
    return np.array([slot_of.get(int(i), other) for i in sel_in.original(sel_in.idx)], np.int32)


@pytest.mark.parametrize("color_by", ["auto", "self"])
def test_kept_colours_give_a_window_the_overviews_slots(trace, tmp_path, color_by):
    params = IcicleParams(resolution=(960, 540), color_by=color_by).validate()
    kept: dict = {}
    icicle_layout(trace, params, stages_out=kept)  # what the build keeps
    colours = refine.OverviewColours.from_stages(kept["stages"], len(trace))
    path = tmp_path / "colours.npz"
    path.write_bytes(colours.to_bytes())
    again = refine.OverviewColours.from_file(path, len(trace))
    assert again is not None and np.array_equal(again.slot_of_call, colours.slot_of_call)
    t0, t1 = float(trace.start.min()), float(trace.end.max())
    window = (t0 + 0.4 * (t1 - t0), t0 + 0.41 * (t1 - t0))
    wp = refine.window_params(params, window)
    st = icicle_stages(trace, wp, text_px(wp), window_first=True, name_members=True)
    want = _lookup_twin(trace, params, st.sel)
    for c in (colours, again, refine.overview_colours(trace, params)):
        got = c.colouring_of(st.sel)
        assert np.array_equal(got.slot, want)
        assert np.allclose(got.slot_rgb, kept["stages"].colouring.slot_rgb)
        assert got.slot_names == kept["stages"].colouring.slot_names and got.title == kept["stages"].colouring.title
        assert [dataclasses.asdict(x) for x in got.legend] == [dataclasses.asdict(x)
                                                               for x in kept["stages"].colouring.legend]
    # the refined figure is the one a fresh computation of the overview's colours gives
    a = refine.refined_layout(trace, params, window, colouring_of=again.colouring_of)[1]
    b = refine.refined_layout(trace, params, window, colouring_of=refine.overview_colouring_of(trace, params))[1]
    for la, lb in zip(a.layers, b.layers):
        assert la.name == lb.name and list(la.materials) == list(lb.materials)
        if hasattr(la, "material_index"):
            assert np.array_equal(la.material_index, lb.material_index)


def test_a_file_of_another_trace_or_version_is_not_taken(trace, tmp_path):
    params = IcicleParams(resolution=(960, 540)).validate()
    colours = refine.overview_colours(trace, params)
    path = tmp_path / "colours.npz"
    path.write_bytes(colours.to_bytes())
    assert refine.OverviewColours.from_file(path, len(trace) + 1) is None  # another number of calls
    assert refine.OverviewColours.from_file(tmp_path / "missing.npz", len(trace)) is None
    path.write_bytes(b"not an npz")
    assert refine.OverviewColours.from_file(path, len(trace)) is None
    # the file name follows the trace's content and every parameter of the figure
    name = refine.colours_file_name("abc", params)
    assert name != refine.colours_file_name("abd", params)
    assert name != refine.colours_file_name("abc", dataclasses.replace(params, color_by="module").validate())


def test_content_fingerprint_whole_and_in_pieces(tmp_path, monkeypatch):
    data = np.random.default_rng(0).integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(data)
    b.write_bytes(data)
    assert refine.content_fingerprint(a) == refine.content_fingerprint(b)  # content, not path
    b.write_bytes(data[:-1] + b"x")
    assert refine.content_fingerprint(a) != refine.content_fingerprint(b)
    monkeypatch.setattr(refine, "FINGERPRINT_WHOLE", 1 << 20)  # a large file: hashed in pieces
    monkeypatch.setattr(refine, "FINGERPRINT_CHUNK", 1 << 16)
    pieces = refine.content_fingerprint(a)
    assert pieces == refine.content_fingerprint(a) and pieces != refine.content_fingerprint(b)  # the last piece


def _aligned_twin(a_start, a_end, b_start, pairs, window, origins):
    """Brute force: the offsets of every match inside the window, their median."""
    offs = sorted(b_start[b] - a_start[a] for a, b in pairs if a_start[a] >= window[0] and a_end[a] <= window[1])
    if not offs:
        d = origins[1] - origins[0]
    else:
        m = len(offs) // 2
        d = offs[m] if len(offs) % 2 else 0.5 * (offs[m - 1] + offs[m])
    return (window[0] + d, window[1] + d)


@pytest.mark.parametrize("window", [(100.0, 400.0), (5000.0, 5100.0)])
def test_aligned_window_moves_by_the_matches_median_offset(window):
    rng = np.random.default_rng(3)
    a_start = np.sort(rng.uniform(0, 1000, 200))
    a_end = a_start + rng.uniform(0, 50, 200)
    b_start = a_start * 1.3 + 40 + rng.normal(0, 5, 200)
    pairs = [(int(a), int(b)) for a, b in zip(rng.integers(0, 200, 120), rng.integers(0, 200, 120))]
    pa, pb = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    got = refine.aligned_window(a_start, a_end, b_start, b_start + 1, pa, pb, window, (0.0, 40.0))
    assert got == pytest.approx(_aligned_twin(a_start, a_end, b_start, pairs, window, (0.0, 40.0)))
    assert got[1] - got[0] == pytest.approx(window[1] - window[0])  # as wide as A's


def test_the_kept_colours_stay_bounded(tmp_path):
    """The user cache keeps the newest files within so many files and bytes; the file just
    written stays, files of others are not touched."""
    import os

    for k in range(6):
        p = tmp_path / f"overview-colours-{k}.npz"
        p.write_bytes(b"x" * 10)
        os.utime(p, ns=(k * 10**9, k * 10**9))
    (tmp_path / "other.txt").write_text("not ours")
    refine.prune_colours(str(tmp_path), str(tmp_path / "overview-colours-0.npz"), 3, 1 << 20)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt", "overview-colours-0.npz",
                                                          "overview-colours-3.npz", "overview-colours-4.npz",
                                                          "overview-colours-5.npz"]
    refine.prune_colours(str(tmp_path), str(tmp_path / "overview-colours-5.npz"), 10, 25)  # bytes: two files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt", "overview-colours-4.npz",
                                                          "overview-colours-5.npz"]
