"""The one place TraceVis3D's version is written.

Read by ``pyproject.toml`` (setuptools' ``dynamic = ["version"]``), by ``tracevis3d.__version__``
and ``tracevis3d --version``, and by ``tools/build_extension.py``, which refuses to build when
``blender_manifest.toml``'s ``version`` differs (``tools/build_extension.py --write-manifest``
writes it from here; ``tests/test_packaging.py`` checks the two are equal).
"""
__version__ = "0.1.0"
