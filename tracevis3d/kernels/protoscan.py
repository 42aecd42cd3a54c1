"""A Perfetto protobuf trace → flat tables, in one numba walk of the wire format.

`scan_trace` walks the ``Trace`` message's packets (field 1) and keeps, per TrackEvent, one
row of int64 columns (`perfetto_layout.C_*`: the packet's offset, its time on its clock, the sequence, the
type, the track, the name and category as indices into a table of byte spans, the args) —
no Python object per event.  What it follows is trace processor's reading of a packet
(``proto_trace_reader.cc`` ``ParsePacket``, ``track_event_tokenizer.cc``):

* per ``trusted_packet_sequence_id`` an incremental state: ``incremental_state_cleared`` or
  ``SEQ_INCREMENTAL_STATE_CLEARED`` starts a new generation (interned data and
  ``TracePacketDefaults`` start empty); ``previous_packet_dropped`` marks it invalid; a
  sequence starts invalid.  A packet flagged ``SEQ_NEEDS_INCREMENTAL_STATE`` on an invalid
  sequence is skipped (`R_NEEDS_STATE`), interned data on one is ignored;
* the fields of a packet are read in that order whatever their order on the wire: state
  flags, defaults, interned data, a clock snapshot (which ends the packet), the timestamp, the
  descriptors, the TrackEvent (writers append ``interned_data`` after the event);
* interned data (``event_names``, ``event_categories``, ``debug_annotation_names``,
  ``source_locations``, ``debug_annotation_string_values``) in a map keyed by (generation,
  kind, iid); an iid never defined is a repair (`R_UNDEF_NAME`, ...);
* times: the packet's ``timestamp`` on ``timestamp_clock_id``, else the sequence default's,
  else the trace clock (key 0); sequence-scoped clocks (64-127) keyed by (sequence, id), an
  incremental one adding each packet's value to its last (``unit_multiplier_ns`` applied, a
  ClockSnapshot on the sequence setting it); TrackEvent's ``timestamp_delta_us`` (from the
  sequence's ThreadDescriptor ``reference_timestamp_us``) and ``timestamp_absolute_us`` on
  MONOTONIC.  Every ClockSnapshot is kept (`cs`) for the conversion to the trace clock,
  done by the caller;
* the track: ``track_uuid``, else the defaults', else the legacy event's pid/tid overrides, else
  the sequence's ThreadDescriptor thread, else the implicit global track (uuid 0); counters
  need a uuid;
* legacy events (``legacy_event``): phases B/E/X/I/i/R/b/e/n/S/F/T/p mapped to types
  (`T_COMPLETE`, `T_ASYNC_*`), ``bind_id`` flows by direction; others counted as skipped.

Flows (``flow_ids``, ``terminating_flow_ids`` and their ``_old`` forms, legacy ``bind_id``),
extra counter values (``extra_counter_values`` with their uuids, or the defaults'), track
descriptors, clock snapshots, source locations and the JSON of ``chrome_events``'
``legacy_json_trace`` go to tables of their own; debug annotations to a JSON blob
(`perfetto_args.write_args`).  A malformed field anywhere stops the walk with an error at its
byte; a last packet cut by the end of the file is a truncation (what came before is kept).

The messages are read by `perfetto_fields` (defaults, interned data, clock snapshots, Chrome's
JSON), `perfetto_descriptors` (tracks, threads, processes) and `perfetto_event` (the TrackEvent);
the tables' layout is `perfetto_layout`.
"""
import numpy as np
from numba import njit

