"""Numba kernels over the Trace arrays (pure functions, no bpy)."""
