"""`compare`'s memory check (`analysis.comparison.check_compare_memory`): its estimate of the
peak (the largest phase, `compare_need_bytes`) covers what a real comparison holds at its peak,
measured in a fresh process; a budget too small is refused in one line naming the need and
what is available; the kept pairs' spill file is checked against the disk's room."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracevis3d
from tracevis3d.analysis import comparison as cm
from tracevis3d.model import TraceTooLargeError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: comparisons in a fresh process, each after the last: its peak resident bytes above what the
#: process held just before it (VmHWM reset through /proc/self/clear_refs), and what its check
#: estimated
_MEASURE = textwrap.dedent("""
    import json, sys
    import tracevis3d
    def kb(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    w = tracevis3d.synthetic(3000, threads=4)
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2))          # kernels loaded, not measured
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2), keep_class_pairs=False)
    for case in sys.argv[1:]:
        n, keep = case.split(":")
        a = tracevis3d.synthetic(int(n), threads=4)
        b = tracevis3d.perturb(a, seed=2)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = kb("VmRSS")
        c = tracevis3d.compare(a, b, keep_class_pairs={"auto": None, "no": False}[keep])
        print(json.dumps(dict(case=case, peak=kb("VmHWM") - before, need=c.params["memory_need"])), flush=True)
        del a, b, c
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc peak reset")
def test_estimate_covers_the_measured_peak():
    """The check's estimate (``params["memory_need"]``: the largest phase, the join's buffers
    included) is at least the peak resident memory the comparison added, measured in a fresh
    process: class pairs kept (the streamed way) and not kept (the fused way)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", _MEASURE, "30000:auto", "200000:no"], env=env,
                         capture_output=True, text=True, timeout=900, check=True).stdout
    runs = [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]
    assert [r["case"] for r in runs] == ["30000:auto", "200000:no"]
    for got in runs:
        assert got["peak"] > 0
        assert got["need"] >= got["peak"], got
        # and not absurdly above it: a check that refuses what fits is no check either
        assert got["need"] < 64 * max(got["peak"], 1 << 20), got


def test_a_tiny_budget_is_refused_in_one_line():
    """Given too little memory (the ``available`` parameter) the check raises
    `TraceTooLargeError` (a MemoryError) in one line naming the need, its phase, the mapped
    inputs and what is available; given enough it returns its need, the largest phase."""
    n = 2_000_000
    need, phase = cm.compare_need_bytes(n, 2)
    assert phase in ("classes", "join", "kept pairs")
    assert cm.check_compare_memory(n, available=need) == need
    with pytest.raises(TraceTooLargeError) as e:
        cm.check_compare_memory(n, available=need - 1)
    msg = str(e.value)
    assert isinstance(e.value, MemoryError) and "\n" not in msg
    assert f"{n:,} calls" in msg and "need about" in msg and "available" in msg and phase in msg
    # the mapped inputs count in the need; what the comparison already holds counts as available
    with pytest.raises(TraceTooLargeError, match="of it the traces' mapped files"):
        cm.check_compare_memory(n, available=need, mapped_bytes=1 << 20)
    assert cm.check_compare_memory(n, available=need, mapped_bytes=1 << 20, held_bytes=1 << 20) == need + (1 << 20)
    # the peak is the largest phase, not the phases' sum
    join_need, join_phase = cm.compare_need_bytes(n, 2, join_bytes=10 * need)
    assert join_phase == "join" and join_need < 11 * need + n * cm.JOIN_HELD_BYTES_PER_CALL + (1 << 30)
    assert cm.compare_need_bytes(n, 2, join_bytes=1)[0] == need


def test_a_full_disk_refuses_the_spill():
    """The kept pairs written to a file past `SPILL_PAIRS_BYTES` are checked against the temporary
    folder's free bytes: a one-line `TraceTooLargeError`, not a SIGBUS mid-write."""
    m = 100_000_000
    cm.check_spill_room(m, 4, free=m * (cm.PAIR_DTYPE.itemsize + 4))
    with pytest.raises(TraceTooLargeError, match="need about .* of disk in .*free: set TMPDIR") as e:
        cm.check_spill_room(m, 4, free=1 << 30)
    assert "\n" not in str(e.value) and f"{m:,} kept call pairs" in str(e.value)


def test_a_disk_too_small_for_the_kept_pairs_refuses_before_the_join(monkeypatch):
    """Where even the kept pairs' bound (``top_k`` a call of either trace) goes to a file and
    does not fit the temporary folder, `compare` refuses before its classes and join: at 10^8
    calls the same refusal came after 41 minutes of join."""
    import shutil

    a = tracevis3d.synthetic(2000, threads=2, seed=5)
    b = tracevis3d.perturb(a, seed=2)
    usage = shutil.disk_usage(".")
    monkeypatch.setattr(cm, "SPILL_PAIRS_BYTES", 0)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=1000))

    def too_late(*args, **kw):
        raise AssertionError("the classes were built before the disk was checked")
    monkeypatch.setattr(cm, "gamma_classes", too_late)
    bound = 2 * (len(a) + len(b))         # compare's top_k = 2
    with pytest.raises(TraceTooLargeError, match=rf"up to {bound:,} kept call pairs \(top_k a call of either trace\) need"):
        tracevis3d.compare(a, b)


def test_mapped_inputs_count_and_loaded_ones_do_not(tmp_path):
    """`mapped_input_bytes`: the arrays a comparison reads of a trace mapped from its native file;
    none of a trace in memory."""
    from tracevis3d.io.native import load_native

    t = tracevis3d.synthetic(20_000, threads=2)
    assert cm.mapped_input_bytes(t) == 0
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, str(path))
    mapped = load_native(str(path), mmap=True)
    assert cm.mapped_input_bytes(mapped) == sum(getattr(mapped, k).nbytes for k in cm.COMPARE_READS)
    assert np.array_equal(mapped.start, t.start)
    assert cm.mapped_input_bytes(load_native(str(path), mmap=False)) == 0
