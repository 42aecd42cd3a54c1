"""The add-on's user interface: scene properties generated from the parameter
schemas (`props`: the one place that makes Blender properties; `properties`: the groups
``scene.tracevis3d`` and ``scene.tracevis3d_<view>_params``, saved sessions; `legacy`: the
previous version's fields), the operators (`operators`, picking included) and the sidebar
panel (`panels`: every view's fields drawn from its schema).  Only this package and
``tracevis3d.blender`` import bpy."""
from __future__ import annotations


def register():
    from . import follow_handles, operators, panels, properties, zoom_follow

    properties.register()
    operators.register()
    panels.register()
    follow_handles.register()
    zoom_follow.register()


def unregister():
    from . import follow_handles, operators, panels, properties, zoom_follow

    zoom_follow.unregister()
    follow_handles.unregister()
    panels.unregister()
    operators.unregister()
    properties.unregister()
    from ..tracevis3d.io import filecopy

    filecopy.drop_spare()  # the read buffer kept for the next load (`filecopy.recycle`)
