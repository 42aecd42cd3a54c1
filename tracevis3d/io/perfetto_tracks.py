"""The tracks of a Perfetto trace (`tracevis3d.io.perfetto`): TrackDescriptors by uuid, each
event's track, the threads (pid, tid) and processes with their names.

As trace processor (``track_event_tracker.cc``): a descriptor may come many times (Chrome
re-emits them): the last one of a uuid says what the track is, the last non-empty name is its
name; a track's thread and process are those of the nearest track up its ``parent_uuid`` chain
that is a thread (or a process) track (`kernels.perfetto_tracks.nearest_marked`, cycles cut).
Events of the legacy form (no uuid: the sequence's ThreadDescriptor, or ``pid_override`` /
``tid_override``) are on the thread (pid, tid) itself.
"""
from __future__ import annotations

import os

import numpy as np

from ..kernels import jsonspans as jsp
from ..kernels import perfetto_tracks as pt
from ..kernels import perfetto_layout as pl
from .perfetto_text import CHROME_PROCESS_TYPES, packet_at

_COUNTER_TYPE_NAMES = {1: "thread_time", 2: "thread_instruction_count"}
_UNITS = {1: "ns", 2: "count", 3: "bytes"}


def _last_per_key(keys: np.ndarray, values: np.ndarray, valid: np.ndarray, n_keys: int) -> np.ndarray:
    """Per key (0 .. n_keys-1) the value of its last row (file order) that is ``valid``; -1 none."""
    out = np.full(n_keys, -1, np.int64)
    idx = np.flatnonzero(valid & (keys >= 0))
    if idx.size:
        k = keys[idx]
        o = np.argsort(k, kind="stable")
        k = k[o]
        last = np.ones(k.size, bool)
        last[:-1] = k[1:] != k[:-1]
        out[k[last]] = values[idx[o][last]]
    return out


