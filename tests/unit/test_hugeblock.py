"""`kernels.hugeblock` and `pages`: the arrays cut from one block are what np.empty / np.zeros
would give; numpy's huge-page advice set, put back, and off while fresh huge pages are dear."""
import numpy as np
import pytest

from tracevis3d import pages
from tracevis3d.kernels.hugeblock import ALIGN, carve


@pytest.fixture(autouse=True)
def _cheap_pages():
    """Each test starts with fresh huge pages taken as cheap: a large read earlier in the session
    (another test's) may have judged them dear (`pages.set_huge_pages_cheap`), which turns every
    advice off; the verdict is put back after."""
    was = pages.huge_pages_cheap()
    pages.set_huge_pages_cheap(True)
    yield
    pages.set_huge_pages_cheap(was)


def test_carve_gives_aligned_disjoint_arrays_of_the_asked_shapes():
    specs = [((3, 5), np.uint16), (7, np.int64), (0, np.float64), ((2, 2), np.uint8), (1, np.float32)]
    got = carve(specs, zero=True)
    for a, (shape, dt) in zip(got, specs):
        assert a.shape == tuple(np.atleast_1d(shape)) and a.dtype == np.dtype(dt)
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
        assert a.size == 0 or a.ctypes.data % ALIGN == 0
        assert not a.any()
    for i, a in enumerate(got):            # writing one leaves the others as they were
        a.fill(1)
        assert all(not b.any() for b in got[i + 1:])
    bounds = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in got if a.nbytes)
    assert all(hi <= lo for (_, hi), (lo, _) in zip(bounds, bounds[1:]))



def _advice():
    """numpy's huge-page advice now (read by setting it and putting it back)."""
    from tracevis3d.pages import _NUMPY_ADVICE
    now = _NUMPY_ADVICE(True)
    _NUMPY_ADVICE(now)
    return bool(now)


def test_huge_pages_sets_numpys_advice_and_restores_it_nested_and_on_errors():
    import pytest

    from tracevis3d.pages import _NUMPY_ADVICE, huge_pages

    assert _NUMPY_ADVICE is not None, "numpy's huge-page switch not found: huge_pages does nothing"
    before = _advice()
    with huge_pages(False):
        assert _advice() is False
        with huge_pages(True):
            assert _advice() is True
            carve([(10, np.uint8)])
        assert _advice() is False
        carve([(10, np.uint8)])              # carve asks for huge pages and puts the advice back
        assert _advice() is False
        with pytest.raises(RuntimeError), huge_pages(True):
            raise RuntimeError("inside")
        assert _advice() is False
    assert _advice() is before


def test_huge_pages_blocks_ending_out_of_order_leave_numpys_setting():
    """Two blocks opened on two threads that end in the other order (a job's comparison and a
    script's, say): the newest still open block's advice holds, numpy's own comes back last."""
    from tracevis3d.pages import huge_pages

    before = _advice()
    first, second = huge_pages(not before), huge_pages(before)
    first.__enter__()
    assert _advice() is (not before)
    second.__enter__()
    assert _advice() is before
    first.__exit__(None, None, None)
    assert _advice() is before                 # the second is still open
    third = huge_pages(not before)
    third.__enter__()
    second.__exit__(None, None, None)
    assert _advice() is (not before)           # the third is still open
    third.__exit__(None, None, None)
    assert _advice() is before


def test_compare_puts_numpys_advice_back():
    """`compare_traces` turns the advice off and on for its stages, and leaves it as it was,
    also when it raises."""
    import pytest

    from tracevis3d.analysis.comparison import compare_traces
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(500, threads=2, seed=3)
    before = _advice()
    compare_traces(a, perturb(a, seed=4), keep_class_pairs=False)
    assert _advice() is before
    with pytest.raises(ValueError):
        compare_traces(a, a, overview_budget=0)
    assert _advice() is before


def test_dear_huge_pages_turn_every_advice_off_until_cheap_again():
    """While fresh huge pages count as dear (`pages.set_huge_pages_cheap(False)`), numpy advises
    none and a `huge_pages(True)` block none; cheap again, each advises as it asks."""
    from tracevis3d import pages

    before = _advice()
    try:
        pages.set_huge_pages_cheap(False)
        assert _advice() is False
        with pages.huge_pages(True):
            assert _advice() is False
            carve([(10, np.uint8)])
        pages.set_huge_pages_cheap(True)
        assert _advice() is before
        with pages.huge_pages(True):
            pages.set_huge_pages_cheap(False)
            assert _advice() is False
            pages.set_huge_pages_cheap(True)
            assert _advice() is True
    finally:
        pages.set_huge_pages_cheap(True)
    assert _advice() is before



def test_dear_is_its_rule_over_a_grid_of_costs(monkeypatch):
    """`pages.dear` against its rule written out: a block is dear when its CPU a GiB passes both
    `SLOW_HUGE_S_PER_GIB` and `DEAR_OVER_SMALL` times this process's 4 KiB pages' cost (held
    fixed here); the 4 KiB pages are measured only for a block past the first limit."""
    measured = []
    for small in (0.0, 0.3, 0.45, 0.6, 1.0, 2.5):
        monkeypatch.setattr(pages, "small_page_cost", lambda small=small: measured.append(small) or small)
        for nbytes in (1 << 20, 16 << 20, 3 << 30):
            for per_gib in (0.0, 0.1, 0.33, 0.59, 0.6, 0.61, 0.75, 0.8, 1.0, 1.3, 3.2, 6.4, 50.0):
                cpu_s = per_gib * nbytes / (1 << 30)
                rule = (cpu_s * (1 << 30) > pages.SLOW_HUGE_S_PER_GIB * nbytes
                        and cpu_s * (1 << 30) > pages.DEAR_OVER_SMALL * small * nbytes)
                measured.clear()
                assert pages.dear(cpu_s, nbytes) is rule, (small, nbytes, per_gib)
                assert bool(measured) == (cpu_s * (1 << 30) > pages.SLOW_HUGE_S_PER_GIB * nbytes)


def test_small_pages_are_measured_once():
    """`small_page_cost` measures fresh 4 KiB pages once in a process and keeps the figure."""
    first = pages.small_page_cost()
    assert first >= 0.0 and pages.small_page_cost() == first
