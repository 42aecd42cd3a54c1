"""Long arrays of numbers read from JSON bytes (`tracevis3d.kernels.jsoncolumns.number_arrays`,
`tracevis3d.io.profile_json.parse_json_columns`) against orjson, the parser they stand in for:
the same document, the same values, the same errors."""
from __future__ import annotations

import numpy as np
import orjson
import pytest

from tracevis3d.io.profile_json import NumberColumn, float_column, int_column, parse_json_columns
from tracevis3d.kernels.jsoncolumns import number_arrays
from tracevis3d.model import TraceFormatError


def _plain(v):
    """The parsed document with every `NumberColumn` as the list orjson makes."""
    if isinstance(v, NumberColumn):
        return v.tolist()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _random_array(rng, good: bool) -> list:
    n = int(rng.integers(0, 12))
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            out.append(int(rng.integers(-10 ** 17, 10 ** 17)))
        elif r < 0.8:
            out.append(round(float(rng.uniform(-1e5, 1e5)), int(rng.integers(0, 6))))
        else:
            out.append(None)
    if not good and out:  # an element that leaves the array to orjson
        bad = [True, "x", [1], {"a": 1}, 10 ** 19, 1.2345678901234567e-5, 1e300]
        out[int(rng.integers(0, len(out)))] = bad[int(rng.integers(0, len(bad)))]
    return out


def _twin_arrays(doc, min_len) -> list:
    """The arrays the kernel takes, brute force: flat arrays of ≥ ``min_len`` ints (< 10^18 in
    size), floats of the generator's good kind and nulls, in document order (depth first, in
    text order)."""
    out = []

    def good(x):
        return x is None or (isinstance(x, int) and not isinstance(x, bool) and abs(x) < 10 ** 18) or \
            (isinstance(x, float) and abs(x) < 1e6 and x == round(x, 6))

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            if len(v) >= min_len and all(good(x) for x in v):
                out.append(v)
            else:
                for x in v:
                    walk(x)

    walk(doc)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_number_arrays_take_exactly_the_flat_numeric_arrays(seed):
    rng = np.random.default_rng(seed)
    doc = {"a": [_random_array(rng, rng.random() < 0.7) for _ in range(5)], "s": "[1, 2, 3]",
           "b": {"c": _random_array(rng, True), "d": [_random_array(rng, False), "]"]}, "e": _random_array(rng, True)}
    data = orjson.dumps(doc)
    for min_len in (1, 3):
        span, first, value, kind = number_arrays(np.frombuffer(data, np.uint8), 0, min_len)
        want = _twin_arrays(doc, min_len)
        assert span.shape[0] == len(want)
        for k, arr in enumerate(want):
            assert orjson.loads(data[span[k, 0]:span[k, 1]]) == arr
            col = NumberColumn(value[first[k]:first[k + 1]], kind[first[k]:first[k + 1]])
            got = col.tolist()
            assert got == arr and [type(x) for x in got] == [type(x) for x in arr]
        parsed = parse_json_columns(data, "x.json", min_len=min_len)
        assert _plain(parsed) == orjson.loads(data)


@pytest.mark.parametrize("text", [b'[1,2,3', b'{"a": [1, 2, 01]}', b'{"a": [1, 2.]}', b'{"a": [1, 2], }', b'[' * 5000,
                                  b'{"a": "[1,2,3]', b'{"a": [1,2,3]} x', b'\xef\xbb\xbf{"a": [1, 2, 3e999]}'])
def test_documents_that_do_not_parse_are_refused_as_orjson_refuses_them(text):
    from tracevis3d.io.profile_json import parse_json

    with pytest.raises(TraceFormatError) as want:
        parse_json(text, "bad.json")
    with pytest.raises(TraceFormatError) as got:
        parse_json_columns(text, "bad.json", min_len=1)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("values", [[1, 2, 3, None], [0, 5, 99], [1.0, 2, 3], [1.5, 2, 3], [None, 1, 2], [-3, 4, 5],
                                    [4611686018427387904, 1, 2], [0.5, None, 2e5], [7, 8, 1e3]])
def test_columns_give_what_the_lists_give(values):
    """`int_column` and `float_column` on a column read from the bytes: the array, or the very
    error, the parsed list gives."""
    data = orjson.dumps({"v": values * 100})
    col = parse_json_columns(data, "x.json", min_len=8)["v"]
    lst = orjson.loads(data)["v"]
    assert isinstance(col, NumberColumn) == (abs(values[0] or 0) < 10 ** 18)

    def outcome(fn, v, **kw):
        try:
            a = fn(v, "x.json", "v", **kw)
            return a.dtype.str, a.tolist()
        except TraceFormatError as e:
            return str(e)

    for kw in ({}, {"null": -1}, {"lo": 0, "hi": 50}, {"lo": -1, "hi": 10, "null": -1}):
        assert outcome(int_column, col, **kw) == outcome(int_column, lst, **kw)
    for kw in ({}, {"null": 0.0}):
        assert outcome(float_column, col, **kw) == outcome(float_column, lst, **kw)
