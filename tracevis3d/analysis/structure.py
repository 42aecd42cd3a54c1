"""`Structure`: the trace's call forest as a DAG of identical subtrees (SEAT's Compact
Trace Format, Hamou-Lhadj Sec. 2.9 and ch. 5), and what it says about repetition.

``tracevis3d.structure(trace)`` builds it in O(n) (`kernels.dag.subtree_dag`); the compact
file (`tracevis3d.io.compact`) stores exactly this DAG plus the per-call times.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Trace

__all__ = ["Structure", "structure_of"]


@dataclass(eq=False)
class Structure:
    """The compact DAG of a trace.

    Fields (n = calls, K = DAG nodes):
      ``n_calls``            calls in the trace (n).
      ``n_distinct_subtrees`` DAG nodes (K): distinct subtrees, where two subtrees are the
                             same when they have the same function and the same ordered
                             children, recursively.  Threads share nodes.
      ``n_dag_edges``        parent→child pointers stored in the DAG (Σ children of nodes).
      ``sharing_ratio``      n / K: how many calls one stored node stands for on average
                             (1.0 = no repetition at all).
      ``node``               int32[n]: the DAG node of every call.
      ``node_ptr``, ``node_keys``  CSR of the nodes: node k's key is
                             ``node_keys[node_ptr[k]:node_ptr[k+1]]`` = (function id, child
                             nodes in call order); children have smaller ids than parents.
      ``node_func``          int32[K]: the function of each node.
      ``node_size``          int64[K]: calls in one instance of the node's subtree.
      ``node_count``         int64[K]: calls that are instances of the node.
      ``node_first``         int64[K]: the first such call (a representative for picking).
      ``roots``, ``roots_per_thread``  the root nodes in call order and how many roots each
                             thread has: with the DAG they determine func, parent, depth,
                             end_index and thread of every call.
    """

    n_calls: int
    n_distinct_subtrees: int
    n_dag_edges: int
    sharing_ratio: float
    node: np.ndarray
    node_ptr: np.ndarray
    node_keys: np.ndarray
    node_func: np.ndarray
    node_size: np.ndarray
    node_count: np.ndarray
    node_first: np.ndarray
    roots: np.ndarray
    roots_per_thread: np.ndarray
    function_names: list

    def children(self, k: int) -> np.ndarray:
        """Child nodes of node ``k`` in call order."""
        return self.node_keys[self.node_ptr[k] + 1: self.node_ptr[k + 1]]

    def top_repeated(self, k: int = 10, min_size: int = 2) -> list[dict]:
        """The repeated subtrees (count ≥ 2, size ≥ ``min_size``) that account for the most
        calls, as dicts: node, name, size, count, calls (= size × count), first_call.
        Nested repetitions are listed too (a repeated subtree's repeated parts)."""
        calls = self.node_size * self.node_count
        ok = np.flatnonzero((self.node_count >= 2) & (self.node_size >= min_size))
        order = ok[np.argsort(-calls[ok], kind="stable")][:k]
        return [dict(node=int(j), name=self.function_names[self.node_func[j]], size=int(self.node_size[j]),
                     count=int(self.node_count[j]), calls=int(calls[j]), first_call=int(self.node_first[j]))
                for j in order]

    def summary(self) -> str:
        return (f"{self.n_calls} calls, {self.n_distinct_subtrees} distinct subtrees "
                f"(sharing ratio {self.sharing_ratio:.1f}), {self.n_dag_edges} DAG edges")


def structure_of(trace: Trace) -> Structure:
    """The `Structure` (compact DAG) of ``trace``: O(n) (`kernels.dag.subtree_dag`)."""
    from ..kernels.dag import dag_node_sizes, node_first_call, subtree_dag
    from ..kernels.gamma import process_hash_seed

    node, ptr, keys = subtree_dag(trace.func, trace.end_index, process_hash_seed())
    n_nodes = ptr.shape[0] - 1
    size, _height, code, _ = dag_node_sizes(ptr, keys, max(trace.n_functions, 1), max(len(trace), 1))
    assert code == 0, "subtree_dag produced a malformed DAG"
    first, count = node_first_call(node, n_nodes)
    roots_mask = trace.parent < 0
    roots = node[roots_mask]
    per_thread = np.bincount(trace.thread[roots_mask], minlength=trace.n_threads).astype(np.int64)
    n = len(trace)
    return Structure(
        n_calls=n,
        n_distinct_subtrees=int(n_nodes),
        n_dag_edges=int(keys.shape[0] - n_nodes),
        sharing_ratio=float(n / n_nodes) if n_nodes else 1.0,
        node=node,
        node_ptr=ptr,
        node_keys=keys,
        node_func=keys[ptr[:-1]] if n_nodes else np.zeros(0, np.int32),
        node_size=size,
        node_count=count,
        node_first=first,
        roots=roots.astype(np.int32),
        roots_per_thread=per_thread,
        function_names=trace.function_names,
    )
