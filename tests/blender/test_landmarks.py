"""Search with history, hits the camera flies to, bookmarks with notes (issue 14): the
bpy-free `Landmarks`, and in a real scene (real bpy, headless) that history and bookmarks
survive saving and reopening the .blend."""
import numpy as np
import pytest

import tracevis3d
from tracevis3d.analysis.search import HISTORY_MAX, Landmarks, search_calls


@pytest.fixture(scope="module")
def sorts(realdata):
    path = realdata / "viztracer-examples" / "different_sorts.json"
    return path, tracevis3d.load(path)


def test_search_calls_and_history(sorts):
    _, t = sorts
    hits = search_calls(t, r"merge_sort$")
    names = {t.function_names[t.func[i]] for i in hits}
    assert len(names) == 1 and next(iter(names)).startswith("merge_sort ")  # display name "…merge_sort"
    assert len(hits) == int(np.sum([t.function_names[f].startswith("merge_sort ") for f in t.func]))
    assert np.all(np.diff(t.start[hits]) >= 0)  # in time order
    lm = Landmarks()
    for p in ["a", "b", "a"] + [f"x{k}" for k in range(HISTORY_MAX + 3)]:
        lm.remember(p)
    assert len(lm.history) == HISTORY_MAX and lm.history[0] == f"x{HISTORY_MAX + 2}"
    assert len(set(lm.history)) == len(lm.history)
    lm.search(t, "quick_sort")
    first = lm.next_hit()
    assert first == lm.hits[0] and lm.next_hit(-1) == lm.hits[-1]
    with pytest.raises(ValueError, match="bad regular expression"):
        search_calls(t, "(")
    lm.add_bookmark(t, first, "the first quick sort")
    with pytest.raises(ValueError, match="not in the trace"):
        lm.add_bookmark(t, len(t), "")
    back = Landmarks.from_json(lm.to_json())
    assert back == lm
    assert Landmarks.from_json("{not json") == Landmarks()


@pytest.mark.blender
def test_bookmarks_and_history_survive_save_and_reopen(sorts, tmp_path):
    bpy = pytest.importorskip("bpy")
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    from tracevis3d.blender import landmarks as L
    from tracevis3d.cli import main

    path, t = sorts
    assert main(["render-icicle", str(path), "-o", str(tmp_path / "f.png"), "--resolution", "320x180"]) == 0
    scene = bpy.context.scene
    assert L.search(t, "merge_sort") and L.search(t, "quick_sort")
    assert L.landmarks().history == ["quick_sort", "merge_sort"]
    before = scene.camera.location.copy()
    call = L.fly_to_next_hit(t, frames=12)
    assert call == L.landmarks().hits[0]
    bpy.context.view_layer.update()
    assert (scene.camera.location - before).length > 1e-3
    p = L.locate_call(call, t)
    v = world_to_camera_view(scene, scene.camera, Vector(p.tolist()))
    assert abs(v.x - 0.5) < 0.02 and abs(v.y - 0.5) < 0.02  # the hit is in the middle of the view
    assert scene.camera.animation_data is not None  # the flight is keyed
    L.add_bookmark(call, "first quick sort: slow pivot", t)
    saved_cam = scene.camera.location.copy()
    blend = tmp_path / "session.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert L.landmarks().bookmarks == []
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    lm = L.landmarks()
    assert lm.history == ["quick_sort", "merge_sort"] and lm.hits and lm.current == 0
    assert [b["note"] for b in lm.bookmarks] == ["first quick sort: slow pivot"]
    assert lm.bookmarks[0]["call"] == call and lm.bookmarks[0]["name"].startswith("quick_sort ")
    scene = bpy.context.scene
    scene.camera.location = (0.0, -50.0, 3.0)
    assert L.fly_to_bookmark(0)
    assert (scene.camera.location - saved_cam).length < 1e-4
