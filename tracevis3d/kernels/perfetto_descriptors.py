"""The track descriptors of a Perfetto trace, for the scanner (`protoscan`): TrackDescriptor (its
uuid, parent, name, and the thread, process or counter it describes) and the legacy
ThreadDescriptor / ProcessDescriptor packets, as rows of the `td` table (`perfetto_layout.TD_*`);
a thread descriptor also names its sequence's thread (trace processor's
TokenizeThreadDescriptor).  No allocation, no reference counting (``_nrt=False``).  Semantics in
`protoscan`'s docstring."""
import numpy as np
from numba import njit

from .perfetto_layout import (MSG_COUNTER, MSG_DESCRIPTOR, MSG_PROCESS, MSG_THREAD, Q_TD, SQ_LEG_OK, SQ_LEG_PID,
                              SQ_LEG_TID, SQ_LEG_TS, TD_CMD0, TD_CMDTYPE, TD_CMULT, TD_CTYPE, TD_CUNIT, TD_FLAGS,
                              TD_KIND, TD_NAME, TD_OFF, TD_PARENT, TD_PID, TD_SEQ, TD_SORT, TD_SUBNAME, TD_TID,
                              TD_UNITNAME, TD_UUID, TK_COUNTER, TK_LEGACY_PROCESS, TK_LEGACY_THREAD, TK_PLAIN,
                              TK_PROCESS, TK_THREAD)
from .perfetto_wire import E_WRONG_TYPE, WT_LEN, WT_VARINT, next_field, varint
from .perfetto_fields import add_span


_TYPE_PREFIX = np.frombuffer(b"--type=", np.uint8)


@njit(cache=True, nogil=True, inline="always")
def _shared_ints(f, v, pid, hp, sort, ctype):
    """The integer fields ThreadDescriptor and ProcessDescriptor number alike, from the varint
    ``v`` of field ``f``: 1 the pid (int32; has it), 3 legacy_sort_index (int32), 4 the Chrome
    thread or process type.  Returns (pid, has pid, sort index, type), the one of field f set."""
    if f == 1:
        return np.int64(np.int32(v)), True, sort, ctype
    if f == 3:
        return pid, hp, np.int64(np.int32(v)), ctype
    if f == 4:
        return pid, hp, sort, v
    return pid, hp, sort, ctype


@njit(cache=True, nogil=True, _nrt=False)
def parse_thread(buf, a, b):
    """ThreadDescriptor ``buf[a:b]``: (status, error position, pid, tid, has pid and tid, name start,
    name end (-1 none), reference_timestamp_us, has it, legacy_sort_index, chrome_thread_type)."""
    pid = np.int64(0)
    tid = np.int64(0)
    hp = False
    ht = False
    na = np.int64(-1)
    nb = np.int64(-1)
    ref = np.int64(0)
    has_ref = False
    sort = np.int64(0)
    ctype = np.int64(0)
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, pid, tid, False, na, nb, ref, has_ref, sort, ctype
        if f == 1 or f == 2 or f == 3 or f == 4 or f == 6:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, pid, tid, False, na, nb, ref, has_ref, sort, ctype
            v, _ = varint(buf, q, b)
            pid, hp, sort, ctype = _shared_ints(f, v, pid, hp, sort, ctype)
            if f == 2:
                tid = np.int64(np.int32(v))
                ht = True
            elif f == 6:
                ref = v
                has_ref = True
        elif f == 5:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, pid, tid, False, na, nb, ref, has_ref, sort, ctype
            na, nb = s, e
        p = e
    return 0, 0, pid, tid, hp and ht, na, nb, ref, has_ref, sort, ctype


@njit(cache=True, nogil=True, _nrt=False)
def parse_process(buf, a, b):
    """ProcessDescriptor ``buf[a:b]``: (status, error position, pid, has pid, name start, name end,
    first cmdline start, end, the cmdline's "--type=" entry start, end (-1 none), legacy_sort_index,
    chrome_process_type)."""
    pid = np.int64(0)
    hp = False
    na = np.int64(-1)
    nb = np.int64(-1)
    c0a = np.int64(-1)
    c0b = np.int64(-1)
    cta = np.int64(-1)
    ctb = np.int64(-1)
    sort = np.int64(0)
    ctype = np.int64(0)
    p = a
    while p < b:
        err, f, wt, q, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, pid, hp, na, nb, c0a, c0b, cta, ctb, sort, ctype
        if f == 1 or f == 3 or f == 4 or f == 5 or f == 7:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, pid, hp, na, nb, c0a, c0b, cta, ctb, sort, ctype
            v, _ = varint(buf, q, b)
            pid, hp, sort, ctype = _shared_ints(f, v, pid, hp, sort, ctype)
        elif f == 6 or f == 2 or f == 8:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, pid, hp, na, nb, c0a, c0b, cta, ctb, sort, ctype
            if f == 6:
                na, nb = s, e
            elif f == 2:
                if c0a < 0:
                    c0a, c0b = s, e
                if cta < 0 and e - s > 7:
                    same = True
                    for k in range(7):
                        if buf[s + k] != _TYPE_PREFIX[k]:
                            same = False
                            break
                    if same:
                        cta, ctb = s + 7, e
        p = e
    return 0, 0, pid, hp, na, nb, c0a, c0b, cta, ctb, sort, ctype


