"""EXTRAVIS (issue 24): the hierarchy and its call relations on a hand-built trace, the call
importance (Eq. 2) and the mural (Eq. 3) against brute-force pure-Python twins."""
import re

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tracevis3d
from tracevis3d.analysis.hierarchy import AUTO_MAX_SHARE, UNQUALIFIED, auto_level, element_label, sequence_order
from tracevis3d.kernels.extravis import mural_ibaa
from tracevis3d.model import Trace

NAMES = [
    "main (/src/app/cli.py:1)",                  # 0 app.cli (functions).main
    "Parser.parse (/src/app/parse.py:10)",       # 1 app.parse Parser.parse
    "Parser.token (/src/app/parse.py:20)",       # 2 app.parse Parser.token
    "str.replace",                               # 3 builtins str.replace (C built-in under its type)
    "builtins.len",                              # 4 builtins (functions).len
    "work (/src/app/cli.py:5)",                  # 5 app.cli (functions).work
]


def small_trace():
    # thread 0: main → parse → token → replace ; main → len ; thread 1: work → token
    func = [0, 1, 2, 3, 4, 5, 2]
    parent = [-1, 0, 1, 2, 0, -1, 5]
    start = [0.0, 1.0, 2.0, 3.0, 6.0, 0.5, 1.5]
    end = [10.0, 5.0, 4.0, 3.5, 7.0, 4.0, 2.5]
    thread = [0, 0, 0, 0, 0, 1, 1]
    return Trace.from_arrays(func, start, end, parent, thread=thread, function_names=NAMES,
                             thread_names=["MainThread", "worker"])


def test_hierarchy_elements_and_relations_of_a_hand_built_trace():
    t = small_trace()
    h = tracevis3d.hierarchy(t)
    got = sorted((h.full_names[e], h.names[e], ("package", "module", "class", "function", "threads", "thread",
                                                 "root")[h.kind[e]], h.depth[e]) for e in range(len(h)))
    assert got == sorted([
        ("(root)", "(root)", "root", 0),
        ("app", "app", "package", 1), ("builtins", "builtins", "package", 1),
        ("app.cli", "app.cli", "module", 2), ("app.parse", "app.parse", "module", 2),
        ("builtins", "builtins", "module", 2),
        ("app.cli.(functions)", "(functions)", "class", 3), ("app.parse.Parser", "Parser", "class", 3),
        ("builtins.str", "str", "class", 3), ("builtins.(functions)", "(functions)", "class", 3),
        ("app.cli.main", "main", "function", 4), ("app.cli.work", "work", "function", 4),
        ("app.parse.Parser.parse", "parse", "function", 4), ("app.parse.Parser.token", "token", "function", 4),
        ("builtins.str.replace", "replace", "function", 4), ("builtins.len", "len", "function", 4),
        ("threads", "threads", "threads", 1),
        ("thread MainThread", "MainThread", "thread", 2), ("thread worker", "worker", "thread", 2),
    ])
    # pre-order: every subtree is a contiguous range, parents first
    assert np.all(h.parent[1:] < np.arange(1, len(h)))
    for e in range(len(h)):
        inside = set(range(e, h.end[e]))
        assert all((h.parent[c] in inside) for c in range(e + 1, h.end[e]))
    E = h.full_names.index

    def rel(level):
        r = h.relations(level)
        return [(h.full_names[a], h.full_names[b], float(s)) for a, b, s in zip(r.caller, r.callee, r.time)]

    assert rel("function") == [
        ("thread MainThread", "app.cli.main", 0.0), ("app.cli.main", "app.parse.Parser.parse", 1.0),
        ("app.parse.Parser.parse", "app.parse.Parser.token", 2.0),
        ("app.parse.Parser.token", "builtins.str.replace", 3.0), ("app.cli.main", "builtins.len", 6.0),
        ("thread worker", "app.cli.work", 0.5), ("app.cli.work", "app.parse.Parser.token", 1.5)]
    assert rel("class") == [
        ("thread MainThread", "app.cli.(functions)", 0.0), ("app.cli.(functions)", "app.parse.Parser", 1.0),
        ("app.parse.Parser", "app.parse.Parser", 2.0), ("app.parse.Parser", "builtins.str", 3.0),
        ("app.cli.(functions)", "builtins.(functions)", 6.0),
        ("thread worker", "app.cli.(functions)", 0.5), ("app.cli.(functions)", "app.parse.Parser", 1.5)]
    assert [b for _, b, _ in rel("package")] == ["app", "app", "app", "builtins", "builtins", "app", "app"]
    p = h.pairs("class")  # self loops (Parser → Parser) left out, counts per pair
    pairs = {(h.full_names[a], h.full_names[b]): int(c) for a, b, c in zip(p.src, p.dst, p.count)}
    assert pairs[("app.cli.(functions)", "app.parse.Parser")] == 2
    assert ("app.parse.Parser", "app.parse.Parser") not in pairs and len(pairs) == 5
    pkg_b = E("builtins")
    mod_b = h.full_names.index("builtins", pkg_b + 1)
    assert h.kind[pkg_b] == 0 and h.kind[mod_b] == 1
    assert h.path(E("app.parse.Parser.token"), E("builtins.len")) == [
        E("app.parse.Parser.token"), E("app.parse.Parser"), E("app.parse"), E("app"), 0, pkg_b, mod_b,
        E("builtins.(functions)"), E("builtins.len")]
    assert int(h.lca([E("app.cli.main")], [E("app.parse.Parser.token")])[0]) == E("app")
    assert list(h.leaves("module")) == sorted([E("app.cli"), E("app.parse"), mod_b,
                                               E("thread MainThread"), E("thread worker")])
    # sequence order: by start, ties by thread then model order
    assert list(sequence_order(t)) == [0, 5, 1, 6, 2, 3, 4]


