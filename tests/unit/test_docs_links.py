"""Every relative link and image of the README, DESIGN.md and the manual (docs/*.md) resolves:
the file (or folder) exists, and a ``#fragment`` names a heading of the target page, with the
anchors GitHub gives headings.  Links inside code (fenced blocks, inline spans) are text, not
links."""
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", REPO / "DESIGN.md", *(REPO / "docs").glob("*.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`+[^`\n]*`+")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IMG_SRC = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", re.I)
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The page without code blocks, inline code and comments (links there are examples)."""
    return _INLINE_CODE.sub("", _FENCE.sub("", _COMMENT.sub("", text)))


def _targets(text: str) -> list:
    prose = _prose(text)
    return _LINK.findall(prose) + _IMG_SRC.findall(prose)


def anchors(text: str) -> set:
    """The fragment ids GitHub gives a page's headings: the heading's text (code marks,
    emphasis and link targets dropped) in lower case, every character but letters, digits,
    ``_``, ``-`` and spaces removed, spaces turned into ``-``; a repeated id gets ``-1``,
    ``-2``, ..."""
    out, seen = set(), {}
    for raw in _HEADING.findall(_FENCE.sub("", text)):
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw)
        words = re.sub(r"[`*]", "", words).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", words).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _broken(page: pathlib.Path) -> list:
    text = page.read_text(encoding="utf-8")
    bad = []
    for target in _targets(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # a URL (https:, mailto:): not checked here
        path, _, fragment = target.partition("#")
        dest = page if not path else (page.parent / path).resolve()
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text(encoding="utf-8")):
            bad.append(f"{target}: no heading #{fragment} in {dest.relative_to(REPO)}")
    return bad


def test_anchor_rules_follow_github():
    text = "# The command line\n## Speed (bench/, ratios)\n#### `render-icicle TRACE`\n## Speed (bench/, ratios)\n"
    assert anchors(text) == {"the-command-line", "speed-bench-ratios", "render-icicle-trace", "speed-bench-ratios-1"}


def test_links_in_code_are_not_links():
    text = "see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n<!-- [d](d.md) -->\n![e](e.png)\n"
    assert _targets(text) == ["a.md", "e.png"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_relative_links_and_images_resolve(page):
    bad = _broken(page)
    assert not bad, f"{page.relative_to(REPO)}: " + "; ".join(bad)


def test_readme_fits_a_screen():
    """The README says what TraceVis3D is, how to install it and where the manual is; the
    manual lives in docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200: move the detail to docs/)"
