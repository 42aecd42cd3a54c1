"""`io._fit_text_tables`' fast path (all short ASCII strings: one join) against its brute-force twin,
the per-text rule: a text longer than max_name_chars + 9 or not valid Unicode is cut / repaired."""
import random

import tracevis3d
from tracevis3d.io import _CUT_MARK, _fit_text, _fit_text_tables
from tracevis3d.model import STRING_TABLES


def _twin(texts, cap):
    out = []
    for s in texts:
        bad = isinstance(s, str) and (len(s) > cap + _CUT_MARK or not _encodes(s))
        out.append(_fit_text(s, cap) if bad else s)
    return out


def _encodes(s) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def test_the_tables_fit_as_the_per_text_rule_says():
    rng = random.Random(3)
    for trial in range(60):
        cap = 12 if trial % 2 else 400  # 400: the synthetic tables fit (the fast path)
        pool = ["f", "a.b.c", "x" * (cap + _CUT_MARK), "y" * (cap + _CUT_MARK + 1)]  # ASCII, one too long
        if trial % 4 == 1:
            pool += ["é" * 5, "lone \ud800 half", "日本語の名前が長いです" * 2, ""]
        t = tracevis3d.synthetic(30, threads=2, seed=trial)
        mixed = trial % 3 != 0  # a third of the trials: short ASCII texts only
        names = [rng.choice(pool) if mixed and rng.random() < 0.3 else f"m{k}.f{k}" for k in range(len(t.function_names))]
        paths = [tuple(rng.choice(pool) if mixed and rng.random() < 0.2 else p for p in ("pkg", nm)) for nm in names]
        t.function_names = list(names)
        t.function_paths = list(paths)
        tables = {k: list(getattr(t, k)) for k in STRING_TABLES if getattr(t, k, None) is not None}
        _fit_text_tables(t, cap)
        for k, v in tables.items():
            assert list(getattr(t, k)) == _twin(v, cap), k
        assert t.function_paths == [tuple(_twin(p, cap)) for p in paths]
        n_bad = sum(a != b for v in tables.values() for a, b in zip(v, _twin(v, cap))) + \
            sum(p != tuple(_twin(p, cap)) for p in paths)
        reps = t.meta.get("repairs", {})
        assert (reps.get("text_unfit", {}).get("count", 0) if isinstance(reps, dict) else 0) == n_bad
