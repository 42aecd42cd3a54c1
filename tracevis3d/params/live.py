"""The live view's parameters (`LiveParams`) and the options of the live commands
(``render-live``, ``replay``, ``python -m tracevis3d.live run|record``): declared once here,
made into options by `params.cli` like every view's."""
from __future__ import annotations

from . import shared as S
from .core import Alias, Param, Params, Schema
from .kinds import Flag, Number, Text
from .render import Path

LIVE = Schema("live", [
    Param("window_us", Number(0.0, 1e15, lo_open=True, metavar="US"), 1e6, group=S.SHOW, flag="--window-width",
          unit="µs", label="Window", aliases=(Alias("--window", takes_value=True),),
          help="time across the image while the camera follows now"),
    Param("follow", Flag(), True, group=S.SHOW, label="Follow now", flag="--no-follow",
          aliases=(Alias("--whole", const=False, deprecated=False),),
          help="the camera follows the newest calls (off, --whole: the whole run so far)"),
    Param("levels", Number(1, 1000, integer=True), 4, group=S.SHOW, label="Levels", cli=False, ui=False,
          help="call levels per lane at the start (doubles as calls go deeper)"),
    Param("max_levels", Number(1, 1000, integer=True), 16, group=S.SHOW, label="Max levels",
          help="deeper calls share the last level (drawn thinner)"),
    S.PACK_THREADS.but(help="threads of one kind (one process, names that differ only in their numbers: a "
                            "server's thread per request) share a lane once there are 8 lanes: a thread that "
                            "starts takes the lane of one that returned from all its calls"),
    S.FOLD.but(help="fold stack levels into thin bands: auto (each lane's runtime infrastructure at its top: thread "
                    "start-up, exec, runpy; known as calls arrive), none, or level ranges A:B[,C:D] (inclusive; A: "
                    "and :B are open)"),
    S.HIDE.but(help="hide calls whose function name matches a regular expression (as they arrive); their children "
                    "move up"),
    S.HIDE_MODULES, S.HIGHLIGHT, S.LABEL_PX, S.SHOW_LABELS,
    S.MAX_LABELS.but(default=40, help="at most this many names, the widest calls in view first"),
    S.THREADS.but(help="threads to show, by index (in the order they appear) or name, as they arrive"),
    S.TITLE.but(help="figure title (default: the programs, threads, calls and now, kept up to date)"),
    S.RESOLUTION.but(default=(1280, 720)),
    S.SHOW_LEGEND, S.SHOW_TITLE,
    Param("recolour_seconds", Number(0.0, 3600.0), 2.0, label="Recolour every", unit="s", cli=False, ui=False,
          help="module colours re-ranked by area at most this often (0: every update)"),
    Param("cluster_seconds", Number(0.0, 3600.0), 0.25, label="Clusters every", unit="s", cli=False, ui=False,
          help="sub-pixel clusters brought up to date this often (0: every update)"),
    S.TIME_LENGTH.but(default=40.0, cli=False, ui=False, help="world width of the window"),
    Param("level_height", Number(0.0, 100.0, lo_open=True), 0.5, group=S.CAMERA, label="Level height", cli=False,
          ui=False,
          help="world height of a call level"),
    S.AZIMUTH.but(cli=False, ui=False), S.ELEVATION.but(cli=False, ui=False),
], doc="The growing icicle of a live feed.")


class LiveParams(Params, schema=LIVE):
    """Parameters of `LiveLayout` (the growing icicle of a live feed): ``window_us`` across
    the image while ``follow``-ing now (else [0, now]); ``levels`` per lane at the start,
    doubling up to ``max_levels``; colours re-ranked every ``recolour_seconds``, clusters
    every ``cluster_seconds`` (0: every update).  Declared once in `LIVE`."""


CURVE = "CURVE security"
_CURVE_CLIENTS = Param(
    "curve_clients", Path(metavar="FOLDER"), None, group=CURVE, default_text="none",
    help="CURVE, binding: the folder of the public certificates of the peers admitted (the allow-list; "
         "any other peer is refused and counted)")
