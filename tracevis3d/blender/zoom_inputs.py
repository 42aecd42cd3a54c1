"""What the first zoom of a figure needs (`tracevis3d.blender.view`), kept from its build: the
trace and the overview's colours in memory for this session (`keep_overview_steps`, run by
`tasks.build_steps`), written into the user cache when the scene is saved (`persist_zoom_inputs`,
a ``save_pre`` handler), read back by a fresh Blender that opens the .blend (`trace_context`,
`prepare`).  A figure without overview colours (the cone tree, `cone_zoom`) keeps its trace
alone the same way (`keep_trace`, `kept_trace_context`, `kept_trace`): the same native copy of a
text trace, so a fresh Blender's first zoom maps it instead of parsing the text again.  Apart
from the zoom's job so that the build's tasks can keep them without importing the views' zoom code."""
from __future__ import annotations

import json

import bpy

from ..jobs import Job
from ..layout import refine

__all__ = ["COLOURS_KEY", "TRACE_COPY_KEY", "COLOURS_DIR", "COLOURS_KEPT", "COLOURS_BYTES", "colours_cache_dir",
           "keep_overview_steps", "persist_zoom_inputs", "keep_trace", "kept_trace_context", "kept_trace",
           "persist_kept_trace", "forget"]

#: the scene's record of its overview's kept colours: JSON {"file": [mtime_ns, size], "fingerprint", "identity"}
#: ("identity": `refine.file_identity` of a file fingerprinted by pieces, else null)
COLOURS_KEY = "tracevis3d_zoom_colours"
#: the scene's record of the native copy of the trace of a figure without kept colours (a cone tree):
#: JSON {"file": [mtime_ns, size], "fingerprint"}, as `COLOURS_KEY`'s
TRACE_COPY_KEY = "tracevis3d_zoom_trace"
#: the user cache folder's sub-folder for the kept colours; ``TRACEVIS3D_ZOOM_CACHE`` overrides the folder
COLOURS_DIR = "zoom_cache"
#: the kept files stay within this many files and bytes (colours: a byte a call; a trace's copy: ~46 bytes a call)
COLOURS_KEPT, COLOURS_BYTES = 32, 1 << 30

# (trace file key, params) -> {"trace", "params", "colouring_of"}: the overview's inputs, kept
contexts: dict = {}
# trace file path -> {"path", "file_key", "trace", "fingerprint", "record_key", "read"}: a figure's trace alone, kept
_traces: dict = {}


def colours_cache_dir() -> str:
    """Where the overview colours are kept: ``$TRACEVIS3D_ZOOM_CACHE``, else the extension's user
    folder (``bpy.utils.extension_path_user``), else, outside an extension (the bpy module, a
    legacy add-on), the user cache folder beside numba's (`_numba_env.default_cache_dir`)."""
    import os

    env = os.environ.get("TRACEVIS3D_ZOOM_CACHE")
    if env:
        return env
    pkg = (__package__ or "").rsplit(".", 2)[0]  # the add-on's package: <add-on>.tracevis3d.blender
    if pkg.startswith("bl_ext."):
        try:
            return bpy.utils.extension_path_user(pkg, path=COLOURS_DIR, create=True)
        except (ValueError, AttributeError):
            pass
    from .._numba_env import default_cache_dir

    return os.path.join(os.path.dirname(default_cache_dir()), COLOURS_DIR)


def build_record(scene, key: str, view: str) -> dict:
    """The build record a view left in ``scene[key]`` (JSON: its trace and parameters); a
    ValueError naming ``view`` ("the cone tree") when it is missing or not a record."""
    try:
        rec = json.loads(scene.get(key) or "null")
    except (TypeError, ValueError):
        rec = None
    if not isinstance(rec, dict):
        raise ValueError(f"{view}'s build record is missing: build {view} again")
    return rec


