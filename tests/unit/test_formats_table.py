"""The one table of formats (`tracevis3d.io.formats`, issue 67 item 1): every format is
recognised from its first bytes by exactly one sniffer, every loader and writer it names
exists, a format recognised but not read says so, and the warm-up holds a tiny valid file of
every readable format (`tracevis3d.warmup_formats`)."""
from __future__ import annotations

import gzip
import importlib
import pathlib
import subprocess
import sys

import pytest

import tracevis3d
from tracevis3d.io import formats
from tracevis3d.io.formats import FORMATS, Head, detect
from tracevis3d.model import TraceFormatError
from tracevis3d.warmup_formats import FORMAT_SAMPLES, load_every_format

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "formats"


def test_every_loader_and_writer_named_exists():
    """Every function a row names (loader, writer, memory reader, in-place reader, sample,
    conventions, quick check) exists; so do the wrappers' openers."""
    for f in FORMATS:
        for path in (f.loader, f.writer, f.memory, f.in_place, f.sample, f.quick_check, *f.conventions):
            if path:
                mod, _, fn = path.partition(":")
                assert callable(getattr(importlib.import_module(f"tracevis3d.io.{mod}"), fn)), (f.key, path)
        assert f.readable or f.why_not, f"{f.key}: recognised, not read, and no word on why"
    assert len({f.key for f in FORMATS}) == len(FORMATS)
    for c in formats.CONTAINERS:
        for path in (c.opener, c.head_opener):
            if path:
                mod, _, fn = path.partition(":")
                assert callable(getattr(importlib.import_module(f"tracevis3d.io.{mod}"), fn)), (c.key, path)
        assert c.opener or c.hint, c.key
    assert formats.fallback().readable and formats.fallback(memory=True).memory


def test_memory_captures_are_rows_that_read(tmp_path):
    """A memray capture and Chrome JSON are told apart by the table's memory rows; what no memory
    row claims goes to the memray reader, which says why it is no capture."""
    from tracevis3d.io.formats import MEMRAY_MAGIC, by_key

    assert detect(Head(MEMRAY_MAGIC + bytes(60)), memory=True) is by_key("memray")
    assert detect(Head(b'{"traceEvents": []}'), memory=True) is by_key("chrome")
    assert detect(Head(b"main;work 3\n"), memory=True) is None
    p = tmp_path / "x.txt"
    p.write_bytes(b"main;work 3\n")
    with pytest.raises(TraceFormatError, match="not a memray capture"):
        tracevis3d.load_memory(p)


def test_every_readable_format_has_a_warmup_sample_that_only_its_sniffer_claims():
    samples = dict(FORMAT_SAMPLES)
    native = {"native", "compact", "chrome"}  # warmed by the warm-up's own load steps
    missing = [f.key for f in FORMATS if (f.readable or f.memory) and f.key not in samples and f.key not in native]
    assert not missing or set(missing) <= {"safari"}, missing  # Safari: the speedscope kernels, by its reader
    for key, make in FORMAT_SAMPLES:
        data = make()
        head = Head(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data, whole=True)
        claims = [f.key for f in FORMATS if f.sniff(head)]
        assert claims[:1] == [key], (key, claims)
    assert all(isinstance(v, int) and v > 0 for v in load_every_format(strict=True).values())


@pytest.mark.parametrize("path, key", [
    ("recorded/chromium/chromium_json.json.gz", "chrome"),
    ("recorded/chromium/chromium_proto.pftrace.gz", "perfetto"),
    ("recorded/node/node.cpuprofile.gz", "cpuprofile"),
    ("recorded/go/go_cpu.pb.gz", "pprof"),
    ("recorded/perf/perf.script.txt.gz", "perf-script"),
    ("recorded/py-spy/pyspy.collapsed.txt.gz", "collapsed"),
    ("recorded/py-spy/pyspy.speedscope.json.gz", "speedscope"),
    ("recorded/valgrind/callgrind.out.gz", "callgrind"),
    ("recorded/firefox/firefox_workers.json.gz", "gecko"),
])
def test_real_recordings_are_told_apart(path, key):
    p = DATA / path
    if not p.exists():
        pytest.skip(f"{p} not shipped")
    raw = p.read_bytes()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    assert detect(Head(data, whole=True)).key == key


@pytest.mark.parametrize("data, says", [
    (b"FLR\x00\x00\x02\x00\x00" + b"\x00" * 64, "Java Flight Recorder recording"),
    (b"v8-version,6,0,287,53,0\nshared-library,\"/x\",0x1,0x2,0\n", "V8 log"),
    ("zip", "a zip archive, not a TraceVis3D trace"),
    (b'{"snapshot":{"meta":{}},"nodes":[]}', "V8 heap snapshot"),
    # the first bytes of `perf record -o X -- true` (perf 6.1), and of the others' files by their
    # writers' headers (Go's runtime/trace, trace-cmd's trace.dat, Tracy raw and LZ4, CTF packets)
    (b"PERFILE2h\x00\x00\x00\x00\x00\x00\x00" + b"\x00" * 48, "run 'perf script -i perf.data > perf.txt'"),
    (b"go 1.22 trace\x00\x00\x00" + b"\x01\x02" * 8, "go tool trace -pprof=sched"),
    (b"\x17\x08\x44tracing6\x00" + b"\x00" * 32, "trace-cmd / ftrace recording"),
    (b"tr\xfdP\x00\x0b\x00" + b"\x00" * 32, "Tracy capture"),
    (b"tlZ\x04" + b"\x10\x00" * 16, "Tracy capture"),
    (b"\xc1\x1f\xfc\xc1" + b"\x00" * 60, "ctf2ctf"),
])
def test_a_format_recognised_but_not_read_is_named(tmp_path, data, says):
    p = tmp_path / "x.bin"
    if data == "zip":  # an Instruments bundle, a zipped V8 log: a real zip that holds no trace of ours
        import zipfile

        with zipfile.ZipFile(p, "w") as z:
            z.writestr("simple.v8log.json", "{}")
    else:
        p.write_bytes(data)
    with pytest.raises(TraceFormatError) as e:
        tracevis3d.load(p)
    assert str(p) in str(e.value) and says in str(e.value) and "\n" not in str(e.value)


def test_the_cli_lists_the_formats():
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "formats"], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for f in FORMATS:
        assert f.key in r.stdout
    assert "Recognised but not read" in r.stdout


def test_the_key_scan_of_a_large_json_head_is_bounded():
    """A Chrome object whose events fill the head: the key scan stops at its first key that only
    Chrome has, or after `KEY_SCAN_BYTES` (a tokenizer in Python over a whole MiB took 0.65 s a load)."""
    big = b'{"traceEvents":[' + b'{"ph":"X","name":"f","ts":1,"dur":1,"pid":1,"tid":1},' * 40000 + b"{}]}"
    h = Head(big)
    assert h.json_keys == ["traceEvents"] and detect(h).key == "chrome"
    other = b'{"zzz":[' + b"[1,2,3]," * 200000 + b"0]}"
    assert Head(other).json_keys == ["zzz"] and formats.KEY_SCAN_BYTES < len(other)
