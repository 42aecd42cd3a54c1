"""Geometry stage of the icicle: the drawn calls, sub-pixel clusters and their boxes (bpy-free).

After folding, the drawn calls are the unfolded ones and the first call of each folded run
(its band).  Each is a box: x from its time (clipped to the window), z from its place in
its lane (`fold`), y from the front plane back by its measure.  Calls narrower than
``cluster_px`` pixels are merged per (lane, drawn level) into cluster boxes that take the
colour of the function holding most of their time, lightened (SyncTrace IV-B2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.drawn import dense_ranks_in_range, gather_drawn, level_key_ranks
from ..kernels.sorted_lookup import positions_in_sorted
from .cluster import cluster_subpixel_calls
from .lazy_column import LazyColumn
from .spec import InstanceLayer

BOX_FILL = 0.88  # a box's height relative to its slot


@dataclass
class Drawn:
    """The drawn calls (arrays over them) and where they are."""

    idx: np.ndarray  # calls of the selection's trace
    call_id: np.ndarray  # int32: the same calls in the loaded trace (picking, panel)
    local: np.ndarray  # position of each drawn call among the shown calls
    lane: np.ndarray
    start: np.ndarray  # clipped to the window
    end: np.ndarray
    func: np.ndarray
    slot: np.ndarray  # colour slot
    folded: np.ndarray  # a folded run's band
    run_levels: np.ndarray  # levels of a band's run
    level_bottom: np.ndarray  # in levels above the lane base
    level_height: np.ndarray
    level_id: np.ndarray  # int32, equal for calls drawn at the same height
    ext_unit: np.ndarray  # measure, normalised to (0.12 .. 1]
    # after `place`, read where indexed (`AtIndex`: ``d.bottom[k]``; the stages read the boxes
    # and names they draw, not every call: no three arrays over 10^8 drawn calls)
    bottom: object = None  # world z of the slot's bottom
    height: object = None  # world height of the slot
    ext: object = None  # world depth
    #: where the fields lie, for the kernels that read them in place (`DrawnSource`)
    source: object = None

    def place(self, frame) -> "Drawn":
        lane, level_bottom, level_height, ext_unit = self.lane, self.level_bottom, self.level_height, self.ext_unit
        z_base, h, depth = frame.z_base, frame.h, frame.depth
        self.bottom = AtIndex(lambda k: z_base[lane[k]] + level_bottom[k] * h)
        self.height = AtIndex(lambda k: level_height[k] * h)
        self.ext = AtIndex(lambda k: depth * ext_unit[k])
        return self

    @property
    def face_low(self) -> np.ndarray:
        """The world z of every drawn box's lower edge (an array over all of them: a stage reads
        `face_low_at`)."""
        return self.face_low_at(slice(None))

    @property
    def face_high(self) -> np.ndarray:
        return self.face_high_at(slice(None))

    def position_of(self, shown) -> np.ndarray:
        """Where each of the shown calls ``shown`` stands among the drawn calls (``local`` is
        ascending), -1 for one not drawn: a galloping search (`positions_in_sorted`: ascending
        ``shown``, as the stages ask, costs a merge, not a binary search each), no table over
        every shown call."""
        shown = np.asarray(shown, np.int64)
        if shown.ndim != 1:
            return self.position_of(shown.ravel()).reshape(shown.shape)
        out = np.empty(shown.size, np.int64)
        positions_in_sorted(np.ascontiguousarray(self.local), np.ascontiguousarray(shown), out)
        return out

    def face_low_at(self, k):
        """`face_low` of the drawn calls ``k`` (an index or an index array), without the array
        over every drawn call (the same value, element by element)."""
        return self.bottom[k] + (1 - BOX_FILL) / 2 * self.height[k]

    def face_high_at(self, k):
        """`face_high` of the drawn calls ``k`` (as `face_low_at`)."""
        return self.bottom[k] + (1 + BOX_FILL) / 2 * self.height[k]


@dataclass
class DrawnSource:
    """Where a `Drawn`'s fields lie, for a kernel that reads them in place
    (`kernels.overview_clusters`): drawn call k stands at position ``p = pos[k]`` of ``lane``
    and is call ``c = p`` (``whole``) or ``idx[p]`` of ``start``, ``end`` and ``func``, its
    time clipped to [t0, t1].  Gathered fields: ``pos`` 0..n-1 and the fields themselves."""

    pos: np.ndarray
    idx: np.ndarray
    whole: bool
    start: np.ndarray
    end: np.ndarray
    func: np.ndarray
    lane: np.ndarray
    t0: float
    t1: float
    #: by position: the slot's bottom in levels, its height's code into ``htable`` (per lane,
    #: `fold.LevelHeights`), the measure (`Drawn.place`)
    bottom: np.ndarray = None
    hcode: np.ndarray = None
    htable: np.ndarray = None
    ext_unit: np.ndarray = None
    folded: np.ndarray = None  # by position: a folded run's band
    #: by call: its id in the loaded trace (empty: the call itself)
    orig: np.ndarray = None


#: stages that read every drawn call read them this many at a time (a chunk's temporaries, not 10^8 calls')
DRAWN_CHUNK = 1 << 20


def drawn_chunks(n: int) -> list:
    """Slices of ``range(n)`` (the drawn calls), `DRAWN_CHUNK` at a time."""
    return [slice(a, min(a + DRAWN_CHUNK, n)) for a in range(0, n, DRAWN_CHUNK)]


class AtIndex:
    """A per-drawn-call formula read only where it is indexed: ``AtIndex(f)[k]`` is ``f(k)``,
    the elements ``k`` of the array the formula would make, without making it (a stage that
    reads a few of 10^7 calls' faces holds no array over all of them)."""

    def __init__(self, at):
        self._at = at

    def __getitem__(self, k):
        return self._at(k)


def dense_ranks(v: np.ndarray) -> np.ndarray:
    """The rank of each value among the distinct values of ``v`` (``np.unique``'s inverse),
    through a presence table over [min, max] when that range is at most a few times the
    array (O(n), no sort: the levels of 10^7 calls), else by sorting."""
    if v.size == 0:
        return np.zeros(0, np.int64)
    lo, hi = int(v.min()), int(v.max())
    if hi - lo > max(4 * v.size, 1 << 16):
        return np.unique(v, return_inverse=True)[1]
    return dense_ranks_in_range(np.ascontiguousarray(v), lo, hi)


def drawn_calls(sel, fold, slot, ext_unit, gathered: bool = True) -> Drawn:
    """The calls a figure draws (unfolded calls and run bands), from the select and fold stages.

    ``gathered=False``: only ``local`` and ``level_id`` are arrays; every other field is a
    `ShownColumn`, read from the selection, the fold, ``slot`` and ``ext_unit`` where indexed
    (the same values, element by element): a whole-trace overview of 10^8 calls, nearly all
    drawn, holds no eleven arrays over them (81 bytes a drawn call)."""
    if gathered:
        dr = np.flatnonzero(fold.drawn)
        tr = sel.trace
        orig = np.zeros(0, np.int64) if sel.orig is None else sel.orig
        idx, call_id, lane, start, end, func, slot_d, folded, run_levels, bottom, height, ext, key = gather_drawn(
            dr, sel.idx, orig, sel.lane, tr.start, tr.end, tr.func, slot, fold.folded, fold.run_levels,
            fold.bottom, np.asarray(fold.height), np.asarray(ext_unit, np.float64), float(sel.t0), float(sel.t1),
            4096.0)
        level_id = dense_ranks(key)
        # (the selection's index dtype: the kernels that read a source compile once for both kinds)
        source = DrawnSource(np.arange(dr.size, dtype=np.int32), np.zeros(0, sel.idx.dtype), True, start, end, func, lane,
                             float(sel.t0), float(sel.t1), bottom, fold.height.code[dr], fold.height.table, ext, folded,
                             call_id)
        return Drawn(idx, call_id, dr, lane, start, end, func, slot_d, folded, run_levels, bottom, height,
                     level_id.astype(np.int32, copy=False), ext, source=source)
    return shown_drawn_calls(sel, fold, slot, ext_unit)


def shown_drawn_calls(sel, fold, slot, ext_unit) -> Drawn:
    """`drawn_calls` with its fields read where indexed (``gathered=False``): ``local`` (the
    drawn positions among the shown calls, int32 when they fit) and ``level_id`` are arrays,
    the rest `ShownColumn`s giving `gather_drawn`'s values (``level_key`` = round(bottom ·
    4096), half to even as `np.rint`)."""
    dr = np.flatnonzero(fold.drawn)
    local = dr.astype(np.int32) if dr.size and int(dr[-1]) < np.iinfo(np.int32).max else dr
    del dr
    tr, t0, t1 = sel.trace, float(sel.t0), float(sel.t1)
    sel_idx, sel_lane, orig = sel.idx, sel.lane, sel.orig
    from .fold import every_call

    whole = every_call(sel_idx, len(tr))  # a whole trace's figure: the shown position is the call

    def calls(p):  # the selection's trace's calls at shown positions p
        if whole:
            return p.astype(np.int64, copy=False) if isinstance(p, np.ndarray) else np.int64(p)
        return sel_idx[p].astype(np.int64, copy=False) if isinstance(p, np.ndarray) else np.int64(sel_idx[p])

    def call_id(p):
        i = calls(p)
        return (i if orig is None else orig[i]).astype(np.int32)

    def column(fn, dtype):
        return ShownColumn(fn, local, dtype)

    level_id = drawn_level_ids(fold.bottom, local)
    folded, run_levels, bottom, height = fold.folded, fold.run_levels, fold.bottom, fold.height
    return Drawn(
        column(calls, np.dtype(np.int64)), column(call_id, np.dtype(np.int32)), local,
        column(lambda p: sel_lane[p], sel_lane.dtype),
        column(lambda p: np.maximum(tr.start[calls(p)], t0), np.dtype(np.float64)),
        column(lambda p: np.minimum(tr.end[calls(p)], t1), np.dtype(np.float64)),
        column(lambda p: tr.func[calls(p)], tr.func.dtype), column(lambda p: slot[p], slot.dtype),
        column(lambda p: folded[p], folded.dtype), column(lambda p: run_levels[p], run_levels.dtype),
        column(lambda p: bottom[p], np.dtype(np.float64)), column(lambda p: height[p], np.dtype(np.float64)),
        level_id, column(lambda p: ext_unit[p], np.dtype(np.float64)),
        source=DrawnSource(local, sel_idx, whole, tr.start, tr.end, tr.func, sel_lane, t0, t1, bottom, height.code,
                           height.table, ext_unit, folded, np.zeros(0, np.int64) if orig is None else orig))


def drawn_level_ids(bottom: np.ndarray, local: np.ndarray) -> np.ndarray:
    """`dense_ranks` (int32) of the drawn calls' level keys ``round(bottom[local] · 4096)``
    (``bottom``: every shown call's, ``local``: the drawn ones' positions), read where they lie
    into a presence table over the shown calls' range of keys (the same ranks: a rank counts
    the distinct drawn keys below), no array of keys over every drawn call
    (`kernels.drawn.level_key_ranks`); a range over 4 keys a call: the keys, ranked by
    `dense_ranks`."""
    n = int(local.shape[0])
    if n == 0:
        return np.zeros(0, np.int32)
    lo, hi = int(np.rint(bottom.min() * 4096.0)), int(np.rint(bottom.max() * 4096.0))
    if hi - lo > max(4 * n, 1 << 16):
        return dense_ranks(np.rint(bottom[local] * 4096.0).astype(np.int64)).astype(np.int32, copy=False)

    ok, ranks = level_key_ranks(np.asarray(bottom, np.float64), local, 4096.0, lo, hi)
    if not ok:  # (finite bottoms give keys in [lo, hi]; a NaN or infinite one failed above)
        raise ValueError("drawn_level_ids: a level key outside the shown calls' range")
    return ranks


class ShownColumn(LazyColumn):
    """An array over the drawn calls that is not held: ``col[k]`` is ``fn(local[k])``, ``fn``
    reading the shown calls' arrays at those positions; used whole (numpy functions and
    operators, methods such as ``.sum()``) it is made for that use and dropped after.  A
    write into it is an error (it has nothing to write to)."""

    WRITE_ERROR = "a drawn-call column read from the shown calls cannot be written"

    def __init__(self, fn, local, dtype):
        self._fn, self._local, self.dtype = fn, local, np.dtype(dtype)

    def __getitem__(self, k):
        return self._fn(self._local[k])

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._fn(self._local), self.dtype)
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self) -> int:
        return int(self._local.shape[0])

    def __iter__(self):
        return iter(np.asarray(self))

    def __getattr__(self, name):  # the ndarray's methods (sum, max, astype, ...), on the made array
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)