def context_key(file_key, params) -> tuple:
    """The key of `contexts` for a trace file and its parameters."""
    return (tuple(file_key), json.dumps(params.to_dict(), sort_keys=True, default=str))


def _save_colours(colours, fingerprint: str, params) -> str | None:
    """Write the kept colours (atomically), the folder's oldest files beyond `COLOURS_KEPT`
    files or `COLOURS_BYTES` bytes removed; None when the cache folder cannot be written."""
    import os

    from ..io.atomic import write_whole

    folder = colours_cache_dir()
    path = os.path.join(folder, refine.colours_file_name(fingerprint, params))
    try:
        os.makedirs(folder, exist_ok=True)
        write_whole(path, colours.to_bytes())
    except (OSError, ValueError, RuntimeError):
        return None
    refine.prune_colours(folder, path, COLOURS_KEPT, COLOURS_BYTES)
    return path


def persist_zoom_inputs(scene) -> bool:
    """Write what the first zoom of ``scene``'s figure needs into the user cache, once (its
    colours kept by `keep_overview_steps`, a native copy of a trace read from text), and record
    their fingerprint in ``scene[COLOURS_KEY]``; run before the scene is saved
    (`_persist_on_save`).  False when the session keeps nothing for this scene's figure (built
    elsewhere, of merged stacks, its trace file changed since) or the cache cannot be written."""
    import os

    from . import session
    from .hygiene import read_build_record

    ctx = next((c for c in contexts.values() if c.get("colours") is not None), None)
    rec = read_build_record(scene) or {}
    if ctx is None or not rec.get("trace_path") or os.path.abspath(rec["trace_path"]) != ctx["path"]:
        return False
    try:
        key = session.file_key(ctx["path"])
    except Exception:  # noqa: BLE001 - the trace file went away: nothing to keep
        return False
    if tuple(key) != tuple(ctx["file_key"]) or _identity(ctx["path"]) != ctx.get("identity"):
        return False
    if ctx.get("fingerprint") is None:
        fingerprint = refine.content_fingerprint(ctx["path"])
        if _save_colours(ctx["colours"], fingerprint, ctx["params"]) is None:
            return False
        _save_trace_copy(ctx["trace"], ctx["path"], fingerprint)
        ctx["fingerprint"] = fingerprint
    scene[COLOURS_KEY] = json.dumps({"file": [key[1], key[2]], "fingerprint": ctx["fingerprint"],
                                     "identity": ctx.get("identity")})
    return True


def _identity(path: str):
    """`refine.file_identity` of the file at ``path`` (None: hashed whole, or gone)."""
    import os

    try:
        return refine.file_identity(os.stat(path))
    except OSError:
        return None


@bpy.app.handlers.persistent
def _persist_on_save(*_args) -> None:
    """``save_pre``: `persist_zoom_inputs` and `persist_kept_trace` for every scene; never blocks the save."""
    for scene, persist in ((s, p) for s in bpy.data.scenes for p in (persist_zoom_inputs, persist_kept_trace)):
        try:
            persist(scene)
        except Exception as e:  # noqa: BLE001 - a cache that cannot be written only costs the first zoom time
            import sys

            sys.stderr.write(f"TraceVis3D: the zoom inputs of scene {scene.name!r} were not kept: {e}\n")


def _install_save_handler() -> None:
    if _persist_on_save not in bpy.app.handlers.save_pre:
        bpy.app.handlers.save_pre.append(_persist_on_save)
    from .compat import release_at_exit

    release_at_exit()  # the handler out at exit: bpy 4.2 crashed, 4.5 hung with it in place


def forget() -> None:
    """Drop what this session keeps for zooms and the ``save_pre`` handler (the add-on's
    unregister: a disabled extension leaves no handler and no trace in memory behind)."""
    while _persist_on_save in bpy.app.handlers.save_pre:
        bpy.app.handlers.save_pre.remove(_persist_on_save)
    contexts.clear()
    _traces.clear()


