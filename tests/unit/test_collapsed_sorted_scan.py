"""`textscan.collapsed_scan` on sorted files (as stackcollapse writes them), where a frame past
the ones shared with the previous line is taken as a new trie node without a lookup: the same
frames, trie and samples as the plain-dictionary scan (`io.collapsed._python_scan`), also when
frames hold spaces, digits and punctuation that sort below ';', stacks repeat, a stack is empty
or cut at the depth limit, or a line breaks the order midway."""
from __future__ import annotations

import random

import numpy as np
import pytest

from tracevis3d.io.collapsed import _python_scan
from tracevis3d.kernels.textscan import collapsed_scan

_FRAMES = ["a", "b", "b x", "b!", "b 1", "c", "main", "f(1)", "", "z:y", "b;"[:1], "x y z"]


def _stack(rng) -> str:
    return ";".join(rng.choice(_FRAMES) for _ in range(rng.randint(1, 6)))


def _file(rng, n, order: str) -> bytes:
    lines = [f"{_stack(rng)} {rng.randint(1, 9)}" for _ in range(n)]
    lines += [lines[rng.randrange(n)] for _ in range(n // 5)]  # repeated stacks
    if order == "frames":  # sorted as sequences of frames
        lines.sort(key=lambda s: (s.rsplit(" ", 1)[0].split(";"), s))
    else:
        lines.sort()
    if order == "broken":
        k = rng.randrange(len(lines))
        lines.insert(k, lines.pop(rng.randrange(len(lines))))
    if rng.random() < 0.5:
        lines.insert(rng.randrange(len(lines)), " 3")  # an empty stack
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("order", ["bytes", "frames", "broken"])
def test_sorted_scan_equals_the_dictionary_scan(seed, order):
    rng = random.Random(seed)
    data = _file(rng, rng.choice([5, 40, 300]), order)
    buf = np.frombuffer(data, np.uint8)
    depth = rng.choice([3, 100_000])
    a = collapsed_scan(buf, 0, buf.size, np.uint64(7), depth)[1:]
    b = _python_scan(buf, depth)
    for x, y in zip(a[:7], b[:7]):
        assert np.array_equal(x, y)
    assert np.array_equal(a[8][:6], b[8][:6])
