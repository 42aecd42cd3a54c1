"""Parameters, declared once per view: `core` (Param, Schema, Params), `kinds` (sorts of
values), `shared` (the parameters every view shares), one module per view (`icicle`,
`compare`, `threads`, `cone`, `extravis`, `live`; the views themselves are listed in
`tracevis3d.views`), `render` (what a render writes), `animation`, `cli` (the command line's
options from the schemas) and `reference` (the option reference of docs/cli.md).
bpy-free; the add-on's ``ui`` package makes the Blender properties from the same schemas."""
from __future__ import annotations

from .core import Alias, Param, Params, Schema  # noqa: F401


def view_schemas() -> dict:
    """view -> its `Params` class (what a script, the CLI and the panel build), for every view of
    the registry (`tracevis3d.views`)."""
    from ..views import VIEWS

    return {v.name: v.params_class for v in VIEWS}
