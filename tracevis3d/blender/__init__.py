"""The Blender layer: the only package of the core that imports ``bpy``.

`scene.build_icicle` writes an icicle SceneSpec into the current scene,
`render.render_figure` renders it, `pick.pick_call` maps a mouse position to a call.
"""