def importance_brute(caller, callee, start, thread, window, power):
    n = len(caller)
    order = sorted(range(n), key=lambda i: (start[i], thread[i], i))
    rel = [(caller[i], callee[i]) for i in order]
    hl, hr = (window - 1) // 2, window // 2
    w = [0.0] * n
    for k in range(n):
        lo, hi = max(0, k - hl), min(n - 1, k + hr)
        same = sum(1 for j in range(lo, hi + 1) if rel[j] == rel[k])
        w[order[k]] = (same / (hi - lo + 1)) ** power
    return np.array(w)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(3, 120), window=st.sampled_from([1, 2, 5, 24, 25, 200]),
       power=st.sampled_from([-5.0, -1.0, -0.5, 0.0, 1.0, 3.0]), level=st.sampled_from(["package", "class", "function"]))
def test_call_importance_matches_the_brute_force_twin(seed, n, window, power, level):
    t = tracevis3d.synthetic(n, threads=3, seed=seed)
    t.start[:] = np.round(t.start / max(t.start.max(), 1.0) * 5)  # many ties in start time
    got = tracevis3d.call_importance(t, window=window, power=power, level=level)
    r = tracevis3d.hierarchy(t).relations(level)
    want = importance_brute(r.caller.tolist(), r.callee.tolist(), t.start.tolist(), t.thread.tolist(), window, power)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_call_importance_paper_example_and_bad_arguments():
    # 15 calls B→D and one outlier A→C (Fig. 10): linear AA shows it at 1/16 = 6.25 %, p = -1 at 50 %
    # (the caller of a root call is its thread: 15 root calls of D in thread B, one of C in A)
    start = np.arange(16, dtype=float)
    t = Trace.from_arrays([0] * 15 + [1], start, start + 0.5, [-1] * 16, thread=[0] * 15 + [1],
                          function_names=["D", "C"], thread_names=["B", "A"])
    for p, share in ((0.0, 1 / 16), (-1.0, 0.5)):
        w = tracevis3d.call_importance(t, window=31, power=p)  # clipped: all 16 calls
        assert w[-1] / w.sum() == pytest.approx(share)
    for bad in ({"window": 0}, {"window": 2.5}, {"power": -6}, {"power": float("nan")}, {"level": "file"}):
        with pytest.raises(ValueError) as e:
            tracevis3d.call_importance(t, **bad)
        assert "\n" not in str(e.value)


def mural_brute(x0, x1, xc, xe, c0, c1, weight, height, width, bg):
    n = len(x0)
    img = np.zeros((height, width, 3))
    for ln in range(height):
        u0, u1 = ln * n / height, (ln + 1) * n / height
        parts = [(k, min(k + 1, u1) - max(k, u0)) for k in range(n) if min(k + 1, u1) - max(k, u0) > 0]
        total = sum(F * weight[k] for k, F in parts)
        for x in range(width):
            acc = np.zeros(3)
            for k, F in parts:
                if x0[k] <= x < x1[k]:
                    t = 0.5 if xc[k] == xe[k] else min(max((x - xc[k]) / (xe[k] - xc[k]), 0.0), 1.0)
                    c = c0[k] + t * (c1[k] - c0[k])
                else:
                    c = bg
                acc += F * weight[k] * c
            img[ln, x] = acc / total if total > 0 else bg
    return img


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(0, 40), height=st.integers(1, 25), width=st.integers(1, 30))
def test_mural_kernel_matches_the_brute_force_twin(seed, n, height, width):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, width, n)
    b = rng.integers(0, width, n)
    wa = rng.integers(1, 4, n)
    x0 = np.minimum(a, b).astype(np.int64)
    x1 = np.minimum(np.maximum(a + wa, b + 1), width).astype(np.int64)
    xc = a + (wa - 1) / 2.0
    xe = np.where(rng.random(n) < 0.2, xc, b.astype(float))
    c0 = rng.random((n, 3))
    c1 = rng.random((n, 3))
    w = rng.choice([1.0, 0.5, 25.0], n)
    bg = np.array([1.0, 0.9, 0.8])
    img, cov = mural_ibaa(x0, x1, xc, xe, c0, c1, w, height, width, bg)
    np.testing.assert_allclose(img, mural_brute(x0, x1, xc, xe, c0, c1, w, height, width, bg), atol=2e-6)
    assert cov.min() >= 0.0 and cov.max() <= 1.0 + 1e-6


