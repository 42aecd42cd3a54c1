"""Private names used across modules (issue 81): what another module of ``tracevis3d`` or ``ui``
uses is public (a name without the leading underscore, with a docstring).  Counted here: each
``from .mod import _name`` of a name (not a module) defined in another module, and each
``mod._name`` attribute read through a module bound by an import, once per (importing module,
module, name).  The count may only go down; the offenders are listed when it goes up."""
import ast
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_import_graph import ROOT, UI, _modules, parsed  # noqa: E402

#: The most private names the package may still import across its modules (issue 81: from 189).
MOST = 40


def _resolve(m: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = m.split(".") if is_pkg else m.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(mods: dict) -> list:
    """Sorted (importing module, module, name) of every private name used across modules."""
    out = set()
    for m, p in mods.items():
        is_pkg = p.name == "__init__.py"
        tree = parsed(p)
        bound = {}  # local name -> module of ``mods`` it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(m, is_pkg, node)
                for a in node.names:
                    full = f"{target}.{a.name}"
                    if full in mods:
                        bound[a.asname or a.name] = full
                    elif _private(a.name) and target in mods and target != m:
                        out.add((m, target, a.name))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods and a.asname:
                        bound[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in bound
                    and bound[node.value.id] != m):
                out.add((m, bound[node.value.id], node.attr))
    return sorted(out)


def test_few_private_names_cross_modules():
    uses = private_uses({**_modules(ROOT), **_modules(UI)})
    listing = "\n".join(f"{m} uses {t}.{n}" for m, t, n in uses)
    assert len(uses) <= MOST, f"{len(uses)} private names used across modules (at most {MOST}):\n{listing}"
