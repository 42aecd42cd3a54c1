"""The structured fuzzer's protobuf editing (tests/support/fuzz_structured.py): a field changed
deep inside nested messages is spliced back with every enclosing length re-encoded, so the
outer messages still decode and only the chosen field differs."""
from __future__ import annotations

import random

import pytest

import fuzz_structured as fs


def _field(fno: int, payload) -> bytes:
    if isinstance(payload, int):
        return fs.enc_varint(fno << 3) + fs.enc_varint(payload)
    return fs.enc_varint((fno << 3) | 2) + fs.enc_varint(len(payload)) + payload


def _message() -> bytes:
    leaf = _field(1, 7) + _field(2, b"name") + _field(3, 300)
    mid = _field(1, leaf) + _field(2, 5) + _field(4, leaf * 3)
    return _field(1, mid) + _field(1, mid) + _field(9, 1)


def _flatten(buf, start=0, end=None, depth=0, out=None):
    """(depth, field, wire type) of every field, descending into whatever decodes as a message."""
    out = [] if out is None else out
    for fno, wt, _ts, vs, ve in fs.parse_message(buf, start, end) or []:
        out.append((depth, fno, wt))
        if wt == 2:
            n, cs = fs._varint(buf, vs, ve)
            if fs.parse_message(buf, cs, ve):
                _flatten(buf, cs, ve, depth + 1, out)
    return out


@pytest.mark.timeout(60)
def test_varint_round_trip():
    for v in (0, 1, 127, 128, 300, 2 ** 31, 2 ** 63, 2 ** 64 - 1):
        assert fs._varint(fs.enc_varint(v), 0, 20) == (v, len(fs.enc_varint(v)))
    assert len(fs.enc_varint(2 ** 64 - 1)) == 10


@pytest.mark.timeout(60)
def test_mutations_keep_the_enclosing_messages_decodable():
    data = _message()
    before = _flatten(data)
    changed = 0
    for seed in range(300):
        out, label = fs.mutate_proto(data, random.Random(seed))
        if not label.startswith("length_past_end") or not label.endswith("depth 0"):
            assert fs.parse_message(out) is not None, label  # the enclosing messages decode
        if label.startswith("drop"):
            assert len(_flatten(out)) < len(before), label
        changed += out != data
    assert changed > 250