from .perfetto_layout import (AX_DUR, AX_ID, AX_SCOPE, AX_SRC, AX_TID, B_HAS_VALUE, B_IDKIND, B_INT_VALUE, B_ISCOPE,
                              B_NCAT, B_PHASE, B_TKIND, CLK_MONOTONIC, C_ARGS, C_AUX, C_BITS, C_CAT, C_CLK, C_NAME,
                              C_OFF, C_SEQ, C_TRACK, C_TS, FK_V1_IN, FK_V1_INOUT, FK_V1_OUT, FL_ID, FL_KIND, FL_ROW,
                              I_ERR_FIELD, I_ERR_MSG, I_ERR_POS, I_N_SKIP_PHASE, I_N_SKIP_TYPE, I_PACKETS, I_PRIMARY,
                              I_STATUS, I_TRUNC_POS, K_CAT, K_NAME, K_SRCLOC, K_THREAD, K_UUID, MSG_ANNOTATION,
                              MSG_CHROME, MSG_CLOCKS, MSG_DEFAULTS, MSG_EVENT, MSG_LEGACY, MSG_PACKET, MSG_SOURCE,
                              MSG_TRACE, N_AX, N_C, N_CK, N_INFO, N_Q, N_R, N_SQ, N_TD, Q_ARG_A, Q_ARG_B, Q_ARG_GEN,
                              Q_ARG_PK, Q_ARG_ROW, Q_AX, Q_CK, Q_CS, Q_EV, Q_FL, Q_GEN, Q_JS, Q_LAST_SEQ,
                              Q_LAST_SEQ_ID, Q_NEED_CS, Q_NEED_FL, Q_NEED_INT, Q_NEED_JS, Q_NEED_POOL, Q_NEED_SL,
                              Q_NEED_SP, Q_POOL, Q_SL, Q_SNAP, Q_SP, Q_SQ, Q_TD, Q_XC, RUN_ARGS, RUN_DONE, RUN_ROOM,
                              R_ARGS_BUDGET, R_BAD_TIME, R_BIG_ARGS, R_COMPRESSED, R_COUNTER_NO_VALUE, R_DEEP_ARGS,
                              R_EXTRA_MISMATCH, R_NEEDS_STATE, R_NO_REF, R_NO_SEQ, R_NO_TS, R_TD_NO_UUID, R_UNDEF_ARG,
                              R_UNDEF_CAT, R_UNDEF_NAME, R_UNDEF_SRC, SQ_DCLK, SQ_DTRK, SQ_DTRK_HAS, SQ_GEN, SQ_ID,
                              SQ_LEG_OK, SQ_LEG_PID, SQ_LEG_TID, SQ_LEG_TS, SQ_VALID, SQ_XC_N, SQ_XDC_N, T_COUNTER)
from .perfetto_wire import (E_PAST_END, E_TOO_MANY, E_WRONG_TYPE, WT_LEN, WT_VARINT, field_end_i, grown1, grown2,
                            map_get, map_room, map_set, new_map, read_tag_i, varint_i)
from .perfetto_fields import (add_span, add_srcloc, count_fields, count_packets, count_values, mul_ns, note,
                              parse_chrome, parse_clocks, parse_defaults, parse_interned, parse_srcloc)
from .perfetto_descriptors import legacy_descriptors, parse_descriptor
from .perfetto_event import event_fields, extra_counters, legacy_type, packet_time, parse_legacy
from .perfetto_args import ARGS_OK, ARGS_TOO_DEEP, write_args


#: `_event_row`: the event is done (or dropped, or skipped): on to the next packet
_RUN_NEXT = -1


