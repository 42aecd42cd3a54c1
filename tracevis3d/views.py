"""The views TraceVis3D draws, each declared once (`VIEWS`).

A `View` names everything the rest of the package needs to know about one view: its parameter
class (the schema the command line, the panel and saved scenes are made from), its command-line
commands and the option schemas they take, the build job and the scene record it writes, the
panel section that edits it, a one-line summary, the animations it supports, and the warm-up
step that compiles its kernels.  The consumers read this table instead of lists of their own:

- the command line (`tracevis3d.cli.make_parser`, ``COMMANDS``): one sub-command per `Command`,
  added by the view's CLI module (``add_parsers(sub)``; runners in its ``COMMANDS``), rendered by
  `tracevis3d.cli.render.render_view` with the entry's job and its hooks `View.prepare` and
  `View.describe`;
- the option reference (`tracevis3d.cli.reference.commands`);
- the panel (``ui.properties.VIEWS``: a property group per view; ``ui.panels``: each view's
  section is labelled `View.panel`, and a view without a hand-made section gets a generated
  one whose Build runs `View.steps` through the ``tracevis3d.build_view`` operator);
- the warm-up (`tracevis3d.warmup.run`: each view's `View.warm` in its `View.warmup` step);
- the animation (`tracevis3d.blender.animate`, ``render-animation --view``: `View.animations`,
  the first being what ``auto`` picks);
- the tests (tests/unit/test_view_registry.py checks every consumer against this table).

References to code of higher layers (the CLI module, the build job, the warm-up function) are
``"module:attribute"`` strings under `tracevis3d`, imported only when a consumer asks for them
(`resolve`): this module imports nothing but the standard library, so the parameter layer, the
CLI's parser and the add-on's registration can read it without numba, bpy or the layouts.

A new view is one module per layer it needs (its parameters, layout, build job, CLI command) and
one `View` entry here; docs/extending.md counts the files.  `render-animation` offers a view
only when its entry lists `View.animations`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["Command", "View", "VIEWS", "view", "views", "resolve", "commands", "ANIMATIONS"]

#: every animation kind a view may support (`tracevis3d.blender.animate`), in the order the
#: panel and ``--kind`` list them
ANIMATIONS = ("growth", "flythrough", "turntable", "reveal", "handoffs")


@dataclass(frozen=True)
class Command:
    """One command-line command of a view: its usage line (the command, then its positionals
    as the reference shows them) and its one-line help (``tracevis3d --help``)."""

    usage: str
    help: str

    @property
    def name(self) -> str:
        return self.usage.split()[0]


@dataclass(frozen=True)
class View:
    """One view (module docstring).  Strings ``"module:attribute"`` are under `tracevis3d`."""

    #: short name: ``scene.tracevis3d_<name>_params``, ``--view NAME``, the layout's meta["layout"]
    name: str
    #: what users call it (panel choices, docs)
    title: str
    #: one line: what the view draws
    summary: str
    #: its parameter class (a `params.core.Params` subclass)
    params: str
    #: the option schemas its commands take, in the order the help lists them
    schemas: tuple
    #: its commands; empty for a view without one
    commands: tuple
    #: the module that adds the commands' parsers (``add_parsers(sub)``) and runs them (``COMMANDS``)
    cli: str
    #: the function that makes its build `jobs.Job` (``job(trace_or_comparison, params, scene=...)``)
    job: str
    #: the generator of the job's steps (what the panel's operators and the CLI run)
    steps: str
    #: the scene custom property its build records (trace path and parameters) in; '' for none
    scene_key: str
    #: the label of the panel section that edits its parameters
    panel: str
    #: the animations ``render-animation --view NAME`` makes of it; the first is what ``--kind auto``
    #: picks; () when it offers none (the panel's camera moves, fly-through and turntable, still
    #: animate any figure built in the scene)
    animations: tuple
    #: the warm-up step that compiles its kernels (`tracevis3d.warmup.STEPS`); '' for none
    warmup: str
    #: the warm-up function, called as ``warm(trace_a, trace_b)`` on the made-up traces; '' for none
    warm: str
    #: does the view draw two traces (a comparison)?
    two_traces: bool = False
    #: the function that reads its input file when that is no trace (``load(path)``: what the job
    #: takes instead of a `Trace`); '' for a trace, loaded and cached as every view's
    load: str = ""
    #: said after the schema's doc in the option reference
    reference_note: str = ""
    #: the command line's account of a built scene (`tracevis3d.cli.render.describe_view`):
    #: ``describe(info, params, trace, args) -> (progress lines, notes)``; '' for none
    describe: str = ""
    #: what the command line checks and adds before the build job (`tracevis3d.cli.render.render_view`):
    #: ``prepare(args, trace) -> the job's keywords``; '' for ``trace_path=`` the trace's absolute path
    prepare: str = ""

    @property
    def params_class(self):
        """The parameter class (imported now)."""
        return resolve(self.params)

    @property
    def command_names(self) -> tuple:
        return tuple(c.name for c in self.commands)

    def option_schemas(self) -> list:
        """The `params.core.Schema` objects its commands take (imported now)."""
        return [resolve(s) for s in self.schemas]

    def make_params(self, d=None):
        """Its validated parameter object of ``d``: an object of the class, a dict (JSON of this
        or an older version: renamed keys are honoured, `Params.from_dict`) or None (defaults).
        The one way every job and command builds a view's parameters."""
        cls = self.params_class
        if d is None:
            return cls().validate()
        if isinstance(d, cls):
            return d.validate()
        return cls.from_dict(dict(d))


