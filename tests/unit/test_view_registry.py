"""The view registry (`tracevis3d.views`) and the format table (`tracevis3d.io.formats`) are the
one place views and formats are listed: every consumer agrees with them — the command line's
sub-commands and their options, the option reference, the panel's sections and property groups,
the warm-up's steps, the animation kinds, the build jobs and their scene records, save()'s
writers and the magic bytes.  No bpy, no recordings: the panel and the Blender modules are read
as source (their registered form is checked by tests/blender/test_ui_schema.py)."""
import argparse
import ast
import pathlib
import re

import pytest

from tracevis3d import views as registry
from tracevis3d.views import ANIMATIONS, VIEWS, resolve

REPO = pathlib.Path(__file__).resolve().parents[2]
PKG = REPO / "tracevis3d"


def _subparsers():
    from tracevis3d.cli import make_parser

    sub = next(a for a in make_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub


def _source(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8")


def _module_file(dotted: str) -> pathlib.Path:
    """The file of a module ``"a.b"`` under tracevis3d."""
    p = PKG.joinpath(*dotted.split("."))
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def _defines(dotted_attr: str) -> bool:
    """Does the module of ``"module:name"`` define ``name`` (a def, a class or an assignment)?"""
    mod, _, name = dotted_attr.partition(":")
    tree = ast.parse(_source(_module_file(mod)))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
    return False


# ----------------------------------------------------------------------------- the registry itself
def test_names_commands_and_labels_are_unique():
    names = [v.name for v in VIEWS]
    assert len(names) == len(set(names))
    commands = [c.name for v in VIEWS for c in v.commands]
    assert len(commands) == len(set(commands))
    panels = [v.panel for v in VIEWS if v.panel]
    assert len(panels) == len(set(panels))
    assert registry.view("icicle") is VIEWS[0]
    with pytest.raises(ValueError, match="unknown view 'nope'; known: icicle"):
        registry.view("nope")


def test_the_registry_imports_only_the_standard_library():
    """It sits in the base layer: anything above it is named as a string and imported on demand."""
    tree = ast.parse(_source(PKG / "views.py"))
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in (n.names if isinstance(n, ast.Import) else [None])}
    assert imported <= {"__future__", "importlib", "dataclasses"}, imported


@pytest.mark.parametrize("v", VIEWS, ids=lambda v: v.name)
def test_every_reference_resolves(v):
    cls = v.params_class
    assert cls.SCHEMA in v.option_schemas(), "its commands take its parameters"
    assert v.summary and v.title and v.panel
    for ref in (v.job, v.steps) + tuple(r for r in (v.describe, v.prepare) if r):
        assert _defines(ref), ref
    assert _module_file(v.cli).is_file(), v.cli
    assert v.describe or not v.commands or v.name == "live", "a view's command says what its scene holds"


@pytest.mark.parametrize("v", VIEWS, ids=lambda v: v.name)
def test_parameters_come_one_way_with_renamed_keys_honoured(v):
    """`View.make_params` (``from_dict``): an object, a dict, None; older keys renamed."""
    cls = v.params_class
    assert v.make_params(None) == cls()
    assert v.make_params(cls()) == cls()
    assert v.make_params(cls().to_dict()) == cls()
    for old, new in cls.SCHEMA.renamed.items():
        value = cls().to_dict()[new]
        assert v.make_params({old: value}) == v.make_params({new: value}), old


def test_every_job_builds_its_parameters_with_from_dict():
    """No view job makes its parameters by ``X(**params)``, which skips the renamed keys."""
    hits = [f"{p.relative_to(REPO)}:{i}" for p in (PKG / "blender").glob("*.py")
            for i, line in enumerate(_source(p).splitlines(), 1) if re.search(r"Params\(\*\*", line)]
    assert not hits, hits


@pytest.mark.parametrize("v", [v for v in VIEWS if v.scene_key], ids=lambda v: v.name)
def test_scene_record_is_the_one_a_build_writes(v):
    literal = f'"{v.scene_key}"'
    assert any(literal in _source(p) for p in (PKG / "blender").glob("*.py")), v.scene_key


# ----------------------------------------------------------------------------- the command line
def test_every_view_command_is_a_cli_command_with_the_registry_help():
    from tracevis3d.cli import command_runner

    sub = _subparsers()
    helps = {a.dest: a.help for a in sub._choices_actions}
    for v in VIEWS:
        module = resolve(v.cli)
        assert callable(module.add_parsers), v.cli
        for c in v.commands:
            assert c.name in sub.choices, c.name
            assert helps[c.name] == c.help, c.name
            assert command_runner(c.name) is module.COMMANDS[c.name], c.name


@pytest.mark.parametrize("command", [c.name for v in VIEWS for c in v.commands])
def test_command_options_are_the_registry_schemas(command):
    from tracevis3d.params.cli import option_table

    view, cmd = registry.commands()[command]
    parser = _subparsers().choices[command]
    flags = {o for a in parser._actions for o in a.option_strings if a.help != argparse.SUPPRESS}
    for flag, _p in option_table(view.option_schemas()):
        assert flag.split("/")[-1] in flags, (command, flag)
    positionals = [a.metavar for a in parser._actions if not a.option_strings]
    assert positionals == cmd.usage.split()[1:], (command, positionals)


def test_params_and_cli_agree_on_the_views():
    from tracevis3d.params import view_schemas

    assert view_schemas() == {v.name: v.params_class for v in VIEWS}


# ----------------------------------------------------------------------------- the option reference
def test_reference_lists_every_view_command():
    from tracevis3d.cli.reference import commands, reference

    listed = [usage for usage, _doc, _schemas in commands()]
    assert listed == [v.commands[0].usage for v in VIEWS if v.commands] + ["render-animation TRACE [TRACE_B]"]
    text = reference()
    for v in VIEWS:
        if v.commands:
            assert f"#### `{v.commands[0].usage}`" in text
            assert v.params_class.SCHEMA.doc in text


# ----------------------------------------------------------------------------- the panel
def _panel_sections() -> dict:
    """panel class -> (the view of its ``bl_label = section_label(view)``, the views it draws with
    ``_schema(view)``, a literal bl_label) in ui/panels.py."""
    out = {}
    for node in ast.parse(_source(REPO / "ui" / "panels.py")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        section, literal = None, None
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "bl_label" for t in stmt.targets):
                if isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "section_label":
                    section = stmt.value.args[0].value
                elif isinstance(stmt.value, ast.Constant):
                    literal = stmt.value.value
        drawn = {c.args[0].value for c in ast.walk(node) if isinstance(c, ast.Call)
                 and getattr(c.func, "id", "") == "_schema" and c.args and isinstance(c.args[0], ast.Constant)}
        out[node.name] = (section, drawn, literal)
    return out


def test_every_view_has_its_panel_section_drawing_its_schema():
    """A hand-made section is labelled from the registry and draws its view's schema; a view
    without one gets the generated section (`ui.panels.view_sections`, checked registered in
    tests/blender/test_ui_schema.py)."""
    sections = _panel_sections()
    for v in VIEWS:
        owners = [name for name, (section, _d, _l) in sections.items() if section == v.name]
        assert len(owners) <= 1, (v.name, owners)
        if owners:
            assert v.name in sections[owners[0]][1], f"{owners[0]} does not draw the {v.name} schema"
    literals = {lit for _s, _d, lit in sections.values() if lit}
    assert not literals & {v.panel for v in VIEWS}, "a view's section label is written outside the registry"
    text = _source(REPO / "ui" / "panels.py")
    assert "def view_sections()" in text and "*view_sections()," in text


def test_the_panel_groups_are_the_registry():
    text = _source(REPO / "ui" / "properties.py")
    assert "VIEWS = {v.name: v.params_class for v in VIEW_REGISTRY}" in text


# ----------------------------------------------------------------------------- the warm-up
def test_warmup_runs_every_view_in_its_step():
    import importlib.util

    from tracevis3d import warmup

    assert warmup.STEPS[:2] == ("load", "formats")
    for v in VIEWS:
        assert bool(v.warmup) == bool(v.warm), v.name
        if not v.warmup:  # a view whose kernels the warm-up does not run yet
            continue
        assert v.warmup in warmup.STEPS, v.name
        warm = resolve(v.warm)
        assert warm in warmup.step_functions(v.warmup), v.name
    steps = [s for part in warmup.PARTS.values() for s in part]
    assert sorted(steps) == sorted(warmup.STEPS[1:]), "each step runs in exactly one part"
    # the parts tools/kernel_caches.py runs are the warm-up's, each after the part it starts from
    spec = importlib.util.spec_from_file_location("kernel_caches", REPO / "tools" / "kernel_caches.py")
    kc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kc)
    assert sorted(p for p, _ in kc.JOBS) == sorted(warmup.PARTS)
    order = [p for p, _ in kc.JOBS]
    assert all(base is None or order.index(base) < order.index(p) for p, base in kc.JOBS)