@njit(cache=True, nogil=True, _nrt=False)
def _scan_run(buf, pos, seed, max_events, info, rep_n, rep_at, q, ev, evv, ax, fl, xc, xcv, td, cs, sp_off, sp_len,
              sl, js, sq, pool, ck, seq_mk, seq_mv, seq_cnt, int_mk, int_mv, int_cnt, clk_mk, clk_mv, clk_cnt):
    """Packets from ``pos`` on into the tables (see `scan_trace`), until the end, an error, a packet
    the tables have no room for (before any of it is applied) or an event with debug annotations
    (after it).  No allocation, no reference counting in this loop (its stages are inlined): the
    tables are filled in place, their counts in ``q``.  Per packet: its fields (`_packet_fields`),
    room for what it may add (`_need_room`), its sequence's incremental state (`_sequence_state`),
    interned data, clock snapshot, descriptors, then its TrackEvent (`_event_row`).  Returns
    (position, RUN_*); an error is left in ``info`` (`I_STATUS` < 0)."""
    n = buf.shape[0]
    while pos < n:
        # ---- the next packet: Trace.packet (field 1); other top-level fields are skipped
        f, wt, q0 = read_tag_i(buf, pos, n)
        if q0 < 0:
            if q0 == -1:  # cut inside the tag by the end of the file
                info[I_TRUNC_POS] = pos
                return pos, RUN_DONE
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = q0, pos, MSG_TRACE
            return pos, RUN_DONE
        e, a = field_end_i(buf, q0, n, wt)
        if e < 0:
            if e == E_PAST_END or e == -1:  # the last packet runs past the end of the file
                info[I_TRUNC_POS] = pos
                return pos, RUN_DONE
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = e, pos, MSG_TRACE, f
            return pos, RUN_DONE
        if f != 1:
            pos = e
            continue
        if wt != WT_LEN:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = E_WRONG_TYPE, pos, MSG_TRACE, f
            return pos, RUN_DONE
        pk = pos
        (ok, ts, has_ts, clk_id, seq_id, has_seq, flags, isc, ppd, def_a, def_b, int_a, int_b, te_a, te_b, tdd_a,
         tdd_b, cs_a, cs_b, th_a, th_b, pr_a, pr_b, ce_a, ce_b, compressed) = _packet_fields(buf, a, e, info)
        if not ok:
            return pos, RUN_DONE
        if _need_room(buf, q, te_a, te_b, int_a, int_b, cs_a, cs_b, ce_a, ce_b, def_a, def_b, ev, ax, fl, xc, td,
                      cs, sp_off, sl, js, sq, pool, ck, seq_mk, seq_cnt, int_mk, int_cnt, clk_mk, clk_cnt):
            return pos, RUN_ROOM
        pos = e
        if compressed:
            note(rep_n, rep_at, R_COMPRESSED, pk)
            continue
        si = np.int64(-1)
        if has_seq:
            si = _sequence_state(seq_id, isc, flags, ppd, q, sq, seq_mk, seq_mv, seq_cnt, seed)
            if def_a >= 0:
                st, ep = parse_defaults(buf, def_a, def_b, si, sq, pool, q)
                if st < 0:
                    info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = st, ep, MSG_DEFAULTS
                    return pos, RUN_DONE
        valid = si >= 0 and sq[SQ_VALID, si] == 1
        gen = sq[SQ_GEN, si] if si >= 0 else np.int64(-1)
        if int_a >= 0 and valid:
            st, ep, em, ef = parse_interned(buf, int_a, int_b, gen, int_mk, int_mv, int_cnt, seed, sp_off, sp_len,
                                             sl, q)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, em, ef
                return pos, RUN_DONE
        if cs_a >= 0:  # a clock snapshot ends the packet
            st, ep, ef = parse_clocks(buf, cs_a, cs_b, si, pk, seed, clk_mk, clk_mv, clk_cnt, ck, cs, q, info)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, MSG_CLOCKS, ef
                return pos, RUN_DONE
            q[Q_SNAP] += 1
            continue
        if (flags & 2) != 0 and not valid:
            note(rep_n, rep_at, R_NEEDS_STATE, pk)
            continue
        if th_a >= 0 or pr_a >= 0:
            st, ep, em = legacy_descriptors(buf, th_a, th_b, pr_a, pr_b, pk, si, valid, sq, td, sp_off, sp_len, q)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = st, ep, em
                return pos, RUN_DONE
        # the packet's time (an incremental clock advances whatever the packet holds)
        t_clk = np.int64(0)
        t_ns = np.int64(0)
        t_err = R_NO_TS
        if has_ts:
            t_clk, t_ns, t_err = packet_time(ts, clk_id, si, sq, clk_mk, clk_mv, ck, seed)
        if tdd_a >= 0:
            st, ep, em, ef, has_uuid = parse_descriptor(buf, tdd_a, tdd_b, pk, si, valid, sq, td, sp_off, sp_len, q)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, em, ef
                return pos, RUN_DONE
            if not has_uuid:
                note(rep_n, rep_at, R_TD_NO_UUID, pk)
        if ce_a >= 0:
            st, ep, ef = parse_chrome(buf, ce_a, ce_b, pk, js, q, rep_n, rep_at)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, MSG_CHROME, ef
                return pos, RUN_DONE
        if te_a < 0:
            continue
        code = _event_row(buf, pk, te_a, te_b, si, gen, has_seq, t_clk, t_ns, t_err, seed, max_events, info, rep_n,
                          rep_at, q, ev, evv, ax, fl, xc, xcv, sp_off, sp_len, sl, sq, pool, int_mk, int_mv)
        if code != _RUN_NEXT:
            return pos, code
    return pos, RUN_DONE


