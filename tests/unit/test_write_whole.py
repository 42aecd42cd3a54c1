"""Small outputs (manifests, sessions, bench tables) written whole or not at all:
`tracevis3d.io.atomic.write_whole` and bench/benchio.write_json_whole, under a real file-size
limit (RLIMIT_FSIZE) in a child process, onto links and beside other files."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from tracevis3d.io.atomic import OutputError, write_whole

REPO = pathlib.Path(__file__).resolve().parents[2]

CHILD = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
kind, target = sys.argv[1], sys.argv[2]
big = {"rows": ["x" * 100] * 200}
try:
    if kind == "tracevis3d":
        from tracevis3d.io.atomic import write_whole
        import json
        write_whole(target, json.dumps(big))
    else:
        sys.path.insert(0, sys.argv[3])
        from benchio import write_json_whole
        write_json_whole(target, big)
except OSError as e:
    print(str(e), file=sys.stderr)
    sys.exit(1)
"""


@pytest.mark.parametrize("kind", ["tracevis3d", "benchio"])
def test_a_file_size_limit_leaves_the_old_file_and_no_temporary(tmp_path, kind):
    target = tmp_path / "table.json"
    target.write_text('{"good": true}')
    r = subprocess.run([sys.executable, "-c", CHILD, kind, str(target), str(REPO / "bench")],
                       env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert target.read_text() == '{"good": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.json"]
    if kind == "tracevis3d":
        assert r.stderr.strip().count("\n") == 0 and "file too large" in r.stderr and str(target) in r.stderr


def test_a_link_stays_a_link_and_its_target_is_written(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_whole(link, b'{"new": 1}')
    assert link.is_symlink() and json.loads(real.read_text()) == {"new": 1}


def test_a_fifo_is_refused_and_left_alone(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError) as e:
        write_whole(fifo, "x")
    assert "pipe" in str(e.value) and pathlib.Path(fifo).is_fifo()
