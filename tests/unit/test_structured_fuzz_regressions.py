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


@pytest.mark.timeout(60)
@pytest.mark.parametrize("field, value", [("samples", [1, [2], 2]), ("timeDeltas", [0, 5, [1, 2]]),
                                          ("samples", [1, 2, {"a": 1}])])
def test_a_list_inside_a_cpuprofiles_samples_is_refused_in_one_line(field, value):
    """numpy refuses lists of uneven shape (``np.asarray([1, [2]])`` raises ValueError): the V8
    reader took that for a traceback; now the array is "not numbers" as any other bad item."""
    import json

    from tracevis3d import TraceFormatError
    from tracevis3d.io import load_bytes

    doc = {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}},
                     {"id": 2, "parent": 1, "callFrame": {"functionName": "f", "url": "a.js"}}],
           "startTime": 0, "endTime": 30, "samples": [1, 2, 2], "timeDeltas": [0, 5, 5]}
    doc[field] = value
    try:
        load_bytes(json.dumps(doc).encode(), source="in.cpuprofile", warn=False)
    except TraceFormatError as e:
        assert str(e).startswith("in.cpuprofile") and "\n" not in str(e)


@pytest.mark.timeout(60)
def test_a_collapsed_lane_of_empty_stacks_only_is_nothing_to_show():
    """A tab-mangled ``perf script`` file sniffed as collapsed stacks: its one stack's frames
    are all empty, so its lane has samples but no nodes; splitting the lanes indexed an empty
    table (IndexError).  Now: "nothing to show", one line."""
    from tracevis3d import TraceFormatError
    from tracevis3d.io import load_bytes

    data = (b"simple-terminat\t\t\t\t10\t198792.736893:\t\t\t\t1001001\tcpu-clock:\n\r\n"
            + b"\t" * 14 + b"643\t_Z4betav\t(/workdir/simple-terminates)\n"
            + b"\t" * 14 + b"6f3\tmain\t(/workdir/simple-terminates)\n"
            + b"\t\t6ce258d4c544155\t[unknown]\t([unknown])")
    with pytest.raises(TraceFormatError, match=r"^in\.txt: .*nothing to show"):
        load_bytes(data, source="in.txt", warn=False)