@njit(cache=True, nogil=True, inline="always")
def _packet_fields(buf, a, b, info):
    """The fields of the packet in ``buf[a:b]`` that `_scan_run` reads, in the order it applies
    them whatever their order on the wire: (ok, timestamp, has it, its clock id, sequence id, has
    it, sequence flags, incremental_state_cleared, previous_packet_dropped, then the spans (start,
    end; -1 when absent) of the defaults, interned data, TrackEvent, track descriptor, clock
    snapshot, legacy thread and process descriptors, Chrome events, and whether it is compressed).
    A malformed field: not ok, the error in ``info``."""
    ts = np.int64(0)
    has_ts = False
    clk_id = np.int64(0)
    seq_id = np.int64(0)
    has_seq = False
    flags = np.int64(0)
    isc = False
    ppd = False
    def_a = np.int64(-1)
    def_b = np.int64(-1)
    int_a = np.int64(-1)
    int_b = np.int64(-1)
    te_a = np.int64(-1)
    te_b = np.int64(-1)
    tdd_a = np.int64(-1)
    tdd_b = np.int64(-1)
    cs_a = np.int64(-1)
    cs_b = np.int64(-1)
    th_a = np.int64(-1)
    th_b = np.int64(-1)
    pr_a = np.int64(-1)
    pr_b = np.int64(-1)
    ce_a = np.int64(-1)
    ce_b = np.int64(-1)
    compressed = False
    ok = True
    p = a
    while p < b:
        f, wt, q0 = read_tag_i(buf, p, b)
        if q0 < 0:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = q0, p, MSG_PACKET
            ok = False
            break
        e, s = field_end_i(buf, q0, b, wt)
        if e < 0:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = e, p, MSG_PACKET, f
            ok = False
            break
        if f == 8 or f == 58 or f == 10 or f == 13 or f == 41 or f == 42:
            if wt != WT_VARINT:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = E_WRONG_TYPE, p, MSG_PACKET, f
                ok = False
                break
            v, _ = varint_i(buf, q0, b)
            if f == 8:
                ts, has_ts = v, True
            elif f == 58:
                clk_id = np.int64(np.uint32(v))
            elif f == 10:
                seq_id, has_seq = np.int64(np.uint32(v)), True
            elif f == 13:
                flags = v
            elif f == 41:
                isc = v != 0
            else:
                ppd = v != 0
        elif f == 11 or f == 12 or f == 59 or f == 60 or f == 6 or f == 43 or f == 44 or f == 5 \
                or f == 50 or f == 133:
            if wt != WT_LEN:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = E_WRONG_TYPE, p, MSG_PACKET, f
                ok = False
                break
            if f == 11:
                te_a, te_b = s, e
            elif f == 12:
                int_a, int_b = s, e
            elif f == 59:
                def_a, def_b = s, e
            elif f == 60:
                tdd_a, tdd_b = s, e
            elif f == 6:
                cs_a, cs_b = s, e
            elif f == 43:
                pr_a, pr_b = s, e
            elif f == 44:
                th_a, th_b = s, e
            elif f == 5:
                ce_a, ce_b = s, e
            else:
                compressed = True
        p = e
    return (ok, ts, has_ts, clk_id, seq_id, has_seq, flags, isc, ppd, def_a, def_b, int_a, int_b, te_a, te_b, tdd_a,
            tdd_b, cs_a, cs_b, th_a, th_b, pr_a, pr_b, ce_a, ce_b, compressed)


