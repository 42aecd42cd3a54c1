"""Issue 78's slow V8 case: a Chrome trace of 10^4 V8 profiles (Profile + ProfileChunk events)
read its event table an element at a time, three reads per event, and took each profile's step
with `np.median`.  `chrome_profile.read_profiles` reads each column once for all its rows; the
trace is the same."""
from __future__ import annotations

import numpy as np
import pytest

import hostile_numbers as hn
import tracevis3d
from tracevis3d.io import chrome_profile

pytestmark = pytest.mark.timeout(300)


class _Counted:
    """An event table whose reads are counted (each ``table[rows, column]``)."""

    def __init__(self, table, reads: list):
        self.table, self.reads = table, reads

    def __getitem__(self, key):
        self.reads.append(key[1])
        return self.table[key]

    def __getattr__(self, name):
        return getattr(self.table, name)


def test_profile_events_read_their_columns_once(tmp_path, monkeypatch):
    """400 profile events: a handful of column reads in all, not three per event; the trace is
    the one read without counting."""
    p = tmp_path / "v8.json"
    p.write_bytes(hn.chrome_v8_profiles(200))
    plain = tracevis3d.load(p, warn=False)
    reads: list = []
    real = chrome_profile.read_profiles

    def counted(buf, ii, ss, rows, *a, **k):
        assert len(rows) == 400
        return real(buf, _Counted(ii, reads), _Counted(ss, reads), rows, *a, **k)

    monkeypatch.setattr(chrome_profile, "read_profiles", counted)
    t = tracevis3d.load(p, warn=False)
    assert 0 < len(reads) <= 4, len(reads)
    for k in ("func", "start", "end", "depth", "parent", "thread", "thread_pid", "thread_tid"):
        assert np.array_equal(getattr(t, k), getattr(plain, k)), k
    assert t.thread_names == plain.thread_names and t.function_names == plain.function_names


def test_a_profiles_step_is_numpys_median():
    """`_median` (a profile's sampling step) is `np.median`, value for value, on sizes odd and
    even, ties and spreads of many magnitudes."""
    rng = np.random.default_rng(7)
    assert chrome_profile._median(np.zeros(0)) == 0.0
    for n in [*range(1, 30), 999, 1000]:
        for x in (rng.random(n) * 1e3, np.round(rng.random(n) * 4) + 0.5, rng.exponential(size=n) * 1e-7,
                  10.0 ** rng.integers(-300, 300, n)):
            assert chrome_profile._median(x) == float(np.median(x)), n
