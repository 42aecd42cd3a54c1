"""The TrackEvent of a Perfetto packet, for the scanner (`protoscan`): its fields, flows, legacy
event, extra counter values and type, and the packet's time on its clock.  No allocation, no
reference counting (``_nrt=False``; `event_fields` and `packet_time` are inlined into the
scanner's loop).  Semantics in `protoscan`'s docstring."""

import numpy as np
from numba import njit

from .perfetto_layout import (CK_INCR, CK_MULT, CK_RAW, FK_END, FK_STEP, FL_ID, FL_KIND, FL_ROW, Q_XC, R_BAD_TIME,
                              R_NO_CLOCK, SQ_DCLK, SQ_XC_N, SQ_XC_OFF, SQ_XDC_N, SQ_XDC_OFF, T_ASYNC_BEGIN,
                              T_ASYNC_END, T_ASYNC_INSTANT, T_BEGIN, T_COMPLETE, T_END, T_INSTANT)
from .perfetto_wire import (E_WRONG_TYPE, WT_I64, WT_LEN, WT_VARINT, as_double, field_end, field_end_i,
                            fixed64, map_get, next_field, read_tag, read_tag_i, scalar_next, scalar_run, varint, varint_i)
from .perfetto_fields import mul_ns, put_repeated


@njit(cache=True, nogil=True, _nrt=False)
def parse_legacy(buf, a, b):
    """TrackEvent.LegacyEvent ``buf[a:b]``: (status, error position, name_iid (0 none), phase,
    duration_us (-1 none), id, id kind (0 none, 1 unscoped, 2 local, 3 global), id_scope start,
    end, bind_id (0 none), flow_direction, instant_event_scope, pid_override, has it,
    tid_override, has it)."""
    name = np.int64(0)
    phase = np.int64(0)
    dur = np.int64(-1)
    idv = np.int64(0)
    idk = 0
    sa = np.int64(-1)
    sb = np.int64(-1)
    bind = np.int64(0)
    fdir = np.int64(0)
    isc = np.int64(0)
    pido = np.int64(0)
    hpid = False
    tido = np.int64(0)
    htid = False
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, name, phase, dur, idv, idk, sa, sb, bind, fdir, isc, pido, hpid, tido, htid
        if f == 7:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, name, phase, dur, idv, idk, sa, sb, bind, fdir, isc, pido, hpid, tido, htid
            sa, sb = s, e
        elif f == 1 or f == 2 or f == 3 or f == 6 or f == 10 or f == 11 or f == 8 or f == 13 or f == 14 \
                or f == 18 or f == 19 or f == 4 or f == 9 or f == 12 or f == 15:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, name, phase, dur, idv, idk, sa, sb, bind, fdir, isc, pido, hpid, tido, htid
            v, _ = varint(buf, q, b)
            if f == 1:
                name = v
            elif f == 2:
                phase = np.int64(np.int32(v))
            elif f == 3:
                dur = v
            elif f == 6:
                idv, idk = v, 1
            elif f == 10:
                idv, idk = v, 2
            elif f == 11:
                idv, idk = v, 3
            elif f == 8:
                bind = v
            elif f == 13:
                fdir = v
            elif f == 14:
                isc = v
            elif f == 18:
                pido, hpid = np.int64(np.int32(v)), True
            elif f == 19:
                tido, htid = np.int64(np.int32(v)), True
        p = e
    return 0, 0, name, phase, dur, idv, idk, sa, sb, bind, fdir, isc, pido, hpid, tido, htid


@njit(cache=True, nogil=True, _nrt=False)
def first_and_count(buf, q, e, s, wt, want):
    """One occurrence of a repeated scalar field (its value at ``q``, end ``e``, bytes from ``s``
    when packed): (status, its first value, how many values)."""
    st, p, end = scalar_run(q, e, s, wt, want)
    first = np.int64(0)
    k = 0
    while p < end:
        v, p = scalar_next(buf, p, end, want)
        if p < 0:
            return p, first, k
        if k == 0:
            first = v
        k += 1
    return st, first, k


@njit(cache=True, nogil=True, _nrt=False)
def put_flows(buf, q, e, s, wt, want, fl, n_fl, row, kind):
    """The flow ids of one occurrence of a flow field (as `first_and_count`) as `fl` rows of
    event ``row`` (``fl`` has room for ``e - q`` more): (status, n_fl)."""
    st, k = put_repeated(buf, q, e, s, wt, want, fl[FL_ID], n_fl)
    for j in range(n_fl, k):
        fl[FL_ROW, j] = row
        fl[FL_KIND, j] = kind
    return st, k