def _save_trace_copy(trace, path: str, fingerprint: str) -> str | None:
    """A native copy of a trace read from a text file, in the user cache: a fresh Blender that
    opens the saved .blend maps it (~0.1 s at 10^6 calls) instead of parsing the text again
    (seconds to minutes); ~46 bytes a call.  A copy kept already under this fingerprint is used
    when it holds this trace (`_holds`), else written again.  None for a native source or an
    unwritable folder."""
    import os

    from ..io.native import save_native
    from ..io.sniff import is_native_file

    if is_native_file(path):
        return None
    folder = colours_cache_dir()
    copy = os.path.join(folder, refine.trace_copy_name(fingerprint))
    if os.path.isfile(copy) and _holds(copy, trace):
        os.utime(copy)
        return copy
    try:
        os.makedirs(folder, exist_ok=True)
        save_native(trace, copy)
    except (OSError, ValueError, RuntimeError):
        return None
    refine.prune_colours(folder, copy, COLOURS_KEPT, COLOURS_BYTES)
    return copy


#: calls compared between a kept copy and the trace in memory before the copy is used again
HOLDS_SAMPLE = 4096


def _holds(copy: str, trace) -> bool:
    """Whether the native copy at ``copy`` holds ``trace``: its number of calls, and the start,
    end, function name and depth of `HOLDS_SAMPLE` calls spread over it (the copy is mapped, not
    read whole); False for a copy that cannot be read."""
    import numpy as np

    from ..io import load as load_file

    try:
        kept = load_file(copy)
    except Exception:  # noqa: BLE001 - a damaged copy: written again
        return False
    n = len(trace)
    if len(kept) != n:
        return False
    if not n:
        return True
    at = np.unique(np.linspace(0, n - 1, min(n, HOLDS_SAMPLE)).astype(np.int64))

    def names(t) -> list:
        return [t.function_names[int(f)] for f in np.asarray(t.func)[at]]

    return (np.array_equal(np.asarray(kept.start)[at], np.asarray(trace.start)[at])
            and np.array_equal(np.asarray(kept.end)[at], np.asarray(trace.end)[at])
            and np.array_equal(np.asarray(kept.depth)[at], np.asarray(trace.depth)[at])
            and names(kept) == names(trace))


def keep_overview_steps(job: Job, scene, trace, params, path, stages):
    """Keep what a zoom of the figure just built needs (module doc): the trace and the
    overview's colours (``stages``: the build's `icicle.IcicleStages`) for this session; saving
    the scene writes them to the user cache (`persist_zoom_inputs`); in Blender's interface, the
    zoom's instancer group too (`zoom_write.prepare_instancer_steps`: ~0.1 s, which a headless
    script's first zoom pays).  Nothing for a figure without a trace file or of merged stacks
    (its first zoom computes them)."""
    from . import session
    from ..model import TraceFormatError

    if COLOURS_KEY in scene:
        del scene[COLOURS_KEY]
    if path is None or stages is None or params.merge:
        return
    try:
        key = session.file_key(path)
    except TraceFormatError:
        return
    job.report(job.fraction, "keeping the overview's colours for zooms")
    colours = yield job.off_main(refine.OverviewColours.from_stages, stages, len(trace))
    contexts.clear()
    contexts[context_key(key, params)] = {"path": key[0], "file_key": tuple(key), "params": params, "trace": trace,
                                            "colours": colours, "colouring_of": colours.colouring_of,
                                            "fingerprint": None, "identity": _identity(key[0])}
    _install_save_handler()  # the cache files are written only when the scene is saved
    if not bpy.app.background:  # a figure in Blender's window is there to fly into
        from .zoom_write import prepare_instancer_steps

        job.report(job.fraction, "preparing the zoom's instancer")
        yield from prepare_instancer_steps()


