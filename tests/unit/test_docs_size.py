"""The manual stays small (issue 81: docs/ ≤ 5 MB): the development log lives in git, not in
the tree, and figures are JPEG at the quality tools/docs_figures.py and docs_animation.py
write.  A new figure that does not fit says which files are the largest."""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS_BUDGET = 5_000_000  # bytes, every file under docs/


def test_docs_fit_their_budget():
    files = [p for p in (REPO / "docs").rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    largest = sorted(files, key=lambda p: p.stat().st_size, reverse=True)[:5]
    assert total <= DOCS_BUDGET, (f"docs/ holds {total:,} bytes, over {DOCS_BUDGET:,}; the largest: " +
                                  ", ".join(f"{p.relative_to(REPO)} ({p.stat().st_size:,})" for p in largest))