_CURVE_CLIENT_KEY = Param(
    "curve_client_key", Path(metavar="CERT"), None, group=CURVE, default_text="none",
    help="CURVE, connecting: this side's secret certificate (one the binding side admits)")

RENDER_LIVE = Schema("render-live", [
    Param("output", Path(metavar="FOLDER|VIDEO"), None, group="output", flag="-o/--output",
          help="folder for the PNG frames (created), or a video file (.mp4, .mkv, .mov, .webm)"),
    Param("seconds", Number(0.05, 86400.0, metavar="S"), 10.0, group="output", unit="s",
          help="how long to watch"),
    Param("fps", Number(0.1, 120.0, metavar="F"), 10.0, group="output", help="frames per second"),
    Param("until_end", Flag(), False, group="output",
          help="after SECONDS, go on until every program seen said goodbye (at most 10 min more)"),
    Param("connect", Flag(), False, group=CURVE, help="connect instead of binding (to a program run with --bind)"),
    Param("curve_server_key", Path(metavar="CERT"), None, group=CURVE, default_text="none",
          help="CURVE: binding, this side's secret certificate; with --connect, the program's public one"),
    _CURVE_CLIENTS, _CURVE_CLIENT_KEY,
], doc="render-live's own options.")

REPLAY = Schema("replay", [
    Param("speed", Number(0.0, 1e9, metavar="X"), 1.0, group="replay",
          help="1: the recorded pace, 2: twice as fast, 0: as fast as possible"),
    Param("wait", Number(0.0, 3600.0, metavar="S"), 5.0, group="replay", unit="s",
          help="wait up to S seconds for a viewer before starting"),
    Param("bind", Flag(), False, group=CURVE, help="bind the endpoint instead of connecting"),
    Param("curve_server_key", Path(metavar="CERT"), None, group=CURVE, default_text="none",
          help="CURVE: connecting, the binding side's public certificate; binding, this side's secret "
               "certificate (required for a non-loopback endpoint)"),
    _CURVE_CLIENTS, _CURVE_CLIENT_KEY,
], doc="replay's options.")


def publisher_schema(default_endpoint: str) -> Schema:
    """``python -m tracevis3d.live run``'s options (the endpoint's default is the live
    package's)."""
    return Schema("live-run", [
        Param("endpoint", Text(metavar="ENDPOINT"), default_endpoint, group="publisher", help="ZeroMQ endpoint"),
        Param("bind", Flag(), False, group="publisher",
              help="bind (one program, several viewers) instead of connecting"),
        Param("curve_server_key", Path(metavar="CERT"), None, group=CURVE, default_text="none",
              help="connecting: the viewer's public certificate; with --bind: this side's secret certificate"),
        _CURVE_CLIENTS.but(help="with --bind and CURVE: the folder of the viewers' public certificates admitted"),
        _CURVE_CLIENT_KEY.but(help="connecting with CURVE: this side's secret certificate (one of the viewer's "
                                   "allow-list)"),
        Param("wait_subscriber", Number(0.0, 3600.0, metavar="S"), 1.0, group="publisher", unit="s",
              help="hold events up to S seconds at start until a viewer subscribes"),
        Param("linger", Number(0.0, 3600.0, metavar="S"), 2.0, group="publisher", unit="s",
              help="at exit, wait at most S seconds for queued messages"),
        Param("max_pending", Number(1, 2 ** 40, integer=True, optional=True), None, group="publisher",
              default_text="8388608 per thread with the compiled hook, 1048576 in all with the Python hooks",
              help="events held at most before dropping"),
    ], doc="python -m tracevis3d.live run")


RECORD = Schema("live-record", [
    Param("output", Path(), None, group="output", flag="-o/--output", help="the Chrome JSON file to write"),
], doc="python -m tracevis3d.live record")
