"""Regressions found by the structured fuzzer (tests/support/fuzz_structured.py) on the shipped
recordings: each test applies the one mutation that failed to its recording and loads the result
(a checked trace, or a one-line TraceFormatError naming the file)."""
from __future__ import annotations

import gzip
import json
import pathlib
import re

import numpy as np
import pytest

import tracevis3d

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"


@pytest.mark.timeout(300)
def test_austin_frame_with_a_line_past_int64(tmp_path):
    """structured seed 50403 (austin/sampled_work.austin.memory.txt.gz, a line number made
    99999999999999999999): was OverflowError in io/stacks.py's function tables."""
    text = gzip.decompress((DATA / "austin" / "sampled_work.austin.memory.txt.gz").read_bytes()).decode()
    bad = re.sub(r"(\.py:[^;:\s]+:)(\d+)", r"\g<1>99999999999999999999", text, count=1)
    assert bad != text
    p = tmp_path / "austin.txt"
    p.write_text(bad)
    t = tracevis3d.load(str(p))
    t.check()
    lines = np.asarray(t.function_lines)
    assert len(t) and (lines >= -1).all() and (lines == -1).any()


def _round_trip(t, folder):
    """Save ``t`` natively and as a compact file, load both back: the same text tables."""
    for name, fmt in (("rt.tv3d.npz", "native"), ("rt.tv3c", "compact")):
        p = str(folder / name)
        tracevis3d.save(t, p, format=fmt)
        u = tracevis3d.load(p)
        assert list(u.thread_names) == list(t.thread_names) and list(u.function_files) == list(t.function_files)


@pytest.mark.timeout(300)
def test_callgrind_command_of_1e5_characters_round_trips(tmp_path):
    """structured fuzzing: callgrind.multiple-event-types.log with its ``cmd:`` path 10^5
    characters long loaded, but its thread name was then refused by the native reader
    (longer than max_name_chars): the text tables are cut when any reader returns."""
    text = (DATA / "speedscope-samples" / "callgrind" / "callgrind.multiple-event-types.log").read_text()
    bad = re.sub(r"^cmd: .*$", "cmd: /var/www/" + "f" * 100_000, text, count=1, flags=re.M)
    assert bad != text
    p = tmp_path / "long.callgrind"
    p.write_text(bad)
    t = tracevis3d.load(str(p))
    t.check()
    assert max(len(s) for s in t.thread_names) <= 4096 + 9 and t.meta["repairs"]["text_unfit"]["count"] >= 1
    _round_trip(t, tmp_path)


@pytest.mark.timeout(300)
def test_cpuprofile_url_with_a_lone_surrogate_round_trips(tmp_path):
    """structured fuzzing: sucrase.cpuprofile with a lone surrogate appended to a call frame's
    URL loaded, but the native reader refused the saved file (not valid Unicode)."""
    doc = json.loads((DATA / "speedscope-samples" / "Chrome" / "65" / "simple.cpuprofile").read_text())
    doc["nodes"][2]["callFrame"]["url"] = "https://x/\ud800a.js"
    p = tmp_path / "surrogate.cpuprofile"
    p.write_text(json.dumps(doc))  # ensure_ascii: the surrogate written as \ud800
    t = tracevis3d.load(str(p))
    t.check()
    assert any("\ufffd" in s for s in t.function_files)
    _round_trip(t, tmp_path)
