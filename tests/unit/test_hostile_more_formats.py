"""Bad input for the format rows without a case module of their own (tests/support/
hostile_more_formats.py: the V8 tick log, pyinstrument, GHC's text report, the recognised formats
that are not read), and the shared fuzzer's reach: every row of io/formats.py has hostile files
in tests/support/fuzz_hostile.py's `format_cases` (or, for the native and compact files and
Chrome JSON, a generator of its own there)."""
from __future__ import annotations

import re

import pytest

import fuzz_hostile
import hostile_more_formats as hm
import tracevis3d
from time_limits import time_limit
from tracevis3d.io import formats
from tracevis3d.model import TraceFormatError

#: rows the fuzzer damages with generators of their own (fuzz_hostile.build: "native", "compact",
#: "damage" and "case" make these files), not with format cases
OWN_GENERATORS = {"native": "native", "compact": "compact", "chrome": "damage"}


def _format_of(data: bytes, options: dict) -> str | None:
    if "format" in options:
        return options["format"]
    if data[:2] == b"\x1f\x8b":
        import gzip

        data = gzip.decompress(data)
    fmt = formats.detect(formats.Head(data, whole=True))
    return fmt.key if fmt is not None else None


def test_every_format_row_has_hostile_files_in_the_fuzzer():
    assert "hostile_more_formats" in fuzz_hostile.FORMAT_CASE_MODULES
    covered = {}
    for name, factory, *rest in fuzz_hostile.format_cases():
        opts = rest[1] if len(rest) > 1 and isinstance(rest[1], dict) else {}
        covered.setdefault(_format_of(factory(), opts), []).append(name)
    missing = [f.key for f in formats.FORMATS if f.key not in covered and f.key not in OWN_GENERATORS]
    assert not missing, f"format rows without hostile files in the fuzzer: {missing}"
    assert set(OWN_GENERATORS.values()) <= set(fuzz_hostile.KINDS)  # the rest: still drawn


@pytest.mark.parametrize("name", [c[0] for c in hm.CASES])
def test_hostile(name, tmp_path):
    """Each case: a one-line TraceFormatError that starts with the file's path and matches, or a
    checked trace (with the repair named); a guard alarm far above the second or two they take."""
    _, factory, expected, options = next(c for c in hm.CASES if c[0] == name)
    p = tmp_path / f"{name}.bin"
    p.write_bytes(factory())
    with time_limit(120):
        try:
            trace = tracevis3d.load(p, warn=False, **options)
            err = None
        except TraceFormatError as e:
            err = str(e)
    if expected is None or isinstance(expected, tuple):
        assert err is None, err
        trace.check()
        assert len(trace) > 0
        if expected is not None:
            assert expected[1] in trace.meta.get("repairs", {}), (name, trace.meta.get("repairs"))
    else:
        assert err is not None, f"{name}: loaded {len(trace)} calls; expected an error matching {expected!r}"
        assert "\n" not in err and err.startswith(f"{p}: "), err
        assert re.search(expected, err), err


def test_recognised_formats_that_are_not_read_say_which_they_are(tmp_path):
    for name, factory, _, options in hm.CASES:
        fmt = formats.detect(formats.Head(factory(), whole=True))
        if fmt is not None and not fmt.readable and fmt.key != "zip":
            p = tmp_path / "x.bin"
            p.write_bytes(factory())
            with pytest.raises(TraceFormatError, match=re.escape(fmt.title) + ".*recognises but does not read"):
                tracevis3d.load(p, **options)