@dataclass
class Clusters:
    """Sub-pixel calls merged per (lane, level) (`cluster.cluster_subpixel_calls`)."""

    cluster_of: np.ndarray  # per drawn call, -1 when drawn as its own box
    lane: np.ndarray
    level: np.ndarray
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    rep: np.ndarray  # the longest call (its level and height)
    uniform: np.ndarray
    dom: np.ndarray  # a call of the function holding most of the cluster's time
    dom_share: np.ndarray
    time: np.ndarray  # total time of the cluster's calls

    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def single(self) -> np.ndarray:
        """Drawn calls that are boxes of their own."""
        return self.cluster_of < 0


def cluster_calls(d: Drawn, frame, cluster_px: float) -> Clusters:
    """Merge the drawn calls narrower than ``cluster_px`` pixels of their lane.

    A lane at a time (`cluster_subpixel_calls` opens no cluster across lanes, and a
    cluster's members are in one lane): the clusters, their numbering and their dominant
    functions are those of one pass over every drawn call, while the arrays the pass makes
    over the calls (~60 bytes a drawn call) are over one lane's."""
    if cluster_px > 0 and d.source is not None:
        return _clusters_in_place(d, (cluster_px * frame.us_per_px).astype(np.float64))
    n = d.idx.size
    lane = np.asarray(d.lane)
    cuts = np.concatenate(([0], np.flatnonzero(lane[1:] != lane[:-1]) + 1, [n])) if n else np.zeros(1, np.int64)
    del lane
    min_w = (cluster_px * frame.us_per_px).astype(np.float64) if cluster_px > 0 else None
    of = np.full(n, -1, np.int32)
    parts: list = []
    nc = 0
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        start, end = np.asarray(d.start[a:b]), np.asarray(d.end[a:b])
        func = np.asarray(d.func[a:b])
        if min_w is not None:
            of_l, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform = cluster_subpixel_calls(
                start, end, np.ascontiguousarray(d.level_id[a:b]), np.asarray(d.lane[a:b]), min_w, min_w, func)
        else:
            of_l = np.full(b - a, -1, np.int32)
            c_lane = c_level = c_count = c_rep = np.zeros(0, np.int32)
            c_uniform = np.zeros(0, np.bool_)
            c_start = c_end = np.zeros(0)
        k = c_start.size
        dur = end - start
        del start, end
        dom, share = dominant_member(of_l, func, dur, k)
        member = of_l >= 0
        time = np.bincount(of_l[member], weights=dur[member], minlength=k) if k else np.zeros(0)
        of[a:b] = np.where(member, of_l + np.int32(nc), of_l)
        parts.append((c_lane, c_level, c_start, c_end, c_count, c_rep + np.int32(a), c_uniform, dom + a, share, time))
        nc += k
        del of_l, func, dur, member
    if not parts:
        return Clusters(of, *(np.zeros(0, t) for t in (np.int32, np.int32, np.float64, np.float64, np.int32,
                                                        np.int32, np.bool_, np.int64, np.float64, np.float64)))
    return Clusters(of, *(np.concatenate(c) for c in zip(*parts)))


