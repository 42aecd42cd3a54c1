"""`kernels.repetition.sibling_repetitions` against its brute-force twin: every thread's roots
and every call's children as key sequences, scanned greedily for the smallest period whose
next block repeats (the module docstring), on traces whose keys repeat a lot (rows past the
kernel's first room of 1,024, so the rows grow between its runs) and little.  The arrays are
int32, as the comparison passes them (its shape classes and the trace's columns): the
signature the kernel caches already hold."""
from __future__ import annotations

import numpy as np
import pytest

import tracevis3d
from tracevis3d.kernels.repetition import sibling_repetitions

from compare_twins import repetition_rows


def repetitions_twin(key, parent, thread, max_period):
    key = [int(k) for k in key]
    kids: dict = {}
    roots: dict = {}
    for c in range(len(key)):
        if parent[c] < 0:
            roots.setdefault(int(thread[c]), []).append(c)
        else:
            kids.setdefault(int(parent[c]), []).append(c)
    seqs = []
    for th in sorted(roots):
        seqs.append((-1, roots[th]))
        for p in range(len(key)):
            if int(thread[p]) == th and len(kids.get(p, ())) >= 2:
                seqs.append((p, kids[p]))
    return repetition_rows(seqs, key, max_period)


@pytest.mark.parametrize("alphabet", [1, 2, 5, 1000])
@pytest.mark.parametrize("max_period", [1, 3, 8])
def test_repetitions_against_the_twin(alphabet, max_period):
    t = tracevis3d.synthetic(6000, threads=3, seed=alphabet)
    key = np.random.default_rng(alphabet * 10 + max_period).integers(0, alphabet, len(t)).astype(np.int32)
    got = sibling_repetitions(key, t.parent, t.end_index, t.thread, max_period)
    want = repetitions_twin(key, t.parent, t.thread, max_period)
    assert [tuple(r) for r in got.tolist()] == want
    if alphabet == 1:
        assert len(want) > 1024  # the rows grew between the kernel's runs


def test_no_calls_no_rows():
    e = np.zeros(0, np.int32)
    assert sibling_repetitions(e, e, e, e, 4).shape == (0, 4)
