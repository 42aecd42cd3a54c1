"""Layouts: kernel results → SceneSpec (arrays only, bpy-free)."""
from .spec import (  # noqa: F401
    CameraSpec, InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec,
)
from .icicle import IcicleParams, icicle_layout  # noqa: F401
