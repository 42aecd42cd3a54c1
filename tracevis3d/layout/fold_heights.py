"""The fold's heights read where indexed (`fold.fold_levels`): a code a call into its lane's
row of the squeeze's height table (`kernels.fold_codes`), not an array of float64."""
from __future__ import annotations

import numpy as np

from .lazy_column import LazyColumn


#: `LevelHeights` made whole this many calls at a time
HEIGHT_CHUNK = 1 << 20


class LevelHeights(LazyColumn):
    """The height (levels) of each shown call's place, float64, held as a code a call into
    its lane's row of the squeeze's height table (`kernels.fold_codes.squeezed_codes`: 1 byte
    a call, not 8): ``heights[k]`` is ``table[lane[k], code[k]]``, the values
    `kernels.fold.place_folded_levels` gives; used whole (numpy functions and operators) it is
    made for that use, `HEIGHT_CHUNK` calls at a time."""

    CHUNK = HEIGHT_CHUNK
    WRITE_ERROR = "a fold's heights are read, not written"

    def __init__(self, code: np.ndarray, lane: np.ndarray, table: np.ndarray):
        self.code, self.lane, self.table = code, lane, table

    def __getitem__(self, k):
        return self.table[self.lane[k], self.code[k]]

    def __len__(self) -> int:
        return int(self.code.shape[0])