@njit(cache=True, nogil=True, inline="always")
def event_fields(buf, a, b, row, fl, n_fl):
    """The fields of the TrackEvent ``buf[a:b]`` (event row ``row``; its flows appended to ``fl``,
    which has room for ``b - a`` more).  Returns (status, error position, field, type, has type,
    track uuid, has it, name kind (1 interned, 2 inline), name iid or start, name end, category
    kind, iid or start, end, number of categories, has an int counter value, has a double one,
    the value, has extra counter values, has debug annotations, source location kind (1
    interned, 2 inline), its iid, start, end, timestamp_delta_us, has it,
    timestamp_absolute_us, legacy event start, end, n_fl)."""
    ev_type = np.int64(0)
    has_type = False
    trk = np.int64(0)
    has_trk = False
    name_kind = 0
    name_v = np.int64(0)
    name_b = np.int64(0)
    cat_kind = 0
    cat_v = np.int64(0)
    cat_b = np.int64(0)
    ncat = 0
    has_ival = False
    has_dval = False
    cval = 0.0
    has_extra = False
    has_args = False
    src_kind = 0
    src_v = np.int64(0)
    src_a = np.int64(-1)
    src_b = np.int64(-1)
    dus = np.int64(0)
    has_dus = False
    aus = np.int64(0)
    leg_a = np.int64(-1)
    leg_b = np.int64(-1)
    st = 0
    ep = np.int64(0)
    bad = 0
    p = a
    while p < b:
        f, wt, q = read_tag_i(buf, p, b)
        if q < 0:
            st, ep = q, p
            break
        e, s = field_end_i(buf, q, b, wt)
        if e < 0:
            st, ep, bad = e, p, f
            break
        if f == 9 or f == 11 or f == 10 or f == 30 or f == 34 or f == 1 or f == 16:
            if wt != WT_VARINT:
                st, ep, bad = E_WRONG_TYPE, p, f
                break
            v, _ = varint_i(buf, q, b)
            if f == 9:
                ev_type, has_type = v, True
            elif f == 11:
                trk, has_trk = v, True
            elif f == 10:
                name_kind, name_v = 1, v
            elif f == 30:
                has_ival, has_dval = True, False
                cval = np.float64(v)
            elif f == 34:
                src_kind, src_v = 1, v
            elif f == 1:
                dus, has_dus = v, True
            else:
                aus = v
        elif f == 23 or f == 22 or f == 6 or f == 33 or f == 4:
            if wt != WT_LEN:
                st, ep, bad = E_WRONG_TYPE, p, f
                break
            if f == 23:
                name_kind, name_v, name_b = 2, s, e
            elif f == 22:
                if ncat == 0:
                    cat_kind, cat_v, cat_b = 2, s, e
                ncat += 1
            elif f == 6:
                leg_a, leg_b = s, e
            elif f == 33:
                src_kind, src_a, src_b = 2, s, e
            else:
                has_args = True
        elif f == 44:
            if wt != WT_I64:
                st, ep, bad = E_WRONG_TYPE, p, f
                break
            has_dval, has_ival = True, False
            cval = as_double(fixed64(buf, q))
        elif f == 3:
            st, v0, k0 = first_and_count(buf, q, e, s, wt, WT_VARINT)
            if st < 0:
                ep, bad = p, f
                break
            if k0 > 0 and ncat == 0:
                cat_kind, cat_v = 1, v0
            ncat += k0
        elif f == 47 or f == 48 or f == 36 or f == 42:
            want = WT_I64 if (f == 47 or f == 48) else WT_VARINT
            st, n_fl = put_flows(buf, q, e, s, wt, want, fl, n_fl, row,
                                  FK_STEP if (f == 47 or f == 36) else FK_END)
            if st < 0:
                ep, bad = p, f
                break
        elif f == 12 or f == 31 or f == 45 or f == 46:
            if f == 12 or f == 46:
                has_extra = True
            want = WT_I64 if f == 46 else WT_VARINT
            if wt != want and wt != WT_LEN:
                st, ep, bad = E_WRONG_TYPE, p, f
                break
        p = e
    return (st, ep, bad, ev_type, has_type, trk, has_trk, name_kind, name_v, name_b, cat_kind, cat_v, cat_b, ncat,
            has_ival, has_dval, cval, has_extra, has_args, src_kind, src_v, src_a, src_b, dus, has_dus, aus, leg_a,
            leg_b, n_fl)


