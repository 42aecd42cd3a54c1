"""Analyses: plain objects of arrays computed once per trace and shared by layout, picking,
CLI and panel (DESIGN.md, "Analyses")."""
from .synchronisation import Synchronisation, synchronisation  # noqa: F401
