"""The packet-level messages of a Perfetto trace, for the scanner (`protoscan`): sequence defaults
(TracePacketDefaults), interned data, clock snapshots, track descriptors (and the legacy
thread/process descriptor packets), ChromeEventBundle's JSON, and the reads and counts they
share.  Each writes into tables the scanner gave room (`protoscan._scan_run`): no allocation, no
reference counting (``_nrt=False``).  Semantics in `protoscan`'s docstring."""

import numpy as np
from numba import njit

from .perfetto_layout import (CK_INCR, CK_MULT, CK_RAW, CLK_BOOTTIME, CLK_TRACE_FILE, I_PRIMARY, I_SNAP_BOOT,
                              I_SNAP_FILE, K_CAT, K_DANAME, K_DASTR, K_NAME, K_SRCLOC, MSG_INTERNED, MSG_SOURCE, Q_CK,
                              Q_CS, Q_JS, Q_POOL, Q_SL, Q_SNAP, Q_SP, R_CHROME_OTHER, SQ_DCLK, SQ_DTRK, SQ_DTRK_HAS,
                              SQ_XC_N, SQ_XC_OFF, SQ_XDC_N, SQ_XDC_OFF)
from .perfetto_wire import (E_WRONG_TYPE, WT_LEN, WT_VARINT, map_get, map_set,
                            next_field, scalar_next, scalar_run, varint)
from .repairs import note


@njit(cache=True, nogil=True, _nrt=False)
def mul_ns(v, mult):
    """``v * mult`` (ns), or (0, False) when it leaves the int64 range."""
    if mult == 1:
        return v, True
    if mult <= 0:
        return np.int64(0), False
    lim = np.int64(0x7FFFFFFFFFFFFFFF) // mult
    if v > lim or v < -lim:
        return np.int64(0), False
    return v * mult, True


@njit(cache=True, nogil=True, _nrt=False)
def count_packets(buf):
    """The number of top-level fields of ``buf`` up to the first that does not parse (a bound on
    the events: one TrackEvent a packet): `count_fields` over the whole buffer."""
    return count_fields(buf, 0, buf.shape[0])


@njit(cache=True, nogil=True, _nrt=False)
def count_fields(buf, a, b):
    """The number of fields of the message ``buf[a:b]`` (-1: none there), up to the first that
    does not parse (its parse reports it): the entries an InternedData or ClockSnapshot adds."""
    k = 0
    p = a
    while 0 <= p < b:
        err, f, wt, q0, e, _ = next_field(buf, p, b)
        if err < 0:
            break
        k += 1
        p = e
    return k


@njit(cache=True, nogil=True, _nrt=False)
def count_values(buf, a, b):
    """At most how many flow ids and extra counter values the TrackEvent ``buf[a:b]`` holds (a
    packed run counted by its bytes, or its 8-byte words)."""
    k = 0
    p = a
    while p < b:
        err, f, wt, q0, e, s = next_field(buf, p, b)
        if err < 0:
            break
        if f == 47 or f == 48 or f == 36 or f == 42 or f == 12 or f == 31 or f == 45 or f == 46:
            if wt == WT_LEN:
                k += (e - s) // 8 + 1 if (f == 47 or f == 48 or f == 46) else e - s
            else:
                k += 1
        p = e
    return k


@njit(cache=True, nogil=True, _nrt=False)
def parse_srcloc(buf, a, b):
    """SourceLocation ``buf[a:b]``: (status, error position, iid, file start, end, function start,
    end, line); -1 for what it lacks."""
    iid = np.int64(0)
    fa = np.int64(-1)
    fb = np.int64(-1)
    ga = np.int64(-1)
    gb = np.int64(-1)
    line = np.int64(-1)
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, iid, fa, fb, ga, gb, line
        if f == 1 or f == 4:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, iid, fa, fb, ga, gb, line
            v, _ = varint(buf, q, b)
            if f == 1:
                iid = v
            else:
                line = np.int64(np.uint32(v))
        elif f == 2 or f == 3:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, iid, fa, fb, ga, gb, line
            if f == 2:
                fa, fb = s, e
            else:
                ga, gb = s, e
        p = e
    return 0, 0, iid, fa, fb, ga, gb, line


@njit(cache=True, nogil=True, _nrt=False)
def add_span(sp_off, sp_len, q, a, b):
    """A new entry of the span table (room reserved) for ``buf[a:b]``; returns its index."""
    k = q[Q_SP]
    sp_off[k] = a
    sp_len[k] = b - a
    q[Q_SP] = k + 1
    return k


