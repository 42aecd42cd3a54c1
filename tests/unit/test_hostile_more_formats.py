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


#: a small hostile file of the fuzzer's for each format row (the cheapest to build): the rows
#: are checked by these first; a row not named here (or whose file is gone or now sniffs as
#: another format) by building every one of the fuzzer's 300-odd files, some of 100 MB (~15 s)
ROW_CASES = {
    "callgrind": "callgrind_two_event_lines", "collapsed": "collapsed_only_bad_counts", "cpuprofile": "not_a_profile",
    "ctf": "ctf_stream", "firefox": "firefox sample times going backwards", "gecko": "gecko_tid_fullwidth",
    "ghc-json": "ghc children not a list", "ghc-prof": "ghc_prof_no_tree", "go-trace": "go_exec_trace",
    "heapprofile": "heapprofile child not an object", "heapsnapshot": "heapsnapshot",
    "instruments-text": "instruments_bad_weights", "jfr": "jfr_recording", "memray": "memray_capture",
    "papyrus": "papyrus_log", "perf-data": "perf_data_big_endian", "perf-script": "perf_no_time",
    "perfetto": "varint_never_ends", "pmcstat": "pmcstat_callgraph", "pprof": "pprof_varint_never_ends",
    "pstats": "pstats_huge_tuple", "pyinstrument": "pyinstrument_cut", "safari": "safari no samples",
    "speedscope": "speedscope no profiles", "stackprof": "stackprof raw as strings", "trace-cmd": "trace_cmd_dat",
    "tracy": "tracy_zstd", "v8log": "v8log_raw", "v8log-json": "v8log_ticks_not_a_list", "zip": "zip_other",
}


def test_every_format_row_has_hostile_files_in_the_fuzzer():
    assert "hostile_more_formats" in fuzz_hostile.FORMAT_CASE_MODULES
    cases = fuzz_hostile.format_cases()

    def format_of_case(name, factory, *rest):
        opts = rest[1] if len(rest) > 1 and isinstance(rest[1], dict) else {}
        return _format_of(factory(), opts)

    rows = [f.key for f in formats.FORMATS if f.key not in OWN_GENERATORS]
    by_name = {c[0]: c for c in cases}
    covered = {row for row in rows if row in ROW_CASES and ROW_CASES[row] in by_name
               and format_of_case(*by_name[ROW_CASES[row]]) == row}
    if set(rows) - covered:  # a row ROW_CASES does not vouch for: every file of the fuzzer
        covered |= {format_of_case(*c) for c in cases}
    missing = [row for row in rows if row not in covered]
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
        data = factory()
        fmt = formats.detect(formats.Head(data, whole=True))
        if fmt is not None and not fmt.readable and fmt.key != "zip":
            p = tmp_path / "x.bin"
            p.write_bytes(data)
            with pytest.raises(TraceFormatError, match=re.escape(fmt.title) + ".*recognises but does not read"):
                tracevis3d.load(p, **options)
