"""A read-only column over the shown or drawn calls that is not held as an array: indexed, it
reads what it is made of at those calls; used whole (numpy functions and operators) it is
made for that use and dropped after (`fold_heights.LevelHeights`,
`icicle_measure.MeasureUnits`, `geometry.ShownColumn`)."""
from __future__ import annotations

import numpy as np


class LazyColumn(np.lib.mixins.NDArrayOperatorsMixin):
    """Base of the lazy columns: a subclass gives ``__getitem__``, ``__len__`` (its number of
    calls), ``dtype`` and ``WRITE_ERROR`` (the TypeError of a write: it has nothing to write
    to); made whole, `CHUNK` calls at a time."""

    dtype = np.dtype(np.float64)
    ndim = 1
    #: calls made at a time when the column is made whole
    CHUNK = 1 << 20
    WRITE_ERROR = "a lazy column is read, not written"

    def __len__(self) -> int:
        raise NotImplementedError

    def __setitem__(self, k, v):
        raise TypeError(self.WRITE_ERROR)

    def __array__(self, dtype=None, copy=None):
        out = np.empty(self.size, self.dtype)
        for a in range(0, self.size, self.CHUNK):
            out[a:a + self.CHUNK] = self[a:a + self.CHUNK]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        inputs = tuple(np.asarray(x) if isinstance(x, LazyColumn) else x for x in inputs)
        if "out" in kw:
            kw["out"] = tuple(np.asarray(x) if isinstance(x, LazyColumn) else x for x in kw["out"])
        return getattr(ufunc, method)(*inputs, **kw)

    @property
    def size(self) -> int:
        return len(self)

    @property
    def shape(self) -> tuple:
        return (self.size,)
