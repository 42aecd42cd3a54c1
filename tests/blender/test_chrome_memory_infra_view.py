"""``render-memory`` of a Chrome trace with memory-infra dumps (the real recording
tests/data/formats/chromium/chromium-memory-infra.json.gz): a band per process and allocator,
drawn in its legend colour, the legend saying that the dumps hold no lifetimes."""
import pathlib

import numpy as np
import pytest

pytestmark = [pytest.mark.blender, pytest.mark.timeout(900)]
REC = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "chromium" / "chromium-memory-infra.json.gz"


def _png(path):
    """(h, w, 4) stored floats of a rendered PNG, row 0 at the top (`figure_report.load_image`)."""
    pytest.importorskip("bpy")
    from tracevis3d.blender.figure_report import load_image

    return load_image(path, 4)


def test_render_memory_of_chrome_dumps_draws_bands(tmp_path):
    pytest.importorskip("bpy")
    import tracevis3d
    from tracevis3d.cli import main
    from tracevis3d.layout.memory import IDLE_LIGHTEN, memory_layout
    from tracevis3d.layout.palette import lighten, linear_to_srgb

    out = tmp_path / "chrome_memory.png"
    assert main(["render-memory", str(REC), "-o", str(out)]) == 0
    img = _png(out)
    assert img.shape[:2] == (1080, 1920)
    spec = memory_layout(tracevis3d.load_memory(str(REC)))
    assert any("held until the next" in t for t in spec.labels.texts)
    x0 = int(spec.meta["content_rect"][2])
    chart = img[int(spec.meta["content_rect"][1]):, :x0, :3].reshape(-1, 3)[::5]
    chroma = chart / np.maximum(chart.sum(axis=1, keepdims=True), 1e-6)
    found = 0
    for entry in spec.legend[:12]:
        rgb = np.asarray(entry.color[:3])
        for c in (rgb, lighten(rgb[None], IDLE_LIGHTEN)[0]):
            c = np.asarray(linear_to_srgb(c), np.float64)
            if (np.abs(chroma - c / c.sum()).max(axis=1) < 0.01).sum() >= 50:
                found += 1
                break
    assert found >= 8, found
    # the bands fill the plot: under a quarter of the chart left white
    assert float((chart > 0.96).all(axis=1).mean()) < 0.25
