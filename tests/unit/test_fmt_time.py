"""Durations in titles and callouts: three significant digits in a unit that fits, and past
999 s minutes, hours or days ("1e+03 s" and "3e+07 s" were what a long trace's title said)."""
from __future__ import annotations

import pytest

from tracevis3d.layout.xunit import fmt_time


@pytest.mark.parametrize("us, text", [
    (0.5, "500 ns"), (12.0, "12 µs"), (1500.0, "1.5 ms"), (2.5e6, "2.5 s"), (999e6, "999 s"),
    (1e9, "16.7 min"), (36e9, "10 h"), (3e13, "347 days"), (-2e9, "-33.3 min"), (1e300, "1.16e+289 days"),
])
def test_a_duration_reads_in_a_unit_of_its_size(us, text):
    assert fmt_time(us) == text
