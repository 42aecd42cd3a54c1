"""Cut stage: a view's sub-pixel subtrees drawn as stalks, never call by call (bpy-free).

A figure of 10^6 calls draws most of them narrower than a pixel.  The sub-pixel cluster
stage (`geometry.cluster_calls`, SyncTrace IV-B2) merges them per level after the fold, but
the fold, the drawn calls and the clusters still pass over every one of them.  This stage
comes before the fold, for a view whose scale is known within a bound before it is composed
(the thread view's ring: no lane's arc is longer than the half-circle across the image):

- a call narrower than ``rho`` pixels at the bound (`CUT_PX`) whose parent is not (a
  *stub*) keeps its place in the figure; the calls under it are dropped from the selection;
- what they would add to its lane's height is kept as the stub's *envelope*
  (`kernels.fold_reduce.subpixel_stubs`): the fold places every lane as if they were there
  (`fold.fold_levels`' ``envelopes``), so the levels, the squeeze and the outline are those of
  the whole selection;
- the view draws each stub's envelope as a *stalk* from the stub's top to where its subtree
  reaches, merged per pixel column (`stalk_columns`).

So the fold and everything after it cost the calls a figure can show, not the calls of the
trace: jinja_procs' ring goes from 1.87 M calls to 0.14 M.  A dropped call never had a box
of its own: it was narrower than a pixel at every radius of the ring, so it was in a
cluster; its stalk is that cluster's column, with its shape (height per pixel) kept and
the colours of its levels summed up in its stub's (colour by kind: the stub's share of
waiting and I/O is that of its whole subtree).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..kernels.fold_reduce import kept_tree, subpixel_stubs
from ..kernels.tree import depth_and_end_from_parent
from .fold import Envelopes, fold_mask

#: a call narrower than this many pixels, at the bound of its view's scale, is a stub
#: (what lies under it is drawn as its stalk): half the cluster stage's pixel at the
#: outermost arc a view can have, a fraction of it where the view is drawn
CUT_PX = 0.5
#: an envelope holds at most this many (a, b, u) pairs, and the cut tries subtrees over
#: at most this many times the selection's calls (`subpixel_stubs`); past that it keeps them
ENVELOPE_MAX, CUT_WORK = 24, 4


@dataclass
class Cut:
    """A selection with its sub-pixel subtrees cut (`cut_subpixel`)."""

    sel: object  # the cut selection (`select.Selection`): the kept calls
    envelopes: Envelopes  # per kept call
    kept: np.ndarray  # int64: position of each kept call in the selection before the cut
    n_before: int  # calls of the selection before the cut

    @property
    def n_dropped(self) -> int:
        return self.n_before - int(self.kept.size)


def cut_subpixel(sel, width_px: np.ndarray, fold, rho: float = CUT_PX) -> Cut:
    """Cut ``sel`` (a `select.Selection`) under every call narrower than ``rho`` pixels
    (``width_px``: each shown call's width at the bound of the view's scale, never less
    than what it is drawn at), folding by ``fold`` as the view's fold stage will
    (`fold.fold_mask`: the envelopes count folded and unfolded levels as it places them)."""
    n = int(sel.idx.size)
    width_px = np.ascontiguousarray(width_px, np.float64)
    parent = np.ascontiguousarray(sel.parent, np.int32)
    if n == 0 or not (width_px < rho).any():
        return Cut(sel, Envelopes.none(n), np.arange(n, dtype=np.int64), n)
    _, mask = fold_mask(sel.trace, sel.idx, fold)
    _, local_end = depth_and_end_from_parent(parent)
    keep, first, count, pool_a, pool_b, pool_u, n_under = subpixel_stubs(
        parent, local_end, width_px, np.ascontiguousarray(mask, np.bool_), float(rho), ENVELOPE_MAX, CUT_WORK * n)
    kept, kept_parent = kept_tree(keep, parent)
    if kept.size == n:
        return Cut(sel, Envelopes.none(n), kept, n)
    env = Envelopes(first[kept], count[kept], pool_a, pool_b, pool_u, n_under[kept])
    cut = replace(sel, idx=sel.idx[kept], parent=kept_parent.astype(np.int32), lane=sel.lane[kept], envelopes=env)
    return Cut(cut, env, kept, n)


@dataclass
class Stalks:
    """The stalks of a figure, merged per pixel column (`stalk_columns`)."""

    lane: np.ndarray  # int64
    start: np.ndarray  # µs, clipped to the window
    end: np.ndarray
    bottom: np.ndarray  # levels above the lane base: the stubs' top
    top: np.ndarray  # levels: the highest the merged envelopes reach
    rep: np.ndarray  # int64: the widest stub of the column (a shown call)
    n_calls: np.ndarray  # int64: the calls the column stands for (stubs and what lies under them)

    def __len__(self) -> int:
        return int(self.start.size)


def stalk_columns(sel, fold, us_per_px: float) -> Stalks:
    """The stalks of the stubs of a cut selection ``sel`` (from the stub's top, bottom +
    height in ``fold``, to ``fold.stalk_top``) merged per lane, stub top and pixel column
    (``us_per_px`` µs a pixel): one stalk per column of stubs standing at one height, as
    tall as the tallest."""
    st = fold.stalk_top
    if st is None or sel.envelopes is None:
        return _no_stalks()
    base = fold.bottom + fold.height
    s = np.flatnonzero(st > base + 1e-9)
    if s.size == 0:
        return _no_stalks()
    tr = sel.trace
    i = sel.idx[s]
    start = np.maximum(tr.start[i], sel.t0)
    end = np.minimum(tr.end[i], sel.t1)
    lane = sel.lane[s].astype(np.int64)
    col = np.floor((0.5 * (start + end) - sel.t0) / max(float(us_per_px), 1e-300)).astype(np.int64)
    level = np.round(base[s] * 4096.0).astype(np.int64)
    order = np.lexsort((col, level, lane))
    lane, level, col = lane[order], level[order], col[order]
    heads = np.flatnonzero(np.r_[True, (lane[1:] != lane[:-1]) | (level[1:] != level[:-1]) | (col[1:] != col[:-1])])
    s, start, end = s[order], start[order], end[order]
    width = end - start
    top = np.maximum.reduceat(st[s], heads)
    # the widest stub of each column: its call represents it (colour, picking)
    seg = np.repeat(np.arange(heads.size), np.diff(np.r_[heads, s.size]))
    widest = np.lexsort((-width, seg))
    rep = s[widest[np.r_[True, seg[widest][1:] != seg[widest][:-1]]]]
    n_calls = np.add.reduceat(1 + sel.envelopes.n_under[s], heads)
    return Stalks(lane[heads], np.minimum.reduceat(start, heads), np.maximum.reduceat(end, heads),
                  base[s[heads]], top, rep.astype(np.int64), n_calls.astype(np.int64))


def _no_stalks() -> Stalks:
    z = np.zeros(0)
    zi = np.zeros(0, np.int64)
    return Stalks(zi, z, z, z, z, zi, zi)
