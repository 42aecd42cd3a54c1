"""The allocator settings of a one-shot command-line render (`tracevis3d.allocator`), in fresh processes."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a worker thread allocates and frees an 80 MB array 10 times: the page faults per round
_PROBE = textwrap.dedent("""
    import json, resource, sys, threading
    import numpy as np
    from tracevis3d.allocator import tune_for_batch
    applied = tune_for_batch()
    out = {}
    def work():
        a = np.ones(10 ** 7); del a
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            a = np.ones(10 ** 7); del a
        out["faults"] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 10
    th = threading.Thread(target=work); th.start(); th.join()
    print(json.dumps({"applied": {str(k): v for k, v in applied.items()}, "faults": out["faults"]}))
""")


def _probe(**env) -> dict:
    e = dict(os.environ, PYTHONPATH=REPO, **env)
    r = subprocess.run([sys.executable, "-c", _PROBE], env=e, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _glibc() -> bool:
    from tracevis3d.allocator import _glibc

    return _glibc() is not None


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(), reason="glibc's mallopt only")
def test_a_batch_run_reuses_freed_memory_on_its_worker_threads():
    tuned = _probe(TRACEVIS3D_MALLOC="")
    assert tuned["applied"] == {"-8": 1, "-4": 0, "-1": -1}
    # an 80 MB block freed and taken again: the heap's own pages, no new ones to fault in
    assert tuned["faults"] < 5
    system = _probe(TRACEVIS3D_MALLOC="system")
    assert system["applied"] == {}
    # glibc's default: a mapping of its own each time (4 KB pages: ~20,000 faults; huge pages: ~40)
    assert system["faults"] >= 30


def test_only_the_one_shot_renders_tune_the_allocator(monkeypatch):
    """The command (`cli.console`, which ``python -m tracevis3d`` and the ``tracevis3d`` script run)
    tunes the allocator for ``render-*`` but ``render-live``; `cli.main` (scripts, tests), the
    library and the add-on never change the process's allocator (Blender's, inside Blender)."""
    import tracevis3d.allocator as alloc
    from tracevis3d import cli

    assert "console" in open(os.path.join(REPO, "tracevis3d", "__main__.py")).read()
    assert 'tracevis3d = "tracevis3d.cli:console"' in open(os.path.join(REPO, "pyproject.toml")).read()
    calls = []
    monkeypatch.setattr(alloc, "tune_for_batch", lambda: calls.append("tuned") or {})
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv[0]) or 0)
    for command in ("render-icicle", "render-live", "replay"):
        cli.console([command, "x"])
    assert calls == ["tuned", "render-icicle", "render-live", "replay"]
    for root, _, files in os.walk(os.path.join(REPO, "tracevis3d")):
        for f in files:
            path = os.path.join(root, f)
            if f.endswith(".py") and path != os.path.join(REPO, "tracevis3d", "allocator.py") \
                    and path != os.path.join(REPO, "tracevis3d", "cli", "__init__.py"):
                assert "tune_for_batch" not in open(path).read(), path