def _clusters_in_place(d: Drawn, min_w: np.ndarray) -> Clusters:
    """`cluster_calls` in one pass over the drawn calls' fields where they lie
    (`kernels.overview_clusters.drawn_clusters`): the same clusters, numbers and dominant
    members, no array over the drawn calls but ``cluster_of``."""
    from ..kernels.overview_clusters import drawn_clusters

    src = d.source
    func = np.asarray(src.func)
    n_funcs = max(int(func.max(initial=-1)) + 1, 1)
    (of, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform, dom, share, time) = drawn_clusters(
        src.pos, src.idx, bool(src.whole), np.asarray(src.start), np.asarray(src.end), float(src.t0), float(src.t1),
        func, np.asarray(src.lane), np.ascontiguousarray(d.level_id), min_w, n_funcs)
    return Clusters(of, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform, dom, share, time)


def dominant_member(cluster_of, func, dur, n_clusters, calls=None) -> tuple:
    """Per cluster: a member of the function holding most of its time, that share, and
    (with ``calls``, each member's number of calls) how many calls that function has
    (`kernels.dominant.dominant_members`; a cluster with no member: 0 and share 0)."""
    from ..kernels.dominant import dominant_members

    if n_clusters == 0:
        return (np.zeros(0, np.int64), np.zeros(0)) + ((np.zeros(0),) if calls is not None else ())
    def ints(x):  # int32 or int64 as they are (no copy of 10^6 drawn calls' arrays), else int64
        x = np.asarray(x)
        return np.ascontiguousarray(x) if x.dtype in (np.int32, np.int64) else np.ascontiguousarray(x, np.int64)

    of, f = ints(cluster_of), ints(func)
    n_funcs = max(int(f.max()) + 1, 1) if f.size else 1  # a scratch table per function: any bound will do
    c = np.zeros(0) if calls is None else np.ascontiguousarray(calls, np.float64)  # empty: one call each
    member, share, n_calls = dominant_members(of, f, np.ascontiguousarray(dur, np.float64), c, int(n_clusters), n_funcs)
    member = np.maximum(member, 0)
    return (member, share) if calls is None else (member, share, n_calls)


