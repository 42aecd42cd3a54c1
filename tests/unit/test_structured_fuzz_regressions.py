"""Regressions found by the structured fuzzer (tests/support/fuzz_structured.py), the smallest
input of each, no recordings: see tests/realtraces/test_fuzz_structured_regressions.py for
those on the recordings themselves."""
from __future__ import annotations

import pytest

from tracevis3d.names import parse_function_name


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["/a/b.py:f:99999999999999999999", "f (/a/b.py:18446744073709551616)",
                                  "/a/b.py:f:2147483648"])
def test_a_line_past_int32_is_no_line(name):
    """Austin's ``file:function:line`` frame with a 20-digit line: the function tables hold
    lines as int32, so such a line is none (-1), not an OverflowError while the tables are built."""
    p = parse_function_name(name)
    assert p.line == -1 and p.file == "/a/b.py", p


@pytest.mark.timeout(60)
def test_a_line_inside_int32_is_kept():
    assert parse_function_name("/a/b.py:f:2147483647").line == 2147483647
    assert parse_function_name("/a/b.py:f:12").line == 12


def _speedscope(profile: dict) -> bytes:
    import json

    return json.dumps({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": [{"name": "a"}, {"name": "b"}]}, "profiles": [profile]}).encode()


def _refusal(data: bytes) -> str:
    from tracevis3d import TraceFormatError
    from tracevis3d.io import load_bytes

    with pytest.raises(TraceFormatError) as e:
        load_bytes(data, source="in.speedscope.json")
    msg = str(e.value)
    assert msg.startswith("in.speedscope.json: ") and "\n" not in msg
    return msg


@pytest.mark.timeout(120)
def test_speedscope_unit_of_another_type_is_refused():
    """simple.speedscope.json with its unit made an object: was TypeError (unhashable)."""
    msg = _refusal(_speedscope({"type": "evented", "name": "p", "unit": {"v": "none"}, "startValue": 0,
                                "endValue": 2, "events": [{"type": "O", "frame": 0, "at": 0},
                                                          {"type": "C", "frame": 0, "at": 2}]}))
    assert "profiles[0].unit" in msg


@pytest.mark.timeout(120)
def test_speedscope_event_type_of_another_type_is_refused():
    """out-of-order-events.json with one event's type made a list: was ValueError (numpy's
    inhomogeneous array)."""
    msg = _refusal(_speedscope({"type": "evented", "name": "p", "unit": "none", "startValue": 0,
                                "endValue": 2, "events": [{"type": "O", "frame": 0, "at": 0},
                                                          {"type": ["C"], "frame": 0, "at": 2}]}))
    assert "profiles[0].events[1].type" in msg
