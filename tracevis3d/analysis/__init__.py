"""Analyses over a `Trace`: results as small dataclasses of numpy arrays (no bpy, no numba here;
the work is done by `tracevis3d.kernels`)."""
from .structure import Structure, structure_of  # noqa: F401