@njit(cache=True, nogil=True, inline="always")
def _need_room(buf, q, te_a, te_b, int_a, int_b, cs_a, cs_b, ce_a, ce_b, def_a, def_b, ev, ax, fl, xc, td, cs,
               sp_off, sl, js, sq, pool, ck, seq_mk, seq_cnt, int_mk, int_cnt, clk_mk, clk_cnt):
    """Whether a table lacks room for what the packet (its spans) may add; then what each needs is
    written into ``q`` (`Q_NEED_*`) for `scan_trace` to grow them, nothing of the packet applied."""
    n_te = te_b - te_a  # (a small event: its bytes bound its flows and counter values)
    if n_te > 256:
        n_te = count_values(buf, te_a, te_b)
    n_int = count_fields(buf, int_a, int_b) if int_a >= 0 else 0
    n_cs = count_fields(buf, cs_a, cs_b) if cs_a >= 0 else 0
    n_ce = ce_b - ce_a
    n_def = def_b - def_a
    if (q[Q_EV] + 1 > ev.shape[1] or q[Q_AX] + 1 > ax.shape[1] or q[Q_TD] + 3 > td.shape[1]
            or q[Q_SQ] + 1 > sq.shape[1] or 2 * (seq_cnt[0] + 1) > seq_mk.shape[1]
            or q[Q_FL] + n_te + 2 > fl.shape[1] or q[Q_XC] + n_te + 1 > xc.shape[1]
            or q[Q_SP] + 2 * n_int + 32 > sp_off.shape[0] or q[Q_SL] + n_int + 2 > sl.shape[1]
            or 2 * (int_cnt[0] + n_int + 1) > int_mk.shape[1]
            or q[Q_CS] + n_cs + 1 > cs.shape[1] or q[Q_CK] + n_cs + 1 > ck.shape[1]
            or 2 * (clk_cnt[0] + n_cs + 1) > clk_mk.shape[1]
            or q[Q_JS] + n_ce // 2 + 1 > js.shape[1] or q[Q_POOL] + n_def + 1 > pool.shape[0]):
        q[Q_NEED_FL] = n_te + 2
        q[Q_NEED_SP] = 2 * n_int + 32
        q[Q_NEED_SL] = n_int + 2
        q[Q_NEED_INT] = n_int + 1
        q[Q_NEED_CS] = n_cs + 1
        q[Q_NEED_JS] = n_ce // 2 + 1
        q[Q_NEED_POOL] = n_def + 1
        return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _sequence_state(seq_id, isc, flags, ppd, q, sq, seq_mk, seq_mv, seq_cnt, seed):
    """The row in ``sq`` of sequence ``seq_id`` (a new one starts invalid), its incremental state
    updated: cleared (``incremental_state_cleared`` or ``SEQ_INCREMENTAL_STATE_CLEARED``: a new
    generation, valid, defaults empty) or invalid after ``previous_packet_dropped``."""
    if seq_id == q[Q_LAST_SEQ_ID]:
        si = q[Q_LAST_SEQ]
    else:
        si = map_get(seq_mk, seq_mv, seq_id, 0, seed)
        if si < 0:
            si = q[Q_SQ]
            sq[:, si] = 0
            sq[SQ_ID, si] = seq_id
            sq[SQ_GEN, si] = -1
            q[Q_SQ] = si + 1
            map_set(seq_mk, seq_mv, seq_cnt, seq_id, 0, si, seed)
        q[Q_LAST_SEQ_ID] = seq_id
        q[Q_LAST_SEQ] = si
    if isc or (flags & 1) != 0:
        sq[SQ_GEN, si] = q[Q_GEN]
        q[Q_GEN] += 1
        sq[SQ_VALID, si] = 1
        sq[SQ_DCLK, si] = 0
        sq[SQ_DTRK_HAS, si] = 0
        sq[SQ_XC_N, si] = 0
        sq[SQ_XDC_N, si] = 0
    elif ppd:
        sq[SQ_VALID, si] = 0
        sq[SQ_LEG_OK, si] = 0
    return si


@njit(cache=True, nogil=True, inline="always")
def _event_row(buf, pk, te_a, te_b, si, gen, has_seq, t_clk, t_ns, t_err, seed, max_events, info, rep_n, rep_at, q,
               ev, evv, ax, fl, xc, xcv, sp_off, sp_len, sl, sq, pool, int_mk, int_mv):
    """The TrackEvent in ``buf[te_a:te_b]`` of packet ``pk`` (sequence row ``si``, generation
    ``gen``, the packet's time ``t_*``) as an event row of ``ev`` (with its flows, aux row and extra
    counter values), or dropped as a repair or skipped.  Returns `_RUN_NEXT` when the walk goes on,
    RUN_ARGS when the event's debug annotations are to be written (`Q_ARG_*`), RUN_DONE on an
    error (in ``info``)."""
    row = q[Q_EV]
    fl0 = q[Q_FL]
    (st, ep, ef, ev_type, has_type, trk, has_trk, name_kind, name_v, name_b, cat_kind, cat_v, cat_b, ncat,
     has_ival, has_dval, cval, has_extra, has_args, src_kind, src_v, src_a, src_b, dus, has_dus, aus, leg_a,
     leg_b, n_fl) = event_fields(buf, te_a, te_b, row, fl, fl0)
    if st < 0:
        info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, MSG_EVENT, ef
        return RUN_DONE
    phase = np.int64(0)
    l_dur = np.int64(-1)
    l_id = np.int64(0)
    l_idk = 0
    l_sa = np.int64(-1)
    l_sb = np.int64(-1)
    l_isc = np.int64(0)
    l_hpid = False
    l_htid = False
    l_pid = np.int64(0)
    l_tid = np.int64(0)
    if leg_a >= 0:
        st, ep, l_name, phase, l_dur, l_id, l_idk, l_sa, l_sb, l_bind, l_fdir, l_isc, l_pid, l_hpid, l_tid, \
            l_htid = parse_legacy(buf, leg_a, leg_b)
        if st < 0:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = st, ep, MSG_LEGACY
            return RUN_DONE
        if l_name != 0 and name_kind == 0:
            name_kind, name_v = 1, l_name
        if l_bind != 0 and (l_fdir == 1 or l_fdir == 2 or l_fdir == 3):
            fl[FL_ROW, n_fl] = row
            fl[FL_ID, n_fl] = l_bind
            fl[FL_KIND, n_fl] = FK_V1_IN if l_fdir == 1 else (FK_V1_OUT if l_fdir == 2 else FK_V1_INOUT)
            n_fl += 1
    t = legacy_type(has_type, ev_type, phase, l_idk)
    if t == 0:
        if has_type and ev_type != 0:
            info[I_N_SKIP_TYPE] += 1
        else:
            info[I_N_SKIP_PHASE] += 1
        return _RUN_NEXT
    e_clk, e_ns, e_err = _event_time(has_dus, dus, aus, si, sq, t_clk, t_ns, t_err)
    drop = -1
    if not has_seq:
        drop = R_NO_SEQ
    elif e_err >= 0:
        drop = e_err
    # the track: its uuid, the defaults', the legacy overrides, the sequence's thread
    tkind = K_UUID
    if not has_trk and si >= 0 and sq[SQ_DTRK_HAS, si] == 1:
        trk, has_trk = sq[SQ_DTRK, si], True
    if drop < 0 and not has_trk:
        if t == T_COUNTER:
            drop = R_COUNTER_NO_VALUE
        elif l_htid or sq[SQ_LEG_OK, si] == 1:
            tkind = K_THREAD
            if l_htid:
                if not l_hpid:
                    l_pid = sq[SQ_LEG_PID, si]
            else:
                l_pid, l_tid = sq[SQ_LEG_PID, si], sq[SQ_LEG_TID, si]
        else:  # the implicit trace-global track (uuid 0)
            trk, has_trk = np.int64(0), True
    if drop < 0 and t == T_COUNTER and not (has_ival or has_dval):
        drop = R_COUNTER_NO_VALUE
    if drop >= 0:
        note(rep_n, rep_at, drop, pk)
        return _RUN_NEXT
    if row >= max_events:
        info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = E_TOO_MANY, pk, MSG_EVENT
        return RUN_DONE
    q[Q_EV] = row + 1
    q[Q_FL] = n_fl
    ev[C_OFF, row] = pk
    ev[C_TS, row] = e_ns
    ev[C_CLK, row] = e_clk
    ev[C_SEQ, row] = si
    ev[C_TRACK, row] = trk if tkind == K_UUID else l_pid
    ev[C_ARGS, row] = -1
    evv[row] = cval
    ev[C_NAME, row] = _interned_span(name_kind, name_v, name_b, gen * 8 + K_NAME, R_UNDEF_NAME, pk, seed, sp_off,
                                     sp_len, q, int_mk, int_mv, rep_n, rep_at)
    ev[C_CAT, row] = _interned_span(cat_kind, cat_v, cat_b, gen * 8 + K_CAT, R_UNDEF_CAT, pk, seed, sp_off, sp_len,
                                    q, int_mk, int_mv, rep_n, rep_at)
    ev[C_BITS, row] = (t | (tkind << B_TKIND) | ((1 if (has_ival or has_dval) else 0) << B_HAS_VALUE)
                       | ((1 if has_ival else 0) << B_INT_VALUE) | ((phase & 255) << B_PHASE)
                       | ((l_isc & 3) << B_ISCOPE) | (np.int64(l_idk) << B_IDKIND) | (min(ncat, 255) << B_NCAT))
    src = np.int64(-1)
    if src_kind == 1:
        src = map_get(int_mk, int_mv, gen * 8 + K_SRCLOC, src_v, seed)
        if src < 0:
            note(rep_n, rep_at, R_UNDEF_SRC, pk)
    elif src_kind == 2:
        st, ep, iid, fa, fb, ga, gb, line = parse_srcloc(buf, src_a, src_b)
        if st < 0:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = st, ep, MSG_SOURCE
            return RUN_DONE
        src = add_srcloc(sl, sp_off, sp_len, q, fa, fb, ga, gb, line)
    ev[C_AUX, row] = -1
    if tkind == K_THREAD or leg_a >= 0 or src >= 0:
        k = q[Q_AX]
        ax[AX_TID, k] = l_tid
        ax[AX_DUR, k] = -1
        if l_dur >= 0:
            ns, ok = mul_ns(l_dur, 1000)
            ax[AX_DUR, k] = ns if ok else -1
        ax[AX_ID, k] = l_id
        ax[AX_SCOPE, k] = add_span(sp_off, sp_len, q, l_sa, l_sb) if l_sa >= 0 else -1
        ax[AX_SRC, k] = src
        ev[C_AUX, row] = k
        q[Q_AX] = k + 1
    if has_extra:
        st, ep, ef, mism = extra_counters(buf, te_a, te_b, row, si, sq, pool, xc, xcv, q)
        if st < 0:
            info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG], info[I_ERR_FIELD] = st, ep, MSG_EVENT, ef
            return RUN_DONE
        if mism > 0:
            note(rep_n, rep_at, R_EXTRA_MISMATCH, pk)
    if has_args:
        q[Q_ARG_A] = te_a
        q[Q_ARG_B] = te_b
        q[Q_ARG_GEN] = gen
        q[Q_ARG_PK] = pk
        q[Q_ARG_ROW] = row
        return RUN_ARGS
    return _RUN_NEXT


