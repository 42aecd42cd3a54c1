"""The options of renders on a Dask cluster (`render-animation --scheduler/--workers/--chunk`)
and of `render-batch` (one figure per trace), declared once like every view's parameters; the
command line is written from these schemas (`params.cli.add_options`)."""
from __future__ import annotations

from ..views import VIEWS
from .core import Param, Schema
from .kinds import Choice, Number, Text

CLUSTER = "cluster (Dask)"
BATCH = "batch"

#: the views a batch renders (those whose first command reads trace files: not the live feed's
#: endpoint, not a memray capture), and the command that renders each, from the registry of views
BATCH_VIEW_COMMANDS = {v.name: v.commands[0].name for v in VIEWS
                       if v.commands and v.commands[0].usage.split()[1:] in (["TRACE"], ["A", "B"])}
#: the image formats a batch writes
BATCH_IMAGE_FORMATS = ("png", "jpg", "exr")

CLUSTER_SCHEMA = Schema("cluster", [
    Param("scheduler", Text(metavar="ADDRESS"), None, group=CLUSTER, default_text="this process alone",
          help="render on the Dask workers of this scheduler (tcp://host:8786), or on an embedded cluster "
               "of N local worker processes (local:N)"),
    Param("workers", Number(1, 1024, integer=True, optional=True), None, group=CLUSTER, default_text="none",
          help="render on an embedded cluster of N local worker processes: --scheduler local:N"),
    Param("chunk", Number(1, 100_000, integer=True, optional=True, metavar="K"), None, group=CLUSTER,
          default_text="about three tasks a worker, at most 16", help="frames a worker renders per task"),
    Param("connect_timeout", Number(1.0, 3600.0, metavar="S"), 10.0, group=CLUSTER, unit="s",
          help="the longest wait for the scheduler: to connect, to answer Dask's handshake and each call made to it"),
    Param("worker_timeout", Number(1.0, 86400.0, metavar="S"), 60.0, group=CLUSTER, unit="s",
          help="the longest wait for the workers: the first to join, their answer to the probe (they import bpy), "
               "a file sent to them, a result fetched from one"),
    Param("task_timeout", Number(1.0, 604800.0, metavar="S"), 3600.0, group=CLUSTER, unit="s",
          help="give up when no task has finished for this long while tasks are out (a worker that took a task and "
               "never finishes it): the tasks left are cancelled and reported"),
], doc="Where renders run: this process, an embedded cluster, or a Dask scheduler's workers, and how long each "
       "of its peers is waited for.")

#: the cluster options the panel's Animate section shows (``--workers N`` is ``local:N`` there)
CLUSTER_PANEL_FIELDS = ("scheduler", "connect_timeout", "worker_timeout", "task_timeout")

BATCH_SCHEMA = Schema("batch", [
    Param("view", Choice([(v, v, c) for v, c in BATCH_VIEW_COMMANDS.items()]), "icicle", group=BATCH,
          help="the figure of each trace"),
    Param("output", Text(metavar="DIR"), None, group=BATCH, flag="-o/--output",
          help="folder for the figures and manifest.json (created)"),
    Param("format", Choice([(f, f.upper(), f"{f} images") for f in BATCH_IMAGE_FORMATS]), "png", group=BATCH,
          help="image format of the figures"),
    Param("options", Text(), "", group=BATCH, default_text="none",
          help="options of the view's render command for every figure, as one string, e.g. "
               "\"--resolution 1280x720 --samples 8\""),
], doc="One figure per trace (per pair for compare), rendered in parallel, with a manifest.")
#: a batch of figures has no frames to split into chunks
FIGURES_CLUSTER_SCHEMA = Schema("cluster_figures", [p for p in CLUSTER_SCHEMA if p.name != "chunk"],
                                doc=CLUSTER_SCHEMA.doc)
