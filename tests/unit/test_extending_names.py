"""docs/extending.md teaches only public names that exist (issue 81): every dotted name it cites
in backticks (``common.fill_scene_settings``, ``io.formats.writer_for``, ``Params.from_dict``)
resolves, read from the source (no import: ``ui`` needs Blender), to a module, a top-level
name of one, or a class's member, and none of its parts begins with an underscore."""
import ast
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "extending.md"
#: how the guide abbreviates a module: its first part -> the module it means
SHORT = {"common": "tracevis3d.cli.common", "render": "tracevis3d.cli.render", "tasks": "tracevis3d.blender.tasks",
         "formats": "tracevis3d.io.formats", "io": "tracevis3d.io", "cli": "tracevis3d.cli",
         "kernel_cache": "tracevis3d.kernel_cache", "params": "tracevis3d.params",
         "warmup_formats": "tracevis3d.warmup_formats", "tracevis3d": "tracevis3d", "ui": "ui",
         "Params": "tracevis3d.params.core.Params", "View": "tracevis3d.views.View"}
#: Blender operator ids the guide names (``tracevis3d.build_view``), not Python names
OPERATORS = {"tracevis3d.build_view"}


def _file(module: str):
    p = REPO.joinpath(*module.split("."))
    for f in (p.with_suffix(".py"), p / "__init__.py"):
        if f.is_file():
            return f
    return None


def _names(node) -> set:
    out = set()
    for n in node.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out.update(e.id for e in ast.walk(t) if isinstance(e, ast.Name))
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.If, ast.Try)):
            out |= _names(n)
    return out


def _resolves(dotted: str) -> bool:
    head, *rest = dotted.split(".")
    parts = SHORT[head].split(".") + rest
    k = len(parts)
    while k and _file(".".join(parts[:k])) is None:
        k -= 1
    if not k:
        return False
    node = ast.parse(_file(".".join(parts[:k])).read_text(encoding="utf-8"))
    for name in parts[k:]:
        if name not in _names(node):
            return False
        node = next((n for n in node.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if node is None:
            return name == parts[-1]
    return True


def cited() -> list:
    text = DOC.read_text(encoding="utf-8")
    toks = set(re.findall(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)", text))
    return sorted(t for t in toks if t.split(".")[0] in SHORT and t not in OPERATORS
                  and not t.endswith((".md", ".py", ".toml")))


def test_extending_cites_public_names_that_exist():
    names = cited()
    assert "common.fill_scene_settings" in names and "io.formats.writer_for" in names
    private = [t for t in names if any(p.startswith("_") for p in t.split("."))]
    missing = [t for t in names if not _resolves(t)]
    assert not private and not missing, f"private: {private}; not found: {missing}"


def test_the_check_finds_a_missing_and_a_private_name():
    assert not _resolves("common.no_such_helper") and not _resolves("io.formats.nothing_here")
    assert _resolves("tracevis3d.cli.render.render_view") and _resolves("Params.from_dict")