def test_mural_ibaa_makes_the_outlier_visible():
    # Fig. 10: 16 calls on one pixel line, 15 from column 1 to 3 (B→D), one from 0 to 2 (A→C)
    n = 16
    x0 = np.array([1] * 15 + [0])
    x1 = np.array([4] * 15 + [3])
    xc = np.array([1.0] * 15 + [0.0])
    xe = np.array([3.0] * 15 + [2.0])
    green, red = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])
    c0, c1 = np.tile(green, (n, 1)), np.tile(red, (n, 1))
    bg = np.ones(3)
    for p, share in ((0.0, 1 / 16), (-1.0, 0.5)):
        f = np.array([15 / 16] * 15 + [1 / 16])
        img, cov = mural_ibaa(x0, x1, xc, xe, c0, c1, f ** p, 1, 4, bg)
        assert cov[0, 0] == pytest.approx(share)  # column 0: only the outlier reaches it


def bspline_brute(poly, samples):
    p = [poly[0], poly[0]] + list(poly) + [poly[-1], poly[-1]]
    segs = len(p) - 3
    out = []
    for s in range(samples):
        u = s / (samples - 1) * segs
        i = min(int(u), segs - 1)
        t = u - i
        b = [(1 - t) ** 3 / 6, (3 * t ** 3 - 6 * t ** 2 + 4) / 6, (-3 * t ** 3 + 3 * t ** 2 + 3 * t + 1) / 6, t ** 3 / 6]
        out.append(sum(b[k] * np.asarray(p[i + k]) for k in range(4)))
    return np.array(out)


def test_bundles_are_straight_at_beta_0_and_follow_the_hierarchy_path_at_beta_1():
    from tracevis3d.layout.extravis_heb import bundle_curves, control_points, leaf_arcs

    h = tracevis3d.hierarchy(small_trace())
    leaves = h.leaves("function")
    arcs = leaf_arcs(h, leaves, np.arange(1, leaves.size + 1, dtype=float))
    cx, cz = control_points(h, arcs, 3, 10.0)
    E = h.full_names.index
    pairs = [(E("app.parse.Parser.token"), E("builtins.len")), (E("app.cli.main"), E("app.cli.work")),
             (E("thread worker"), E("app.parse.Parser.parse"))]
    src, dst = [a for a, _ in pairs], [b for _, b in pairs]
    pos = np.stack([cx, np.zeros_like(cx), cz], axis=1)
    straight = bundle_curves(h, src, dst, cx, cz, 0.0, samples=33)
    full = bundle_curves(h, src, dst, cx, cz, 1.0, samples=33)
    for k, (a, b) in enumerate(pairs):
        c = straight[k]
        np.testing.assert_allclose(c[0], pos[a], atol=1e-9)
        np.testing.assert_allclose(c[-1], pos[b], atol=1e-9)
        d = (pos[b] - pos[a]) / np.linalg.norm(pos[b] - pos[a])
        off = (c - pos[a]) - ((c - pos[a]) @ d)[:, None] * d[None, :]
        assert np.abs(off).max() < 1e-9  # β = 0: on the chord
        path = h.path(a, b)  # β = 1: the B-spline of the hierarchy path through the LCA
        np.testing.assert_allclose(full[k], bspline_brute([pos[e] for e in path], 33), atol=1e-9)
    # the sibling functions' path turns at their class, the others' at the root
    assert h.path(*pairs[1]) == [pairs[1][0], E("app.cli.(functions)"), pairs[1][1]] and 0 in h.path(*pairs[0])


@pytest.mark.parametrize("bad", [["--level", "file"], ["--beta", "1.5"], ["--power", "-7"], ["--window", "5:1"],
                                 ["--color-mode", "rainbow"], ["--importance-window", "0"]])
@pytest.mark.parametrize("command", ["render-extravis", "render-heb", "render-sequence"])
def test_render_extravis_bad_options_exit_2_with_one_line(command, bad, tmp_path, capsys):
    from tracevis3d.cli import main

    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(small_trace(), path)
    rc = main([command, str(path), "-o", str(tmp_path / "x.png"), *bad])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("tracevis3d: error:"), (rc, err)


def test_the_time_window_and_the_highlight_link_both_views():
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.layout.extravis_heb import GRADIENT_STEPS
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    h = tracevis3d.hierarchy(t)
    t0, t1 = (float(x) for x in np.quantile(t.start, [0.3, 0.6]))
    win = (t.start >= t0) & (t.start <= t1)
    spec = extravis_layout(t, ExtravisParams(time_window=(t0, t1), resolution=(640, 360)), hier=h)
    assert spec.meta["n_calls"] == int(win.sum())
    tubes = spec.layer("heb_tubes")
    got = set(zip(tubes.attributes["src_element"][::GRADIENT_STEPS].tolist(),
                  tubes.attributes["dst_element"][::GRADIENT_STEPS].tolist()))
    p = h.pairs("module", calls=win)
    assert got == set(zip(p.src.tolist(), p.dst.tolist()))  # the HEB shows the window's relations only
    # highlighting a module lights its calls in both views, the others pale
    r = h.relations("module")
    touch = np.bincount(r.caller[win], minlength=len(h)) + np.bincount(r.callee[win], minlength=len(h))
    mods = [m for m in h.leaves("module") if h.kind[m] == 1 and 0 < touch[m] < 0.2 * win.sum()]
    e = int(max(mods, key=lambda m: touch[m]))
    name = h.full_names[e]
    lit_spec = extravis_layout(t, ExtravisParams(time_window=(t0, t1), resolution=(640, 360),
                                                 highlight=[f"^{re.escape(name)}$"]), hier=h)
    want = win & ((r.caller == e) | (r.callee == e))
    assert lit_spec.meta["n_lit_calls"] == int(want.sum()) > 0
    lt = lit_spec.layer("heb_tubes")
    touches = (lt.attributes["src_element"] == e) | (lt.attributes["dst_element"] == e)
    pale = lt.material_index == GRADIENT_STEPS
    assert touches.any() and not pale[touches].any() and pale[~touches].all()
    base = spec.layer("sequence_mural").pixels
    lit = lit_spec.layer("sequence_mural").pixels
    assert base.shape == lit.shape
    sat = lambda img: (img[..., :3].max(-1) - img[..., :3].min(-1)).mean()  # noqa: E731
    assert sat(lit) < 0.7 * sat(base)  # the other calls' rows pale


