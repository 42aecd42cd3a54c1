"""What the memory captures' fuzzer found in memray's own reader's path (issue 78:
tests/support/fuzz_memory.py): ``--native`` captures (and ``reader='memray'``) go to memray's C++
FileReader, which trusts its input; ours scans them first, and memray's errors are one line."""
from __future__ import annotations

import struct

import pytest

import fuzz_memory as fm
import hostile_memory as hm
from test_fuzz_memory_finds import _raw, _switches
from time_limits import time_limit

from tracevis3d import load_memory
from tracevis3d.errors import TraceFormatError

_NATIVE = """
from tracevis3d.errors import TraceFormatError
from tracevis3d import load_memory
try:
    load_memory(PATH, warn=False)
    out["outcome"] = "loaded"
except TraceFormatError as e:
    out["message"] = str(e)
"""


def test_a_damaged_native_capture_never_reaches_memrays_reader(tmp_path):
    """A ``--native`` capture is read by memray's FileReader, which trusts its input: the first
    context switch made one to thread 0 (the main thread's frame pops then land on an empty
    stack) crashed the process (SIGSEGV).  Our scanner reads it first and refuses it in one line."""
    data = bytearray(_raw("seed-native.bin"))
    s = _switches(bytes(data))[0]
    struct.pack_into("<Q", data, s + 1, 0)
    path = tmp_path / "native.bin"
    path.write_bytes(bytes(data))
    res = hm.run_bounded(_NATIVE.replace("PATH", repr(str(path))), timeout=180)
    assert res["outcome"] == "ok", res
    msg = res["message"]
    assert msg.startswith(f"{path}: byte ") and "a frame pop of more frames than the thread's stack holds" in msg \
        and "\n" not in msg, msg


@pytest.mark.parametrize("seed", ["seed-native.bin", "seed-aggregate.bin"])
def test_a_header_field_memray_has_no_name_for_is_one_line(seed, tmp_path):
    """A Python allocator code memray does not know (7): memray's metadata raised KeyError 7."""
    data = bytearray(_raw(seed))
    hf, _ = fm.header(bytes(data))
    data[hf["python_allocator"][0]] = 7
    path = tmp_path / "alloc7.bin"
    path.write_bytes(bytes(data))
    with time_limit(120), pytest.raises(TraceFormatError) as e:
        load_memory(path, warn=False)
    msg = str(e.value)
    assert msg.startswith(f"{path}: byte ") and "\n" not in msg, msg
    assert ("aggregated capture" in msg) if "aggregate" in seed else ("cannot read its header: KeyError 7" in msg)
