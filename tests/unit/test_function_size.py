"""No function of the product code (tracevis3d/, tools/, ui/) is longer than `MAX_LINES` lines
(issue 69): a longer one is split into named stages (`tracevis3d.io.chrome.load_chrome` shows
the pattern: a small context object and stage functions).  A function's length counts from its
first decorator (else its ``def``) to its last line, docstring and comments included; a nested
function counts within its outer one and on its own.  The complexity ceiling is ruff's (C901,
``[tool.ruff.lint.mccabe]`` in pyproject.toml)."""
import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROOTS = ("tracevis3d", "tools", "ui")
MAX_LINES = 200
#: functions allowed past the limit, each with why (and the test fails once one is short enough)
EXCEPTIONS: dict = {}


def function_lengths(path: pathlib.Path) -> list:
    """(lines, name, first line) of every function and method in the file at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((node.end_lineno - first + 1, node.name, first))
    return out


def product_files() -> list:
    return sorted(p for root in ROOTS for p in (REPO / root).rglob("*.py") if "__pycache__" not in p.parts)


def test_function_lengths_are_measured(tmp_path):
    """The measure itself: decorators count, a nested function counts in its outer one and alone."""
    path = tmp_path / "probe.py"
    path.write_text("@dec\ndef outer():\n    def inner():\n        return 1\n\n    return inner\n", encoding="utf-8")
    assert sorted(function_lengths(path)) == [(2, "inner", 3), (6, "outer", 1)]


def test_the_product_code_is_found():
    files = product_files()
    names = {p.relative_to(REPO).as_posix() for p in files}
    assert "tracevis3d/io/chrome.py" in names and "tools/record_traces.py" in names
    assert any(n.startswith("ui/") for n in names)


@pytest.mark.parametrize("root", ROOTS)
def test_no_function_over_the_limit(root):
    long = [f"{p.relative_to(REPO)}:{first} {name} ({n} lines)"
            for p in product_files() if p.relative_to(REPO).parts[0] == root
            for n, name, first in function_lengths(p)
            if n > MAX_LINES and (p.relative_to(REPO).as_posix(), name) not in EXCEPTIONS]
    assert not long, f"functions over {MAX_LINES} lines (split them into named stages): " + "; ".join(long)


def test_every_exception_is_still_needed():
    for (rel, name), why in EXCEPTIONS.items():
        lengths = [n for n, f, _ in function_lengths(REPO / rel) if f == name]
        assert lengths and max(lengths) > MAX_LINES, f"{rel} {name} is short enough now: drop its exception ({why})"