def test_element_names_carry_their_element():
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    h = tracevis3d.hierarchy(t)
    spec = extravis_layout(t, ExtravisParams(resolution=(1920, 1080)), hier=h)
    lab = spec.labels
    el = [(txt, int(e)) for txt, k, e in zip(lab.texts, lab.kind, lab.attributes["element_index"]) if k == "element"]
    assert len(el) >= 10
    from tracevis3d.analysis.hierarchy import THREAD
    from tracevis3d.layout.text import _short_digits

    for txt, e in el:  # the name is (the informative end of) its element's name; a thread's its start
        thread_head = h.kind[e] == THREAD and _short_digits(h.names[e]).startswith(txt.rstrip("…"))
        assert e > 0 and (txt.lstrip("…") in element_label(h, e) or thread_head), (txt, h.names[e])
    assert all(e == -1 for k, e in zip(lab.kind, lab.attributes["element_index"]) if k != "element")
    drawn = set(spec.layer("heb_ring").attributes["element_index"].tolist())
    assert drawn == set(spec.layer("sequence_icicle").attributes["element_index"].tolist())  # the same elements
    assert {e for _, e in el} <= drawn


def test_hidden_modules_leave_the_relations_and_rows_map_to_the_loaded_trace():
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    spec = extravis_layout(t, ExtravisParams(resolution=(640, 360), hide_modules=["app"]))
    assert spec.meta["n_merged_calls"] > 0 and spec.meta["n_calls"] == len(t) - spec.meta["n_merged_calls"]
    assert not any(txt.startswith("app") for txt, k in zip(spec.labels.texts, spec.labels.kind) if k == "element")
    rows = spec.layer("sequence_mural").attributes["row_calls"]
    assert rows.min() >= 0 and rows.max() < len(t)
    assert not any(t.function_names[t.func[i]].startswith("app.") for i in rows)  # loaded calls, none hidden


def test_the_window_has_a_pair_of_handles_on_the_whole_run():
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    t0, t1 = (float(x) for x in np.quantile(t.start, [0.25, 0.5]))
    spec = extravis_layout(t, ExtravisParams(resolution=(640, 360), time_window=(t0, t1)))
    hd = spec.layer("window_handles")
    times = hd.attributes["window_time"]
    assert sorted(times[times >= 0].tolist()) == pytest.approx([t0, t1], rel=1e-6)
    z = hd.positions[:, 2]
    bar, sel, a, b = z  # the handles sit on the bar where the window's ends fall in the whole run
    top, bot = bar + hd.scales[0, 2] / 2, bar - hd.scales[0, 2] / 2
    span = (t.start.min(), t.end.max())
    for zz, tt in ((a, t0), (b, t1)):
        assert zz == pytest.approx(top - (tt - span[0]) / (span[1] - span[0]) * (top - bot), abs=1e-4)
    with pytest.raises(KeyError):
        extravis_layout(t, ExtravisParams(resolution=(640, 360))).layer("window_handles")


