"""`kernels.gamma_sweep`: the comparison's hash-consing sweeps with tables grown with the keys
give the classes of the sweeps sized by the calls (tests/support/gamma_twins.py), numbered the
same (their brute-force twins are in tests/realtraces/test_compare.py), on traces whose classes
outgrow every first capacity."""
import numpy as np
import pytest
from gamma_twins import subtree_gamma_classes, subtree_shape_classes

import tracevis3d
from tracevis3d.kernels import gamma_sweep
from tracevis3d.kernels.gamma import process_hash_seed
from tracevis3d.kernels.gamma_sweep import gamma_classes_grown, shape_classes_grown


@pytest.mark.parametrize("n", [1, 50, 20000])
def test_grown_sweeps_equal_the_sized_ones(n):
    seed = process_hash_seed()
    for t in (tracevis3d.synthetic(n, threads=min(3, n), seed=n), tracevis3d.perturb(tracevis3d.synthetic(n, seed=1), seed=3)):
        func, end = t.func, t.end_index
        want = subtree_gamma_classes(func, end, t.n_functions, seed)
        got = gamma_classes_grown(func, end, t.n_functions, seed)
        for w, g in zip(want, got):
            assert w.dtype == g.dtype and w.tobytes() == g.tobytes()
        want_s, n_s = subtree_shape_classes(func, end, seed)
        got_s, m_s = shape_classes_grown(func, end, seed)
        assert n_s == m_s and want_s.tobytes() == got_s.tobytes()


def test_grown_sweeps_outgrow_their_first_room():
    """Many more classes than the first capacity (every table, key list and stamp array
    doubled several times): still the sized sweeps' classes."""
    rng = np.random.default_rng(0)
    n = 12 * gamma_sweep.FIRST_KEYS
    t = tracevis3d.synthetic(n, threads=1, seed=4)
    func = rng.integers(0, t.n_functions, n).astype(np.int32)   # random names: ~n distinct classes
    seed = process_hash_seed()
    want = subtree_gamma_classes(func, t.end_index, t.n_functions, seed)
    got = gamma_classes_grown(func, t.end_index, t.n_functions, seed)
    assert want[1].shape[0] - 1 > 4 * gamma_sweep.FIRST_KEYS
    assert all(w.tobytes() == g.tobytes() for w, g in zip(want, got))
    ws, wn = subtree_shape_classes(func, t.end_index, seed)
    gs, gn = shape_classes_grown(func, t.end_index, seed)
    assert wn == gn > 4 * gamma_sweep.FIRST_KEYS and ws.tobytes() == gs.tobytes()
