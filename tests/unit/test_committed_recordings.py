"""The committed recordings the figure, layout and analysis tests read (tests/data/recorded, made by
tools/record_test_traces.py): each file the manifest lists is there with the bytes it lists, each
fixture that reads one names a manifest entry, and no file is there that the manifest does not list
(a recording that is not read, or one whose fixture reads a stale name)."""
import hashlib
import json
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "recorded"


def _manifest() -> dict:
    return json.loads((RECORDED / "manifest.json").read_text())


def test_every_listed_recording_is_there_with_its_bytes():
    for name, entry in _manifest().items():
        for f in entry["files"]:
            data = (RECORDED / f["file"]).read_bytes()
            assert len(data) == f["bytes"] and hashlib.sha256(data).hexdigest() == f["sha256"], (name, f["file"])
            assert f["file"].endswith((".json.gz", ".json.xz", ".bin.gz")), f["file"]


def test_every_recording_there_is_listed_and_every_fixture_names_one():
    from memray_captures import COMMITTED_MEMORY_AND_CALLS  # (memray's and py-spy's pair: its own recipe)

    listed = {f["file"] for entry in _manifest().values() for f in entry["files"]}
    there = {p.name for p in RECORDED.iterdir() if p.suffix in (".gz", ".xz")}
    assert there == listed | set(COMMITTED_MEMORY_AND_CALLS), (there - listed, listed - there)
    conftest = (REPO / "tests" / "conftest.py").read_text()
    read = set(re.findall(r'_committed\(tmp_path_factory, "(\w+)"\)', conftest))
    assert read and read <= set(_manifest()), read - set(_manifest())
    readme = (RECORDED / "README.md").read_text()
    named = listed | set(COMMITTED_MEMORY_AND_CALLS)
    assert all(f"`{name}`" in readme for name in named), sorted(n for n in named if f"`{n}`" not in readme)
