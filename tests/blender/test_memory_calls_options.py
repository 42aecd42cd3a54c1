"""``render-memory CAPTURE --trace TRACE`` takes render-icicle's own options for the icicle above
the bands (issue 71; `params.memory.CALLS_ICICLE`, render-icicle's declarations): parsed by the
real command line, an option changes the icicle part of the memory figure as it changes
render-icicle's figure of the same calls and window (legends, names of calls), and a bad value
gets render-icicle's one-line error.  The run: py-spy samples a deep JSON program that
``memray run`` runs, recorded once and committed (`memray_captures.COMMITTED_MEMORY_AND_CALLS`)."""
import os

import pytest

from memray_captures import committed_memory_and_calls, memray_available

pytestmark = [pytest.mark.blender, pytest.mark.skipif(not memray_available(), reason="needs memray")]


@pytest.fixture(scope="module")
def run():
    """The committed run (`memray_captures.COMMITTED_MEMORY_AND_CALLS`), not one recorded here."""
    return committed_memory_and_calls()


def _figures(run, tmp_path, *options):
    """(memory figure, render-icicle's figure of the same calls): both commands' parameters parsed
    from ``options`` by the real parser, render-icicle's laid out over the memory figure's window
    with its framing (the icicle part's own `meta["icicle_params"]`, checked to carry the options)."""
    import tracevis3d
    from tracevis3d.cli import make_parser
    from tracevis3d.cli.common import view_params
    from tracevis3d.cli.memory import memory_params
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.memory_calls import memory_figure
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.params.memory import CALLS_ICICLE

    out = str(tmp_path / "x.png")
    mem = memory_params(make_parser().parse_args(["render-memory", run[0], "--trace", run[1], "-o", out,
                                                  "--resolution", "960x540", *options]))
    ice = view_params("icicle", make_parser().parse_args(["render-icicle", run[1], "-o", out, *options]))
    spec = memory_figure(tracevis3d.load_memory(run[0]), mem, tracevis3d.load(run[1]))
    used = IcicleParams.from_dict(spec.meta["icicle_params"])
    assert {n: getattr(used, n) for n in CALLS_ICICLE} == {n: getattr(ice, n) for n in CALLS_ICICLE}
    return spec, icicle_layout(tracevis3d.load(run[1]), used)


def _call_names(spec) -> set:
    return {t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "call"}


@pytest.mark.timeout(900)
def test_an_icicle_option_changes_the_icicle_above_the_bands_as_render_icicles(run, tmp_path):
    plain, _ = _figures(run, tmp_path)
    # colour by module: the icicle's legend (the memory legend's first rows) is render-icicle's
    spec, ice = _figures(run, tmp_path, "--color-by", "module")
    assert spec.meta["legend_title"] == ice.meta["legend_title"] != plain.meta["legend_title"]
    n = len(ice.legend)
    assert [e.name for e in spec.legend[:n]] == [e.name for e in ice.legend]
    assert [e.name for e in spec.legend[:n]] != [e.name for e in plain.legend[:n]]
    # a hide regex: the function's calls gone from the icicle's names and legend, as from render-icicle's
    hidden = "deep_json.round_trip"
    assert hidden in _call_names(plain) and hidden in {e.name for e in plain.legend}
    spec, ice = _figures(run, tmp_path, "--hide", "round_trip")
    assert hidden not in _call_names(spec) | _call_names(ice) | {e.name for e in spec.legend}
    assert spec.meta["n_calls_drawn"] == ice.meta["n_calls"] < plain.meta["n_calls_drawn"]
    assert _call_names(spec) & _call_names(ice)  # the same calls named in both


@pytest.mark.timeout(900)
@pytest.mark.parametrize("option", [["--hide", "("], ["--fold", "3:1"], ["--color-by", "bogus"], ["--max-colors", "1"],
                                    ["--threads", "no such thread"]])
def test_a_bad_icicle_option_gets_render_icicles_one_line_error(run, tmp_path, capsys, option):
    from tracevis3d.cli import main

    out = str(tmp_path / "x.png")
    codes = []
    for cmd in (["render-icicle", run[1]], ["render-memory", run[0], "--trace", run[1]]):
        codes.append(main([*cmd, *option, "-o", out, "--resolution", "480x270"]))
        err = capsys.readouterr().err
        assert "Traceback" not in err
        codes.append([ln for ln in err.splitlines() if not ln.startswith("[")])  # less the progress lines
    assert codes[0] == codes[2] == 2 and not os.path.exists(out)
    assert len(codes[1]) == len(codes[3]) == 1, codes
    icicle, memory = codes[1][0], codes[3][0]
    # the same line; a problem found in the trace (its thread) named after the trace file, the capture first
    assert memory == icicle or memory.endswith(icicle.split("error: ", 1)[1]), (memory, icicle)
    if option[0] == "--threads":
        assert f"{run[1]}: no thread named 'no such thread'" in memory


@pytest.mark.timeout(900)
def test_the_panels_memory_section_has_the_icicles_options(run):
    """The panel's Memory section (the add-on registered) draws its fields from the same schema:
    its colour field reaches the icicle above the bands as the option does."""
    bpy = pytest.importorskip("bpy")
    import json

    from addon_loader import registered_addon

    gen = registered_addon()
    next(gen)
    try:
        scene = bpy.context.scene
        scene.tracevis3d.trace_path = str(run[0])
        group = scene.tracevis3d_memory_params
        group.calls_trace = str(run[1])
        group.resolution_x, group.resolution_y = 960, 540
        group.color_by = "module"
        assert bpy.ops.tracevis3d.build_view(view="memory") == {"FINISHED"}
        record = json.loads(scene["tracevis3d_memory"])
        assert record["params"]["color_by"] == "module"
        texts = {ob.data.body for ob in bpy.data.collections["TraceVis3D"].all_objects if ob.type == "FONT"}
        assert "colour: module" in texts and "json.encoder" in texts, sorted(texts)  # the legend's heading, a module
    finally:
        next(gen, None)