def test_each_view_alone_fills_the_content_rectangle():
    """views="heb" / "sequence": the same stages, one view's layers only, filling the figure;
    the sequence view's times in the icicle's axis format ("0", not "0 ns")."""
    from tracevis3d.layout.camera import project
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    h = tracevis3d.hierarchy(t)
    t0, t1 = 0.0, float(np.quantile(t.start, 0.5))
    params = ExtravisParams(resolution=(1280, 720), time_window=(t0, t1))
    both = extravis_layout(t, params, hier=h)
    heb = extravis_layout(t, params, hier=h, views="heb")
    seq = extravis_layout(t, params, hier=h, views="sequence")
    names = lambda s: {ly.name for ly in s.layers}  # noqa: E731
    assert {"heb_ring", "heb_tubes", "sequence_icicle", "sequence_mural", "window_handles"} <= names(both)
    assert {"heb_ring", "heb_tubes"} <= names(heb) and not names(heb) & {"sequence_icicle", "sequence_mural",
                                                                          "window_handles"}
    assert {"sequence_icicle", "sequence_mural", "window_handles"} <= names(seq)
    assert not names(seq) & {"heb_ring", "heb_tubes"}
    assert (heb.meta["views"], seq.meta["views"], seq.meta["n_tubes"]) == ("heb", "sequence", 0)
    from tracevis3d.layout.extravis import title_of

    assert "window 0–2.7 ms" in title_of(t, params, 10, "heb") and title_of(t, params, 10, "heb").endswith("whom")
    assert title_of(t, params, 10, "sequence").endswith("— who calls whom, when")
    # alone, each view is larger in the frame than beside the other
    def width_px(spec, layer):
        ly = spec.layer(layer)
        if layer == "sequence_mural":
            return spec.meta["mural_px"][0]
        r = float(ly.radii.max())
        c = np.asarray(ly.origin, np.float64)
        px = project(spec.camera, np.array([c - [r, 0, 0], c + [r, 0, 0]]), spec.resolution)
        return abs(px[1, 0] - px[0, 0])
    x0, y0, x1, y1 = heb.meta["content_rect"]  # the circle fills the content's height, in its middle
    assert width_px(heb, "heb_ring") > 0.85 * min(y1 - y0, x1 - x0)
    c = project(heb.camera, np.asarray(heb.layer("heb_ring").origin, np.float64)[None], heb.resolution)[0]
    assert abs(c[0] - 0.5 * (x0 + x1)) < 0.05 * (x1 - x0)
    assert width_px(seq, "sequence_mural") > 1.6 * width_px(both, "sequence_mural")
    x0, _, x1, _ = seq.meta["content_rect"]
    assert width_px(seq, "sequence_mural") > 0.8 * (x1 - x0)
    # the same elements in the ring and in the icicle; legend rows of its own view only
    assert set(heb.layer("heb_ring").attributes["element_index"].tolist()) == \
        set(seq.layer("sequence_icicle").attributes["element_index"].tolist())
    texts = lambda s, kind: [x for x, k in zip(s.labels.texts, s.labels.kind) if k == kind]  # noqa: E731
    assert texts(seq, "axis")[0] == "0" and not any(x.strip() == "0 ns" for x in texts(seq, "axis"))
    assert not texts(heb, "axis")
    assert not any("rows:" in x for x in heb.labels.texts) and not any("tube width" in x for x in seq.labels.texts)
    with pytest.raises(ValueError, match="views must be one of"):
        extravis_layout(t, params, hier=h, views="mural")


def test_the_sequence_view_marks_round_times_beside_the_rows_where_they_fall():
    """The mural's rows are calls, not equal times: with only its first and last time beside
    it (a Pygments + Cython trace: "0" and "2.4 s") nothing said that its middle 70 % of rows
    took a second and its last rows 0.9 s.  Round times of the axis now stand beside the row
    of the first call starting at or after them, top to bottom in order, a label's gap apart,
    and where the calls are few they are left out rather than crowded."""
    from tracevis3d.layout.extravis import TIME_MARK_GAP_EM, UNIT, time_labels

    rng = np.random.default_rng(3)
    # 10,000 calls: 9,000 in the first 0.2 s, 1,000 in the next 1.8 s
    starts = np.sort(np.concatenate([[0.0], rng.uniform(0, 2e5, 8999), rng.uniform(2e5, 2e6, 999), [2e6]]))
    trace = dataclasses.replace(tracevis3d.synthetic(10_000, seed=1), start=starts)
    seq = np.arange(starts.size)
    top, bot, tpx = 1000.0, 0.0, 16.0
    ls = time_labels(trace, seq, 0.0, top, bot, tpx, 0.01, 1.0)
    texts, base = list(ls.texts), ls.anchors[:, 2] / UNIT
    assert texts[:2] == ["0", "2.0 s"], texts
    assert np.allclose(base[:2], [top - 0.9 * tpx, bot])  # the ends as before
    mids = dict(zip(texts[2:], base[2:] + 0.35 * tpx))  # each text's middle
    # each beside the row of the first call at or after it: 0.5 s follows ~91.7 % of the calls
    for text, t_us in (("0.5 s", 5e5), ("1.0 s", 1e6)):
        row = np.searchsorted(starts, t_us) / starts.size
        assert text in mids and abs(mids[text] - (top + (bot - top) * row)) < 1e-3, (texts, mids)
    assert "1.5 s" not in mids  # 22 px above the bottom's "2.0 s": left out, not crowded
    middles = sorted([top - 0.55 * tpx, bot + 0.35 * tpx, *mids.values()])
    assert all(b - a >= TIME_MARK_GAP_EM * tpx for a, b in zip(middles, middles[1:])), middles


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 10 ** 6), min_size=0, max_size=700), st.floats(0.5, 1.0))
def test_coloured_pairs_against_the_rule(counts, share):
    """`coloured_pairs` against its rule, by brute force: with at most COLOUR_ALL_PAIRS relations
    (or share 1) all keep their colour; else the fewest heaviest whose calls reach the share,
    and at least MIN_COLOURED_PAIRS; no pale relation carries more calls than a coloured one."""
    from tracevis3d.layout.extravis_heb import COLOUR_ALL_PAIRS, MIN_COLOURED_PAIRS, coloured_pairs

    c = np.asarray(counts, np.int64)
    out = coloured_pairs(c, share)
    assert out.shape == c.shape and out.dtype == bool
    if c.size <= COLOUR_ALL_PAIRS or share >= 1.0:
        assert out.all()
        return
    k = next(k for k in range(1, c.size + 1) if np.sort(c)[::-1][:k].sum() >= share * c.sum() * (1 - 1e-12))
    assert out.sum() == min(max(k, MIN_COLOURED_PAIRS), c.size)
    if (~out).any():
        assert c[~out].max() <= c[out].min()


