"""The test session's early work, in a child process of its own (started by conftest's
`pytest_collection_finish`).

    python tests/support/early_runner.py JOBS.json

JOBS.json is a list of ``[name, module, function, folder]``: for each in turn, ``function`` of
``module`` (a helper module imported by name, or a test module's file path) runs with ``folder`` as its only argument,
and what it returns, or the exception it raised, is pickled into ``folder/early-result.pickle``
(written under another name and renamed, so a reader never sees half of it).

Why a process and not a thread of the pytest process: the jobs are Python (document
generators, path handling) between the programs they record, and Python running on a second
thread while the main thread is inside a `bpy.ops` operator crashed the suite (a segmentation
fault in the recording thread, twice in CI). Here the pytest process runs no Python beside
bpy: it only reads the finished results.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pathlib
import pickle
import sys

RESULT_NAME = "early-result.pickle"


def _module(module: str):
    """A module by name (on the tests' path), or a test module by its file's path (the test layers'
    folders are not on the path: two layers may hold modules of one name)."""
    if not module.endswith(".py"):
        return importlib.import_module(module)
    name = pathlib.Path(module).stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, module)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_jobs(jobs: list) -> None:
    for name, module, function, folder in jobs:
        folder = pathlib.Path(folder)
        try:
            outcome = ("ok", getattr(_module(module), function)(folder))
        except BaseException as e:  # noqa: BLE001 - handed to the test that needs it
            outcome = ("error", RuntimeError(f"early job {name}: {type(e).__name__}: {e}"))
        part = folder / (RESULT_NAME + ".part")
        part.write_bytes(pickle.dumps(outcome))
        os.replace(part, folder / RESULT_NAME)


if __name__ == "__main__":
    run_jobs(json.loads(pathlib.Path(sys.argv[1]).read_text()))