class Tracks:
    """Per event: ``track`` (index into the track table; -1 for an event of the legacy form) and
    ``thread_key`` (index into the (pid, tid) keys when it is on a thread, else -1).  Per track:
    ``tr_uuid``, ``tr_kind`` (`perfetto_layout.TK_*`), ``tr_pid`` (its process, -1 none), ``tr_key``
    (its nearest thread's key, -1 none) and the counter fields.  Per thread key: ``key_pid``,
    ``key_tid``, names via `thread_table`."""

    def __init__(self, buf, ev, ax, td, text, rep, seed, ok):
        self.text = text
        self.ax = ax
        n_ev = ev.shape[1]
        sp_len = text.len
        flags = td[pl.TD_FLAGS]
        kind = td[pl.TD_KIND]
        # ---- the tracks with a uuid: the last descriptor of each says what it is
        urow = np.flatnonzero((flags & 1) != 0)
        uu = td[pl.TD_UUID, urow]
        o = np.lexsort((urow, uu))
        urow, uu = urow[o], uu[o]
        new = np.ones(uu.size, bool)
        new[1:] = uu[1:] != uu[:-1]
        uuids = uu[new]
        grp = np.cumsum(new) - 1
        n_known = uuids.size
        last = np.full(n_known, -1, np.int64)
        last[grp] = urow  # ascending rows: the last write of a group is its last row
        # each event's track; uuids no descriptor describes get tracks of their own
        bits = ev[pl.C_BITS]
        is_uuid = ((bits >> pl.B_TKIND) & 3) == pl.K_UUID
        ev_uuid = ev[pl.C_TRACK]
        track = np.full(n_ev, -1, np.int64)
        r = np.flatnonzero(is_uuid)
        pos = np.minimum(np.searchsorted(uuids, ev_uuid[r]), max(n_known - 1, 0))
        found = (uuids[pos] == ev_uuid[r]) if n_known else np.zeros(r.size, bool)
        track[r[found]] = pos[found]
        miss = r[~found]
        unknown = np.unique(ev_uuid[miss]) if miss.size else np.zeros(0, np.int64)
        if miss.size:
            track[miss] = n_known + np.searchsorted(unknown, ev_uuid[miss])
            seen = miss[ok[miss] & (ev_uuid[miss] != 0)]  # uuid 0: the implicit global track
            if seen.size:
                rep.add("unknown_track", int(seen.size), f"track_uuid {int(ev_uuid[seen[0]]) & 0xFFFFFFFFFFFFFFFF}, "
                                                         f"{packet_at(ev[pl.C_OFF, seen[0]])}")
        self.track = track
        n_tr = n_known + unknown.size
        self.n_tracks = n_tr

        def col(c, fill=-1):
            out = np.full(n_tr, fill, np.int64)
            out[:n_known] = td[c, last]
            return out

        self.tr_uuid = np.concatenate([uuids, unknown]).astype(np.int64)
        self.tr_kind = col(pl.TD_KIND, pl.TK_PLAIN)
        self.tr_ctype = col(pl.TD_CTYPE, 0)
        self.tr_cunit = col(pl.TD_CUNIT, 0)
        self.tr_cmult = col(pl.TD_CMULT, 1)
        self.tr_cincr = np.zeros(n_tr, bool)
        self.tr_cincr[:n_known] = (flags[last] & 4) != 0
        self.tr_unitname = col(pl.TD_UNITNAME)
        self.tr_unknown = np.arange(n_tr) >= n_known
        name_span = td[pl.TD_NAME, urow]
        nonempty = (name_span >= 0) & (sp_len[np.maximum(name_span, 0)] > 0 if sp_len.size else False)
        self.tr_name = np.full(n_tr, -1, np.int64)
        self.tr_name[:n_known] = _last_per_key(grp, name_span, nonempty, n_known)
        # parents, then each track's thread and process up the chain
        parent = np.full(n_tr, -1, np.int64)
        has_par = (flags[last] & 2) != 0
        if n_known:
            pu = td[pl.TD_PARENT, last]
            pp = np.minimum(np.searchsorted(uuids, pu), n_known - 1)
            parent[:n_known] = np.where(has_par & (uuids[pp] == pu), pp, -1)
        is_thread = self.tr_kind == pl.TK_THREAD
        has_pid = is_thread | (self.tr_kind == pl.TK_PROCESS)
        thread_anc, cut1 = pt.nearest_marked(parent, is_thread)
        pid_anc, cut2 = pt.nearest_marked(parent, has_pid)
        cut = cut1 | cut2
        if cut.any():
            rep.add("track_cycle", int(cut.sum()), f"track uuid {int(self.tr_uuid[np.flatnonzero(cut)[0]])}")
        pid = col(pl.TD_PID)
        self.tr_pid = np.where(pid_anc >= 0, pid[np.maximum(pid_anc, 0)], -1)
        tid = col(pl.TD_TID)
        # ---- thread keys: (pid, tid) of the thread descriptors and of the legacy-form events
        trow = np.flatnonzero(((kind == pl.TK_THREAD) & ((flags & 1) != 0)) | (kind == pl.TK_LEGACY_THREAD))
        lrow = np.flatnonzero(~is_uuid)
        l_aux = ev[pl.C_AUX, lrow]
        l_tid = ax[pl.AX_TID, l_aux] if lrow.size else np.zeros(0, np.int64)
        kp = np.concatenate([td[pl.TD_PID, trow], ev[pl.C_TRACK, lrow]]).astype(np.int64)
        kt = np.concatenate([td[pl.TD_TID, trow], l_tid]).astype(np.int64)
        kid, kfirst = jsp.intern_pairs(kp, kt, seed) if kp.size else (np.zeros(0, np.int32), np.zeros(0, np.int64))
        self.n_thread_keys = int(kfirst.size)
        self.key_pid = kp[kfirst]
        self.key_tid = kt[kfirst]
        row_key = np.full(td.shape[1], -1, np.int64)
        row_key[trow] = kid[:trow.size]
        self.tr_key = np.full(n_tr, -1, np.int64)  # the nearest thread's key
        known_thread = thread_anc >= 0
        anc_row = np.where(known_thread, last[np.minimum(np.maximum(thread_anc, 0), max(n_known - 1, 0))]
                           if n_known else -1, -1)
        self.tr_key[known_thread] = row_key[anc_row[known_thread]]
        thread_key = np.full(n_ev, -1, np.int64)
        on = track >= 0
        on_thread_track = np.zeros(n_ev, bool)
        on_thread_track[on] = is_thread[track[on]]
        thread_key[on_thread_track] = self.tr_key[track[on_thread_track]]
        thread_key[lrow] = kid[trow.size:]
        self.thread_key = thread_key
        self.tr_tid = tid
        # names: the last non-empty thread name of a key; process names by pid
        sub = td[pl.TD_SUBNAME]
        sub_ok = (sub >= 0) & (sp_len[np.maximum(sub, 0)] > 0 if sp_len.size else False)
        self.key_name = _last_per_key(row_key, sub, sub_ok, self.n_thread_keys)
        self.key_track_name = np.full(self.n_thread_keys, -1, np.int64)  # a thread track's own name
        tn = self.tr_name[:n_known]
        tk = self.tr_key[:n_known]
        use = is_thread[:n_known] & (tk >= 0) & (tn >= 0)
        self.key_track_name[tk[use]] = tn[use]
        self.key_sort = _last_per_key(row_key, td[pl.TD_SORT], td[pl.TD_SORT] != 0, self.n_thread_keys)
        prow = np.flatnonzero(((kind == pl.TK_PROCESS) & ((flags & 1) != 0)) | (kind == pl.TK_LEGACY_PROCESS))
        self._process_rows(td, prow, sub, sub_ok)
        self.uuids = uuids

    def _process_rows(self, td, prow, sub, sub_ok):
        """Each process's name: its descriptors' last non-empty process_name, else Chrome's process
        type, else its command line (the program and its ``--type=``)."""
        pids = np.unique(td[pl.TD_PID, prow])
        pk = np.searchsorted(pids, td[pl.TD_PID, prow])
        name = _last_per_key(pk, sub[prow], sub_ok[prow], pids.size)
        ctype = _last_per_key(pk, td[pl.TD_CTYPE, prow], td[pl.TD_CTYPE, prow] > 0, pids.size)
        cmd0 = _last_per_key(pk, td[pl.TD_CMD0, prow], td[pl.TD_CMD0, prow] >= 0, pids.size)
        ctyp = _last_per_key(pk, td[pl.TD_CMDTYPE, prow], td[pl.TD_CMDTYPE, prow] >= 0, pids.size)
        self.process_names: dict = {}
        for k, p in enumerate(pids.tolist()):
            nm = self.text.one(int(name[k])) if name[k] >= 0 else ""
            if not nm and ctype[k] in CHROME_PROCESS_TYPES:
                nm = CHROME_PROCESS_TYPES[int(ctype[k])]
            if not nm and cmd0[k] >= 0:
                nm = os.path.basename(self.text.one(int(cmd0[k])).split(" ")[0])
                if ctyp[k] >= 0:
                    nm = f"{nm} {self.text.one(int(ctyp[k]))}"
            if " --" in nm:  # a command line as the name: its program and --type
                ct_txt = self.text.one(int(ctyp[k])) if ctyp[k] >= 0 else ""
                nm = os.path.basename(nm.split(" ")[0]) + (f" {ct_txt}" if ct_txt else "")
            if nm:
                self.process_names[int(p)] = nm

    def process_name(self, pid: int) -> str:
        return self.process_names.get(int(pid), f"{int(pid)}")

    def thread_table(self, used: np.ndarray, weight: np.ndarray | None = None, max_lanes: int | None = None,
                     rep=None) -> tuple[np.ndarray, dict]:
        """The thread table of the thread keys ``used`` (bool per key), ordered by (pid, tid):
        (rank of each key, -1 for the others; {"pid", "tid", "names", "sort", "process_names"}).
        Past ``max_lanes`` threads (`limits.max_lanes_read`) the ``max_lanes`` - 1 of the largest
        ``weight`` (events per key; ties: the first key) keep theirs and the others share one
        lane `lanes.OTHER_LANES`, last (pid and tid 0), repair ``lanes_capped`` in ``rep``: each
        thread costs its name and row here and its tables in every view after."""
        keys = np.flatnonzero(used)
        merged = np.zeros(0, np.int64)
        if max_lanes is not None and keys.size > max_lanes:
            from .lanes import kept_lanes, lanes_capped_action

            keep = kept_lanes(np.asarray(weight, np.float64)[keys], int(max_lanes) - 1)
            merged, keys = keys[~keep], keys[keep]
            rep.add("lanes_capped", int(merged.size), "the whole file")
            rep.items["lanes_capped"]["action"] = lanes_capped_action(
                "threads", int(keys.size + merged.size), int(merged.size), int(max_lanes))
        o = np.lexsort((self.key_tid[keys], self.key_pid[keys]))
        keys = keys[o]
        rank = np.full(max(self.n_thread_keys, 1), -1, np.int64)
        rank[keys] = np.arange(keys.size)
        rank[merged] = keys.size
        names = []
        for k in keys.tolist():
            s = self.key_name[k]
            nm = self.text.one(int(s)) if s >= 0 else ""
            if not nm and self.key_track_name[k] >= 0:
                nm = self.text.one(int(self.key_track_name[k]))
            names.append(nm or f"{int(self.key_tid[k])}")
        pids = self.key_pid[keys].astype(np.int64)
        table = {"pid": pids, "tid": self.key_tid[keys].astype(np.int64), "names": names,
                 "sort": np.where(self.key_sort[keys] >= 0, self.key_sort[keys], 0).astype(np.int32),
                 "process_names": [self.process_name(p) for p in pids.tolist()]}
        if merged.size:  # the lane of the threads past max_lanes, last
            from .lanes import OTHER_LANES

            for k, v in (("pid", 0), ("tid", 0), ("sort", 0)):
                table[k] = np.append(table[k], v).astype(table[k].dtype)
            table["names"].append(OTHER_LANES)
            table["process_names"].append("")
        return rank, table

    def track_name(self, t: int) -> str:
        """A track's name ("" when it has none)."""
        s = self.tr_name[t]
        return self.text.one(int(s)) if s >= 0 else ""

    def counter_name(self, t: int) -> str:
        """A counter track's name: its own, else its counter type's ("thread_time"), else "counter
        <uuid>"; a thread's counter says which thread ("thread_time (tid 12)")."""
        nm = self.track_name(t) or _COUNTER_TYPE_NAMES.get(int(self.tr_ctype[t]), "")
        nm = nm or f"counter {int(self.tr_uuid[t]) & 0xFFFFFFFFFFFFFFFF}"
        k = self.tr_key[t]
        if k >= 0:
            nm = f"{nm} (tid {int(self.key_tid[k])})"
        return nm

    def counter_unit(self, t: int) -> str:
        s = self.tr_unitname[t]
        if s >= 0:
            return self.text.one(int(s))
        return _UNITS.get(int(self.tr_cunit[t]), "")

    def uuid_index(self, uuid: np.ndarray) -> np.ndarray:
        """The track of each uuid (-1 when none has it)."""
        u = self.tr_uuid
        o = np.argsort(u, kind="stable")
        su = u[o]
        if not su.size:
            return np.full(uuid.shape[0], -1, np.int64)
        pos = np.minimum(np.searchsorted(su, uuid), su.size - 1)
        return np.where(su[pos] == uuid, o[pos], -1)
