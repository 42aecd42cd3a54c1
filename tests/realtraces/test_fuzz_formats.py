"""A short seeded run of the shared fuzzer (tests/support/fuzz_hostile.py) over the format
readers' hostile files only (its "format" kind: every case module of `FORMAT_CASE_MODULES`, as is,
cut or with bytes flipped), in its worker process under its address-space limit and per-case
alarm: a checked trace or a one-line `TraceFormatError` naming the file, never anything else.
``TV3D_FUZZ_FORMAT_SEEDS`` sets the number of seeds (``make fuzz`` runs every kind at length)."""
from __future__ import annotations

import os

import pytest

import fuzz_hostile


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fuzz_format_readers_short_seeded_run():
    n = int(os.environ.get("TV3D_FUZZ_FORMAT_SEEDS", 40))
    stats = {}
    failures = fuzz_hostile.run(1000, n, verbose=False, stats=stats, kinds=("format",))
    assert failures == [], failures[:5]
    assert stats.get("ok", 0) + stats.get("error", 0) == n and stats.get("ok") and stats.get("error"), stats
