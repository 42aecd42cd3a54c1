"""A file's copy given back before the Chrome reader is done (`io.filecopy`, `chrome._release_file`).

Past `chrome.RELEASE_BYTES` a load that read the file itself gives the copy's pages back once
the names are interned, and reads what it still needs (a repair's line, column and text) from the
file again.  Checked here with the threshold at 0: the trace, its repairs (their first
occurrences' places and texts) and warnings equal a load that keeps its bytes; the late reads
give the lines and columns `jsontokens.line_col` gives; a file changed after it was read is an
error, never wrong bytes; a file whose later steps read more of it keeps its copy.  The copy is
given back a block of rows at a time while the names are interned (`chrome._NameGiveBack`): pages
given back then, the trace equals a kept load's; when the names need the bytes after all (a
``[memory]`` instant) or the interning starts again with its keyed hash, the bytes given back are
read again from the file, which must not have changed.
"""
from __future__ import annotations

import json
import os
import random
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import chrome, chrome_rows, filecopy
from tracevis3d.kernels import jsonrows as jr
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


def test_a_file_with_an_event_read_later_keeps_its_copy(tmp_path, monkeypatch):
    """An async event (its id and args are read after the release point) anywhere among the rows
    keeps the copy (`chrome._has_phase` found its phase); without one the copy goes."""
    for at in (0, 250, 501):
        ev = _events(500)
        ev.insert(at, {"ph": "b", "name": "io", "cat": "c", "id": 7, "pid": 1, "tid": 1, "ts": 3})
        path = tmp_path / f"async{at}.json"
        _write(path, ev)
        assert _load(path, True, monkeypatch)[2] == []


def test_has_phase_against_the_lookup_of_every_row():
    """The twin: a table of phases looked up at every row, then any."""
    rng = np.random.default_rng(5)
    table = np.zeros(256, bool)
    table[np.frombuffer(b"PbenSTFp", np.uint8)] = True
    phases = [bytes([c]) for c in np.flatnonzero(table).tolist()]
    for n in (0, 1, 7, 1000):
        for _ in range(50):
            ph = rng.choice(np.frombuffer(b"XBEiMCsf" + (b"bP" if rng.random() < 0.3 else b""), np.uint8), n)
            for col in (ph, ph[::2], ph[: n // 2]):
                assert chrome._has_phase(col, phases) == bool(table[col].any())
    assert chrome._KEEP_BYTES_PHASES == [bytes([c]) for c in np.flatnonzero(chrome._KEEP_BYTES_PHASE).tolist()]


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


def _many_names(n: int, tail=()) -> list:
    """Calls on two threads whose names repeat (seven) and are new every 499 rows (first
    occurrences all through the file: their pages must stay while the rest is given back)."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": f"worker {t}"}} for t in (1, 2)]
    for k in range(n):
        name = f"new{k}" if k % 499 == 0 else f"f{k % 7}"
        ev.append({"ph": "X", "name": name, "cat": "c", "pid": 1, "tid": 1 + k % 2, "ts": 10 * k, "dur": 5})
    ev.extend(tail)
    ev.append({"ph": "B", "name": "never closed", "pid": 1, "tid": 2, "ts": 10 * n})
    return ev


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 256 rows and runs of one page: a small file given back in many steps; the runs
    given back counted."""
    monkeypatch.setattr(chrome_rows, "GIVE_BACK_BLOCK", 256)
    monkeypatch.setattr(filecopy, "MIN_RUN_PAGES", 1)
    runs = []
    real = filecopy.release_span

    def counted(copy, off, ln):
        runs.append((off, ln))
        return real(copy, off, ln)

    monkeypatch.setattr(filecopy, "release_span", counted)
    return runs


def test_a_copy_given_back_while_its_names_are_interned_equals_a_kept_one(tmp_path, monkeypatch, small_blocks):
    path = tmp_path / "calls.json"
    _write(path, _many_names(20000))
    kept, kept_warnings, _ = _load(path, False, monkeypatch)
    assert small_blocks == []
    given, given_warnings, released = _load(path, True, monkeypatch)
    assert released == [str(path)] and len(small_blocks) > 20  # given back in steps before the whole
    assert sum(ln for _, ln in small_blocks) > os.path.getsize(path) // 2
    assert _digest(given) == _digest(kept) and given_warnings == kept_warnings
    assert any("never closed" in w and "line" in w for w in given_warnings), given_warnings


def _restores(monkeypatch) -> list:
    done = []
    real = filecopy.GiveBack.restore

    def counted(self):
        done.append(len(self.released))
        return real(self)

    monkeypatch.setattr(filecopy.GiveBack, "restore", counted)
    return done


def test_names_that_need_the_bytes_have_them_read_again(tmp_path, monkeypatch, small_blocks):
    memory = {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5.0,
              "args": {"Device Type": 0, "Device Id": -1, "Total Allocated": 4096, "Total Reserved": 0}}
    path = tmp_path / "memory.json"
    _write(path, _many_names(6000, [memory]))
    kept, kept_warnings, _ = _load(path, False, monkeypatch)
    restores = _restores(monkeypatch)
    given, given_warnings, released = _load(path, True, monkeypatch)
    assert released == [] and restores and restores[0] > 0  # pages were given back, then read again
    assert _digest(given) == _digest(kept) and given_warnings == kept_warnings
    assert kept.counter_ts.size  # (the [memory] instants read: their args after the interning)


def test_a_keyed_second_interning_has_the_bytes_read_again(tmp_path, monkeypatch, small_blocks):
    path = tmp_path / "calls.json"
    _write(path, _many_names(6000))
    kept, kept_warnings, _ = _load(path, False, monkeypatch)
    real = jr.intern_spans_block
    calls = []

    def gives_up_once(buf, off, ln, valid, seed, full, budget, row0, ids, state):
        calls.append(full)
        if not full and len(calls) == 5:  # as the cheap hash does when it works too hard
            return False, state
        return real(buf, off, ln, valid, seed, full, budget, row0, ids, state)

    monkeypatch.setattr(jr, "intern_spans_block", gives_up_once)
    restores = _restores(monkeypatch)
    given, given_warnings, released = _load(path, True, monkeypatch)
    assert True in calls and restores and restores[0] > 0 and released == [str(path)]
    assert _digest(given) == _digest(kept) and given_warnings == kept_warnings


def test_bytes_read_again_from_a_changed_file_are_an_error(tmp_path, monkeypatch, small_blocks):
    memory = {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5.0, "args": {"Bytes": 1}}
    path = tmp_path / "memory.json"
    _write(path, _many_names(6000, [memory]))
    real = filecopy.GiveBack.restore

    def rewritten_first(self):
        path.write_bytes(path.read_bytes() + b" ")
        return real(self)

    monkeypatch.setattr(filecopy.GiveBack, "restore", rewritten_first)
    with pytest.raises(TraceFormatError, match=r"/memory\.json: the file changed while it was loaded"):
        _load(path, True, monkeypatch)
