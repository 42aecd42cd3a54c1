"""The kernels that run once per line, event, row, word or call of a hot loop are compiled
without numba's reference counting (``_nrt=False``): a called kernel that counts references
raises and drops the count of each array argument on entry (two atomic operations per array per
call; on the second machine of docs/performance.md these took 3-22 % of the readers', the
compare's and the icicle layout's time).  numba refuses to compile an array made in such a
kernel, so the flag cannot hide an allocation; this test keeps the flag from being dropped."""
from __future__ import annotations

import importlib

import pytest

REFCOUNT_FREE = {
    "perf_scan": ["_trie_step", "_stack_leaf", "_event_id", "_is_wanted", "_thread_id", "_suffix_probe",
                  "_pending_frames", "_frame_to_chain", "_event_extent"],
    "perf_lines": ["line_end", "perf_frame", "perf_header", "block", "intern_frame"],
    "kindmatch": ["_lit_at", "_can_start", "_first_end_in_run", "_y_at", "_of_quote"],
    "setjoin_window": ["window_pass", "row_candidates", "row_tier_entries", "column_pairs", "sample_positions"],
    "setjoin": ["first_greater", "min_overlap"],
    "overview_record": ["add_row"],
    "overview_rows": ["row_overview", "_bin_row", "sweep_pair_sampled"],
    "overview": ["gallop_up", "sweep_pair", "_first_true", "bin_of"],
    "setjoin_fused": ["_prune"],
    "fold_runs": ["_rows_run"],
    "fold_reduce": ["_tiny_run"],
    "box_trim": ["_pairs_run"],
    "cpuprofile_scan": ["_nodes_run", "_node", "_call_frame"],
    "repetition": ["_scan_sequence", "_repetitions_run"],
    "pprof_scan": ["_stacks_run", "_walk_list"],
    "pprof_fields": ["sample_frames"],
    "textscan": ["span_hash", "_same_bytes", "common_prefix", "_shared_frames", "_line_count", "_find_frame",
                 "_add_frame", "_collapsed_node", "_split_frames"],
}


@pytest.mark.parametrize("module", sorted(REFCOUNT_FREE))
def test_hot_loop_kernels_count_no_references(module):
    mod = importlib.import_module(f"tracevis3d.kernels.{module}")
    for name in REFCOUNT_FREE[module]:
        kernel = getattr(mod, name)
        assert kernel.targetoptions.get("_nrt") is False, f"{module}.{name} counts references"
