"""A short seeded run of the shared fuzzer's ``structured`` kind (tests/support/fuzz_structured.py):
the real recordings of tests/data/formats parsed and damaged in their structure (JSON trees,
protobuf fields, text lines), each loaded in the fuzzer's worker process under its address-space
limit and per-case alarm: a checked trace or a one-line `TraceFormatError` naming the file, never
anything else.  ``TV3D_FUZZ_STRUCTURED_SEEDS`` sets the number of seeds (``make fuzz`` and
``fuzz_hostile.py --kinds structured --seeds 5000`` run it at length)."""
from __future__ import annotations

import json
import os
import random

import pytest

import fuzz_hostile
import fuzz_structured


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_fuzz_structured_short_seeded_run():
    n = int(os.environ.get("TV3D_FUZZ_STRUCTURED_SEEDS", 60))
    stats = {}
    failures = fuzz_hostile.run(7000, n, verbose=False, stats=stats, kinds=("structured",))
    assert failures == [], failures[:5]
    assert stats.get("ok", 0) + stats.get("error", 0) == n and stats.get("ok") and stats.get("error"), stats


@pytest.mark.timeout(120)
def test_every_kind_of_recording_is_mutated():
    """The seeds cover the three families, and each family's mutator changes its input."""
    kinds = {}
    for path, kind, data in fuzz_structured.seeds():
        kinds.setdefault(kind, (path, data))
    assert set(kinds) == {"json", "proto", "text", "marshal"}, sorted(kinds)
    rng = random.Random(3)
    _p, data = kinds["json"]
    tree, _op = fuzz_structured.mutate_json(json.loads(data), rng, 100)
    assert json.dumps(tree, sort_keys=True) != json.dumps(json.loads(data), sort_keys=True)
    for kind, mutate in (("proto", fuzz_structured.mutate_proto), ("text", fuzz_structured.mutate_text),
                         ("marshal", fuzz_structured.mutate_marshal)):
        _p, data = kinds[kind]
        assert any(mutate(data, random.Random(s))[0] != data for s in range(5)), kind
