"""The command line: renders a real trace headless, fails cleanly on bad input.

In-process calls of `cli.main` (real bpy) plus subprocess runs of
``python -m tracevis3d`` for the exit codes and the one-line errors.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tracevis3d.cli import main

REPO = pathlib.Path(__file__).resolve().parents[2]


def _run(*args, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env=env)


def _errors(stderr: str) -> list:
    """stderr lines that are not progress, warnings or Blender's own chatter."""
    return [ln for ln in stderr.splitlines()
            if ln.startswith("tracevis3d: error") or ln.startswith("tracevis3d: internal")
            or ln.startswith("Traceback")]


def _png(path):
    """(h, w, 4) stored floats of a rendered PNG, row 0 at the top (`figure_report.load_image`)."""
    pytest.importorskip("bpy")
    from tracevis3d.blender.figure_report import load_image

    return load_image(path, 4)


@pytest.mark.blender
def test_renders_a_real_trace(realdata, tmp_path, capsys):
    pytest.importorskip("bpy")
    src = realdata / "viztracer-examples" / "multithread.json"
    out = tmp_path / "mt.png"
    blend = tmp_path / "mt.blend"
    rc = main(["render-icicle", str(src), "-o", str(out), "--resolution", "480x270",
               "--save", str(blend), "--color-by", "module"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out == f"{out}\n"  # stdout carries the output path only
    assert "[100%]" in cap.err and "rendering 480x270" in cap.err  # progress on stderr
    img = _png(out)
    assert img.shape == (270, 480, 4)
    drawn = np.abs(img[..., :3] - 1).max(-1) > 0.06
    assert 0.05 < drawn.mean() < 0.8  # a figure, not an empty or a flooded frame
    # five threads → five lanes of boxes: coloured pixels in several separate bands
    rows = (drawn & (img[..., :3].std(-1) > 0.08)).any(1)
    bands = np.count_nonzero(np.diff(rows.astype(int)) == 1)
    assert bands >= 3
    # the saved .blend remembers how it was built
    import json

    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    info = json.loads(bpy.context.scene["tracevis3d_build"])
    assert info["trace_path"].endswith("multithread.json")
    assert info["params"]["color_by"] == "module" and info["params"]["resolution"] == [480, 270]
    assert bpy.data.collections["TraceVis3D"].objects


@pytest.mark.blender
def test_thread_and_window_selection(realdata, tmp_path, capsys):
    pytest.importorskip("bpy")
    src = realdata / "viztracer-examples" / "multithread.json"
    out = tmp_path / "one.png"
    rc = main(["render-icicle", str(src), "-o", str(out), "--resolution", "320x180",
               "--thread", "0", "--window", "0:1ms", "--orthographic", "--no-legend"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    import bpy

    info = __import__("json").loads(bpy.context.scene["tracevis3d_build"])
    assert info["params"]["threads"] == [0] and info["params"]["time_window"] == [0.0, 1000.0]
    assert _png(out).shape == (180, 320, 4)
    rc = main(["render-icicle", str(src), "-o", str(out), "--thread", "no-such-thread"])
    err = capsys.readouterr().err
    assert rc == 2 and len(_errors(err)) == 1 and "no-such-thread" in err


@pytest.mark.parametrize("content", [b"this is not a trace {{{", b"\x1f\x8b\x08garbage", b"",
                                     b'{"traceEvents": 5}', b"\x00\x01\x02\x03" * 100])
def test_corrupt_file_fails_cleanly(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    r = _run("render-icicle", bad, "-o", tmp_path / "x.png")
    assert r.returncode != 0
    errs = _errors(r.stderr)
    assert len(errs) == 1 and errs[0].startswith("tracevis3d: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args, needle", [
    (["render-icicle", "{trace}", "-o", "{out}", "--resolution", "10x"], "resolution"),
    (["render-icicle", "{trace}", "-o", "{out}", "--window", "5:1"], "T0 < T1"),
    (["render-icicle", "{trace}", "-o", "{out}", "--engine", "povray"], "engine"),
    (["render-icicle", "{trace}"], "-o/--output"),
    (["render-icicle", "/no/such/file.json", "-o", "{out}"], "not found"),
    (["render-icicle", "{trace}", "-o", "/no/such/dir/x.png"], "does not exist"),
    (["render-icicle", "{trace}", "-o", "{out}", "--save", "x.txt"], ".blend"),
    (["render-icicle", "{trace}", "-o", "{out}", "--transparent", "-o", "{out}.jpg"], "alpha"),
    (["render-icicle", "{trace}", "-o", "{out}", "--hide", "(unclosed"], "bad regular expression"),
    (["render-icicle", "{trace}", "-o", "{out}", "--hide-module", "not a module"], "--hide-module"),
    (["render-icicle", "{trace}", "-o", "{out}", "--fold", "5:1"], "ends before it starts"),
    (["render-icicle", "{trace}", "-o", "{out}", "--fold", "sometimes"], "--fold"),
    (["render-icicle", "{trace}", "-o", "{out}", "--label-px", "3"], "14..200"),
    (["render-icicle", "{trace}", "-o", "{out}", "--label-px", "big"], "--label-px"),
    (["render-icicle", "{trace}", "-o", "{out}", "--thread-order", ","], "thread order"),
    (["render-icicle", "{trace}", "-o", "{out}", "--color-by", "rainbow"], "--color-by"),
    (["render-icicle", "{trace}", "-o", "{out}", "--title", "T", "--no-title"], "not allowed with"),
    (["render-icicle", "{trace}", "-o", "{out}", "--samples", "0"], "samples"),
    (["frobnicate"], "invalid choice"),
    ([], "missing command"),
    (["render-compare", "{trace}", "-o", "{out}"], "the following arguments are required: B"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--tau", "1"], "strictly between 0 and 1"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--tau", "x"], "tau must be a number"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--lambda", "2"], "lambda must be a number within 0..1"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--band", "0"], "band must be a number within 0.5..100"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--beta", "-1"], "beta must be a number within 0..1"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--color-by", "module"], "--color-by"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--window-b", "0:5", "--align-a", "f"],
     "not allowed with"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--window-a", "5:1"], "T0 < T1"),
    (["render-compare", "{trace}", "/no/such/b.json", "-o", "{out}"], "not found"),
    (["render-compare", "{trace}", "{trace}", "-o", "/no/such/dir/x.png"], "does not exist"),
    (["render-compare", "{trace}", "{trace}", "-o", "{out}", "--save", "x.txt"], ".blend"),
])
def test_bad_arguments_one_line(tmp_path, args, needle):
    trace = tmp_path / "t.json"
    trace.write_text('[{"ph": "X", "name": "f", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]')
    argv = [a.format(trace=trace, out=tmp_path / "o.png") for a in args]
    r = _run(*argv)
    assert r.returncode == (1 if needle == "not found" else 2), r.stderr
    errs = _errors(r.stderr)
    assert len(errs) == 1 and needle in errs[0], r.stderr
    assert "Traceback" not in r.stderr
    # apart from progress lines ("[ 0%] ..."), the error is the only output
    assert [ln for ln in r.stderr.splitlines() if not ln.startswith("[")] == errs


def test_help_exits_zero():
    r = _run("render-icicle", "--help")
    assert r.returncode == 0 and "--resolution" in r.stdout
    r = _run("render-compare", "--help")
    assert r.returncode == 0 and "--tau" in r.stdout and "render-compare A B" not in r.stderr


TINY = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
        {"ph": "X", "name": "main (app.py:1)", "ts": 0, "dur": 1000, "pid": 1, "tid": 1},
        {"ph": "X", "name": "load_config (app.py:10)", "ts": 10, "dur": 300, "pid": 1, "tid": 1},
        {"ph": "X", "name": "compute (app.py:30)", "ts": 400, "dur": 550, "pid": 1, "tid": 1}]


def _tiny(tmp_path):
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps({"traceEvents": TINY}))
    return p


MAGIC = {".png": [b"\x89PNG\r\n\x1a\n"], ".jpg": [b"\xff\xd8\xff"], ".jpeg": [b"\xff\xd8\xff"],
         ".exr": [b"\x76\x2f\x31\x01"], ".tif": [b"II*\x00", b"MM\x00*"], ".tiff": [b"II*\x00", b"MM\x00*"]}


@pytest.mark.blender
@pytest.mark.parametrize("ext", sorted(MAGIC))
def test_output_format_follows_the_extension(tmp_path, capsys, ext):
    pytest.importorskip("bpy")
    out = tmp_path / f"fig{ext.upper() if ext == '.tif' else ext}"  # the extension's case does not matter
    rc = main(["render-icicle", str(_tiny(tmp_path)), "-o", str(out), "--resolution", "96x54"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out == f"{out}\n"
    head = out.read_bytes()[:8]
    assert any(head.startswith(m) for m in MAGIC[ext]), (ext, head)


@pytest.mark.blender
def test_transparent_png_has_alpha(tmp_path, capsys):
    pytest.importorskip("bpy")
    out = tmp_path / "t.png"
    rc = main(["render-icicle", str(_tiny(tmp_path)), "-o", str(out), "--resolution", "96x54", "--transparent"])
    assert rc == 0, capsys.readouterr().err
    assert out.read_bytes()[25] == 6  # IHDR colour type 6: RGBA
    assert (_png(out).shape[-1] == 4)


@pytest.mark.parametrize("name", ["fig.bmp", "fig", "fig.png.txt", "fig.webp"])
def test_other_output_extensions_are_refused_before_loading(tmp_path, name):
    """One line naming the file, exit 2, before the trace is even looked at (it does not exist)."""
    r = _run("render-icicle", tmp_path / "no-such-trace.json", "-o", tmp_path / name)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tracevis3d: error: argument -o/--output: "), r.stderr
    assert name in lines[0] and ".png, .jpg/.jpeg, .exr or .tif/.tiff" in lines[0]
    assert r.stdout == "" and not list(tmp_path.glob("fig*"))


@pytest.mark.blender
def test_stdout_is_the_path_and_blender_noise_is_gone(realdata, tmp_path):
    """A real render with --save in a fresh process: stdout is exactly the output path; no
    "EGL Error" lines (first GPU context), no "Saved: '...'" (render log) or "Info: Saved as"
    (save report) anywhere; stderr holds only our progress lines."""
    src = realdata / "viztracer-examples" / "multithread.json"
    out, blend = tmp_path / "mt.png", tmp_path / "mt.blend"
    r = _run("render-icicle", src, "-o", out, "--resolution", "320x180", "--save", blend)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{out}\n", r.stdout
    for noise in ("EGL", "Saved:", "Saved as", "Time:"):
        assert noise not in r.stdout + r.stderr, (noise, r.stderr)
    assert all(ln.startswith("[") for ln in r.stderr.splitlines()), r.stderr
    assert out.is_file() and blend.is_file()


def test_quiet_blender_output_drops_noise_and_passes_the_rest_to_stderr(capfd):
    """fd-level: C-level printf (buffered) and raw writes on fd 1 and 2 are captured; known
    noise goes, every other line reaches stderr; nothing reaches stdout."""
    import ctypes

    from tracevis3d.blender.render import quiet_blender_output

    libc = ctypes.CDLL(None)
    with quiet_blender_output():
        libc.printf(b"00:01.057  render           | Saved: '/tmp/x.png'\n")
        libc.printf(b"a real message from C\n")
        os.write(2, b"EGL Error (0x3009): EGL_BAD_MATCH: Arguments are inconsistent.\n" * 3)
        os.write(2, b"Warning: something the user should see\n")
        os.write(1, b'Info: Saved as "x.blend"\n')
        print("python print on stdout")
    out, err = capfd.readouterr()
    assert out == ""
    assert err.splitlines() == ["a real message from C", "Warning: something the user should see",
                                "python print on stdout"] or \
        sorted(err.splitlines()) == sorted(["a real message from C", "Warning: something the user should see",
                                            "python print on stdout"]), err
    # nesting is harmless, and outside the block fds are back
    with quiet_blender_output():
        with quiet_blender_output():
            os.write(1, b"inner\n")
    os.write(1, b"after\n")
    out, err = capfd.readouterr()
    assert out == "after\n" and err == "inner\n"


def _render_parser(command="render-icicle"):
    from tracevis3d.cli import make_parser

    sub = next(a for a in make_parser()._actions if isinstance(a, __import__("argparse")._SubParsersAction))
    return sub.choices[command]


def _options(parser):
    """The options --help shows, their other spellings ("the same as ...") left out."""
    import argparse

    return [a for a in parser._actions if a.option_strings and "-h" not in a.option_strings
            and a.help != argparse.SUPPRESS and not a.help.startswith("the same as")]


def test_help_states_every_default_and_unit():
    parser = _render_parser()
    for a in _options(parser):
        assert "(default: " in a.help or "(required)" in a.help, a.option_strings
    text = parser.format_help()
    for needle in ("(default: 1920x1080)", "pixels", "µs", "(default: auto)", "(default: 16 px)",
                   "(default: 1 px)", "(default: workbench)", "(default: self)", "repeatable"):
        assert needle in text, needle


def test_cone_help_states_every_default():
    parser = _render_parser("render-cone")
    for a in _options(parser):
        assert "(default: " in a.help or "(required)" in a.help, a.option_strings
    text = " ".join(parser.format_help().split())
    for needle in ("(default: 300", "(default: auto)", "(default: 1920x1080)", "(default: workbench)"):
        assert needle in text, needle


def test_cone_options_reach_the_cone_parameters():
    from tracevis3d.cli import make_parser
    from tracevis3d.cli.cone import cone_params
    from tracevis3d.layout.cone import ConeParams

    d = cone_params(make_parser().parse_args(["render-cone", "t.json", "-o", "f.png"]))
    assert d.to_dict() == ConeParams().to_dict(), "the CLI's defaults are ConeParams' defaults"
    p = cone_params(make_parser().parse_args([
        "render-cone", "t.json", "-o", "f.png", "--max-nodes", "50", "--hide", "^len", "--hide-module", "runpy",
        "--hide-utilities", "--collapse-patterns", "--expand-recursion", "--orientation", "horizontal",
        "--highlight", "sort",
        "--color-by", "module", "--label-px", "20", "--max-labels", "7", "--no-legend", "--title", "T"]))
    assert (p.max_nodes, p.hide, p.hide_modules, p.hide_utilities) == (50, ["^len"], ["runpy"], 10)
    assert p.collapse_patterns and not p.fold_recursion and p.orientation == "horizontal" and p.highlight == ["sort"]
    assert (p.color_by, p.label_px, p.max_labels, p.show_legend, p.title) == ("module", 20.0, 7, False, "T")


@pytest.mark.parametrize("args, needle", [(["--max-nodes", "0"], "max nodes"),
                                          (["--orientation", "diagonal"], "invalid choice"),
                                          (["--hide", "("], "regular expression")])
def test_cone_bad_arguments_one_line(tmp_path, args, needle, capsys):
    from tracevis3d.cli import main

    assert main(["render-cone", str(tmp_path / "t.json"), "-o", str(tmp_path / "f.png"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle.lower() in err.lower(), err


def test_compare_help_states_every_default_and_unit():
    parser = _render_parser("render-compare")
    for a in _options(parser):
        assert "(default: " in a.help or "(required)" in a.help, a.option_strings
    text = " ".join(parser.format_help().split())  # wrapped lines joined
    for needle in ("(default: 0.2)", "(default: 0.85)", "(default: 8 levels)", "(default: permutation)",
                   "µs", "(default: 1920x1080)", "(default: workbench)", "strictly between 0 and 1", "stack levels"):
        assert needle in text, needle


def test_cli_page_option_reference_is_current():
    """docs/cli.md's option reference is the one the schemas write (`cli.reference`):
    regenerate it with ``python -m tracevis3d.cli.reference docs/cli.md``."""
    from tracevis3d.cli.reference import BEGIN, END, reference

    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    block = BEGIN + page.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert block == reference(), \
        "docs/cli.md's option reference is stale: python -m tracevis3d.cli.reference docs/cli.md"


@pytest.mark.parametrize("command", ["render-icicle", "render-compare", "render-threads", "render-cone"])
def test_cli_page_lists_every_option_with_its_default(command):
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = page.split(f"#### `{command} ", 1)[1].split("\n#### ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    for a in _options(_render_parser(command)):
        hits = [ln for ln in rows if any(f"`{o}`" in ln for o in a.option_strings)]
        assert len(hits) == 1, f"docs/cli.md lists {a.option_strings} of {command} {len(hits)} times"
        assert hits[0].split("|")[2].strip(), hits[0]  # the default column


def test_compare_options_reach_the_compare_parameters():
    """The CLI's defaults are CompareParams' defaults; every option lands in its field."""
    from tracevis3d.cli import compare_params, make_parser
    from tracevis3d.layout.compare import CompareParams

    default = CompareParams()
    args = make_parser().parse_args(["render-compare", "a.json", "b.json", "-o", "f.png"])
    p = CompareParams.from_dict(compare_params(args))
    assert p.to_dict() == default.to_dict(), "the CLI's defaults are CompareParams' defaults"
    assert args.tau == default.tau == 0.2
    args = make_parser().parse_args([
        "render-compare", "a.json", "b.json", "-o", "f.png", "--color-by", "trace-b", "--lambda", "0.5",
        "--band", "3", "--beta", "0.1", "--window-a", "1ms:2ms", "--window-b", "0:5", "--thread-a", "MainThread",
        "--thread-b", "2", "--fold", "none", "--cluster-px", "2", "--label-px", "20", "--no-labels",
        "--no-legend", "--no-overview", "--title", "Run 1 vs run 2", "--orthographic", "--resolution", "800x600"])
    p = CompareParams.from_dict(compare_params(args))
    assert (p.color_by, p.lam, p.band, p.beta) == ("trace-b", 0.5, 3.0, 0.1)
    assert p.window_a == (1000.0, 2000.0) and p.window_b == (0.0, 5.0)
    assert (p.thread_a, p.thread_b, p.fold, p.cluster_px, p.label_px) == ("MainThread", 2, "none", 2.0, 20.0)
    assert not (p.show_labels or p.show_legend or p.show_overview) and p.title == "Run 1 vs run 2"
    assert p.orthographic and p.resolution == (800, 600)


def test_new_options_reach_the_icicle_parameters():
    from tracevis3d.cli import icicle_params, make_parser

    args = make_parser().parse_args([
        "render-icicle", "t.json", "-o", "f.png", "--color-by", "kind", "--fold", "3:40,50:",
        "--hide", "^_call", "--hide", r"importlib\.", "--hide-module", "runpy", "--hide-module",
        "importlib._bootstrap", "--thread", "MainThread", "--thread", "2", "--thread-order", "worker,0",
        "--title", "Slide 3", "--label-px", "20", "--label-min-px", "5", "--cluster-px", "2", "--no-axes"])
    p = icicle_params(args)
    assert p.color_by == "kind" and p.fold == "3:40,50:"
    assert p.hide == ["^_call", r"importlib\."] and p.hide_modules == ["runpy", "importlib._bootstrap"]
    assert p.threads == ["MainThread", 2] and p.thread_order == ["worker", 0]
    assert p.title == "Slide 3" and p.show_title and p.label_px == 20.0 and p.label_min_px == 5.0
    assert p.cluster_px == 2.0 and not p.show_axes
    d = icicle_params(make_parser().parse_args(["render-icicle", "t.json", "-o", "f.png"]))
    from tracevis3d.params.icicle import IcicleParams

    assert d.to_dict() == IcicleParams().to_dict(), "the CLI's defaults are IcicleParams' defaults"
    p = icicle_params(make_parser().parse_args(["render-icicle", "t.json", "-o", "f.png", "--no-title",
                                                "--thread-order", "busy", "--fold", "none"]))
    assert not p.show_title and p.thread_order == "busy" and p.fold == "none"
    p = icicle_params(make_parser().parse_args(["render-icicle", "t.json", "-o", "f.png", "--hide-utilities", "3",
                                                "--collapse-patterns"]))
    assert p.hide_utilities == 3 and p.collapse_patterns


@pytest.mark.blender
def test_cli_on_a_loaded_blend_keeps_the_users_objects(tmp_path, capsys):
    """The CLI removes only untouched startup objects: a user's object and a moved Cube stay."""
    bpy = pytest.importorskip("bpy")
    bpy.ops.wm.read_homefile(use_factory_startup=True)
    bpy.data.objects["Cube"].location.z = 3.0
    mine = bpy.data.objects.new("MyThing", bpy.data.meshes.new("MyThing"))
    bpy.context.scene.collection.objects.link(mine)
    blend = tmp_path / "mine.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    rc = main(["render-icicle", str(_tiny(tmp_path)), "-o", str(tmp_path / "f.png"), "--resolution", "96x54"])
    assert rc == 0, capsys.readouterr().err
    names = {ob.name for ob in bpy.context.scene.objects}
    assert {"MyThing", "Cube"} <= names and not {"Light", "Camera"} & names
    assert "removed the startup Light, Camera" in capsys.readouterr().err


def test_no_view_parameter_shares_a_name_with_the_render_options():
    """A render command takes the render schema's options and the view's: a view parameter
    of the same name would be dropped from the command line (the comparison's tube samples
    once were, under the render's ``samples``)."""
    from tracevis3d.params import view_schemas
    from tracevis3d.params.render import RENDER
    from tracevis3d.params.threads import THREADS_COMMAND

    render = set(RENDER.by_name)
    shared = {view: render & set(cls.SCHEMA.by_name) for view, cls in view_schemas().items()}
    assert shared == {view: set() for view in shared}
    assert not render & set(THREADS_COMMAND.by_name)


def test_compare_too_large_for_memory_is_one_line_exit_1(tmp_path):
    """A pair that cannot fit in the available memory (monkeypatched in the child: no real
    shortage) stops `render-compare` with one line naming what it needs, what is available
    and how to ask for less, exit 1 like the other size errors, never a traceback."""
    import tracevis3d

    a = tracevis3d.synthetic(3000, threads=2, seed=3)
    paths = [tmp_path / "a.tv3d.npz", tmp_path / "b.tv3d.npz"]
    tracevis3d.save(a, paths[0])
    tracevis3d.save(tracevis3d.perturb(a, seed=4), paths[1])
    code = ("import sys\n"
            "from tracevis3d.analysis import comparison\n"
            "comparison.available_memory_bytes = lambda: 2_000_000\n"
            "from tracevis3d.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code, "render-compare", *map(str, paths), "-o",
                        str(tmp_path / "o.png")], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 1, r.stderr
    errs = _errors(r.stderr)
    assert len(errs) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "6,091 calls" in errs[0] and "MiB available" in errs[0] and "time window" in errs[0]
    assert not (tmp_path / "o.png").exists()
