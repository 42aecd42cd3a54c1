"""Parameters, declared once per view (issue 22): `core` (Param, Schema, Params), `kinds`
(sorts of values), `shared` (the parameters every view shares), one module per view
(`icicle`, `compare`, `threads`, `cone`), `render` (what a render writes), `cli` (the
command line's options from the schemas) and `reference` (the README's option tables).
bpy-free; the add-on's ``ui`` package makes the Blender properties from the same schemas."""
from __future__ import annotations

from .core import Alias, Param, Params, Schema  # noqa: F401


def view_schemas() -> dict:
    """view -> its `Params` class (what a script, the CLI and the panel build)."""
    from .compare import CompareParams
    from .cone import ConeParams
    from .icicle import IcicleParams
    from .threads import ThreadsParams

    return {"icicle": IcicleParams, "compare": CompareParams, "threads": ThreadsParams, "cone": ConeParams}