@njit(cache=True, nogil=True, _nrt=False)
def sub_type(buf, a, b):
    """The field 1 varint of the message ``buf[a:b]`` (ChromeProcessDescriptor /
    ChromeThreadDescriptor: its type), 0 when absent: (status, error position, value)."""
    v = np.int64(0)
    r = a
    while r < b:
        err, g, wt, q, e, s = next_field(buf, r, b)
        if err < 0:
            return err, r, v
        if g == 1 and wt == WT_VARINT:
            v, _ = varint(buf, q, b)
        r = e
    return 0, 0, v


@njit(cache=True, nogil=True, _nrt=False)
def parse_counter(buf, a, b, td, row, sp_off, sp_len, q):
    """CounterDescriptor ``buf[a:b]`` into track row ``row`` (unit, multiplier, unit name):
    (status, error position, field, counter type, is incremental)."""
    ctype = np.int64(0)
    incr = False
    td[TD_CMULT, row] = 1
    td[TD_CUNIT, row] = 0
    r = a
    while r < b:
        err, g, wt, q0, e, s = next_field(buf, r, b)
        if err < 0:
            return err, r, g, ctype, incr
        if g == 1 or g == 3 or g == 4 or g == 5:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, r, g, ctype, incr
            v, _ = varint(buf, q0, b)
            if g == 1:
                ctype = v
            elif g == 3:
                td[TD_CUNIT, row] = v
            elif g == 4:
                td[TD_CMULT, row] = v if v != 0 else 1
            else:
                incr = v != 0
        elif g == 6:
            if wt != WT_LEN:
                return E_WRONG_TYPE, r, g, ctype, incr
            td[TD_UNITNAME, row] = add_span(sp_off, sp_len, q, s, e)
        r = e
    return 0, 0, 0, ctype, incr


@njit(cache=True, nogil=True, _nrt=False)
def set_thread(sq, si, valid, pid, tid, ref_us):
    """Sequence ``si``'s thread (and reference time) from a thread descriptor, when its incremental
    state is ``valid`` (trace processor's TokenizeThreadDescriptor)."""
    if si >= 0 and valid:
        sq[SQ_LEG_OK, si] = 1
        sq[SQ_LEG_PID, si] = pid
        sq[SQ_LEG_TID, si] = tid
        sq[SQ_LEG_TS, si] = ref_us * 1000


@njit(cache=True, nogil=True, _nrt=False)
def process_row(buf, a, b, td, row, sp_off, sp_len, q):
    """ProcessDescriptor ``buf[a:b]`` into track row ``row``: (status, error position, has pid,
    chrome process type)."""
    st, ep, pid, hp, na, nb, c0a, c0b, cta, ctb, sort, ctype = parse_process(buf, a, b)
    if st < 0:
        return st, ep, False, ctype
    td[TD_PID, row] = pid
    td[TD_SORT, row] = sort
    if na >= 0:
        td[TD_SUBNAME, row] = add_span(sp_off, sp_len, q, na, nb)
    if c0a >= 0:
        td[TD_CMD0, row] = add_span(sp_off, sp_len, q, c0a, c0b)
    if cta >= 0:
        td[TD_CMDTYPE, row] = add_span(sp_off, sp_len, q, cta, ctb)
    return 0, 0, hp, ctype


