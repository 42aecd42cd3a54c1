"""Analyses: plain objects of arrays computed once per trace and shared by layout, picking,
CLI and panel (DESIGN.md, "Analyses"); no bpy, no numba here (the work is done by
`tracevis3d.kernels`)."""
from .filters import (FilterSpec, Filtered, Patterns, Utilities, filter_trace, function_mask,  # noqa: F401
                      repeated_patterns, top_utilities, utilities)
from .structure import Structure, structure_of  # noqa: F401
from .synchronisation import Synchronisation, synchronisation  # noqa: F401