def resolve(path: str):
    """The attribute ``"module:attribute"`` of a module under `tracevis3d` (imported now)."""
    mod, _, attr = path.partition(":")
    module = importlib.import_module(f"{__package__}.{mod}")
    return getattr(module, attr) if attr else module


_RENDER = "params.render:RENDER"

#: every view, in the order the command line, the panel and the docs list them
VIEWS: tuple = (
    View("icicle", "Icicle", "The extruded icicle: x is time, height is stack depth, one lane per thread.",
         params="params.icicle:IcicleParams", schemas=(_RENDER, "params.icicle:ICICLE"),
         commands=(Command("render-icicle TRACE", "render the extruded 3D icicle of a trace to an image"),),
         cli="cli.icicle", job="blender.tasks:build_job", steps="blender.tasks:build_steps",
         scene_key="tracevis3d_build", panel="Parameters", animations=("growth", "flythrough", "turntable"),
         warmup="layout", warm="warmup:warm_icicle", describe="cli.icicle:describe", prepare="cli.icicle:prepare"),
    View("compare", "Comparison", "Two runs side by side (TraceDiff): a shaded tube between every matched call.",
         params="params.compare:CompareParams", schemas=(_RENDER, "params.compare:COMPARE"),
         commands=(Command("render-compare A B", "render two runs side by side (TraceDiff) to an image"),),
         cli="cli.compare", job="blender.tasks:compare_build_job", steps="blender.tasks:compare_build_steps",
         scene_key="tracevis3d_compare", panel="Compare Runs",
         animations=("reveal", "growth", "flythrough", "turntable"), warmup="compare", warm="warmup:warm_compare",
         two_traces=True, describe="cli.compare:describe"),
    View("threads", "Thread view", "Who waits on whom (SyncTrace): every thread on a ring, a curve from each "
         "wait to its release.",
         params="params.threads:ThreadsParams",
         schemas=(_RENDER, "params.threads:THREADS", "params.threads:THREADS_COMMAND"),
         commands=(Command("render-threads TRACE", "render who waits on whom (SyncTrace thread view) to an image"),),
         cli="cli.threads", job="blender.threads_tasks:threads_build_job",
         steps="blender.threads_tasks:threads_build_steps", scene_key="tv3d_threads", panel="Threads",
         animations=("handoffs", "growth", "flythrough", "turntable"), warmup="layout", warm="warmup:warm_threads",
         describe="cli.threads:describe", prepare="cli.threads:prepare"),
    View("cone", "Cone tree", "The call hierarchy as a 3D cone tree of calling contexts (Robertson et al. 1991).",
         params="params.cone:ConeParams", schemas=(_RENDER, "params.cone:CONE"),
         commands=(Command("render-cone TRACE", "render the cone tree of a trace's calling contexts to an image"),),
         cli="cli.cone", job="blender.cone_tasks:cone_build_job", steps="blender.cone_tasks:cone_build_steps",
         scene_key="tracevis3d_cone", panel="Structure", animations=("turntable", "growth", "flythrough"),
         warmup="structure", warm="warmup:warm_cone", describe="cli.cone:describe"),
    View("extravis", "Who calls whom (EXTRAVIS)", "EXTRAVIS: a circular bundle view of who calls whom and a "
         "massive sequence view of every call in one time window.",
         params="params.extravis:ExtravisParams", schemas=(_RENDER, "params.extravis:EXTRAVIS"),
         commands=(Command("render-extravis TRACE", "render who calls whom and when (EXTRAVIS) to an image"),
                   Command("render-heb TRACE", "render who calls whom (EXTRAVIS' circular bundle view) to an image"),
                   Command("render-sequence TRACE",
                           "render every call as a row (EXTRAVIS' massive sequence view) to an image")),
         cli="cli.extravis", job="blender.extravis_tasks:extravis_build_job",
         steps="blender.extravis_tasks:extravis_build_steps", scene_key="tracevis3d_extravis",
         panel="Who Calls Whom (EXTRAVIS)", animations=(), warmup="layout",
         warm="warmup:warm_extravis", describe="cli.extravis:describe", prepare="cli.extravis:prepare",
         reference_note="`render-heb TRACE` and `render-sequence TRACE` draw one of the two views alone, filling "
                        "the figure; they take the same options."),
    View("live", "Live feed", "The growing icicle of a running program, fed by the live protocol (ZeroMQ).",
         params="params.live:LiveParams", schemas=("params.live:RENDER_LIVE", "params.live:LIVE"),
         commands=(Command("render-live ENDPOINT",
                           "render the growing icicle of a live feed to PNG frames or a video"),),
         cli="cli.live", job="blender.live_view:LiveView", steps="blender.live_view:LiveView",
         scene_key="", panel="Live", animations=(), warmup="live", warm="warmup:warm_live"),
    View("memory", "Memory", "Memory over time (Memcov Viz in 3D): every allocation site a band as thick as the "
         "bytes it holds, stacked, time along x.",
         params="params.memory:MemoryParams", schemas=(_RENDER, "params.memory:MEMORY"),
         commands=(Command("render-memory CAPTURE", "render a memray capture's memory over time to an image"),),
         cli="cli.memory", job="blender.memory_tasks:memory_build_job",
         steps="blender.memory_tasks:memory_build_steps", scene_key="tracevis3d_memory", panel="Memory",
         animations=(), warmup="layout", warm="warmup:warm_memory", load="io:load_memory",
         describe="cli.memory:describe"),
)

_BY_NAME = {v.name: v for v in VIEWS}


def registry_entry(table: dict, key: str, what: str):
    """The entry ``key`` of a registry ``table`` (views here, `io.formats`' formats); a
    ValueError naming ``what`` it is and the known keys when there is none."""
    try:
        return table[key]
    except KeyError:
        raise ValueError(f"unknown {what} {key!r}; known: {', '.join(table)}") from None


def view(name: str) -> View:
    """The view called ``name`` (ValueError naming the known ones)."""
    return registry_entry(_BY_NAME, name, "view")


def views(*, animated: bool | None = None, with_commands: bool | None = None) -> tuple:
    """The views (``animated``: only those with animations; ``with_commands``: with a command)."""
    out = VIEWS
    if animated is not None:
        out = tuple(v for v in out if bool(v.animations) == animated)
    if with_commands is not None:
        out = tuple(v for v in out if bool(v.commands) == with_commands)
    return out


def commands() -> dict:
    """command name -> (its view, its `Command`) of every view's commands."""
    return {c.name: (v, c) for v in VIEWS for c in v.commands}