# ----------------------------------------------------------------------------- the animation
def test_animation_kinds_come_from_the_registry():
    from tracevis3d.cli.animation import view_kinds
    from tracevis3d.params.animation import KIND_ITEMS, VIEW_ITEMS

    for v in VIEWS:
        assert set(v.animations) <= set(ANIMATIONS) and len(set(v.animations)) == len(v.animations), v.name
    assert tuple(k for k, *_ in KIND_ITEMS[1:]) == ANIMATIONS
    animated = registry.views(animated=True)
    assert tuple(k for k, *_ in VIEW_ITEMS[1:]) == tuple(v.name for v in animated)
    assert view_kinds() == {v.name: v.animations for v in animated}
    text = _source(PKG / "blender" / "animate.py")
    assert "KINDS = ANIMATIONS" in text
    assert not re.search(r'\("growth", "flythrough"', text), "animate.py lists kinds of its own"


def test_the_view_commands_use_the_public_path():
    """A view's command module reaches the shared command-line code by public names only (no
    ``_name`` of another module), and docs/extending.md teaches only public names
    (`cli.render.render_view`, `cli.common`)."""
    for v in VIEWS:
        tree = ast.parse(_source(_module_file(v.cli)))
        private = [f"{n.module}:{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                   for a in n.names if a.name.startswith("_") and not a.name.startswith("__")]
        private += [f"{n.value.id}.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.value.id == "cli" and n.attr.startswith("_")]
        assert not private, (v.cli, private)
    text = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    assert "render_view" in text and not re.findall(r"`[\w.]*\._[a-z]\w*", text), re.findall(r"`[\w.]*\._[a-z]\w*", text)


def test_render_animation_takes_every_animated_view_options():
    parser = _subparsers().choices["render-animation"]
    dests = {a.dest for a in parser._actions}
    for v in registry.views(animated=True):
        missing = [p.name for p in v.params_class.SCHEMA if p.cli and p.name not in dests]
        assert not missing, (v.name, missing)


# ----------------------------------------------------------------------------- the comparison's calls
def test_brush_and_align_are_resolved_by_one_function():
    for path in (PKG / "cli" / "compare.py", REPO / "ui" / "operators" / "compare_ops.py"):
        text = _source(path)
        assert "call_options" in text, path
        assert "find_call(" not in text and "align_window_b(" not in text and "call_indices(" not in text, path


# ----------------------------------------------------------------------------- formats
@pytest.mark.parametrize("name, fmt, key", [
    ("t.tv3d.npz", None, "native"), ("t.npz", None, "native"), ("t.tv3c", None, "compact"),
    ("t.json", None, "chrome"), ("T.JSON.GZ", None, "chrome"), ("/dev/null", None, "native"),
    ("t.bin", None, "native"), ("t.json", "native", "native"), ("t.npz", "compact", "compact")])
def test_save_writes_the_format_the_table_says(name, fmt, key):
    from tracevis3d.io.formats import writer_for

    assert writer_for(name, fmt).key == key


def test_only_written_formats_can_be_asked_for():
    from tracevis3d.io.formats import FORMATS, writer_for, writer_of

    with pytest.raises(ValueError, match="format must be one of 'native', 'compact', 'chrome', got 'perfetto'"):
        writer_for("t.pb", "perfetto")
    written = [f for f in FORMATS if f.writer is not None]
    assert [f.key for f in written] == ["native", "compact", "chrome"]
    for f in written:
        assert callable(writer_of(f)) and f.write_suffixes and f.readable
    assert "writer_for" in _source(PKG / "__init__.py")


def test_magic_bytes_are_written_in_the_format_table_only():
    from tracevis3d.io import compact, formats

    assert compact.MAGIC == formats.COMPACT_MAGIC
    # the source text of the magic bytes: a zip, gzip, the compact header, memray's, its LZ4 frame's,
    # the wrappers not opened (bzip2, xz)
    patterns = ('b"PK\\x03\\x04"', 'b"\\x1f\\x8b"', "TV3D-CTF", 'b"memray', "\\x04\\x22\\x4d\\x18", 'b"BZh"',
                "7zXZ")
    formats_text = _source(PKG / "io" / "formats.py")
    assert all(pat in formats_text for pat in patterns), "each pattern matches its magic where it is written"
    hits = [f"{p.relative_to(REPO)}:{i}" for p in PKG.rglob("*.py") if p != PKG / "io" / "formats.py"
            for i, line in enumerate(_source(p).splitlines(), 1) if any(pat in line for pat in patterns)]
    assert not hits, hits
