"""The one place that makes Blender properties.

A property is described bpy-free as ``(name, type, options)``: ``type`` one of Bool, Int,
Float, String, Enum, Pointer, ``options`` the keyword arguments of
``bpy.props.<type>Property``.  A view's parameters describe theirs through their kinds
(`tracevis3d.params.kinds.Kind.props`, `schema_table`); the session's own properties and
the operators' are tables of the same form.  From a table come

- `group_class`: a PropertyGroup class, its annotations made by `make_property`;
- `with_props`: the same annotations on an operator class;
- `pointer`: the PointerProperty that hangs a group on a data block
  (``bpy.types.Scene.tracevis3d_icicle_params = pointer(cls)``).

Restyle parameters (``Param.effect == "restyle"``) get the ``restyle`` update callback: a
change that needs no rebuild is applied at once (the comparison's tube colour).
"""
from __future__ import annotations

import bpy

TYPES = ("Bool", "Int", "Float", "String", "Enum", "Pointer")
#: Blender >= 4.5 warns when a file path property without this option is set to a '//' path
_BLEND_RELATIVE = "is_path_supports_blend_relative" in bpy.types.Property.bl_rna.properties.keys()


def make_property(type_: str, options: dict, update=None):
    """``bpy.props.<type_>Property(**options)`` (``update`` added when given; a file path
    accepts '//' paths): the only call of a ``*Property`` constructor in the add-on."""
    if type_ not in TYPES:
        raise ValueError(f"unknown property type {type_!r}; one of {TYPES}")
    options = dict(options)
    if update is not None:
        options["update"] = update
    if _BLEND_RELATIVE and options.get("subtype") in ("FILE_PATH", "DIR_PATH"):
        options["options"] = set(options.get("options", ())) | {"PATH_SUPPORTS_BLEND_RELATIVE"}
    return getattr(bpy.props, f"{type_}Property")(**options)


def schema_table(schema, only=None, exclude=()) -> list:
    """The ``(name, type, options)`` of a schema's parameters, in order (``only``: these
    parameters; ``exclude``: not these)."""
    rows = []
    for p in schema:
        if (only is None or p.name in only) and p.name not in exclude:
            rows.extend(p.kind.props(p))
    return rows


def restyle_names(schema) -> set:
    """The properties of the schema's restyle parameters."""
    return {row[0] for p in schema if p.effect == "restyle" for row in p.kind.props(p)}


def annotations(table, update=None, updated=()) -> dict:
    """name -> property of a table; ``update`` is the callback of the names in ``updated``."""
    out = {}
    for name, type_, options in table:
        if name in out:
            raise ValueError(f"property {name!r} declared twice")
        out[name] = make_property(type_, options, update if name in updated else None)
    return out


def group_class(name: str, table, doc: str = "", update=None, updated=(), methods=None):
    """A PropertyGroup class named ``name`` with the table's properties (and ``methods``)."""
    ns = {"__doc__": doc or name, "__module__": __name__, "__annotations__": annotations(table, update, updated)}
    ns.update(methods or {})
    return type(name, (bpy.types.PropertyGroup,), ns)


def with_props(table):
    """Class decorator: the table's properties as the class's annotations (operators)."""
    def apply(cls):
        notes = dict(cls.__dict__.get("__annotations__", {}))
        notes.update(annotations(table))
        cls.__annotations__ = notes
        return cls
    return apply


def pointer(cls):
    return make_property("Pointer", {"type": cls})