def test_the_bundle_view_colours_the_heavy_relations_and_pales_the_tail():
    """A jedi + lark recording (3.99 M calls, 2,824 module pairs) drew every relation in the
    caller → callee gradient: the floor-width tubes of the 2,680 pairs carrying 5 % of the calls
    were a hairball over the bundles.  Past 200 relations the heaviest carrying `colour_share`
    of the calls keep the gradient, the others are pale and lie behind them; the legend says
    how many and what share; colour_share 1 keeps them all in colour."""
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(60_000, seed=4, threads=2, n_functions=1500)  # 289 module pairs
    spec = extravis_layout(t, ExtravisParams(level="module", resolution=(960, 540), max_pairs=4000), views="heb")
    tubes = next(lay for lay in spec.layers if lay.name == "heb_tubes")
    steps = 8
    pale = tubes.material_index.reshape(-1, steps)[:, 0] == steps  # the pale material follows the gradient's
    calls = tubes.attributes["calls"][::steps]
    assert calls.size > 200 and 0 < pale.sum() < calls.size
    assert calls[pale].max() <= calls[~pale].min()
    depth = tubes.centres[:, :, 1].reshape(calls.size, steps, -1)
    assert depth[pale].min() > depth[~pale].max() - 1e-6  # behind (the camera looks along +y)
    assert any(x.startswith(f"pale: {int(pale.sum()):,} relations of at most") for x in spec.labels.texts)
    all_lit = extravis_layout(t, ExtravisParams(level="module", resolution=(960, 540), colour_share=1.0), views="heb")
    tubes = next(lay for lay in all_lit.layers if lay.name == "heb_tubes")
    assert (tubes.material_index < steps).all() and not any(x.startswith("pale:") for x in all_lit.labels.texts)


def test_the_last_time_mark_never_reads_like_a_round_one():
    """A jedi + lark recording's last call started at 3.29 s: the mural's bottom read "3 s",
    as the round mark 3 s a few rows above it did (two "3 s").  An end whose text equals
    another mark's gets more decimals until it differs; the round marks keep the axis'."""
    from tracevis3d.layout.extravis import axis_times, time_labels

    assert axis_times([3e6, 0.0, 3.29e6]) == ["3 s", "0", "3.3 s"]
    assert axis_times([1e6, 2e6, 3e6, 3.0004e6]) == ["1 s", "2 s", "3 s", "3.000 s"]  # no more than 3 decimals
    starts = np.concatenate([[0.0], np.linspace(1.0, 3.29e6, 9999)])
    trace = dataclasses.replace(tracevis3d.synthetic(10_000, seed=1), start=starts)
    ls = time_labels(trace, np.arange(starts.size), 0.0, 1000.0, 0.0, 16.0, 0.01, 1.0)
    texts = list(ls.texts)
    assert texts[:2] == ["0", "3.3 s"] and "3 s" in texts[2:] and len(set(texts)) == len(texts), texts


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1e6), min_size=1, max_size=60), st.floats(0.001, 0.2), st.floats(0.3, 1.0))
def test_floored_shares_against_the_rule(weights, floor, room):
    """`floored_shares` against its rule: the shares fill the room; the K heaviest
    (K = floor(0.5 room / floor)) get at least the floor; every other share is c · weight for
    one c (so among them the proportions are the weights'); a heavier leaf never gets less."""
    from tracevis3d.layout.extravis_heb import floored_shares

    w = np.asarray(weights) + 1e-9
    out = floored_shares(w, room, floor, 0.5)
    assert abs(out.sum() - room) <= 1e-9 * max(room, 1)
    k = int(min(w.size, np.floor(0.5 * room / floor)))
    heavy = np.argsort(-w, kind="stable")[:k]
    assert (out[heavy] >= floor * (1 - 1e-6)).all()
    rest = np.setdiff1d(np.arange(w.size), heavy)
    if rest.size:
        c = out[rest] / w[rest]
        assert np.allclose(c, c[0], rtol=1e-6)
    heavier = w[:, None] > w[None, :]
    assert (out[:, None] >= out[None, :] - 1e-9)[heavier].all()


def _cpp_trace(n_unqualified: int, n_module: int):
    """Chromium-style names: free text and ``Class::method`` (no module) and a few ``cc::``
    (module cc): roots calling leaves, ``n_unqualified`` calls without a module."""
    names = ["ThreadController active", "RunLoop::Run", "View::Layout", "cc::TileManager::Prepare"]
    func, parent, start, end = [], [], [], []
    for k in range(n_unqualified + n_module):
        func += [0, (1 + k % 2) if k < n_unqualified else 3]
        parent += [-1, 2 * k]
        start += [10.0 * k, 10.0 * k + 1]
        end += [10.0 * k + 9, 10.0 * k + 5]
    return Trace.from_arrays(func, start, end, parent, function_names=names, thread_names=["CrBrowserMain"])