@njit(cache=True, nogil=True, _nrt=False)
def add_srcloc(sl, sp_off, sp_len, q, fa, fb, ga, gb, line):
    """A source location row (file span, function span, line; room reserved); returns its index."""
    k = q[Q_SL]
    sl[0, k] = add_span(sp_off, sp_len, q, fa, fb) if fa >= 0 else -1
    sl[1, k] = add_span(sp_off, sp_len, q, ga, gb) if ga >= 0 else -1
    sl[2, k] = line
    q[Q_SL] = k + 1
    return k


@njit(cache=True, nogil=True, _nrt=False)
def put_repeated(buf, q0, e, s, wt, want, out, k):
    """The values of one occurrence of a repeated scalar field (value at ``q0``, end ``e``, bytes
    from ``s`` when packed, wire type ``wt``, element wire type ``want``) at ``out[k:]`` (room
    reserved): (status, new k)."""
    st, p, end = scalar_run(q0, e, s, wt, want)
    while p < end:
        v, p = scalar_next(buf, p, end, want)
        if p < 0:
            return p, k
        out[k] = v
        k += 1
    return st, k


@njit(cache=True, nogil=True, _nrt=False)
def parse_defaults(buf, a, b, si, sq, pool, q):
    """TracePacketDefaults ``buf[a:b]`` as sequence ``si``'s defaults (clock id, track, extra
    counter uuid lists at the end of ``pool``, room reserved).  Returns (status, error position)."""
    clk = np.int64(0)
    trk = np.int64(0)
    htrk = False
    xo = q[Q_POOL]
    xn = 0
    xdo = xo
    xdn = 0
    for rnd in range(2):  # the integer counters' uuids (31), then the doubles' (45)
        if rnd == 1:
            xdo = q[Q_POOL]
        p = a
        while p < b:
            err, f, wt, q0, e, s = next_field(buf, p, b)
            if err < 0:
                return err, p
            if f == 58 and rnd == 0:
                if wt != WT_VARINT:
                    return E_WRONG_TYPE, p
                clk, _ = varint(buf, q0, b)
                clk = np.int64(np.uint32(clk))
            elif f == 11:
                if wt != WT_LEN:
                    return E_WRONG_TYPE, p
                r = s
                while r < e:
                    err, g, wt2, q2, e2, s2 = next_field(buf, r, e)
                    if err < 0:
                        return err, r
                    if g == 11 and rnd == 0:
                        if wt2 != WT_VARINT:
                            return E_WRONG_TYPE, r
                        trk, _ = varint(buf, q2, e)
                        htrk = True
                    elif (g == 31 and rnd == 0) or (g == 45 and rnd == 1):
                        st, k = put_repeated(buf, q2, e2, s2, wt2, WT_VARINT, pool, q[Q_POOL])
                        if st < 0:
                            return st, r
                        q[Q_POOL] = k
                    r = e2
            p = e
        if rnd == 0:
            xn = q[Q_POOL] - xo
        else:
            xdn = q[Q_POOL] - xdo
    sq[SQ_DCLK, si] = clk
    sq[SQ_DTRK_HAS, si] = 1 if htrk else 0
    sq[SQ_DTRK, si] = trk
    sq[SQ_XC_OFF, si] = xo
    sq[SQ_XC_N, si] = xn
    sq[SQ_XDC_OFF, si] = xdo
    sq[SQ_XDC_N, si] = xdn
    return 0, 0


@njit(cache=True, nogil=True, _nrt=False)
def parse_interned(buf, a, b, gen, mk, mv, mcnt, seed, sp_off, sp_len, sl, q):
    """InternedData ``buf[a:b]`` of generation ``gen`` into the map (gen * 8 + kind, iid) → span
    (a source location: its row); room reserved.  Returns (status, error position, message,
    field)."""
    p = a
    while p < b:
        err, f, wt, q0, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, MSG_INTERNED, f
        kind = 0
        if f == 1:
            kind = K_CAT
        elif f == 2:
            kind = K_NAME
        elif f == 3:
            kind = K_DANAME
        elif f == 4:
            kind = K_SRCLOC
        elif f == 29:
            kind = K_DASTR
        if kind > 0:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, MSG_INTERNED, f
            if kind == K_SRCLOC:
                st, ep, iid, fa, fb, ga, gb, line = parse_srcloc(buf, s, e)
                if st < 0:
                    return st, ep, MSG_SOURCE, 0
                k = add_srcloc(sl, sp_off, sp_len, q, fa, fb, ga, gb, line)
                map_set(mk, mv, mcnt, gen * 8 + kind, iid, k, seed)
            else:
                iid = np.int64(0)
                na = s
                nb = s
                r = s
                while r < e:
                    err, g, wt2, q2, e2, s2 = next_field(buf, r, e)
                    if err < 0:
                        return err, r, MSG_INTERNED, g
                    if g == 1:
                        if wt2 != WT_VARINT:
                            return E_WRONG_TYPE, r, MSG_INTERNED, g
                        iid, _ = varint(buf, q2, e)
                    elif g == 2:
                        if wt2 != WT_LEN:
                            return E_WRONG_TYPE, r, MSG_INTERNED, g
                        na, nb = s2, e2
                    r = e2
                k = add_span(sp_off, sp_len, q, na, nb)
                map_set(mk, mv, mcnt, gen * 8 + kind, iid, k, seed)
        p = e
    return 0, 0, 0, 0