def _recorded_fingerprint(scene, key, record_key: str = COLOURS_KEY) -> str | None:
    """The fingerprint the build recorded (in ``scene[record_key]``), when the trace file is still the one it read."""
    try:
        rec = json.loads(scene.get(record_key) or "null")
    except (TypeError, ValueError):
        return None
    if isinstance(rec, dict) and rec.get("file") == [key[1], key[2]] and isinstance(rec.get("fingerprint"), str) \
            and rec.get("identity") == _identity(key[0]):
        return rec["fingerprint"]
    return None


def trace_context(scene) -> dict:
    """The overview's trace and parameters (the build record), loaded once per file version."""
    from ..params.icicle import IcicleParams
    from . import session
    from .hygiene import read_build_record, recorded_trace_path

    rec = read_build_record(scene) or {}
    found, recorded = recorded_trace_path(scene)
    if found is None:
        raise FileNotFoundError(f"the figure's trace file is not there: {recorded or '(no build record)'}")
    fkey = session.file_key(found)
    params = IcicleParams.from_dict(rec.get("params") or {}).validate()
    key = context_key(fkey, params)
    ctx = contexts.get(key)
    if ctx is None:
        contexts.clear()  # one overview's inputs at a time (memory stays bounded)
        ctx = contexts[key] = {"path": found, "params": params, "trace": None, "colouring_of": None,
                                "fingerprint": _recorded_fingerprint(scene, fkey)}
    return ctx


def prepare(ctx: dict) -> dict:
    """Worker: the trace (merged when the figure merges stacks) and the overview's colouring."""
    from ..io.stacks import merged_stacks
    from . import session

    if ctx["trace"] is None:
        trace = _kept_trace(ctx) or session.get_trace(ctx["path"])
        ctx["trace"] = merged_stacks(trace) if ctx["params"].merge else trace
    if ctx["colouring_of"] is None:
        ctx["colouring_of"] = _kept_or_computed_colours(ctx).colouring_of
    return ctx


def _kept_trace(ctx: dict):
    """Worker: the native copy of the trace the build kept (`_save_trace_copy`), when the file
    is still the one it read (the recorded fingerprint); else None."""
    return _load_trace_copy(ctx.get("fingerprint"))[0]


def _load_trace_copy(fingerprint) -> tuple:
    """Worker: (trace, its file) of the native copy of the trace of ``fingerprint`` in the user
    cache (`_save_trace_copy`), or (None, None): none kept, or a damaged file."""
    import os

    from ..io import load as load_file

    if not fingerprint:
        return None, None
    copy = os.path.join(colours_cache_dir(), refine.trace_copy_name(fingerprint))
    if not os.path.isfile(copy):
        return None, None
    try:
        return load_file(copy), copy
    except Exception:  # noqa: BLE001 - a damaged cache file: the trace file itself is read instead
        return None, None


def keep_trace(scene, trace, path, record_key: str) -> None:
    """Keep the trace a figure without overview colours (a cone tree) was just built from, for
    its zooms: in memory for this session; saving the scene writes its native copy into the user
    cache when ``path`` is a text trace (`persist_kept_trace`).  ``record_key``: the scene
    property of the figure's build record, whose ``trace_path`` names the file."""
    from . import session
    from ..model import TraceFormatError

    if TRACE_COPY_KEY in scene:
        del scene[TRACE_COPY_KEY]
    _traces.clear()
    if path is None:
        return
    try:
        key = session.file_key(path)
    except TraceFormatError:
        return
    contexts.clear()  # one figure's trace in memory at a time
    _traces[key[0]] = {"path": key[0], "file_key": tuple(key), "trace": trace, "fingerprint": None,
                       "record_key": record_key, "read": None, "identity": _identity(key[0])}
    _install_save_handler()  # the copy is written only when the scene is saved