def test_auto_level_is_class_where_one_module_takes_most_calls_and_names_its_unqualified_class():
    """``level="auto"``: module level for a Python trace; class level where one module (here
    '(no module)': C++ and free-text names) is the callee of more than half the calls, the
    figure then names that module's pseudo class '(no class)'; function level for a one-file
    script (one module, one class); picking reports the level shown."""
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.layout.extravis_describe import describe_element
    from tracevis3d.params.extravis import ExtravisParams

    assert ExtravisParams().level == "auto"
    assert auto_level(tracevis3d.hierarchy(small_trace())) == "module"
    many = _cpp_trace(30, 10)  # 70 of 80 calls in '(no module)'
    h = tracevis3d.hierarchy(many)
    assert auto_level(h) == "class"
    half = _cpp_trace(0, 40)  # the 40 roots in '(no module)', 40 leaves in cc: half, not more
    assert 40 <= AUTO_MAX_SHARE * 80 and auto_level(tracevis3d.hierarchy(half)) == "module"
    assert auto_level(tracevis3d.hierarchy(_cpp_trace(1, 39))) == "class"  # 42 of 80
    cc = np.flatnonzero(many.func == 3)  # the calls counted: those given (cc's 10 and their 10 callers)
    assert auto_level(h, np.concatenate([cc, many.parent[cc]])) == "module"
    script = Trace.from_arrays([0, 1, 1, 2], [0.0, 1.0, 3.0, 5.0], [9.0, 2.0, 4.0, 6.0], [-1, 0, 0, 0],
                               function_names=["main (/s/x.py:1)", "f (/s/x.py:5)", "g (/s/x.py:9)"])
    assert auto_level(tracevis3d.hierarchy(script)) == "function"
    free = h.full_names.index("(no module).(functions)")
    assert element_label(h, free) == UNQUALIFIED
    assert element_label(h, h.full_names.index("cc")) == "cc"
    spec = extravis_layout(many, ExtravisParams(resolution=(1280, 720)), hier=h)
    assert "class level" in spec.meta.get("title", "") or any("class level" in t for t in spec.labels.texts)
    lab = spec.labels
    named = {int(e): txt for txt, k, e in zip(lab.texts, lab.kind, lab.attributes["element_index"]) if k == "element"}
    assert named.get(free) == UNQUALIFIED, named
    assert describe_element(many, ExtravisParams(), free)[0]["level shown"] == "class"
    module = extravis_layout(many, ExtravisParams(resolution=(1280, 720), level="module"), hier=h)
    assert any("module level" in t for t in module.labels.texts) or "module level" in module.meta.get("title", "")


def test_a_wide_leaf_whose_name_is_longer_than_its_band_is_named_along_it():
    """A class that takes a third of the ring, its name (and its shorter forms) longer than the
    leaves' band is deep: named along its arc, not left blank."""
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    long_cls = "CompositorFrameSinkSupportManagerImplementation"
    names = ["ThreadController active", f"{long_cls}::Submit", "View::Layout", "cc::TileManager::Prepare"]
    func, parent, start, end = [], [], [], []
    for k in range(60):
        func += [0, (1, 1, 2, 3)[k % 4]]
        parent += [-1, 2 * k]
        start += [10.0 * k, 10.0 * k + 1]
        end += [10.0 * k + 9, 10.0 * k + 5]
    t = Trace.from_arrays(func, start, end, parent, function_names=names, thread_names=["CrBrowserMain"])
    h = tracevis3d.hierarchy(t)
    spec = extravis_layout(t, ExtravisParams(resolution=(1280, 720)), hier=h, views="heb")
    lab = spec.labels
    named = {int(e): txt for txt, k, e in zip(lab.texts, lab.kind, lab.attributes["element_index"]) if k == "element"}
    cls = h.full_names.index(f"(no module)::{long_cls}")
    assert named.get(cls, "").lstrip("…") and long_cls.endswith(named[cls].lstrip("…")), named


def test_a_threads_name_is_cut_as_a_lanes_never_at_its_dots():
    """Threads on the ring and the sequence view's columns: "thread 3113936 (python3.8)" is
    written whole or as far as its id ("thread 31…36", `text.fit_thread_label`), never by a
    dotted name's rule ("…8)": PyTorch's CPU threads)."""
    from tracevis3d.analysis.hierarchy import THREAD
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.layout.extravis_heb import fit_element
    from tracevis3d.params.extravis import ExtravisParams

    t = small_trace()
    t.thread_names = ["thread 3113936 (python3.8)", "thread 3113952 (python3.8)"]
    h = tracevis3d.hierarchy(t)
    e = int(np.flatnonzero(h.kind == THREAD)[0])
    assert fit_element(h, e, h.names[e], 30.0) == "thread 3113936 (python3.8)"
    assert fit_element(h, e, h.names[e], 2.0) == ""
    assert fit_element(h, e, h.names[e], 8.0) == "thread 31…36"  # its id, what tells it from the other
    assert fit_element(h, e, h.names[e], 4.0) == ""
    spec = extravis_layout(t, ExtravisParams(resolution=(1280, 720)), hier=h)
    lab = spec.labels
    for txt, k, el in zip(lab.texts, lab.kind, lab.attributes["element_index"]):
        if k == "element" and h.kind[int(el)] == THREAD:
            assert txt in ("thread 3113936 (python3.8)", "thread 3113952 (python3.8)", "thread 31…36", "thread 31…52")
    from tracevis3d.layout.text import fit_thread_label
    assert fit_thread_label("Thread-1 (worker)", 5.0) == "Thread-1"
    assert fit_thread_label("ThreadPoolForegroundWorker", 6.0).endswith("…")


