"""The parameter schema: one declaration per parameter (`Param`), from which everything else
is generated (DESIGN.md, "The parameter schema").

A view's parameters are a `Schema`: an ordered list of `Param`.  From it come

- the validated parameter object the layout takes: a subclass of `Params` names its schema
  (``class IcicleParams(Params, schema=ICICLE)``) and becomes a dataclass with one field per
  parameter; `Params.validate` checks each value through its kind, `to_dict` / `from_dict`
  are the JSON saved in a `.blend` and by scripts;
- the command line's options (`tracevis3d.params.cli`: the one place that calls
  ``add_argument``);
- the Blender property group and the panel's fields (the add-on's ``ui`` package: the one
  place that calls ``bpy.props.*Property``), through each kind's `Kind.props` /
  `Kind.from_props` / `Kind.to_props`, which are bpy-free and tested without Blender;
- the option reference of docs/cli.md (`tracevis3d.cli.reference`).

A kind (`tracevis3d.params.kinds`) knows one sort of value: how to check and normalise it,
write it as JSON, parse it from a command-line word, and hold it in Blender properties.
Parameters every view shares are declared once (`tracevis3d.params.shared`); a view takes
one as it is or with another default (`Param.but`), never re-declares it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

#: what changing a parameter costs: a new layout (rebuild) or only materials/visibility
EFFECTS = ("rebuild", "restyle")


@dataclass(frozen=True)
class Alias:
    """Another command-line spelling of a parameter.  ``const``: the flag takes no value and
    sets this one (``--whole`` for ``--span all``); ``deprecated``: a one-line notice names
    the current spelling whenever it is used."""

    flag: str
    const: Any = None
    takes_value: bool = False
    deprecated: bool = True


_UNSET = object()


@dataclass(frozen=True)
class Param:
    """One parameter, declared once.

    - ``name``: the field of the parameter object and the key of its JSON;
    - ``kind``: the sort of value (`kinds`): its checks, range or choices, JSON form, CLI
      word and Blender properties;
    - ``default``: the value when none is given (a list default is copied per object);
    - ``help``: one sentence for ``--help``, the panel's tooltip and docs/cli.md, without the
      default (each surface adds it in its own words);
    - ``label``: the panel's field name; ``group``: the section it belongs to (the CLI's
      option group, the panel's box, the reference's table);
    - ``effect``: ``rebuild`` (the layout changes) or ``restyle`` (materials only);
    - ``unit``: shown after values ("px", "µs", "°", "mm", "levels"); ``default_text``:
      the default in words where its value does not say it (None: "the whole trace");
    - ``flag``: the command-line spelling ("" derives ``--name-with-dashes``, a boolean
      that defaults to on gets ``--no-…``); ``cli=False``: not on the command line;
      ``ui=False``: no panel field (set by operators or other fields instead);
    - ``aliases``: other spellings (`Alias`); ``bare``: the value of the option given
      without one (``--hide-utilities`` alone means 10);
    - ``renamed_from``: keys of older saved JSON that mean this parameter;
    - ``excludes``: parameters of the same group that cannot be given with this one on the
      command line (``--title`` and ``--no-title``).
    """

    name: str
    kind: Any
    default: Any
    help: str
    label: str = ""
    group: str = "appearance"
    effect: str = "rebuild"
    unit: str = ""
    default_text: str = ""
    flag: str = ""
    cli: bool = True
    ui: bool = True
    aliases: tuple = ()
    bare: Any = _UNSET
    renamed_from: tuple = ()
    excludes: tuple = ()

    def __post_init__(self):
        if self.effect not in EFFECTS:
            raise ValueError(f"{self.name}: effect must be one of {EFFECTS}")
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " ").capitalize())
        # the default must pass its own kind's check (a declaration error, found at import)
        self.kind.check(self.fresh_default(), self.name)

    def but(self, **changes) -> "Param":
        """This parameter with other attributes (a view's own default, help or group)."""
        return dataclasses.replace(self, **changes)

    def fresh_default(self):
        """The default, a fresh copy for mutable values."""
        d = self.default
        return list(d) if isinstance(d, list) else d

    @property
    def has_bare(self) -> bool:
        return self.bare is not _UNSET

    @property
    def cli_flag(self) -> str:
        """The option's spelling on the command line."""
        if self.flag:
            return self.flag
        if self.kind.is_flag and self.default is True:
            base = self.name[5:] if self.name.startswith("show_") else self.name
            return "--no-" + base.replace("_", "-")
        return "--" + self.name.replace("_", "-")


class Schema:
    """A view's parameters, in order; ``doc`` says what the view draws."""

    def __init__(self, view: str, params: list, doc: str = ""):
        self.view = view
        self.params = tuple(params)
        self.doc = doc
        self.by_name = {p.name: p for p in self.params}
        if len(self.by_name) != len(self.params):
            seen: set = set()
            dup = [p.name for p in self.params if p.name in seen or seen.add(p.name)]
            raise ValueError(f"schema {view}: parameter(s) declared twice: {dup}")
        flags = [p.cli_flag for p in self.params if p.cli]
        flags += [a.flag for p in self.params if p.cli for a in p.aliases]
        if len(set(flags)) != len(flags):
            raise ValueError(f"schema {view}: command-line spellings collide: {sorted(flags)}")
        self.renamed = {old: p.name for p in self.params for old in p.renamed_from}

    def __iter__(self):
        return iter(self.params)

    def __getitem__(self, name: str) -> Param:
        return self.by_name[name]

    def groups(self) -> dict:
        """group -> its parameters, in declaration order."""
        out: dict = {}
        for p in self.params:
            out.setdefault(p.group, []).append(p)
        return out

    def defaults(self) -> dict:
        return {p.name: p.fresh_default() for p in self.params}


class Params:
    """Base of the parameter objects.  A subclass names its schema and becomes a dataclass
    of its parameters::

        class IcicleParams(Params, schema=ICICLE):
            def check_together(self): ...   # rules between fields, after each field's check

    """

    SCHEMA: Schema

    def __init_subclass__(cls, schema: Schema | None = None, **kw):
        super().__init_subclass__(**kw)
        if schema is None:
            return
        cls.SCHEMA = schema
        notes = {}
        for p in schema:
            notes[p.name] = p.kind.annotation
            if isinstance(p.default, list):
                setattr(cls, p.name, field(default_factory=p.fresh_default))
            else:
                setattr(cls, p.name, p.default)
        cls.__annotations__ = notes
        dataclass(cls)

    # -- checks
    def validate(self):
        """Check and normalise every field through its kind, then `check_together`;
        ValueError naming the parameter.  Returns self."""
        for p in self.SCHEMA:
            setattr(self, p.name, p.kind.check(getattr(self, p.name), p.name))
        self.check_together()
        return self

    def check_together(self) -> None:
        """Rules between parameters (a subclass's); each field is already checked."""

    # -- JSON
    def to_dict(self) -> dict:
        return {p.name: p.kind.to_json(getattr(self, p.name)) for p in self.SCHEMA}

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict):
        """The validated object of a JSON dict; keys of older versions are renamed, an unknown
        key or a bad value is a ValueError naming it."""
        view = cls.SCHEMA.view
        if not isinstance(d, dict):
            raise ValueError(f"{view} parameters must be a dict, got {type(d).__name__}")
        kw = {}
        for k, v in d.items():
            name = cls.SCHEMA.renamed.get(k, k)
            if name not in cls.SCHEMA.by_name:
                raise ValueError(f"unknown {view} parameter(s) {[k]}; known: {sorted(cls.SCHEMA.by_name)}")
            kw[name] = cls.SCHEMA[name].kind.from_json(v)
        return cls(**kw).validate()

    @classmethod
    def given(cls, params):
        """The validated object of what a caller passed: a JSON dict (`from_dict`), an object
        of this class, or None (the defaults)."""
        if isinstance(params, dict):
            params = cls.from_dict(params)
        return (params or cls()).validate()

    @classmethod
    def from_known(cls, d: dict):
        """`from_dict` of the keys this version knows (a record of a newer version)."""
        names = set(cls.SCHEMA.by_name) | set(cls.SCHEMA.renamed)
        return cls.from_dict({k: v for k, v in d.items() if k in names})

    # -- Blender properties (bpy-free: ``get(prop)`` / ``put(prop, value)`` reach them)
    @classmethod
    def from_props(cls, get: Callable[[str], Any], only=None):
        """The validated object of a property group's values (``get(name)``), ValueError
        naming the panel field; ``only``: the parameters that have fields (the rest default)."""
        kw = {}
        for p in cls.SCHEMA:
            if only is not None and p.name not in only:
                continue
            kw[p.name] = p.kind.from_props(p, get)
        return cls(**kw).validate()

    def to_props(self, put: Callable[[str, Any], None], only=None) -> None:
        """Write this object into a property group (``put(name, value)``); a value the
        properties cannot hold is skipped."""
        for p in self.SCHEMA:
            if only is None or p.name in only:
                try:
                    p.kind.to_props(p, getattr(self, p.name), put)
                except (TypeError, ValueError, OverflowError, AttributeError):
                    pass