@njit(cache=True, nogil=True, _nrt=False)
def legacy_type(has_type, ev_type, phase, idk):
    """The row type (`T_*`) of a TrackEvent: its ``type`` when set (1-4; others 0: skipped), else
    its legacy phase's (B E X, I i R instants, b S / e F async begin / end and n T p async
    instants when they have an id); 0: skipped."""
    if has_type and ev_type != 0:
        return ev_type if ev_type >= 1 and ev_type <= 4 else 0
    if phase == 66:  # B
        return T_BEGIN
    if phase == 69:  # E
        return T_END
    if phase == 88:  # X
        return T_COMPLETE
    if phase == 73 or phase == 105 or phase == 82:  # I i R
        return T_INSTANT
    if phase == 98 or phase == 83:  # b S
        return T_ASYNC_BEGIN if idk > 0 else 0
    if phase == 101 or phase == 70:  # e F
        return T_ASYNC_END if idk > 0 else 0
    if phase == 110 or phase == 84 or phase == 112:  # n T p
        return T_ASYNC_INSTANT if idk > 0 else T_INSTANT
    return 0


@njit(cache=True, nogil=True, inline="always")
def packet_time(ts, clk_id, si, sq, mk, mv, ck, seed):
    """The packet's ``timestamp`` on its clock (``clk_id``, else the sequence default's, else the
    trace clock 0): (clock key, ns, repair code or -1).  A sequence clock (64-127) must have had a
    snapshot on the sequence; an incremental one adds ``ts`` to its last value."""
    cid = clk_id
    if cid == 0 and si >= 0:
        cid = sq[SQ_DCLK, si]
    if cid >= 64 and cid < 128:
        if si < 0:
            return np.int64(0), np.int64(0), R_NO_CLOCK
        key = ((np.int64(si) + 1) << 8) | cid
        slot = map_get(mk, mv, key, 0, seed)
        if slot < 0:
            return key, np.int64(0), R_NO_CLOCK
        raw = ts
        if ck[CK_INCR, slot] == 1:
            raw = ck[CK_RAW, slot] + ts
            ck[CK_RAW, slot] = raw
        ns, ok = mul_ns(raw, ck[CK_MULT, slot])
        return key, ns, (-1 if ok and ns >= 0 else R_BAD_TIME)
    return cid, ts, (-1 if ts >= 0 else R_BAD_TIME)


@njit(cache=True, nogil=True, _nrt=False)
def extra_counters(buf, a, b, row, si, sq, pool, xc, xcv, q):
    """The extra counter values of the TrackEvent ``buf[a:b]`` (row ``row``, sequence ``si``) as
    `xc` rows (room reserved): the k-th value with the k-th uuid of the event's list, else of the
    sequence defaults' list (integers: fields 12/31, doubles: 46/45); values beyond the shorter
    list are dropped.  Returns (status, error position, field, lists whose lengths differ)."""
    mismatch = 0
    for dbl in range(2):
        fv = 46 if dbl == 1 else 12
        fu = 45 if dbl == 1 else 31
        x0 = q[Q_XC]
        k = x0
        p = a
        while p < b:
            f, wt, q0 = read_tag(buf, p, b)
            e, s = field_end(buf, q0, b, wt)
            if f == fv:
                st, k = put_repeated(buf, q0, e, s, wt, WT_I64 if dbl == 1 else WT_VARINT, xc[1], k)
                if st < 0:
                    return st, p, f, mismatch
            p = e
        nv = k - x0
        if nv == 0:
            continue
        for j in range(x0, k):  # the values, then the uuids in their place
            xc[0, j] = row
            xcv[j] = as_double(xc[1, j]) if dbl == 1 else np.float64(xc[1, j])
            xc[1, j] = 0
        nu = 0
        p = a
        while p < b:
            f, wt, q0 = read_tag(buf, p, b)
            e, s = field_end(buf, q0, b, wt)
            if f == fu:
                if wt == WT_VARINT:
                    v, _ = varint(buf, q0, e)
                    if nu < nv:
                        xc[1, x0 + nu] = v
                    nu += 1
                elif wt == WT_LEN:
                    r = s
                    while r < e:
                        v, r = varint(buf, r, e)
                        if r < 0:
                            return r, p, f, mismatch
                        if nu < nv:
                            xc[1, x0 + nu] = v
                        nu += 1
                else:
                    return E_WRONG_TYPE, p, f, mismatch
            p = e
        if nu == 0 and si >= 0:
            off = sq[SQ_XDC_OFF if dbl == 1 else SQ_XC_OFF, si]
            nu = sq[SQ_XDC_N if dbl == 1 else SQ_XC_N, si]
            for j in range(min(nu, nv)):
                xc[1, x0 + j] = pool[off + j]
        if nu != nv:
            mismatch += 1
        q[Q_XC] = x0 + min(nu, nv)
    return 0, 0, 0, mismatch
