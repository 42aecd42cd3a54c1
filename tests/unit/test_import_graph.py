"""The package's import graph (issues 22, 69): no cycle among tracevis3d's modules, and every
import goes down the layers of `LAYERS` or stays in its own layer, counting the imports inside
functions too (an import a function defers is still a dependency); only `tracevis3d.blender`
imports Blender's modules (bpy, mathutils, bmesh, gpu); the add-on's UI package ``ui`` (the
other place that imports bpy) has no cycle either, with the core, and the core never imports it."""
import ast
import functools
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tracevis3d"
UI = ROOT.parent / "ui"
BLENDER_MODULES = {"bpy", "mathutils", "bmesh", "gpu", "bpy_extras"}

#: The layers, lowest first: a module may import its own layer and the layers below, never one
#: above.  An entry names a module or a package (with its submodules); a module's layer is its
#: longest entry; ``tracevis3d`` itself is the package facade (its ``__init__``) only.
LAYERS = (
    ("foundation", (
        "tracevis3d._version",     # the one version string
        "tracevis3d._numba_env",   # numba's cache folder, set before numba is imported
        "tracevis3d.kernel_cache",  # the shipped pre-built kernels (standard library only)
        "tracevis3d.errors",       # the errors and the warning about trace data: any layer raises them
        "tracevis3d.filenumbers",  # numbers read from file text: ASCII digits, bounded, in range
        "tracevis3d.allocator",    # the C allocator's settings for big traces (ctypes)
        "tracevis3d.pages",        # numpy's huge-page advice for the process (numpy only: io reads before numba)
        "tracevis3d.jobs",         # steps run off Blender's main thread (threads, no package imports)
    )),
    ("kernels", ("tracevis3d.kernels",)),  # numba kernels over plain arrays
    ("base", (
        "tracevis3d.model", "tracevis3d.model_side", "tracevis3d.model_window",  # the Trace struct
        "tracevis3d.demangle",     # C++/Rust/... symbol demangling (standard library only)
        "tracevis3d.names",        # a function name as the tool wrote it, parsed into its parts
        "tracevis3d.naming",       # what a figure and an analysis call a function (on `names`)
        "tracevis3d.userregex",    # user patterns matched in linear time (kinds, filters, params)
        "tracevis3d.kinds",        # the call kinds' rules (wait, release, io), on the model
        "tracevis3d.transform",    # the model's reshaping helpers (on the tree kernels)
        "tracevis3d.views",        # the registry of views (standard library only: read by params)
        "tracevis3d.params",       # the parameter schemas
    )),
    ("io/analysis/live", ("tracevis3d.io", "tracevis3d.analysis", "tracevis3d.live")),
    ("layout", (
        "tracevis3d.layout",
        "tracevis3d.warmup",          # runs the kernels of every layer up to the layouts once
        "tracevis3d.warmup_formats",  # the warm-up's tiny file of each format
    )),
    ("blender", ("tracevis3d.blender",)),
    ("cli/ui", (
        "tracevis3d",                  # the package facade: load, save, merge, compare, ...
        "tracevis3d.__main__", "tracevis3d.cli",
        "tracevis3d.cluster",          # the command line's client of the Dask workers that render
        "ui",                          # the add-on's panels and operators
    )),
)
FACADE = "tracevis3d"


def _layer_of(module: str, layers=LAYERS):
    """(index, name) of ``module``'s layer in ``layers`` (its longest entry), or None."""
    best = None
    for i, (name, entries) in enumerate(layers):
        for e in entries:
            if module == e or (e != FACADE and module.startswith(e + ".")):
                if best is None or len(e) > len(best[2]):
                    best = (i, name, e)
    return None if best is None else best[:2]


@functools.lru_cache(maxsize=None)
def parsed(path: pathlib.Path) -> ast.Module:
    """A module's syntax tree, parsed once per session (~3 CPU s for the package and ``ui``;
    the checks here and test_private_imports.py read every module, five times over): read
    only, never changed."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(mods: dict) -> list:
    """(module, line, imported module) of every import inside ``mods`` (module level and
    inside functions), resolved to the longest module of ``mods`` it names: ``from .pkg import
    sub`` is ``pkg.sub`` when ``sub`` is a module, else ``pkg`` (a name of its ``__init__``:
    ``from .. import load`` is the facade); imports of other distributions are left out."""
    out = []
    for m, p in mods.items():
        is_pkg = p.name == "__init__.py"
        for node in ast.walk(parsed(p)):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [target] + subs
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                parts = t.split(".")
                while parts and ".".join(parts) not in mods:
                    parts.pop()
                if parts and ".".join(parts) != m:
                    out.append((m, node.lineno, ".".join(parts)))
    return out


def _upward(imports, layers=LAYERS) -> list:
    """One line per import that goes up the layers: the importing module and its line, the
    imported module, and both layers."""
    out = []
    for m, line, t in sorted(imports):
        lm, lt = _layer_of(m, layers), _layer_of(t, layers)
        if lm is not None and lt is not None and lt[0] > lm[0]:
            out.append(f"{m}:{line} (layer {lm[1]}) imports {t} (layer {lt[1]}, above)")
    return out


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
        for node in ast.walk(parsed(p)):
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


def _all_modules() -> dict:
    return {**_modules(), **_modules(UI)}


def test_every_module_has_a_layer():
    """A new module is placed in `LAYERS` (say where it sits, and why, for a top-level one)."""
    missing = sorted(m for m in _all_modules() if _layer_of(m) is None)
    assert not missing, f"modules in no layer of LAYERS (add them): {missing}"


def test_every_layer_entry_names_a_module():
    mods = _all_modules()
    stale = [e for _, entries in LAYERS for e in entries
             if not any(m == e or m.startswith(e + ".") for m in mods)]
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_imports_go_down_the_layers():
    """kernels → base (model, names, params) → io / analysis / live → layout → blender →
    cli / ui: no module imports a layer above its own, at module level or inside a function."""
    up = _upward(_imports(_all_modules()))
    assert not up, "imports up the layers (move the shared piece down):\n" + "\n".join(up)


def test_layer_check_finds_an_upward_import(tmp_path):
    """The check sees relative, absolute, function-level and facade imports."""
    pkg = tmp_path / "tracevis3d"
    (pkg / "kernels").mkdir(parents=True)
    (pkg / "layout").mkdir()
    (pkg / "__init__.py").write_text("from .kernels import k\n")
    (pkg / "kernels" / "__init__.py").write_text("")
    (pkg / "kernels" / "k.py").write_text("def f():\n    from ..layout import view\n")
    (pkg / "layout" / "__init__.py").write_text("")
    (pkg / "layout" / "view.py").write_text("import tracevis3d.kernels.k\nfrom .. import load\n")
    mods = _modules(pkg)
    up = _upward(_imports(mods))
    assert up == ["tracevis3d.kernels.k:2 (layer kernels) imports tracevis3d.layout.view (layer layout, above)",
                  "tracevis3d.layout.view:2 (layer layout) imports tracevis3d (layer cli/ui, above)"]
    assert _layer_of("tracevis3d.kernels.k") == (1, "kernels") and _layer_of("tracevis3d") == (6, "cli/ui")
    assert _layer_of("tracevis3d.cli.reference")[1] == "cli/ui" and _layer_of("tracevis3d.params.cli")[1] == "base"
    assert _layer_of("tracevis3d.something_new") is None


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
            doc = _ast.get_docstring(parsed(p)) or ""
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
