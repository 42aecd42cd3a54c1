"""tools/flamenco/submit.py against Managers that answer badly and frames written oddly (issue 78,
case 8): a real HTTP server on loopback (and raw sockets for peers that are not HTTP, never
answer, or drip their answer a byte at a time) plays the Manager; submit.py runs as a process.
Every bad answer is one line naming the Manager, the request and what was wrong, exit 1, within
``--timeout``; every odd ``--frames`` is refused by the argument parser, exit 2."""
import http.server
import json
import pathlib
import socket
import subprocess
import sys
import threading
import time

import pytest

SUBMIT = pathlib.Path(__file__).resolve().parents[2] / "tools" / "flamenco" / "submit.py"
ARGS = ["--blend", "/shared/growth.blend", "--frames", "1-30", "--output-root", "/shared/out"]


def _run(*extra, timeout=60):
    return subprocess.run([sys.executable, str(SUBMIT), *ARGS, *extra], capture_output=True, text=True,
                          timeout=timeout)


class _Manager:
    """An HTTP server whose GET and POST answers are (status, content type, body bytes)."""

    def __init__(self, get, post=(200, "application/json", b'{"id": "job-1"}')):
        answers = {"GET": get, "POST": post}

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                code, ctype, body = answers[self.command]
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _Raw:
    """A TCP peer that accepts and then runs ``behave(conn)``: never answers, answers in a
    protocol that is not HTTP, or drips an answer."""

    def __init__(self, behave):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.url = f"http://127.0.0.1:{self.srv.getsockname()[1]}"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(behave,), daemon=True)
        self.thread.start()

    def _serve(self, behave):
        self.srv.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                behave(conn, self.stop)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self):
        self.stop.set()
        self.thread.join(10)
        self.srv.close()


def _one_line(r, code=1) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == code and len(lines) == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-2000:])
    return lines[0]


JOB_TYPE = (200, "application/json", b'{"name": "tracevis3d-animation", "etag": "e1"}')


@pytest.mark.parametrize("get, post, says", [
    ((200, "text/html", b"<html><body>Flamenco?</body></html>"), None,
     "answered GET /api/v3/jobs/type/tracevis3d-animation with content type 'text/html', not application/json"),
    ((200, "application/json", b"[1, 2, 3]"), None, "with a JSON list, not the object Flamenco sends"),
    ((200, "application/json", b"{not json"), None, "with text that is not JSON"),
    ((200, "application/json", b'{"etag": 7}'), None, "without the etag Flamenco gives (a short text): etag is 7"),
    ((204, "application/json", b""), None, "with HTTP 204, not 200"),
    ((200, "application/json", b"[" * 100_000 + b"]" * 100_000), None, "with text that is not JSON"),
    ((200, "application/json", b" " * (2 << 20)), None, "with more than 1,048,576 bytes"),
    (JOB_TYPE, (200, "text/html", b"<html>ok</html>"), "answered POST /api/v3/jobs with content type 'text/html'"),
    (JOB_TYPE, (200, "application/json", b'["job-1"]'), "answered POST /api/v3/jobs with a JSON list"),
    (JOB_TYPE, (200, "application/json", b'{"id": 42}'), "without the id Flamenco gives (a short text): id is 42"),
    (JOB_TYPE, (200, "application/json", b'{"name": "x"}'), "without the id Flamenco gives (a short text): id is none"),
    (JOB_TYPE, (500, "text/html", b"<html>\n<h1>Internal\nError</h1>\n</html>"),
     "refused the job (HTTP 500): <html> <h1>Internal Error</h1> </html>"),
])
def test_a_manager_that_answers_badly_is_one_line(get, post, says):
    m = _Manager(get, post or (200, "application/json", b'{"id": "job-1"}'))
    try:
        r = _run("--manager", m.url)
    finally:
        m.close()
    line = _one_line(r)
    assert line.startswith(f"submit: the Manager at {m.url} ") and says in line, line


def _silent(conn, stop):
    stop.wait(60)


def _not_http(conn, stop):
    conn.recv(65536)
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")


def _drip(conn, stop):
    conn.recv(65536)
    for b in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 10_000:
        if stop.wait(0.3):
            return
        conn.sendall(bytes([b]))


@pytest.mark.parametrize("behave, says", [
    (_silent, "did not answer GET /api/v3/jobs/type/tracevis3d-animation within 2 s (--timeout)"),
    (_drip, "did not answer GET /api/v3/jobs/type/tracevis3d-animation within 2 s (--timeout)"),
    (_not_http, "answered GET /api/v3/jobs/type/tracevis3d-animation with something that is not HTTP"),
])
def test_a_manager_that_never_answers_or_is_not_http_is_one_line_within_the_deadline(behave, says):
    peer = _Raw(behave)
    t = time.monotonic()
    try:
        r = _run("--manager", peer.url, "--timeout", "2")
    finally:
        peer.close()
    line = _one_line(r)
    assert line.startswith(f"submit: the Manager at {peer.url} ") and says in line, line
    assert time.monotonic() - t < 45  # the deadline ended it (a hang guard, not a timing)


@pytest.mark.parametrize("frames, says", [
    ("1-", "ASCII digits, closed ranges"), ("-5", "ASCII digits, closed ranges"),
    ("١-٣", "ASCII digits, closed ranges"), ("²-³", "ASCII digits, closed ranges"), ("１-３", "ASCII digits"),
    ("1-300,", "ASCII digits, closed ranges"), ("5-2", "a range goes up"), ("1-5,3-8", "overlap"),
    ("1-99999999", "past Blender's last frame"), ("9" * 5000, "ASCII digits, closed ranges"),
    (",".join(str(k) for k in range(0, 3000, 2)), "at most 1000 ranges"),
])
def test_frames_are_ascii_digits_in_closed_ranges(frames, says):
    r = subprocess.run([sys.executable, str(SUBMIT), "--blend", "/x.blend", "--output-root", "/o", "--dry-run",
                        "--frames", frames], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1], r.stderr[-500:]


def test_frames_that_are_fine_are_sent_as_plain_ascii():
    r = subprocess.run([sys.executable, str(SUBMIT), "--blend", "/x.blend", "--output-root", "/o", "--dry-run",
                        "--frames", " 001-010 , 20,30-40"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["settings"]["frames"] == "1-10,20,30-40"


@pytest.mark.parametrize("arg, value, says", [
    ("--manager", "ftp://host:21", "http:// or https:// URL"), ("--manager", "http://", "http:// or https:// URL"),
    ("--manager", "http://host:99999", "port is not a number"), ("--timeout", "0", "--timeout must be 1-3600 s"),
    ("--timeout", "nan", "--timeout must be 1-3600 s"),
])
def test_the_manager_and_its_deadline_are_checked(arg, value, says):
    r = _run(arg, value, "--dry-run")
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1], r.stderr[-500:]
