"""A profile's scoped native names in a binary (perf's dso) keep their scopes without being parsed
one by one (`io.stacks._function_tables`): the same path, file and line as `parse_function_name`
gives them, on the names of every shipped recording and on generated scoped names, in files
that tell no language (shared libraries, the kernel, executables, placeholders)."""
from __future__ import annotations

import random

import pytest

from tracevis3d.io.stacks import FrameTable, _function_tables
from tracevis3d.names import parse_function_name

_FILES = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]", "/tmp/app", "??", "libsystem_c.dylib",
          "/trace/target/debug/deps/trace-0f0e4af093fa4f97", "php:internal", "a.php", "m.go", "x.py", "y.js",
          "<frozen importlib._bootstrap>", "extensions::SafeBuiltins", "", "JIT", "[unknown]"]
_PARTS = ["std", "v8", "internal", "com/example/Handler7", "a.b", "Foo", "ns", "__x", "operator()", "_Z1f", "core",
          "alloc", "h1234567890abcdef", "vector<int>", "Ä", "{main}", "require_once", "$", "a-b", "main", "run_3",
          "(anonymous namespace)", "~Foo", "f(int)", "php"]


_PLAIN = ["std", "v8", "internal", "com/example/Handler7", "Foo", "ns", "main", "run_3", "a.b", "Pool12"]


def _names(rng: random.Random, n: int) -> list:
    """Scoped names, half of plain parts (perf's C++, Rust and Java-map symbols), half with odd ones."""
    return ["::".join(rng.choice(_PLAIN if k % 2 else _PARTS) for _ in range(rng.randint(1, 4))) for k in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_scoped_names_in_binaries_keep_the_paths_parsing_gives(seed, monkeypatch):
    import tracevis3d.names as names_module

    parsed = []
    real = names_module.parse_function_name
    monkeypatch.setattr(names_module, "parse_function_name", lambda *a, **k: parsed.append(a) or real(*a, **k))
    rng = random.Random(seed)
    names = _names(rng, 3000)
    files = [rng.choice(_FILES) for _ in names]
    lines = [rng.choice([-1, 0, 7, 2 ** 31 - 1]) for _ in names]
    frames = FrameTable(4096)
    for nm, fl, ln in zip(names, files, lines):
        frames.add(nm, fl, ln)
    got = _function_tables(frames, False, None, "native")
    monkeypatch.undo()
    assert len(parsed) < 0.9 * len(frames), (len(parsed), len(frames))  # (the names not parsed: the case tested)
    for k, nm in enumerate(got["function_names"]):
        fl, ln = frames.files[k], frames.lines[k]
        p = parse_function_name(nm, file=fl, line=ln)
        want = (p.path, p.file or fl, p.line if p.line >= 0 else ln)
        assert (got["function_paths"][k], got["function_files"][k], int(got["function_lines"][k])) == want, (nm, fl)