def _constant_attributes(extra: dict | None, n: int) -> dict:
    return {k: np.full(n, v, np.int32) for k, v in (extra or {}).items()}


def box_layer(d: Drawn, cl: Clusters, frame, t0: float, colouring, depth_of, name: str = "calls",
              extra: dict | None = None) -> InstanceLayer:
    """One box per drawn call that is not in a cluster (``extra``: constant int attributes)."""
    s = cl.single
    nb = int(s.sum())
    xs, xe = (d.start[s] - t0) * frame.scale_t, (d.end[s] - t0) * frame.scale_t
    from .box_overlap import call_ends_apart  # touching calls: no two sides in one plane

    xe = call_ends_apart(d.lane[s], d.bottom[s], d.height[s], xs, xe, frame.cam)
    pos = np.empty((nb, 3), np.float32)
    pos[:, 0] = (xs + xe) / 2
    pos[:, 1] = d.ext[s] / 2
    pos[:, 2] = d.bottom[s] + d.height[s] / 2
    sc = np.empty((nb, 3), np.float32)
    sc[:, 0] = np.maximum(xe - xs, 1e-6)
    sc[:, 1] = d.ext[s]
    sc[:, 2] = BOX_FILL * d.height[s]
    col = np.ones((nb, 4), np.float32)
    col[:, :3] = colouring.slot_rgb[d.slot[s]]
    return InstanceLayer(
        name, pos, sc, col, d.slot[s].astype(np.int32), list(colouring.slot_names),
        {"call_index": d.call_id[s], "depth": depth_of(d.idx[s]).astype(np.int32),
         "lane": d.lane[s].astype(np.int32), "folded_levels": d.run_levels[s].astype(np.int32),
         **_constant_attributes(extra, nb)})


