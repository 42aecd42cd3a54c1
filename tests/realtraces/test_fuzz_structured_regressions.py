"""Regressions found by the structured fuzzer (tests/support/fuzz_structured.py) on the shipped
recordings: each test applies the one mutation that failed to its recording and loads the result
(a checked trace, or a one-line TraceFormatError naming the file)."""
from __future__ import annotations

import gzip
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
