"""The parameter schemas (issue 22): for every view, the parameter object, the command line's
options and the saved JSON come from one declaration each; a test walks the schemas and
checks each surface against them (the Blender properties: tests/test_ui_schema.py)."""
import argparse
import math
import pathlib
import re

import pytest

from tracevis3d.params import view_schemas
from tracevis3d.params.core import Param
from tracevis3d.params.kinds import Choice, Flag, Number
from tracevis3d.views import VIEWS

REPO = pathlib.Path(__file__).resolve().parents[2]
#: view -> its (first) command, for every view of the registry that has one
COMMANDS = {v.name: v.commands[0].name for v in VIEWS if v.commands}
#: command -> the placeholders of its positionals (the registry's usage line)
POSITIONALS = {c.name: c.usage.split()[1:] for v in VIEWS for c in v.commands}


def _parser(command):
    from tracevis3d.cli import make_parser

    sub = next(a for a in make_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _positionals(command):
    return [f"{k}.json" for k in range(len(POSITIONALS[command]))]


def _parse(command, *extra):
    return _parser(command).parse_args([*_positionals(command), "-o", "f.png", *extra])


@pytest.mark.parametrize("view", sorted(COMMANDS))
def test_parameter_object_has_the_schema_fields_and_defaults(view):
    import dataclasses

    cls = view_schemas()[view]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert list(fields) == [p.name for p in cls.SCHEMA], "one field per declaration, in order"
    obj = cls()
    for p in cls.SCHEMA:
        assert getattr(obj, p.name) == p.default, p.name
    assert obj.validate() == cls(), "the defaults are valid as they are"
    assert cls.from_dict(obj.to_dict()) == obj


@pytest.mark.parametrize("view", sorted(COMMANDS))
def test_every_cli_option_is_its_declaration(view):
    """Each declared parameter has one option: its destination, default, choices and range
    are the declaration's (the range's ends parse, a step beyond is refused)."""
    from tracevis3d.cli.common import CLIError
    from tracevis3d.params.cli import values

    cls = view_schemas()[view]
    parser = _parser(COMMANDS[view])
    by_dest = {}
    for a in parser._actions:
        if a.option_strings and a.help != argparse.SUPPRESS and not (a.help or "").startswith("the same as"):
            by_dest.setdefault(a.dest, []).append(a)
    params = cls(**values(_parse(COMMANDS[view]), cls.SCHEMA)).validate()
    assert params == cls(), "the options' defaults are the declared defaults"
    for p in cls.SCHEMA:
        if not p.cli:
            assert p.name not in by_dest, p.name
            continue
        (a,) = by_dest[p.name]
        assert p.cli_flag.split("/")[-1] in a.option_strings
        assert "(default: " in a.help, p.name
        if isinstance(p.kind, Choice):
            assert tuple(a.choices) == p.kind.choices, p.name
        if isinstance(p.kind, Number):
            for end in (p.kind.lo, p.kind.hi):
                if end is None:
                    continue
                open_end = p.kind.lo_open if end == p.kind.lo else p.kind.hi_open
                word = str(int(end)) if p.kind.integer else repr(float(end))
                if not open_end:
                    got = getattr(_parse(COMMANDS[view], p.cli_flag.split("/")[-1], word), p.name)
                    assert got == end, p.name
                step = 1 if p.kind.integer else max(abs(end) * 1e-3, 1e-3)
                beyond = end - step if end == p.kind.lo else end + step
                word = str(int(beyond)) if p.kind.integer else repr(beyond)
                with pytest.raises((SystemExit, CLIError)):
                    _parser(COMMANDS[view]).parse_args([*_positionals(COMMANDS[view]), "-o", "f.png",
                                                        p.cli_flag.split("/")[-1], word])


def _cli_error(command, *extra):
    from tracevis3d.cli import main

    return main([command, *_positionals(command), "-o", "/tmp/f.png", *extra])


@pytest.mark.parametrize("view", sorted(COMMANDS))
def test_range_errors_name_the_option(view, capsys):
    cls = view_schemas()[view]
    for p in cls.SCHEMA:
        if p.cli and isinstance(p.kind, Number) and p.kind.hi is not None and not p.kind.optional:
            assert _cli_error(COMMANDS[view], p.cli_flag, str(p.kind.hi * 2 + 1)) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and p.cli_flag in err, err


def test_shared_parameters_are_spelled_the_same_in_every_view():
    """A parameter declared once for all views (`params.shared`) has one option, kind and
    label in every view that takes it, and one group -- but the memory view files the
    icicle's own options it takes for its calls under a group of their own
    (`params.memory.CALLS_GROUP`: they apply only with ``--trace``)."""
    from tracevis3d.params import shared
    from tracevis3d.params.memory import CALLS_GROUP

    names = {v.name for v in vars(shared).values() if isinstance(v, Param)}
    seen = {}
    for view, cls in view_schemas().items():
        for p in cls.SCHEMA:
            if p.name not in names:
                continue
            seen.setdefault(p.name, {})[view] = (p.cli_flag, type(p.kind).__name__, p.label, p.unit)
            if p.name != "highlight" and p.group != CALLS_GROUP:
                seen.setdefault((p.name, "group"), {})[view] = p.group
    for name, views in seen.items():
        if len(views) > 1:
            assert len(set(views.values())) == 1, (name, views)


def test_non_default_objects_round_trip_through_json():
    from tracevis3d.params.compare import CompareParams
    from tracevis3d.params.cone import ConeParams
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.params.threads import ThreadsParams

    objs = [IcicleParams(threads=["MainThread", 2], thread_order=["w", 1], time_window=(1.0, 5.0), max_depth=7,
                         fold="3:40,50:", hide=["^_"], hide_modules=["importlib"], hide_utilities=3, expand=[5, 2],
                         highlight=["sort"], color_by="module", resolution=(640, 480), lane_gap=2.0, title=""),
            CompareParams(tau=0.3, thread_a="MainThread", window_b=(0.0, 9.0), brush_a="main", color_by="ratio",
                          lam=0.5, declutter_px=0.0, tube_samples=20),
            ThreadsParams(focus=1, threads=[0, "w"], hide_threads=["x"], window="all", highlight_wait=9),
            ConeParams(max_nodes=50, fold_recursion=False, expand=[3], orientation="horizontal")]
    for o in objs:
        o = o.validate()
        import json

        assert type(o).from_dict(json.loads(json.dumps(o.to_dict()))) == o


def test_older_keys_and_unknown_keys():
    from tracevis3d.params.compare import CompareParams
    from tracevis3d.params.cone import ConeParams

    assert ConeParams.from_dict({"expand_calls": [4, 1]}).expand == [1, 4]
    assert CompareParams.from_dict({"samples": 30}).tube_samples == 30
    with pytest.raises(ValueError, match="unknown cone parameter"):
        ConeParams.from_dict({"frobnicate": 1})
    assert ConeParams.from_known({"frobnicate": 1, "max_nodes": 9}).max_nodes == 9


def test_bad_values_name_the_parameter():
    from tracevis3d.params.icicle import IcicleParams

    for kw, needle in [({"label_px": 3}, "label_px"), ({"fold": "sometimes"}, "fold"), ({"hide": ["("]}, "hide"),
                       ({"color_by": "rainbow"}, "color_by"), ({"time_window": (5, 1)}, "time_window"),
                       ({"show_labels": "yes"}, "show_labels"), ({"max_depth": -1}, "max_depth"),
                       ({"resolution": (8, 8)}, "resolution"), ({"threads": [-1]}, "threads"),
                       ({"elevation": 0.0}, "elevation"), ({"max_colors": math.nan}, "max_colors")]:
        with pytest.raises(ValueError, match=needle):
            IcicleParams(**kw).validate()


def test_deprecated_spelling_works_with_a_notice(capsys):
    args = _parse("render-icicle", "--thread", "MainThread", "--thread", "2")
    assert args.threads == ["MainThread", 2]
    err = capsys.readouterr().err
    assert err.count("notice: --thread is deprecated, write --threads") == 2
    args = _parse("render-threads", "--whole")
    assert args.window == "all"
    args = _parse("render-compare", "--all-tubes")
    assert args.declutter_px == 0.0


def test_two_declarations_of_one_name_cannot_share_an_option():
    from tracevis3d.params.cli import add_command
    from tracevis3d.params.core import Schema

    a = Schema("a", [Param("samples", Number(1, 9, integer=True), 1, help="x")])
    b = Schema("b", [Param("samples", Number(4, 200, integer=True), 50, help="y")])
    sub = argparse.ArgumentParser().add_subparsers()
    with pytest.raises(ValueError, match="declared differently"):
        add_command(sub, "x", help="", description="", positionals=[], schemas=[a, b])


def test_a_declaration_whose_default_breaks_its_range_fails_at_import():
    with pytest.raises(ValueError):
        Param("n", Number(1, 9, integer=True), 0, help="x")
    with pytest.raises(ValueError):
        Param("f", Flag(), "yes", help="x")


def test_add_argument_is_called_in_one_place():
    """The options come from the schemas: ``add_argument(`` only in tracevis3d/params/cli.py."""
    hits = []
    for p in (REPO / "tracevis3d").rglob("*.py"):
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.add_argument\(", line) and p.name != "cli.py" or \
                    (p.name == "cli.py" and p.parent.name != "params" and ".add_argument(" in line):
                hits.append(f"{p.relative_to(REPO)}:{i}")
    assert not hits, hits
