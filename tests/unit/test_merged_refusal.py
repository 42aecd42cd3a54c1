"""The thread view's refusal of merged stacks says what their x is, in one line: "x in
samples" for a count, and for stacks merged in time (a Go CPU profile's nanoseconds, a trace
merged with ``--merge``) "time summed per call path, not a clock" (it said "x in time, not
time" for tests/data/formats/go/cpu.pprof)."""
import pytest

from tracevis3d.io.stacks import merge_trace
from tracevis3d.layout.threads import no_merged_trace
from tree_factory import random_trace


def _refusal(trace) -> str:
    with pytest.raises(ValueError) as e:
        no_merged_trace(trace)
    msg = str(e.value)
    assert "\n" not in msg and "needs calls on a clock" in msg and "render-icicle" in msg
    return msg


@pytest.mark.timeout(120)
def test_stacks_merged_in_time_are_refused_in_words_that_mean_something():
    msg = _refusal(merge_trace(random_trace(n_roots=4, threads=2, seed=3)))
    assert "(x in time summed per call path, not a clock)" in msg, msg
    assert "time, not time" not in msg


@pytest.mark.timeout(120)
def test_stacks_merged_in_samples_say_samples():
    import numpy as np

    import tracevis3d
    from tracevis3d.io.stacks import FrameTable, StackProfile, merged_trace

    frames = FrameTable()
    frame = np.array([frames.add(n, "", -1) for n in ("main", "work", "sort")], np.int64)
    prof = StackProfile("main", np.array([-1, 0, 1], np.int64), frame, np.array([1, 2, 2, 1, 2], np.int64))
    msg = _refusal(merged_trace(frames, [prof], unit="samples", source="prog.collapsed", fmt="test",
                                limits=tracevis3d.io.DEFAULT_LIMITS, input_bytes=100, warn=False))
    assert "(x in samples, not a clock)" in msg, msg
