"""A real V8 profile (tests/data/formats/node/csv-summary.cpuprofile, Node 20) whose samples are
merged in samples or another measure through `io.stacks.merged_trace`, the builder every
aggregated format uses; for the merged-axis tests."""
import json
import pathlib

import numpy as np

import tracevis3d
from tracevis3d.io.stacks import FrameTable, StackProfile, merged_trace

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
CPUPROFILE = DATA / "node" / "csv-summary.cpuprofile"


def profile_in_samples(unit: str = "samples", weight=None):
    """The csv-summary profile's samples merged in ``unit`` (each sample weighs 1, or
    ``weight(time_delta_us)``): V8's node table as a stack table, `merged_trace`."""
    prof = json.loads(CPUPROFILE.read_text())
    nodes = prof["nodes"]
    row = {n["id"]: k for k, n in enumerate(nodes)}
    parent = np.full(len(nodes), -1, np.int64)
    for k, n in enumerate(nodes):
        for c in n.get("children", ()):
            parent[row[c]] = k
    frames = FrameTable()
    frame = np.array([frames.add(n["callFrame"]["functionName"], n["callFrame"].get("url", ""),
                                 n["callFrame"].get("lineNumber", -1)) for n in nodes], np.int64)
    samples = np.array([row[s] for s in prof["samples"]], np.int64)
    w = None if weight is None else np.array([weight(d) for d in prof["timeDeltas"]], np.float64)
    p = StackProfile("main", parent, frame, samples, sample_weight=w)
    return merged_trace(frames, [p], unit=unit, source=str(CPUPROFILE), fmt="test", limits=tracevis3d.io.DEFAULT_LIMITS,
                        input_bytes=CPUPROFILE.stat().st_size, warn=False)