@njit(cache=True, nogil=True, inline="always")
def _event_time(has_dus, dus, aus, si, sq, t_clk, t_ns, t_err):
    """An event's (clock, ns, error or -1): TrackEvent's own µs fields (``timestamp_delta_us`` from
    the sequence's reference, ``timestamp_absolute_us``; on MONOTONIC), else the packet's."""
    e_clk, e_ns, e_err = t_clk, t_ns, t_err
    if has_dus:
        if si >= 0 and sq[SQ_LEG_OK, si] == 1:
            ns, ok = mul_ns(dus, 1000)
            if ok:
                sq[SQ_LEG_TS, si] += ns
                e_clk, e_ns, e_err = CLK_MONOTONIC, sq[SQ_LEG_TS, si], -1
            else:
                e_err = R_BAD_TIME
        else:
            e_err = R_NO_REF
    elif aus != 0:
        ns, ok = mul_ns(aus, 1000)
        e_clk, e_ns, e_err = CLK_MONOTONIC, ns, (-1 if ok else R_BAD_TIME)
    return e_clk, e_ns, e_err


@njit(cache=True, nogil=True, inline="always")
def _interned_span(kind, v, b, map_key, undefined, pk, seed, sp_off, sp_len, q, int_mk, int_mv, rep_n, rep_at):
    """A name or category's span index: given inline (``kind`` 2: bytes ``v``..``b``), or interned
    (``kind`` 1: iid ``v`` under ``map_key``; -2 and the repair ``undefined`` when never defined);
    -1 when absent."""
    out = np.int64(-1)
    if kind == 2:
        out = add_span(sp_off, sp_len, q, v, b)
    elif kind == 1:
        out = map_get(int_mk, int_mv, map_key, v, seed)
        if out < 0:
            out = -2
            note(rep_n, rep_at, undefined, pk)
    return out


