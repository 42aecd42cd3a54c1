"""The recordings of other tools shipped in tests/data/formats/recorded/ (tools/record_traces.py
--formats ... --ship; their manifest.json and README.md say what each is and how it was made), and
the recorders that make them (tools/recorders/).

For every shipped file: it is gzip and inflates to a real recording, `tracevis3d.io.formats.detect`
recognises its first bytes as the format it claims, and, where the format's reader exists, it
loads with calls and the number of threads the file itself holds (the manifest's ``threads``,
counted by tools/recorders/summaries.py; ``threads_rule`` says what is counted).  A reader module
that does not exist yet skips the load ("reader not yet available").

The slow tests record each format afresh with the tool installed here (skipping when it is not)
and load what it wrote the same way.
"""
from __future__ import annotations

import gzip
import json
import os
import pathlib
import warnings

import pytest

import realtraces
from tracevis3d.io.formats import HEAD_BYTES, Head, detect

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "recorded"
MANIFEST = json.loads((RECORDED / "manifest.json").read_text(encoding="utf-8"))["recordings"]
#: the most a shipped recording may weigh (gzipped)
MAX_SHIPPED_BYTES = 200_000


def _load(path):
    """``tracevis3d.load(path)``; skips when the format's reader module does not exist yet."""
    import tracevis3d

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tracevis3d.load(path)
    except ModuleNotFoundError as e:
        if (e.name or "").startswith("tracevis3d.io."):
            pytest.skip(f"reader not yet available: {e.name}")
        raise


def _sniffed(data: bytes, name: str) -> str:
    fmt = detect(Head(data, whole=len(data) <= HEAD_BYTES, name=name))
    return fmt.key if fmt else "(none)"


def test_the_manifest_lists_every_shipped_file_and_the_readme_too():
    shipped = {p.relative_to(RECORDED).as_posix() for p in RECORDED.rglob("*") if p.is_file()} - \
        {"manifest.json", "README.md"}
    listed = {e["file"] for e in MANIFEST}
    assert shipped == listed
    readme = (RECORDED / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in listed)


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_a_shipped_recording_is_what_it_claims(entry):
    path = RECORDED / entry["file"]
    raw = path.read_bytes()
    assert 0 < len(raw) <= MAX_SHIPPED_BYTES
    assert raw[:2] == b"\x1f\x8b", "shipped recordings are gzipped"
    data = gzip.decompress(raw)
    assert len(data) > 1000
    assert _sniffed(data, path.name) == entry["format"]
    assert entry["tool"] and entry["version"] and entry["command"] and entry["threads"] >= 1


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_a_shipped_recording_loads_with_its_threads(entry):
    t = _load(RECORDED / entry["file"])
    assert len(t) > 0
    assert t.n_threads == entry["threads"], f"expected {entry['threads']} threads: {entry['threads_rule']}"


def _format_suite():
    return realtraces.recorder().FORMAT_SUITE


def _format_names() -> list:
    return [r.name for r in _format_suite()]


@pytest.mark.slow
@pytest.mark.parametrize("name", _format_names())
def test_a_recorder_records_afresh(name, tmp_path):
    """Each recorder run here: its files exist, are sniffed as their formats, hold what the
    summaries count, and load (where the reader exists) with calls and those threads."""
    rec = realtraces.recorder()
    entry = next(r for r in rec.FORMAT_SUITE if r.name == name)
    try:
        entry.record(str(tmp_path))
    except rec.RecordingSkipped as e:
        pytest.skip(str(e))
    assert (tmp_path / (entry.files[0][0] + ".record.json")).is_file()
    for file_name, fmt in entry.files:
        path = tmp_path / file_name
        assert path.is_file() and path.stat().st_size > 1000, file_name
        data = path.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        assert _sniffed(data, file_name) == fmt
        summary = rec.summarize(str(path), fmt)
        assert summary["threads"] >= 1
        t = _load(path)
        assert len(t) > 0
        assert t.n_threads == summary["threads"], f"{file_name}: {summary['threads_rule']}"


def test_the_recorders_are_importable_from_record_traces():
    """tools/record_traces.py keeps the names other code imports from it (tests/support/realtraces.py,
    tests/test_chrome_profile.py) beside the format recorders."""
    rec = realtraces.recorder()
    for name in ("viztracer_command", "viztracer_overflowed", "NUMBA_JIT_PROGRAM", "deep_json_document", "_write",
                 "DOCUTILS_POOL_PROGRAM", "rst_document", "HTTP_THREADS_PROGRAM", "COUNTERS_PROGRAM",
                 "CHROMIUM_CATEGORIES", "CHROMIUM_PAGE", "SUITE", "record", "main", "summarize"):
        assert hasattr(rec, name), name
    assert {r.name for r in rec.FORMAT_SUITE} >= {"chromium_json", "chromium_proto", "firefox_gecko", "go_pprof",
                                                  "node_cpuprofile", "callgrind", "perf", "pyspy_speedscope",
                                                  "pyspy_raw", "pyinstrument", "uftrace"}
    for r in rec.FORMAT_SUITE:
        assert callable(r.record) and r.files
    assert os.path.isdir(os.path.join(rec.REPO, "tools", "recorders", "programs"))
