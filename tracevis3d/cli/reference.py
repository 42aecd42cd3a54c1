"""The option reference of docs/cli.md, written from the schemas: one table per render
command, a row per option with its value, default, panel field and what it does.  The
page holds it between two marker lines; ``python -m tracevis3d.cli.reference
docs/cli.md`` rewrites that block and a test checks it is current."""
from __future__ import annotations

import sys

from ..params.cli import help_text, option_table

BEGIN = "<!-- BEGIN OPTION REFERENCE (generated from tracevis3d/params by python -m tracevis3d.cli.reference docs/cli.md) -->"
END = "<!-- END OPTION REFERENCE -->"


def commands() -> list:
    """(command, what it draws, its schemas) of every render command: each view's commands as
    the view registry declares them (`tracevis3d.views`: usage, schemas; the doc of its
    parameters' schema, then its note), then ``render-animation``."""
    from ..views import VIEWS
    from ..params.animation import ANIMATION, ANIMATION_RENDER, ANIMATION_VIEWS

    out = []
    for v in VIEWS:
        if not v.commands:
            continue
        doc = " ".join(t for t in (v.params_class.SCHEMA.doc, v.reference_note) if t)
        out.append((v.commands[0].usage, doc, v.option_schemas()))
    out.append(("render-animation TRACE [TRACE_B]", ANIMATION.doc,
                [ANIMATION, ANIMATION_RENDER, *ANIMATION_VIEWS]))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(flag: str, p) -> str:
    k = p.kind
    spell = " / ".join(f"`{f}`" for f in flag.split("/"))
    if not k.is_flag:
        value = "`" + ("{" + ",".join(k.choices) + "}" if k.choices is not None else k.metavar) + "`"
        spell += f" {value}"
    for a in p.aliases:
        if not a.deprecated:
            spell += f", `{a.flag}`"
    what, _, default = help_text(p).replace("%%", "%").rpartition(" (default: ")
    panel = p.label if p.ui else "—"
    return f"| {spell} | {_cell(default.rstrip(')'))} | {_cell(panel)} | {_cell(what)} |"


def reference() -> str:
    """The markdown of every render command's options."""
    out = [BEGIN, ""]
    for command, doc, schemas in commands():
        out += [f"#### `{command}`", "", doc, "",
                "| option | default | panel field | what it does |", "|---|---|---|---|"]
        out += [_row(flag, p) for flag, p in option_table(schemas)]
        deprecated = [(a.flag, flag) for flag, p in option_table(schemas) for a in p.aliases if a.deprecated]
        out.append("")
        if deprecated:
            out += ["Older spellings still accepted (with a one-line notice): "
                    + ", ".join(f"`{old}` (now `{new}`)" for old, new in deprecated) + ".", ""]
    out.append(END)
    return "\n".join(out)


def replace_block(text: str, block: str) -> str:
    """``text`` with its reference block replaced (ValueError when the markers are missing)."""
    if BEGIN not in text or END not in text:
        raise ValueError("the option reference markers are missing")
    head, rest = text.split(BEGIN, 1)
    return head + block + rest.split(END, 1)[1]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(reference())
        return 0
    path = argv[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = replace_block(text, reference())
    if new != text:
        from ..io.atomic import replaced_whole

        with replaced_whole(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