def test_edge_bundle_tubes_are_as_wide_as_the_square_root_of_their_calls():
    """A tube's width grew with the logarithm of its calls: on a numba compile (2,445 module
    pairs, up to 145 k calls) a pair of 100 calls was half as wide as the busiest, and the
    bundle was one solid mass.  Widths now grow with the square root (an area for a count):
    the busiest relations stand out (Pygments' lexer into ``re.match``), the rare ones are
    thin lines, and none vanishes (a floor of 0.05 label sizes)."""
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.layout.extravis_heb import GRADIENT_STEPS
    from tracevis3d.params.extravis import ExtravisParams

    t = tracevis3d.synthetic(20_000, threads=3, seed=4)
    spec = extravis_layout(t, ExtravisParams(resolution=(1280, 720)), views="heb")
    tubes = spec.layer("heb_tubes")
    calls = tubes.attributes["calls"][::GRADIENT_STEPS].astype(np.float64)
    width = tubes.half_x[::GRADIENT_STEPS].max(axis=1).astype(np.float64)
    order = np.argsort(calls, kind="stable")
    assert np.all(np.diff(width[order]) >= -1e-6 * width.max())  # more calls, never thinner
    top, rare = width[np.argmax(calls)], width[calls <= calls.max() / 100]
    assert rare.size and top >= 3.0 * rare.max() and rare.min() > 0.1 * top, (top, rare.max(), rare.min())


def test_threads_of_one_kind_are_one_element():
    """A server's 12 request threads (and its main thread): with ``pack_threads`` (the default)
    one element "12× handle" is the caller of all their root calls, as the cone tree merges
    them; off, an element per thread."""
    from tracevis3d.analysis.hierarchy import THREAD
    from tracevis3d.layout.extravis import extravis_hierarchy
    from tracevis3d.params.extravis import ExtravisParams

    n = 12
    func, start, end, parent, thread = [0], [0.0], [200.0 * n + 100], [-1], [0]
    for k in range(n):
        func += [1, 2]
        start += [10.0 + 200 * k, 20.0 + 200 * k]
        end += [150.0 + 200 * k, 60.0 + 200 * k]
        parent += [-1, len(parent)]
        thread += [k + 1, k + 1]
    t = Trace.from_arrays(func, start, end, parent, thread=thread,
                          function_names=["main (/src/srv.py:1)", "handle (/src/srv.py:10)", "builtins.len"],
                          thread_names=["MainThread"] + [f"Thread-{k + 1} (handle)" for k in range(n)]).check()
    packed = extravis_hierarchy(t, ExtravisParams().validate())
    threads = [packed.names[e] for e in np.flatnonzero(packed.kind == THREAD)]
    assert threads == ["MainThread", "12× handle"]
    rel = packed.relations("module")
    roots = np.flatnonzero(t.parent < 0)
    assert {packed.names[e] for e in rel.caller[roots[t.thread[roots] > 0]]} == {"12× handle"}
    apart = extravis_hierarchy(t, ExtravisParams(pack_threads=False).validate())
    assert int((apart.kind == THREAD).sum()) == n + 1
    spec = tracevis3d.layout.extravis.extravis_layout(t, ExtravisParams(resolution=(640, 360)).validate())
    assert "12× handle" in " ".join(spec.labels.texts)


def _finishes(fn, seconds=120.0):
    """fn() run on a thread: its result, or None when it is still running after ``seconds`` (a
    hang guard, generous: the work takes milliseconds)."""
    import threading
    out = []
    th = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    th.start()
    th.join(seconds)
    return out[0] if out else None


def test_highlight_and_counter_patterns_search_in_linear_time():
    """--highlight (EXTRAVIS) and --counters (the side tracks) matched user patterns with `re`,
    whose backtracking ran ``(a+)+$`` against a name of 34 a's and a '!' for minutes (found by
    a probe at stop 60; the parameters were already checked by the linear-time engine).  Now
    both search with `tracevis3d.userregex`: the same elements lit as `re` lights them on a
    pattern `re` can run, and the catastrophic pattern answers at once (nothing matches)."""
    from tracevis3d.layout.extravis import lit_elements
    from tracevis3d.layout.side_tracks import choose_series
    from tracevis3d.io import load_bytes

    evil = "a" * 34 + "!"
    events = [{"ph": "X", "name": evil, "pid": 1, "tid": 1, "ts": 1, "dur": 10},
              {"ph": "X", "name": "json.dumps", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
              {"ph": "C", "name": evil, "pid": 1, "ts": 1, "args": {evil: 1}},
              {"ph": "C", "name": evil, "pid": 1, "ts": 5, "args": {evil: 4}}]
    import json
    t = load_bytes(json.dumps({"traceEvents": events}).encode(), source="redos.json")
    h = tracevis3d.hierarchy(t)
    got = _finishes(lambda: lit_elements(h, ["(a+)+$"]))
    assert got is not None and not got.any()
    want = _finishes(lambda: lit_elements(h, ["^json"]))
    hit = np.array([re.search("^json", s) is not None for s in h.full_names])
    assert want is not None and want[np.flatnonzero(hit)].all()
    picked = _finishes(lambda: choose_series(t, 0.0, 10.0, ["(a+)+$"], 4))
    assert picked is not None and picked[0].size == 0