def cluster_layer(d: Drawn, cl: Clusters, frame, t0: float, colouring, cluster_px: float, time_length: float,
                  name: str = "clusters", extra: dict | None = None):
    """One lighter box per cluster, at least ``cluster_px`` pixels wide; returns the layer and
    the boxes' x extents (x0, x1) for labelling."""
    nc = len(cl)
    cxs, cxe = (cl.start - t0) * frame.scale_t, (cl.end - t0) * frame.scale_t
    cw = np.maximum(cxe - cxs, cluster_px * frame.px[cl.lane] / frame.foreshorten) if nc else np.zeros(0)
    cext = np.zeros(nc)
    s = cl.single
    from ..kernels.overview_sums import max_at

    for part in drawn_chunks(s.size if nc else 0):  # each cluster's deepest member, a chunk at a time
        merged = np.flatnonzero(~s[part]) + part.start
        max_at(cext, cl.cluster_of[merged], np.asarray(d.ext[merged], np.float64))  # (`np.maximum.at`, in order)
    pos = np.empty((nc, 3), np.float32)
    sc = np.empty((nc, 3), np.float32)
    cx = np.minimum(np.maximum((cxs + cxe) / 2, cw / 2), time_length - cw / 2) if nc else np.zeros(0)
    if nc:  # widened clusters kept off their neighbours: coplanar faces would render by draw order
        from .box_overlap import cluster_extents_apart

        cx, cw = cluster_extents_apart(d, cl, frame, t0, cx, cw, time_length, BOX_FILL)
    if nc:
        pos[:, 0] = cx
        pos[:, 1] = cext / 2
        pos[:, 2] = d.bottom[cl.rep] + d.height[cl.rep] / 2
        sc[:, 0] = cw
        sc[:, 1] = cext
        sc[:, 2] = BOX_FILL * d.height[cl.rep]
        sc[cw <= 0] = 0.0  # trimmed away (covered by a call): no faces, not two coincident sides
    slot = d.slot[cl.dom] if nc else np.zeros(0, np.int32)
    col = np.ones((nc, 4), np.float32)
    if nc:
        col[:, :3] = colouring.cluster_rgb[slot]
    layer = InstanceLayer(
        name, pos, sc, col, slot.astype(np.int32), cluster_material_names(colouring),
        {"call_index": d.call_id[cl.rep] if nc else np.zeros(0, np.int32),
         "depth": cl.level.astype(np.int32), "lane": cl.lane.astype(np.int32),
         "call_count": cl.count.astype(np.int32), **_constant_attributes(extra, nc)})
    return layer, (cx - cw / 2, cx + cw / 2)


