"""``render-memory --live-port`` fed by a peer that sends a capture of deep, shared stacks and
closes (issue 78, case 2): 3000 allocations, each under its own leaf on one 99,999-frame stack
(tests/support/hostile_memory.py).  Before, every rebuild walked every stack to the root (minutes),
so the command ended at ``--live-seconds`` saying "the program still runs" though the stream had
ended; now it draws and renders the whole stream, and a stream that ended before ``--live-seconds``
whose drawing had not finished then is said to have ended, drawn whole and rendered."""
import os
import socket
import subprocess
import sys
import threading

import pytest

pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import hostile_memory as hm  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Sender:
    """memray's live tracker's place on loopback: sends ``data`` to the first client, closes."""

    def __init__(self, data: bytes):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.srv.settimeout(300)
        self.port = self.srv.getsockname()[1]
        self.t = threading.Thread(target=self._serve, args=(data,), daemon=True)
        self.t.start()

    def _serve(self, data):
        try:
            conn, _ = self.srv.accept()
        except OSError:
            return
        try:
            conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.srv.close()
        self.t.join(30)


def _render(tmp_path, seconds: str, name: str):
    peer = _Sender(hm.deep_leaves(depth=99_999, leaves=3000))
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    out = tmp_path / f"{name}.png"
    try:
        r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-memory", "--live-port", str(peer.port), "-o",
                            str(out), "--resolution", "320x180", "--live-seconds", seconds], cwd=REPO,
                           capture_output=True, text=True, timeout=500, env=env)
    finally:
        peer.close()
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("tracevis3d:")]
    assert "Traceback" not in r.stderr and "still runs" not in r.stderr, r.stderr[-3000:]
    return r, errors, out


@pytest.mark.timeout(900)
def test_a_deep_live_stream_is_drawn_and_rendered(tmp_path):
    r, errors, out = _render(tmp_path, "300", "deep")
    assert r.returncode == 0 and not errors, r.stderr[-3000:]
    assert out.stat().st_size > 1000 and "final: 3,000 allocator records" in r.stderr, r.stderr[-3000:]


@pytest.mark.timeout(900)
def test_an_ended_stream_not_drawn_in_time_is_still_drawn_whole(tmp_path):
    """--live-seconds 1: the stream (sent at once) has ended by then, its figure not yet drawn (a
    fresh process's first build takes longer): the command says the stream ended, draws all of
    it and renders it (exit 0); before, it said the program still runs (exit 1)."""
    r, errors, out = _render(tmp_path, "1", "short")
    assert r.returncode == 0 and not errors, r.stderr[-3000:]
    assert out.stat().st_size > 1000 and "final: 3,000 allocator records" in r.stderr, r.stderr[-3000:]
    size = len(hm.deep_leaves(depth=99_999, leaves=3000))
    ended = f"the stream ended after {size:,} bytes; drawing all of it (past --live-seconds 1 s)"
    assert ended in r.stderr or "rebuilt (1)" in r.stderr, r.stderr[-3000:]
