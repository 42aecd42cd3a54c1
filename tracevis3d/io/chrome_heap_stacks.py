"""The heap stacks of Chrome's memory-infra dumps (``heaps_v2``, `io.chrome_memdump`) as one trie
of frame names, resolved once per heap node (issue 78: thousands of heap entries under one
10^5-node chain cost the chain once, not once per entry)."""
from __future__ import annotations

import numpy as np


class HeapStacks:
    """The heap stacks of a trace's dumps as one trie of frame names (`kernels.stack_trie`):
    ``parent`` (-1: a root), ``label`` (into ``names``), ``depth`` per node; a (parent, name) is
    one node whatever its process, so two heap nodes of the same frames are one stack.

    Each process's ``maps.nodes`` is a parent array of its own; a heap entry's stack is its node's
    chain.  Resolving a node memoises the trie node of every heap node on the way (`resolve`), so
    thousands of entries under one 10^5-node chain cost the chain once, not once per entry
    (issue 78).  A chain that loops is cut where it closes (the node whose parent is already on
    the chain being resolved is an outermost frame); one deeper than ``max_stack_depth`` is cut
    where it passes it (the deeper frames start a stack of their own): both a
    ``memory_dump_bad`` problem.  The maps never change an entry once defined
    (`chrome_memdump._update_maps` keeps the first), so a resolved node stays resolved: the work
    is one step per heap node of each process."""

    def __init__(self, lim):
        self.lim = lim
        self.parent: list = []
        self.label: list = []
        self.depth: list = []
        self.names: list = []
        self._name_id: dict = {}
        self._node: dict = {}  # (parent, label) -> node

    def node(self, parent: int, name: str) -> int:
        """The trie node of frame ``name`` under ``parent`` (-1: a root), made once."""
        lab = self._name_id.get(name)
        if lab is None:
            lab = self._name_id[name] = len(self.names)
            self.names.append(name)
        k = self._node.get((parent, lab))
        if k is None:
            k = self._node[(parent, lab)] = len(self.parent)
            self.parent.append(parent)
            self.label.append(lab)
            self.depth.append(self.depth[parent] + 1 if parent >= 0 else 1)
        return k

    def resolve(self, pid_maps: dict, node, problems, where: str):
        """The trie node of heap node ``node`` of a process's maps; None when ``node`` is not in
        its ``maps.nodes``."""
        memo, nodes = pid_maps["memo"], pid_maps["nodes"]
        if node in memo:
            return memo[node]
        if node not in nodes:
            problems.add(where, f"heaps_v2 node {str(node)[:40]} is not in maps.nodes")
            return None
        path, on_path, x, base = [], set(), node, -1
        while x is not None:
            if x in memo:
                base = memo[x]
                break
            if x in on_path:
                problems.add(where, f"heaps_v2 node {node} starts a parent chain that loops (at node {x}): cut there")
                break
            entry = nodes.get(x)
            if entry is None:  # a parent that is not in the maps: the chain ends before it
                break
            on_path.add(x)
            path.append(x)
            x = entry[1]
        return self._descend(pid_maps, node, path, base, problems, where)

    def _descend(self, pid_maps: dict, node, path: list, base: int, problems, where: str) -> int:
        """The trie nodes of ``path`` (heap nodes, innermost first) under trie node ``base``, memoised."""
        memo, nodes, strings = pid_maps["memo"], pid_maps["nodes"], pid_maps["strings"]
        max_depth = self.lim.max_stack_depth
        cut = False
        for y in reversed(path):
            sid = nodes[y][0]
            name = strings.get(sid, f"string {sid}") if isinstance(sid, int) else f"string {str(sid)[:40]}"
            if base >= 0 and self.depth[base] >= max_depth:
                base, cut = -1, True
            base = memo[y] = self.node(base, name)
        if cut:
            problems.add(where, f"heaps_v2 node {node} starts a parent chain deeper than limits.max_stack_depth "
                                f"({max_depth:,}): cut there, the deeper frames a stack of their own")
        return memo[node]

    def site_stacks(self, site_node: list) -> tuple:
        """(`StackFrames`, frame names) of the sites' trie nodes: frames numbered in the order a walk of
        the sites (each innermost first) meets them, each trie node walked once."""
        from .memray_capture import StackInput, stack_table

        parent = np.array(self.parent, np.int64)
        depth = np.array(self.depth, np.int64)
        node = np.array(site_node, np.int64)
        st = StackInput(self.names, [""] * len(self.names), np.zeros(len(self.names), np.int64),
                        np.array(self.label, np.int64), parent, node, depth[node] if node.size else node)
        frames, names, _, _ = stack_table(st)
        return frames, names
