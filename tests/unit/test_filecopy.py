"""A file's copy given back before the Chrome reader is done (`io.filecopy`, `chrome._release_file`).

Past `chrome.RELEASE_BYTES` a load that read the file itself gives the copy's pages back once
the names are interned, and reads what it still needs (a repair's line, column and text) from the
file again.  Checked here with the threshold at 0: the trace, its repairs (their first
occurrences' places and texts) and warnings equal a load that keeps its bytes; the late reads
give the lines and columns `jsontokens.line_col` gives; a file changed after it was read is an
error, never wrong bytes; a file whose later steps read more of it keeps its copy.
"""
from __future__ import annotations

import json
import os
import random
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import chrome, filecopy
from tracevis3d.kernels import jsontokens as jt
from tracevis3d.model import TraceFormatError


def _events(n: int, args: bool = False) -> list:
    """Calls on two threads, a B never closed (a repair: its place is read after the release),
    thread names (M events)."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": f"worker {t}"}} for t in (1, 2)]
    for k in range(n):
        e = {"ph": "X", "name": f"f{k % 7}", "cat": "c", "pid": 1, "tid": 1 + k % 2, "ts": 10 * k, "dur": 5}
        if args:
            e["args"] = {"k": k}
        ev.append(e)
    ev.append({"ph": "B", "name": "never closed", "pid": 1, "tid": 2, "ts": 10 * n})
    return ev


def _write(path, events) -> None:
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n")


def _digest(t):
    return ({k: (v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray) else v for k, v in vars(t).items()
             if k != "meta"}, json.dumps(t.meta, sort_keys=True, default=str))


def _load(path, release: bool, monkeypatch):
    released = []
    real = filecopy.release

    def counted(copy):
        released.append(copy.path)
        return real(copy)

    with monkeypatch.context() as m:
        m.setattr(chrome, "RELEASE_BYTES", 0 if release else 1 << 62)
        m.setattr(filecopy, "release", counted)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = tracevis3d.load(path)
    return t, [str(x.message) for x in w], released


def test_a_load_that_gives_its_copy_back_equals_one_that_keeps_it(tmp_path, monkeypatch):
    path = tmp_path / "calls.json"
    _write(path, _events(3000))
    kept, kept_warnings, none = _load(path, False, monkeypatch)
    given, given_warnings, released = _load(path, True, monkeypatch)
    assert none == [] and released == [str(path)]  # the copy was given back (else this test proves nothing)
    assert _digest(given) == _digest(kept) and given_warnings == kept_warnings
    assert any("never closed" in w and "line" in w for w in given_warnings), given_warnings


def test_a_file_whose_later_steps_read_it_keeps_its_copy(tmp_path, monkeypatch):
    path = tmp_path / "args.json"
    _write(path, _events(500, args=True))
    _t, _w, released = _load(path, True, monkeypatch)
    assert released == []


def test_late_lines_and_columns_are_those_of_the_bytes(tmp_path, monkeypatch):
    rng = random.Random(3)
    data = "".join(rng.choice(["a", "é", "\n", "{}", "\n\n", "xyz"]) for _ in range(5000)).encode()
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    monkeypatch.setattr(filecopy, "LINE_BLOCK", 97)  # many blocks: their counts carried between reads
    late = filecopy.LateFile(str(path), filecopy.stamp_of(os.stat(path)), "f.txt", {})
    buf = np.frombuffer(data, np.uint8)
    for pos in sorted(rng.randrange(len(data)) for _ in range(200)) + [0, len(data) - 1, 97, 194]:
        assert late.line_col(pos) == tuple(int(x) for x in jt.line_col(buf, pos)), pos
    assert late.read(10, 20) == data[10:30]


def test_a_file_changed_after_it_was_read_is_an_error_not_other_bytes(tmp_path):
    path = tmp_path / "f.json"
    path.write_bytes(b"[1, 2, 3]")
    late = filecopy.LateFile(str(path), filecopy.stamp_of(os.stat(path)), "f.json", {(0, 1): b"["})
    path.write_bytes(b"[4, 5, 6, 7]")
    assert late.read(0, 1) == b"["  # a span kept before the release needs no read
    with pytest.raises(TraceFormatError, match=r"^f\.json: the file changed while it was loaded"):
        late.read(1, 2)
    with pytest.raises(TraceFormatError, match="changed while it was loaded"):
        late.line_col(5)
    path.unlink()
    with pytest.raises(TraceFormatError, match="could not be read again"):
        late.read(1, 2)
