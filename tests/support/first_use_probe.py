"""A new user's first steps with the INSTALLED ``tracevis3d`` (not the checkout's): one JSON line.

    python tests/support/first_use_probe.py load-compare A B     # load both, compare, the comparison layout
    python tests/support/first_use_probe.py load-compare-fused A B  # compare, class pairs not kept (the fused join)
    python tests/support/first_use_probe.py icicle TRACE        # load, the icicle layout
    python tests/support/first_use_probe.py corrupt FILE        # tracevis3d.load must refuse it

Run from outside the checkout with a fresh ``NUMBA_CACHE_DIR``/home: prints
``{"ok": ..., "s": seconds, "package": where tracevis3d was imported from,
"compiled": [kernels the shipped caches missed], "installed": the shipped-cache report}``.
Used by tests/test_packaging.py and bench/bench_responsive.py.
"""
from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    t0 = time.perf_counter()
    import tracevis3d

    action, paths = argv[0], argv[1:]
    res: dict = {"action": action, "package": tracevis3d.__file__, "version": tracevis3d.__version__}
    if action == "corrupt":
        try:
            tracevis3d.load(paths[0])
            res["ok"] = False
        except tracevis3d.TraceError as e:
            res["ok"], res["message"] = True, " ".join(str(e).split())
        res["s"] = time.perf_counter() - t0
        res["numba_imported"] = "numba" in sys.modules
        print(json.dumps(res))
        return 0
    if action == "load-compare-fused":
        a, b = tracevis3d.load(paths[0]), tracevis3d.load(paths[1])
        cmp = tracevis3d.compare(a, b, keep_class_pairs=False)
        res["pairs"] = int(cmp.n_pairs_total)
        res["ok"] = cmp.n_pairs_total > 0 and not cmp.class_pairs_kept
    elif action == "load-compare":
        from tracevis3d.layout.compare import CompareParams, compare_layout

        a, b = tracevis3d.load(paths[0]), tracevis3d.load(paths[1])
        cmp = tracevis3d.compare(a, b)
        spec = compare_layout(cmp, CompareParams(resolution=(960, 540)))
        res["calls"] = [len(a), len(b)]
        res["pairs"] = int(cmp.n_pairs_total)
        res["ok"] = cmp.n_pairs_total > 0 and len(spec.layers) > 0
    elif action == "icicle":
        from tracevis3d.layout.icicle import icicle_layout
        from tracevis3d.params.icicle import IcicleParams

        t = tracevis3d.load(paths[0])
        spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
        res["calls"] = [len(t)]
        res["ok"] = len(spec.layers) > 0
    else:
        print(f"first_use_probe: unknown action {action!r}", file=sys.stderr)
        return 2
    res["s"] = time.perf_counter() - t0
    from tracevis3d import kernel_cache

    res["installed"] = kernel_cache.ensure_installed()
    res["compiled"] = kernel_cache.kernels_compiled()
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
