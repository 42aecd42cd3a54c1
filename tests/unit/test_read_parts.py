"""`io._read_to_end` reads a large file as two halves side by side: the bytes are the file's,
whole, in order, with reads cut short (``os.preadv`` capped) and with a file that shrinks
between the two halves' reads; the file's position is left after the bytes read, where the
caller goes on reading a file that grew."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tracevis3d import io as tio


@pytest.fixture
def big(tmp_path, monkeypatch):
    monkeypatch.setattr(tio, "PARALLEL_READ_BYTES", 1 << 20)
    data = np.random.default_rng(3).integers(0, 256, (5 << 20) + 12345, np.uint8).tobytes()
    p = tmp_path / "big.bin"
    p.write_bytes(data)
    return p, data


def test_two_halves_read_the_whole_file(big):
    p, data = big
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
        assert f.tell() == total
    assert total == len(data) and bytes(view) == data


def test_short_reads_are_looped_over(big, monkeypatch):
    p, data = big
    real = os.preadv
    calls = []

    def capped(fd, bufs, offset):
        calls.append(offset)
        return real(fd, [memoryview(bufs[0])[:70000]], offset)

    monkeypatch.setattr(os, "preadv", capped)
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
    assert total == len(data) and bytes(view) == data
    assert len(calls) >= len(data) // 70000 and 0 in calls and (2 << 20) in calls  # both halves, in pieces


def test_a_file_that_shrinks_ends_the_bytes_where_the_first_half_stopped(big, monkeypatch):
    p, data = big
    real = os.preadv
    cut = 1 << 20  # inside the first half (which ends at 2 MiB)

    def shrunk(fd, bufs, offset):  # the file as if truncated to ``cut`` bytes before any read
        if offset >= cut:
            return 0
        return real(fd, [memoryview(bufs[0])[:cut - offset]], offset)

    monkeypatch.setattr(os, "preadv", shrunk)
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
        assert f.tell() == cut
    assert total == cut and bytes(view) == data[:cut]


def test_an_error_in_the_second_half_is_raised(big, monkeypatch):
    p, data = big
    real = os.preadv

    def failing(fd, bufs, offset):
        if offset >= 2 << 20:
            raise OSError(5, "Input/output error")
        return real(fd, bufs, offset)

    monkeypatch.setattr(os, "preadv", failing)
    with open(p, "rb", buffering=0) as f:
        with pytest.raises(OSError, match="Input/output"):
            tio._read_to_end(f, len(data) + 1)


def test_a_grown_file_is_read_on_by_load(big, tmp_path):
    """`_read_input` asks for the file's size + 1: a file that grew gives that many, and the
    rest is read from the position the halves left."""
    p, data = big
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) - 5)  # as if stat had seen 6 bytes fewer
        assert total == len(data) - 5 and f.tell() == total
        assert bytes(view) + f.read() == data
