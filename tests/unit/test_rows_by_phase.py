"""`jsonrows.rows_by_phase` (the Chrome reader's rows of each kind, `io.chrome._rows_by_kind`)
against its brute-force twin: the numpy passes it replaced, on random phases and times (NaN,
±inf, past the limit), sampled profiles' rows past the events, and empty input."""
from __future__ import annotations

import numpy as np
import pytest

from tracevis3d.io.chrome import _PHASE_CLASS
from tracevis3d.io.chrome_side import ASYNC_PHASES
from tracevis3d.kernels import jsonrows as jr

#: every phase byte a trace holds, and some it may not
PHASES = np.frombuffer(b"BEXiIRMstfCPbenSTpFOND()Vv=Gz\x00\xff", np.uint8)


def twin(ph, ts, kind_rows, event_rows, max_t):
    """The numpy passes `_rows_by_kind` made before the kernel (the same order of the rows)."""
    def one_of(chars):
        return np.isin(ph, np.frombuffer(chars, np.uint8))

    is_b, is_e, is_x = ph == ord("B"), ph == ord("E"), ph == ord("X")
    is_inst, is_flow, is_meta = one_of(b"iIR"), one_of(b"stf"), ph == ord("M")
    for is_kind in (is_b, is_e, is_x, is_inst, is_flow, is_meta):
        is_kind[kind_rows:] = False
    finite = np.abs(ts) <= max_t
    bad = (is_b | is_e | is_x | is_inst | is_flow) & ~finite
    side_all = np.flatnonzero(np.isin(ph[:event_rows], np.frombuffer(ASYNC_PHASES, np.uint8)))
    rows = (np.flatnonzero(is_inst & finite), np.flatnonzero(is_meta), np.flatnonzero(ph[:event_rows] == ord("P")),
            side_all, side_all[finite[side_all]], np.flatnonzero((is_b | is_e) & finite),
            np.flatnonzero(is_x & finite))
    first = np.flatnonzero(bad)
    return rows, finite, int(bad.sum()), int(first[0]) if first.size else -1


@pytest.mark.parametrize("seed", range(12))
def test_rows_by_phase_against_the_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000)) if seed else 0
    ph = PHASES[rng.integers(0, PHASES.size, n)].copy()
    ts = rng.uniform(-2e6, 2e6, n)
    odd = rng.random(n)
    ts[odd < 0.05] = np.nan
    ts[(odd >= 0.05) & (odd < 0.08)] = np.inf * rng.choice([-1, 1], int(((odd >= 0.05) & (odd < 0.08)).sum()))
    max_t = 1.5e6 if seed % 3 else 1e300
    sampled = seed % 2 == 1
    event_rows = int(rng.integers(0, n + 1)) if sampled else (n if seed % 4 == 0 else int(rng.integers(0, n + 1)))
    kind_rows = event_rows if sampled else n
    got = jr.rows_by_phase(ph, ts, _PHASE_CLASS, kind_rows, event_rows, max_t)
    want = twin(ph, ts, kind_rows, event_rows, max_t)
    for g, w in zip(got[0], want[0]):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[1], want[1])
    assert (got[2], got[3]) == want[2:]


def test_phase_classes_cover_the_kinds():
    """Each kind's phases in the table, and the phases no kind reads left out."""
    for chars, cls in ((b"BE", jr.PC_BE), (b"X", jr.PC_X), (b"iIR", jr.PC_INSTANT), (b"stf", jr.PC_FLOW),
                       (b"M", jr.PC_META), (ASYNC_PHASES, jr.PC_SIDE), (b"P", jr.PC_PROFILE)):
        assert (_PHASE_CLASS[np.frombuffer(chars, np.uint8)] == cls).all(), chars
    assert (_PHASE_CLASS[np.frombuffer(b"CONDVv=G()z", np.uint8)] == jr.PC_NONE).all()
