"""The command line's options, made from the schemas: the one place that calls
``add_argument``.  A command is its positional arguments and the schemas whose
parameters it takes; each parameter becomes one option (`Param.cli_flag`) in the group its
declaration names, its help text ending in its range and default, plus its other
spellings (`Alias`; a deprecated one prints a one-line notice naming the current one).
`values` reads the parsed options back as the keyword arguments of a `Params` object."""
from __future__ import annotations

import argparse
import sys

from .core import Param, Schema

POSITIONAL = "positional"


def _type(kind, what: str):
    """argparse's type for one word of ``kind`` (its ValueError becomes the parser's error)."""
    def parse(word: str):
        try:
            v = kind.parse(word)
            return v if kind.repeat else kind.check(v, what)
        except ValueError as e:
            msg = str(e).removeprefix("regular expression: ")
            raise argparse.ArgumentTypeError(f"{what} {msg}" if msg.startswith("must") else msg) from None
    parse.__name__ = what  # argparse names the type in "invalid <name> value"
    return parse


class _Extend(argparse.Action):
    """Repeatable option whose words each give a list (T1,T2 --threads T3)."""

    def __call__(self, parser, namespace, values, option_string=None):
        have = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, list(have or []) + list(values))


def _notice(flag: str, current: str) -> None:
    sys.stderr.write(f"tracevis3d: notice: {flag} is deprecated, write {current}\n")


def _deprecated(base, current: str):
    """An argparse action class that does what ``base`` does after a one-line notice."""
    class Deprecated(base):
        def __call__(self, parser, namespace, values, option_string=None):
            _notice(option_string, current)
            super().__call__(parser, namespace, values, option_string)
    return Deprecated


def help_text(p: Param) -> str:
    """The option's help: the declaration's sentence, its range, its default."""
    rng = p.kind.range_text() if p.kind.choices is None else ""
    unit = f" {p.unit}" if p.unit and p.unit not in ("µs",) else ""
    default = p.default_text or p.kind.text(p.default) + unit
    extra = "; repeatable" if p.kind.repeat else ""
    off = "off: " if p.kind.is_flag and p.default and p.cli_flag.startswith("--no-") else ""
    return f"{off}{p.help}{', ' + rng + unit if rng else ''}{extra} (default: {default})".replace("%", "%%")


def add_param(group, p: Param, required: bool = False) -> None:
    """One parameter's option(s) in an argparse group."""
    k = p.kind
    kw: dict = {"dest": p.name, "help": help_text(p)}
    flag = p.cli_flag
    if k.is_flag:
        kw.update(action="store_false" if p.cli_flag.startswith("--no-") and p.default else "store_true",
                  default=p.default)
    else:
        kw.update(type=_type(k, flag.split("/")[-1].lstrip("-").replace("-", " ")), default=None if k.repeat else p.default,
                  metavar=k.metavar)
        if k.choices is not None:
            kw.update(choices=list(k.choices), type=None, metavar=None)
        if k.repeat:
            kw["action"] = _Extend if isinstance(k.parse("0"), list) else "append"
        if p.has_bare:
            kw.update(nargs="?", const=p.bare)
        if required:
            kw["required"] = True
            kw["help"] = kw["help"].rsplit(" (default:", 1)[0] + " (required)"
    group.add_argument(*flag.split("/"), **kw)
    for a in p.aliases:
        current = flag if k.is_flag or a.takes_value else f"{flag} {k.text(a.const)}"
        if a.takes_value:
            akw = {k2: v for k2, v in kw.items() if k2 not in ("help", "required")}
            base = {"append": argparse._AppendAction, None: argparse._StoreAction}.get(akw.get("action"), akw.get("action"))
            if a.deprecated:
                akw["action"] = _deprecated(base if isinstance(base, type) else argparse._StoreAction, flag)
            group.add_argument(a.flag, help=argparse.SUPPRESS if a.deprecated else f"the same as {flag}", **akw)
        else:
            action = _deprecated(argparse._StoreConstAction, current) if a.deprecated else "store_const"
            group.add_argument(a.flag, dest=p.name, action=action, const=a.const,
                               help=argparse.SUPPRESS if a.deprecated else f"the same as {current}")


def add_command(sub, name: str, *, help: str, description: str, positionals, schemas: list, epilog=None,
                formatter=argparse.HelpFormatter, required=("output",), skip=()) -> argparse.ArgumentParser:
    """A sub-command: ``positionals`` ((name, metavar, help[, nargs]) each; nargs "..." takes
    the rest of the line), then the options of ``schemas`` grouped by their declarations'
    groups (a parameter named in an earlier schema is not repeated; ``skip``: parameters
    left off the command line; ``required``: options that must be given)."""
    r = sub.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=formatter)
    add_options(r, positionals, schemas, required, skip)
    return r


def add_options(r, positionals, schemas: list, required=("output",), skip=()) -> None:
    """The positional arguments and the schemas' options of parser ``r`` (see `add_command`)."""
    for dest, metavar, text, *nargs in positionals:
        r.add_argument(dest, metavar=metavar, help=text, **({"nargs": nargs[0]} if nargs else {}))
    groups: dict = {}
    exclusive: dict = {}  # parameter -> the mutually exclusive group it shares with the ones it excludes
    linked: dict = {}
    for schema in schemas:
        for p in schema:
            for other in p.excludes:
                linked.setdefault(p.name, set()).add(other)
                linked.setdefault(other, set()).add(p.name)
    seen: dict = {name: None for name in skip}
    for schema in schemas:
        for p in schema:
            if not p.cli or p.name in seen:
                if seen.get(p.name, p) != p:  # two declarations would share one option's destination
                    raise ValueError(f"{schema.view}: parameter {p.name!r} is declared differently by two schemas")
                continue
            seen[p.name] = p
            if p.group not in groups:
                groups[p.group] = r.add_argument_group(p.group)
            target = exclusive.get(p.name)
            if target is None and p.name in linked:
                target = groups[p.group].add_mutually_exclusive_group()
                exclusive.update({name: target for name in linked[p.name] | {p.name}})
            add_param(target or groups[p.group], p, required=p.name in required)


def add_version(parser, text: str) -> None:
    """``--version``: prints ``text``."""
    parser.add_argument("--version", action="version", version=text)


def values(args, schema: Schema, skip=()) -> dict:
    """The parsed options of ``schema``'s parameters as keyword arguments (an option not
    given keeps the declared default)."""
    out = {}
    for p in schema:
        if not p.cli or p.name in skip or not hasattr(args, p.name):
            continue
        v = getattr(args, p.name)
        out[p.name] = p.fresh_default() if v is None and p.default is not None else v
    return out


def option_table(schemas: list, skip=()) -> list:
    """(flag, parameter) of every option a command with these schemas has (tests, README)."""
    out, seen = [], set(skip)
    for schema in schemas:
        for p in schema:
            if p.cli and p.name not in seen:
                seen.add(p.name)
                out.append((p.cli_flag, p))
    return out


__all__ = ["POSITIONAL", "add_command", "add_param", "help_text", "option_table", "values"]