@njit(cache=True, nogil=True, _nrt=False)
def parse_clocks(buf, a, b, si, pk, seed, mk, mv, mcnt, ck, cs, q, info):
    """ClockSnapshot ``buf[a:b]`` (packet at ``pk``, sequence ``si``): its clocks as `cs` rows (ns)
    of snapshot ``q[Q_SNAP]``, the sequence clocks' state (`ck`: last raw value, multiplier,
    incremental) set; room reserved.  Returns (status, error position, field)."""
    p = a
    while p < b:
        err, f, wt, q0, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, f
        if f == 2:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, f
            v, _ = varint(buf, q0, b)
            if v != 0:
                info[I_PRIMARY] = v
        elif f == 1:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, f
            cid = np.int64(0)
            cts = np.int64(0)
            incr = False
            mult = np.int64(1)
            r = s
            while r < e:
                err, g, wt2, q2, e2, s2 = next_field(buf, r, e)
                if err < 0:
                    return err, r, g
                if g == 1 or g == 2 or g == 3 or g == 4:
                    if wt2 != WT_VARINT:
                        return E_WRONG_TYPE, r, g
                    v, _ = varint(buf, q2, e)
                    if g == 1:
                        cid = np.int64(np.uint32(v))
                    elif g == 2:
                        cts = v
                    elif g == 3:
                        incr = v != 0
                    elif v != 0:
                        mult = v
                r = e2
            key = cid
            if cid >= 64 and cid < 128:
                if si < 0:  # a sequence clock needs a sequence: ignored
                    p = e
                    continue
                key = ((np.int64(si) + 1) << 8) | cid
                slot = map_get(mk, mv, key, 0, seed)
                if slot < 0:
                    slot = q[Q_CK]
                    q[Q_CK] = slot + 1
                    map_set(mk, mv, mcnt, key, 0, slot, seed)
                ck[CK_RAW, slot] = cts
                ck[CK_MULT, slot] = mult
                ck[CK_INCR, slot] = 1 if incr else 0
            elif cid == CLK_BOOTTIME:
                info[I_SNAP_BOOT] = 1
            elif cid == CLK_TRACE_FILE:
                info[I_SNAP_FILE] = 1
            ns, ok = mul_ns(cts, mult)
            if ok and cts >= 0:
                k = q[Q_CS]
                cs[0, k] = q[Q_SNAP]
                cs[1, k] = key
                cs[2, k] = ns
                cs[3, k] = pk
                q[Q_CS] = k + 1
        p = e
    return 0, 0, 0


@njit(cache=True, nogil=True, _nrt=False)
def parse_chrome(buf, a, b, pk, js, q, rep_n, rep_at):
    """ChromeEventBundle ``buf[a:b]``: the data of its ``legacy_json_trace`` entries of type
    USER_TRACE as `js` spans (room reserved); its proto ``trace_events`` and ftrace text are
    counted, not read.  Returns (status, error position, field)."""
    p = a
    while p < b:
        err, f, wt, q0, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, f
        if f == 5 and wt == WT_LEN:
            jtype = np.int64(0)
            ja = np.int64(-1)
            jb = np.int64(-1)
            r = s
            while r < e:
                err, g, wt2, q2, e2, s2 = next_field(buf, r, e)
                if err < 0:
                    return err, r, g
                if g == 1 and wt2 == WT_VARINT:
                    jtype, _ = varint(buf, q2, e)
                elif g == 2 and wt2 == WT_LEN:
                    ja, jb = s2, e2
                r = e2
            if jtype == 0 and ja >= 0:
                k = q[Q_JS]
                js[0, k] = ja
                js[1, k] = jb - ja
                q[Q_JS] = k + 1
            elif ja >= 0:
                note(rep_n, rep_at, R_CHROME_OTHER, pk)
        elif f == 1 or f == 4:
            note(rep_n, rep_at, R_CHROME_OTHER, pk)
        p = e
    return 0, 0, 0
