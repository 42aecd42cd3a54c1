"""The package's import graph (issue 22): no cycle among tracevis3d's modules, counting the
imports inside functions too (an import a function defers is still a dependency), and only
`tracevis3d.blender` imports Blender's modules (bpy, mathutils, bmesh, gpu); the add-on's UI
package ``ui`` (the other place that imports bpy) has no cycle either, with the core, and the
core never imports it."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tracevis3d"
UI = ROOT.parent / "ui"
BLENDER_MODULES = {"bpy", "mathutils", "bmesh", "gpu", "bpy_extras"}


def _modules(root=ROOT) -> dict:
    out = {}
    for p in root.rglob("*.py"):
        parts = p.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _edges(mods: dict) -> tuple:
    """(module -> modules of the package it imports, module -> Blender modules it imports).
    ``from .pkg import sub`` depends on ``pkg.sub`` when ``sub`` is a module, else on
    ``pkg``; a module's own parent packages are not edges (Python runs them first anyway)."""
    edges, blender = {m: set() for m in mods}, {m: set() for m in mods}
    for m, p in mods.items():
        is_pkg = p.name == "__init__.py"
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                    if target.split(".")[0] in BLENDER_MODULES:
                        blender[m].add(target)
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [target] + subs
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
                blender[m].update(t for t in targets if t.split(".")[0] in BLENDER_MODULES)
            else:
                continue
            for t in targets:
                if t in mods and t != m and not m.startswith(t + "."):
                    edges[m].add(t)
    return edges, blender


def _cycles(edges: dict) -> list:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycle():
    mods = _modules()
    assert "tracevis3d.cli" in mods and "tracevis3d.cli.common" in mods
    edges, _ = _edges(mods)
    assert _cycles(edges) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_only_the_blender_layer_imports_blender():
    mods = _modules()
    _, blender = _edges(mods)
    outside = {m: sorted(b) for m, b in blender.items() if b and not m.startswith("tracevis3d.blender")}
    assert outside == {}
    assert blender["tracevis3d.blender.writer"]  # the check sees imports at all


def test_long_modules_say_why():
    """A module past ~600 lines holds one topic and says why it is long in its docstring
    ("Over 600 lines: ...") -- else it is split (issue 22, DESIGN.md)."""
    import ast as _ast

    long = []
    for p in list(ROOT.rglob("*.py")) + list((ROOT.parent / "ui").rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        if text.count("\n") > 620:
            doc = _ast.get_docstring(_ast.parse(text)) or ""
            if "Over 600 lines:" not in doc:
                long.append(f"{p.relative_to(ROOT.parent)} ({text.count(chr(10))} lines)")
    assert not long, long


def test_ui_package_has_no_cycle_and_the_core_never_imports_it():
    mods = {**_modules(), **_modules(UI)}
    assert "ui.props" in mods and "ui.operators.trace_ops" in mods
    edges, blender = _edges(mods)
    assert _cycles(edges) == []
    assert "tracevis3d.views" in edges["ui.properties"]  # relative imports of the core are seen
    assert {m: t for m, ts in edges.items() if m.startswith("tracevis3d") for t in ts if t.startswith("ui")} == {}
    assert blender["ui.props"] == {"bpy"}


def test_blender_properties_are_made_in_one_place():
    """Issue 22: ``bpy.props.*Property(`` (PointerProperty included) is written in one generic
    place, ui/props.py; everything else describes properties as tables or through the
    parameter schemas."""
    import re

    call = re.compile(r"\b(?:Bool|Int|Float|String|Enum|Pointer|Collection|FloatVector|IntVector|BoolVector)Property\(")
    files = [ROOT.parent / "__init__.py", *UI.rglob("*.py"), *ROOT.rglob("*.py")]
    found = {str(p.relative_to(ROOT.parent)) for p in files if call.search(p.read_text(encoding="utf-8"))}
    assert found == set(), found
    assert "getattr(bpy.props" in (UI / "props.py").read_text(encoding="utf-8")
