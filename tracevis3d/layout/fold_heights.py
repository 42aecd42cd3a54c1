"""The fold's heights read where indexed (`fold.fold_levels`): a code a call into its lane's
row of the squeeze's height table (`kernels.fold_codes`), not an array of float64."""
from __future__ import annotations

import numpy as np


class LevelHeights(np.lib.mixins.NDArrayOperatorsMixin):
    """The height (levels) of each shown call's place, float64, held as a code a call into
    its lane's row of the squeeze's height table (`kernels.fold_codes.squeezed_codes`: 1 byte
    a call, not 8): ``heights[k]`` is ``table[lane[k], code[k]]``, the values
    `kernels.fold.place_folded_levels` gives; used whole (numpy functions and operators) it is
    made for that use, `HEIGHT_CHUNK` calls at a time."""

    dtype = np.dtype(np.float64)
    ndim = 1

    def __init__(self, code: np.ndarray, lane: np.ndarray, table: np.ndarray):
        self.code, self.lane, self.table = code, lane, table

    def __getitem__(self, k):
        return self.table[self.lane[k], self.code[k]]

    def __setitem__(self, k, v):
        raise TypeError("a fold's heights are read, not written")

    def __array__(self, dtype=None, copy=None):
        out = np.empty(self.size, np.float64)
        for a in range(0, self.size, HEIGHT_CHUNK):
            out[a:a + HEIGHT_CHUNK] = self[a:a + HEIGHT_CHUNK]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        inputs = tuple(np.asarray(x) if isinstance(x, LevelHeights) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kw)

    def __len__(self) -> int:
        return int(self.code.shape[0])

    @property
    def size(self) -> int:
        return int(self.code.shape[0])

    @property
    def shape(self) -> tuple:
        return (self.size,)


#: `LevelHeights` made whole this many calls at a time
HEIGHT_CHUNK = 1 << 20
