"""`kernels.hugeblock`: the arrays cut from one block are what np.empty / np.zeros would give."""
import numpy as np

from tracevis3d.kernels.hugeblock import ALIGN, carve


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