def cluster_material_names(colouring) -> list:
    return [f"{m}_cluster" for m in colouring.slot_names]


PARTIAL_MATERIAL = "TV3D_partial"
PARTIAL_RGBA = (0.06, 0.06, 0.07, 1.0)


def partial_marker_layer(d: Drawn, cl: Clusters, frame, t0: float, partial, name: str = "partial") -> InstanceLayer:
    """SEAT's partially-expanded state, visible: a dark tab in the top right corner of every
    own box whose call has hidden descendants (``partial``: bool per call of the
    selection's trace), 0.4 of the box's height, at most a quarter of its width and 6 px,
    standing slightly proud of the box's front face."""
    s = np.flatnonzero(cl.single & partial[d.idx]) if partial is not None else np.zeros(0, np.int64)
    n = s.size
    xs, xe = (d.start[s] - t0) * frame.scale_t, (d.end[s] - t0) * frame.scale_t
    px = frame.px[d.lane[s]] if n else np.zeros(0)
    w = np.minimum(0.25 * (xe - xs), 6.0 * px)
    hgt = 0.4 * BOX_FILL * d.height[s]
    pos = np.empty((n, 3), np.float32)
    sc = np.empty((n, 3), np.float32)
    pos[:, 0] = xe - w / 2
    pos[:, 1] = d.ext[s] / 2 - 0.02 * frame.h
    pos[:, 2] = d.face_high[s] - hgt / 2
    sc[:, 0] = np.maximum(w, 1e-6)
    sc[:, 1] = d.ext[s] + 0.04 * frame.h
    sc[:, 2] = hgt
    col = np.tile(np.asarray(PARTIAL_RGBA, np.float32), (n, 1))
    return InstanceLayer(name, pos, sc, col, np.zeros(n, np.int32), [PARTIAL_MATERIAL],
                         {"call_index": d.call_id[s].astype(np.int32)})