@njit(cache=True, nogil=True)
def scan_trace(buf, max_events, seed, max_args_depth, max_args_bytes, args_budget):
    """Walk the Perfetto trace ``buf`` (see the module docstring).  ``max_events``: the most event
    rows (more: `E_TOO_MANY`); ``seed``: of the hash maps; ``max_args_depth``, ``max_args_bytes``:
    per event's args (beyond: dropped, a repair); ``args_budget``: the most args bytes in all.

    Returns (info, ev, evv, ax, fl, xc, xcv, td, cs, sp_off, sp_len, sl, ab, aptr, fix_pos,
    fix_val, js, sq, rep_n, rep_at), each table cut to its rows: event rows ``ev`` (`N_C` x n),
    counter values ``evv``; aux rows ``ax``; flows ``fl`` (row, id, kind); extra counter samples
    ``xc`` (row, uuid) and values ``xcv``; track descriptors ``td``; clock snapshot entries ``cs``
    (snapshot, clock key, ns, offset); spans (offset, length); source locations ``sl`` (file span,
    function span, line); the args blob ``ab`` with entry starts ``aptr`` (one more than
    entries) and the doubles to write into it (``fix_pos``, ``fix_val``); JSON-in-proto spans
    ``js``; sequences ``sq``; repair counts and first packet offsets (`R_*`).

    The packets are read by `_scan_run`, which never allocates; this loop gives the tables room
    when it asks (each at least doubled) and writes the debug annotations of the events that have
    them (`perfetto_args.write_args`)."""
    info = np.zeros(N_INFO, np.int64)
    info[I_PRIMARY] = -1
    info[I_TRUNC_POS] = -1
    rep_n = np.zeros(N_R, np.int64)
    rep_at = np.full(N_R, -1, np.int64)
    n_pk = count_packets(buf)
    info[I_PACKETS] = n_pk
    q = np.zeros(N_Q, np.int64)
    q[Q_LAST_SEQ_ID] = -1
    q[Q_LAST_SEQ] = -1
    ev = np.empty((N_C, min(n_pk, max_events + 1) + 1), np.int64)
    evv = np.zeros(ev.shape[1], np.float64)
    ax = np.empty((N_AX, 64), np.int64)
    fl = np.empty((3, 64), np.int64)
    xc = np.empty((2, 64), np.int64)
    xcv = np.empty(64, np.float64)
    td = np.empty((N_TD, 64), np.int64)
    cs = np.empty((4, 64), np.int64)
    sp_off = np.empty(1024, np.int64)
    sp_len = np.empty(1024, np.int64)
    sl = np.empty((3, 64), np.int64)
    js = np.empty((2, 8), np.int64)
    sq = np.empty((N_SQ, 16), np.int64)
    pool = np.empty(64, np.int64)
    ck = np.empty((N_CK, 16), np.int64)
    seq_mk, seq_mv, seq_cnt = new_map(64)
    int_mk, int_mv, int_cnt = new_map(1024)
    clk_mk, clk_mv, clk_cnt = new_map(64)
    # the counters and the read position start as int64, not as the literal 0: numba types a call
    # with the first value it meets, so a literal start compiled `_scan_run` and `write_args` twice
    # (once for Literal[int](0), once for int64; ~15 s of a cold compile)
    ab = np.empty(4096, np.uint8)
    n_ab = np.int64(0)
    aptr = np.empty(64, np.int64)
    n_args = np.int64(0)
    fix_pos = np.empty(64, np.int64)
    fix_val = np.empty(64, np.float64)
    n_fix = np.int64(0)
    fr = np.empty((6, max_args_depth + 2), np.int64)
    pos = np.int64(0)
    while True:
        pos, code = _scan_run(buf, pos, seed, max_events, info, rep_n, rep_at, q, ev, evv, ax, fl, xc, xcv, td, cs,
                              sp_off, sp_len, sl, js, sq, pool, ck, seq_mk, seq_mv, seq_cnt, int_mk, int_mv, int_cnt,
                              clk_mk, clk_mv, clk_cnt)
        if code == RUN_ROOM:
            if q[Q_EV] + 1 > ev.shape[1]:
                ev = grown2(ev, q[Q_EV] + 1)
                evv = grown1(evv, ev.shape[1])
            ax = grown2(ax, q[Q_AX] + 1)
            td = grown2(td, q[Q_TD] + 3)
            sq = grown2(sq, q[Q_SQ] + 1)
            seq_mk, seq_mv = map_room(seq_mk, seq_mv, seq_cnt, 1, seed)
            fl = grown2(fl, q[Q_FL] + q[Q_NEED_FL])
            if q[Q_XC] + q[Q_NEED_FL] > xc.shape[1]:
                xc = grown2(xc, q[Q_XC] + q[Q_NEED_FL])
                xcv = grown1(xcv, xc.shape[1])
            if q[Q_SP] + q[Q_NEED_SP] > sp_off.shape[0]:
                sp_off = grown1(sp_off, q[Q_SP] + q[Q_NEED_SP])
                sp_len = grown1(sp_len, sp_off.shape[0])
            sl = grown2(sl, q[Q_SL] + q[Q_NEED_SL])
            int_mk, int_mv = map_room(int_mk, int_mv, int_cnt, q[Q_NEED_INT], seed)
            cs = grown2(cs, q[Q_CS] + q[Q_NEED_CS])
            ck = grown2(ck, q[Q_CK] + q[Q_NEED_CS])
            clk_mk, clk_mv = map_room(clk_mk, clk_mv, clk_cnt, q[Q_NEED_CS], seed)
            js = grown2(js, q[Q_JS] + q[Q_NEED_JS])
            pool = grown1(pool, q[Q_POOL] + q[Q_NEED_POOL])
            continue
        if code == RUN_ARGS:
            pk = q[Q_ARG_PK]
            if n_ab > args_budget:
                note(rep_n, rep_at, R_ARGS_BUDGET, pk)
                continue
            a0 = n_ab
            st, ep, ab, n_ab, fix_pos, fix_val, n_fix, undef = write_args(
                buf, q[Q_ARG_A], q[Q_ARG_B], q[Q_ARG_GEN], int_mk, int_mv, seed, sp_off, sp_len, ab, n_ab, fix_pos,
                fix_val, n_fix, max_args_depth, max_args_bytes, fr)
            if st < 0:
                info[I_STATUS], info[I_ERR_POS], info[I_ERR_MSG] = st, ep, MSG_ANNOTATION
                break
            if undef > 0:
                rep_n[R_UNDEF_ARG] += undef - 1
                note(rep_n, rep_at, R_UNDEF_ARG, pk)
            if st == ARGS_OK:
                aptr = grown1(aptr, n_args + 2)
                aptr[n_args] = a0
                ev[C_ARGS, q[Q_ARG_ROW]] = n_args
                n_args += 1
            else:
                note(rep_n, rep_at, R_DEEP_ARGS if st == ARGS_TOO_DEEP else R_BIG_ARGS, pk)
            continue
        break
    aptr = grown1(aptr, n_args + 1)
    aptr[n_args] = n_ab
    n_ev = q[Q_EV]
    return (info, ev[:, :n_ev], evv[:n_ev], ax[:, :q[Q_AX]], fl[:, :q[Q_FL]], xc[:, :q[Q_XC]], xcv[:q[Q_XC]],
            td[:, :q[Q_TD]], cs[:, :q[Q_CS]], sp_off[:q[Q_SP]], sp_len[:q[Q_SP]], sl[:, :q[Q_SL]], ab[:n_ab],
            aptr[:n_args + 1], fix_pos[:n_fix], fix_val[:n_fix], js[:, :q[Q_JS]], sq[:, :q[Q_SQ]], rep_n, rep_at)
