"""What the memory captures' fuzzer found (issue 78: tests/support/fuzz_memory.py, the ``memray``,
``memdump`` and ``memlive`` kinds of fuzz_hostile.py), each a crafted capture made from the shipped
seed captures (tests/data/memray/) by a named change; and the families themselves: each builds
inputs its mutations changed, and a short seeded run answers every input."""
from __future__ import annotations

import os
import pathlib
import random
import struct

import pytest

import fuzz_memory as fm
import hostile_memory as hm
from time_limits import time_limit

from tracevis3d import load_memory

SEEDS = pathlib.Path(__file__).resolve().parents[1] / "data" / "memray"


def _raw(name: str) -> bytes:
    return fm.inflate((SEEDS / name).read_bytes())[0]


def _switches(data: bytes) -> list:
    """The CONTEXT_SWITCH records of an uncompressed capture: their offsets."""
    hf, hend = fm.header(data)
    recs, _ = fm.records(data, hend, data[15] != 0)
    return [s for kind, s, _e, _f in recs if kind == "switch"]


_LOAD = """
from tracevis3d import load_memory
cap = load_memory(PATH, warn=False)
out.update(ranges=cap.n_ranges, threads=list(cap.thread_names))
"""


def test_a_compressed_capture_loads_within_2_gib_of_address_space(tmp_path):
    """memray's default capture is an LZ4 frame: it was inflated with lz4 asked for up to
    limits.max_bytes (4 GiB) at once, which lz4 allocates: a MemoryError under 2 GiB of address
    space for every compressed capture, however small (now 16 MiB a call)."""
    path = tmp_path / "seed.bin"
    path.write_bytes((SEEDS / "seed.bin").read_bytes())
    res = hm.run_bounded(_LOAD.replace("PATH", repr(str(path))), timeout=180, max_address_space=2 << 30)
    assert res["outcome"] == "ok" and res["ranges"] == 206, res


def test_thread_ids_past_int64_are_kept_bit_for_bit(tmp_path):
    """memray's thread ids are uint64: one past 2^63 ended in an OverflowError (the thread table
    was made as int64)."""
    data = bytearray(_raw("seed-raw.bin"))
    for s in _switches(bytes(data)):
        tid = struct.unpack_from("<Q", data, s + 1)[0]
        struct.pack_into("<Q", data, s + 1, (1 << 64) - tid)  # 1 -> 2^64 - 1, ...
    hf, _ = fm.header(bytes(data))
    struct.pack_into("<Q", data, hf["main_tid"][0], (1 << 64) - 1)  # the main thread's too
    path = tmp_path / "tids.bin"
    path.write_bytes(bytes(data))
    with time_limit(120):
        cap = load_memory(path, warn=False)
    assert sorted(cap.thread_ids.view("uint64").tolist()) == [(1 << 64) - 4, (1 << 64) - 3, (1 << 64) - 2,
                                                                (1 << 64) - 1]
    assert cap.thread_names[-1] == "main thread" and cap.n_ranges == 206
    assert 0 <= cap.range_thread.min() and cap.range_thread.max() < len(cap.thread_names)


# ----------------------------------------------------------------------------- the families
def test_every_memory_family_builds_changed_inputs():
    seeds = {name: raw for name, raw, _comp in fm.memray_seeds()}
    assert set(seeds) == {"seed.bin", "seed-raw.bin", "seed-pyalloc.bin", "seed-native.bin", "seed-aggregate.bin"}
    for name, raw in seeds.items():  # the record walker reads every seed to its trailer
        hf, hend = fm.header(raw)
        if raw[16] == 0:
            recs, stop = fm.records(raw, hend, raw[15] != 0)
            assert recs[-1][0] == "trailer" and stop == recs[-1][2], name
    assert len(fm.memdump_seeds()) == 4
    for family in ("memray", "memdump", "memlive"):
        labels = set()
        for s in range(12):
            data, opts, label = fm.build(random.Random(s), family)
            assert data and label.startswith(family), label
            labels.add(label.split(": ", 1)[1].split(" ")[0])
        assert len(labels) > 4, (family, labels)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fuzz_memory_short_seeded_run():
    """``TV3D_FUZZ_MEMORY_SEEDS`` seeds (default 24) of the three kinds, in the fuzzer's worker under
    its address-space limit and per-case alarm: each a capture, a one-line error naming the file
    or peer, never anything else (``make fuzz`` runs them at length)."""
    import fuzz_hostile

    n = int(os.environ.get("TV3D_FUZZ_MEMORY_SEEDS", 24))
    stats: dict = {}
    failures = fuzz_hostile.run(9000, n, verbose=False, stats=stats, kinds=fuzz_hostile.MEMORY_KINDS)
    assert failures == [], failures[:5]
    assert stats.get("ok", 0) + stats.get("error", 0) == n, stats