def kept_trace_context(scene, path: str, record_key: str) -> dict:
    """Main thread: the kept trace of ``path`` (`keep_trace`) for a zoom of ``scene``'s figure,
    else what `kept_trace` needs to read it: the fingerprint of its native copy recorded in
    ``scene[TRACE_COPY_KEY]`` while the file is still the one the build read."""
    from . import session

    key = session.file_key(path)
    ctx = _traces.get(key[0])
    if ctx is None or ctx["file_key"] != tuple(key):
        _traces.clear()
        ctx = _traces[key[0]] = {"path": key[0], "file_key": tuple(key), "trace": None, "read": None,
                                 "fingerprint": _recorded_fingerprint(scene, key, TRACE_COPY_KEY),
                                 "record_key": record_key, "identity": _identity(key[0])}
    return ctx


def kept_trace(ctx: dict):
    """Worker: the trace of a `kept_trace_context`: in memory, else its native copy, else the
    trace file itself; ``ctx["read"]`` names the file read (None: kept in memory by the build)."""
    from . import session

    if ctx["trace"] is None:
        trace, copy = _load_trace_copy(ctx.get("fingerprint"))
        if trace is None:
            trace, copy = session.get_trace(ctx["path"]), ctx["path"]
        ctx["trace"], ctx["read"] = trace, copy
    return ctx["trace"]


def persist_kept_trace(scene) -> bool:
    """Write the native copy of the trace kept for ``scene``'s figure (`keep_trace`) into the user
    cache, once, and record its fingerprint in ``scene[TRACE_COPY_KEY]``; run before the scene is
    saved (`_persist_on_save`).  False when nothing is kept for this scene's figure, the trace
    file changed since, is native already (a zoom maps it) or the cache cannot be written."""
    import os

    from . import session
    from ..io.sniff import is_native_file

    ctx = next((c for c in _traces.values() if c.get("trace") is not None), None)
    if ctx is None:
        return False
    try:
        rec = json.loads(scene.get(ctx["record_key"]) or "null")
    except (TypeError, ValueError):
        return False
    if not isinstance(rec, dict) or not rec.get("trace_path") or os.path.abspath(rec["trace_path"]) != ctx["path"]:
        return False
    try:
        key = session.file_key(ctx["path"])
    except Exception:  # noqa: BLE001 - the trace file went away: nothing to keep
        return False
    if tuple(key) != tuple(ctx["file_key"]) or is_native_file(ctx["path"]) or _identity(ctx["path"]) != ctx.get(
            "identity"):
        return False
    fingerprint = ctx.get("fingerprint") or refine.content_fingerprint(ctx["path"])
    if _save_trace_copy(ctx["trace"], ctx["path"], fingerprint) is None:  # not written: a native file, no cache
        return False
    ctx["fingerprint"] = fingerprint
    scene[TRACE_COPY_KEY] = json.dumps({"file": [key[1], key[2]], "fingerprint": ctx["fingerprint"],
                                        "identity": ctx.get("identity")})
    return True


def _kept_or_computed_colours(ctx: dict):
    """Worker: the overview's colours from the user cache, else computed and kept there."""
    import os

    params, trace = ctx["params"], ctx["trace"]
    fingerprint = ctx.get("fingerprint") or refine.content_fingerprint(ctx["path"])
    ctx["fingerprint"] = fingerprint
    kept = refine.OverviewColours.from_file(
        os.path.join(colours_cache_dir(), refine.colours_file_name(fingerprint, params)), len(trace))
    if kept is None:
        kept = refine.overview_colours(trace, params)
        _save_colours(kept, fingerprint, params)
    return kept


def context_layout(ctx: dict, window, thread):
    """The refined layout of a kept context's trace for ``window`` and ``thread`` (the trace's inputs prepared
    first; a merged trace is not merged again)."""
    prepare(ctx)
    params = ctx["params"]
    if params.merge:  # the trace is merged already: the layout must not merge it again
        import dataclasses

        params = dataclasses.replace(params, merge=False)
    return refine.refined_layout(ctx["trace"], params, window, thread, ctx["colouring_of"])
