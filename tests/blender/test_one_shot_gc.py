"""A one-shot ``render-*`` process (`cli.console`) leaves the objects of its imports out of the
garbage collector's passes once its scene is made (`cli.common.ONE_SHOT`, `fresh_scene`);
scripts and tests (`cli.main`) and ``render-live`` freeze nothing."""
import gc

from tracevis3d import allocator, cli
from tracevis3d.cli import common


def test_only_a_one_shot_render_freezes_its_imports(monkeypatch):
    seen = []

    def fake_main(argv):
        gc.unfreeze()
        common.fresh_scene()
        seen.append((argv[0], common.ONE_SHOT["freeze_imports"], gc.get_freeze_count() > 0))
        gc.unfreeze()
        return 0

    monkeypatch.setattr(allocator, "tune_for_batch", lambda: {})
    monkeypatch.setattr(cli, "main", fake_main)
    try:
        for command in ("render-icicle", "render-live", "replay"):
            cli.console([command, "x"])
    finally:
        gc.unfreeze()
    assert seen == [("render-icicle", True, True), ("render-live", False, False), ("replay", False, False)]
    assert not common.ONE_SHOT["freeze_imports"]  # reset when the command returns
