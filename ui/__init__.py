"""The add-on's user interface (issue 22): scene properties generated from the parameter
schemas (`props`, `properties`), the operators (`operators`) and the sidebar panel
(`panels`).  Only this package and ``tracevis3d.blender`` import bpy."""
