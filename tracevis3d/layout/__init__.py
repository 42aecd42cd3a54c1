"""Layouts: kernel results → SceneSpec (arrays only, bpy-free).

``IcicleParams`` and ``icicle_layout`` are imported on first use (module ``__getattr__``):
importing ``tracevis3d.layout.spec`` (the Blender writer does, at extension enable) must not
import the layout stages and numba.
"""
from .spec import (  # noqa: F401
    CameraSpec, InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec,
)

_LAZY = {"IcicleParams": "..params.icicle", "icicle_layout": ".icicle"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