@njit(cache=True, nogil=True, _nrt=False)
def parse_descriptor(buf, a, b, pk, si, valid, sq, td, sp_off, sp_len, q):
    """TrackDescriptor ``buf[a:b]`` (packet at ``pk``, sequence ``si``) as a `td` row (room
    reserved); a thread descriptor in it also sets the sequence's thread (`set_thread`).
    Returns (status, error position, message, field, has uuid)."""
    uuid = np.int64(0)
    puuid = np.int64(0)
    tflags = 0
    kind = TK_PLAIN
    nm_a = np.int64(-1)
    nm_b = np.int64(-1)
    row = q[Q_TD]
    td[:, row] = -1
    td[TD_OFF, row] = pk
    td[TD_SEQ, row] = si
    ctype = np.int64(0)
    p = a
    while p < b:
        err, f, wt, q0, e, s = next_field(buf, p, b)
        if err < 0:
            return err, p, MSG_DESCRIPTOR, f, False
        if f == 1 or f == 5:
            if wt != WT_VARINT:
                return E_WRONG_TYPE, p, MSG_DESCRIPTOR, f, False
            v, _ = varint(buf, q0, b)
            if f == 1:
                uuid = v
                tflags |= 1
            else:
                puuid = v
                tflags |= 2
        elif f == 2 or f == 10 or f == 13 or f == 3 or f == 4 or f == 8 or f == 6 or f == 7:
            if wt != WT_LEN:
                return E_WRONG_TYPE, p, MSG_DESCRIPTOR, f, False
            if f == 2 or f == 10 or f == 13:
                nm_a, nm_b = s, e
            elif f == 4:
                st, ep, pid, tid, ok, na, nb, ref, has_ref, sort, ct2 = parse_thread(buf, s, e)
                if st < 0:
                    return st, ep, MSG_THREAD, 0, False
                kind = TK_THREAD if ok else TK_PLAIN
                td[TD_PID, row] = pid
                td[TD_TID, row] = tid
                td[TD_SORT, row] = sort
                if ct2 != 0:
                    ctype = ct2
                if na >= 0:
                    td[TD_SUBNAME, row] = add_span(sp_off, sp_len, q, na, nb)
                if ok:
                    set_thread(sq, si, valid, pid, tid, ref)
            elif f == 3:
                st, ep, hp, ct2 = process_row(buf, s, e, td, row, sp_off, sp_len, q)
                if st < 0:
                    return st, ep, MSG_PROCESS, 0, False
                if hp:
                    kind = TK_PROCESS
                if ct2 != 0:
                    ctype = ct2
            elif f == 8:
                st, ep, g, ct2, incr = parse_counter(buf, s, e, td, row, sp_off, sp_len, q)
                if st < 0:
                    return st, ep, MSG_COUNTER, g, False
                kind = TK_COUNTER
                ctype = ct2
                if incr:
                    tflags |= 4
            elif ctype == 0:  # chrome_process / chrome_thread: their type
                st, ep, ct2 = sub_type(buf, s, e)
                if st < 0:
                    return st, ep, MSG_DESCRIPTOR, 0, False
                ctype = ct2
        p = e
    if (tflags & 1) == 0:
        return 0, 0, 0, 0, False
    td[TD_UUID, row] = uuid
    td[TD_PARENT, row] = puuid
    td[TD_FLAGS, row] = tflags
    td[TD_KIND, row] = kind
    td[TD_CTYPE, row] = ctype
    if nm_a >= 0:
        td[TD_NAME, row] = add_span(sp_off, sp_len, q, nm_a, nm_b)
    q[Q_TD] = row + 1
    return 0, 0, 0, 0, True


@njit(cache=True, nogil=True, _nrt=False)
def legacy_descriptors(buf, th_a, th_b, pr_a, pr_b, pk, si, valid, sq, td, sp_off, sp_len, q):
    """A packet's ThreadDescriptor (``buf[th_a:th_b]``; also the sequence's thread, `set_thread`)
    and ProcessDescriptor as `td` rows (-1: absent; room reserved).  Returns (status, error
    position, message)."""
    if th_a >= 0:
        st, ep, pid, tid, ok, na, nb, ref, has_ref, sort, ctype = parse_thread(buf, th_a, th_b)
        if st < 0:
            return st, ep, MSG_THREAD
        if ok:
            set_thread(sq, si, valid, pid, tid, ref)
            row = q[Q_TD]
            td[:, row] = -1
            td[TD_OFF, row] = pk
            td[TD_SEQ, row] = si
            td[TD_FLAGS, row] = 0
            td[TD_KIND, row] = TK_LEGACY_THREAD
            td[TD_PID, row] = pid
            td[TD_TID, row] = tid
            if na >= 0:
                td[TD_SUBNAME, row] = add_span(sp_off, sp_len, q, na, nb)
            td[TD_CTYPE, row] = ctype
            td[TD_SORT, row] = sort
            q[Q_TD] = row + 1
    if pr_a >= 0:
        row = q[Q_TD]
        td[:, row] = -1
        td[TD_OFF, row] = pk
        td[TD_SEQ, row] = si
        td[TD_FLAGS, row] = 0
        td[TD_KIND, row] = TK_LEGACY_PROCESS
        st, ep, hp, ctype = process_row(buf, pr_a, pr_b, td, row, sp_off, sp_len, q)
        if st < 0:
            return st, ep, MSG_PROCESS
        if hp:
            td[TD_CTYPE, row] = ctype
            q[Q_TD] = row + 1
    return 0, 0, 0
