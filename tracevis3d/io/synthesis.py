"""Synthetic, realistic execution traces, and a "second run" of a trace.

    >>> from tracevis3d.io.synthesis import synthetic_trace, perturb
    >>> a = synthetic_trace(100_000, threads=4, seed=1, sync=True)
    >>> b = perturb(a, seed=2)            # same program, slightly different behaviour

`synthetic_trace` builds a static *program* first (per function, in Python: at most a
few thousand functions), then runs it in a numba kernel (`kernels.synth.generate_calls`,
O(n), no Python object per call):

- a function table of ``n_functions`` names ``pkg.module.Class.method`` (some
  ``pkg.module.function``) laid out in *levels* (a layered architecture: app → service →
  core → util); default ``n_functions = clip(4 * sqrt(n_calls), 8, 1500)``, which gives
  TraceDiff's case study ratio (150k calls, 1.5k functions; Sec. V);
- each function has a fixed list of call sites grouped in *blocks*; a block is a loop
  (repeated ``repeat_prob`` of the time, heavy-tailed loop counts) over its sites, each
  site a callee on a deeper level (a DAG) taken with a fixed probability.  So the same
  function usually expands to the same subtree (repeated subtrees, repeated sibling
  sequences; SEAT Sec. 2.9), with random variation in loop counts and branches;
- callees are drawn Zipf-like within a level (a few utilities are called everywhere),
  fan-out is heavy-tailed (loops), depths are mostly 5-30;
- recursive functions (a self call site, ``recursion=True``): linear recursion of mean
  depth ``recursion_mean`` or binary recursion (two self sites) of at most
  ``binary_recursion_max`` levels; ``deep_recursion=k`` adds one chain of k nested calls
  of ``app.algo.Tree.descend`` at the start of thread 0;
- self times lognormal per function and per call, gaps between siblings; rare outliers
  (``outlier_rate``, default 2e-4 of the calls) whose self time is ``outlier_factor`` =
  100x their function's usual one;
- each thread runs an entry function (``app.__main__.main`` on thread 0,
  ``threading.Thread.run`` on the others) that calls task functions (level 0) until the
  thread's share of ``n_calls`` is used up; the last task is cut short there.  So the
  number of calls is EXACTLY ``n_calls``.
- ``sync=True`` adds wait/release/I/O functions with objects; every wait has a release
  of the same object on another thread starting inside the wait (SyncTrace Sec. IV-B,
  Eqs. 6-7).  With one thread there can be no such release, so no waits are generated
  (I/O calls still are).

`perturb` returns the "second run": sibling subtrees swapped, gaps shifted, subtrees
dropped, subtrees inserted (copies of other subtrees, some under new functions), self
times stretched; what was done is recorded in ``meta["perturb"]``.

Over 600 lines: one topic, the synthetic program model (a call grammar, its sampling and the
perturbations of a second run), kept with its parameter checks.
"""
from __future__ import annotations

import math

import numpy as np

from ..model import CALL_DTYPES, KIND_IO, KIND_OTHER, KIND_RELEASE, KIND_WAIT, Trace

__all__ = ["synthetic_trace", "save_synthetic", "perturb", "SYNC_FUNCTIONS"]

MAX_CALLS = 2**31 - 2  # int32 call indices

# wait function -> (release function, object prefix); then the I/O functions
SYNC_FUNCTIONS = {
    "threading.Lock.acquire": ("threading.Lock.release", "lock"),
    "queue.Queue.get": ("queue.Queue.put", "queue"),
    "threading.Event.wait": ("threading.Event.set", "event"),
    "threading.Condition.wait": ("threading.Condition.notify", "cond"),
}
IO_FUNCTIONS = {
    "io.FileIO.read": "file",
    "io.FileIO.write": "file",
    "socket.socket.recv": "socket",
    "socket.socket.send": "socket",
}
_FILES = ["file:/tmp/x", "file:/var/log/app.log", "file:/data/input.csv", "file:/etc/app.conf",
          "file:/tmp/cache.db", "file:/data/output.bin"]
_SOCKETS = ["socket:10.0.0.2:5432", "socket:127.0.0.1:8080", "socket:10.0.0.7:6379",
            "socket:192.168.1.20:443"]

_VERBS = ("get set load save parse build render update compute validate resolve fetch send "
          "read write init close open apply merge split format encode decode scan visit walk "
          "emit handle dispatch process create find check sort filter map reduce flush "
          "register lookup transform normalize collect evaluate execute schedule commit "
          "prepare reset clear copy match select insert remove").split()
_NOUNS = ("item node token record buffer config request response session cache index frame "
          "layout style entry block page query row field event task job path symbol value "
          "state header chunk batch view model graph edge key schema message packet stream "
          "widget table column user file result").split()
_SUFFIX = ("Manager Builder Parser Handler Store Client Service Visitor Renderer Cache Factory "
           "Reader Writer Scheduler Resolver Validator Engine Pool Index Controller Adapter "
           "Loader Mapper Registry").split()
_PACKAGES = (("app", "cli", "api", "ui"), ("service", "engine", "core", "model"),
             ("util", "storage", "net", "codec", "text"))


# --------------------------------------------------------------------------- helpers
def _check_int(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(v).__name__} {v!r}")
    v = int(v)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be {rng}, got {v}")
    return v


def _check_prob(name, v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in [0, 1], got {v!r}") from None
    if not 0.0 <= v <= 1.0 or math.isnan(v):
        raise ValueError(f"{name} must be in [0, 1], got {v}")
    return v


def _split_sizes(total, weights):
    """Integer sizes >= 1 summing to ``total``, roughly proportional to ``weights``."""
    k = len(weights)
    w = np.asarray(weights, float)
    extra = total - k
    raw = w / w.sum() * extra
    sizes = np.floor(raw).astype(np.int64)
    rem = extra - int(sizes.sum())
    order = np.argsort(-(raw - sizes), kind="stable")
    sizes[order[:rem]] += 1
    return sizes + 1


def _names(prng, level_of, n_levels):
    """``pkg.module.Class.method`` names, files and lines; modules follow the levels."""
    n = len(level_of)
    names, files, lines = [], [], []
    used = set()
    i = 0
    mod_count = 0
    while i < n:
        layer = min(2, int(3 * level_of[i] / max(n_levels, 1)))
        pkg = _PACKAGES[layer][int(prng.integers(len(_PACKAGES[layer])))]
        mod = _NOUNS[int(prng.integers(len(_NOUNS)))]
        if prng.random() < 0.3:
            mod += "_" + _SUFFIX[int(prng.integers(len(_SUFFIX)))].lower()
        mod_count += 1
        mod_len = int(prng.integers(6, 40))
        line = 1
        j_end = min(n, i + mod_len)
        while i < j_end:
            if prng.random() < 0.15:   # module-level functions
                cls = None
                run = int(prng.integers(1, 5))
            else:
                cls = _NOUNS[int(prng.integers(len(_NOUNS)))].capitalize() \
                    + _SUFFIX[int(prng.integers(len(_SUFFIX)))]
                run = int(prng.integers(2, 12))
            for _ in range(min(run, j_end - i)):
                while True:
                    meth = _VERBS[int(prng.integers(len(_VERBS)))]
                    if prng.random() < 0.8:
                        meth += "_" + _NOUNS[int(prng.integers(len(_NOUNS)))]
                    if prng.random() < 0.1:
                        meth = "_" + meth
                    full = f"{pkg}.{mod}.{cls}.{meth}" if cls else f"{pkg}.{mod}.{meth}"
                    if full not in used:
                        break
                    if prng.random() < 0.3:  # crowded: make a sibling module
                        mod += "2"
                used.add(full)
                names.append(full)
                files.append(f"/src/{pkg}/{mod}.py")
                line += int(prng.integers(3, 40))
                lines.append(line)
                i += 1
    return names, files, lines


class _ScalarRng:
    """Scalar draws for the per-function program build (Python's generator: much cheaper
    per scalar than numpy's); same meaning as the numpy Generator methods used before."""

    def __init__(self, seed: int):
        import random

        self._r = random.Random(seed)
        self.random = self._r.random

    def integers(self, a: int, b: int | None = None) -> int:
        return self._r.randrange(a) if b is None else self._r.randrange(a, b)

    def geometric(self, p: float) -> int:
        """Trials up to the first success (>= 1)."""
        u = 1.0 - self._r.random()
        return 1 + int(math.log(u) / math.log(1.0 - p))

    def pareto(self, a: float) -> float:
        """Lomax (Pareto II) like numpy's ``pareto``: ``paretovariate(a) - 1``."""
        return self._r.paretovariate(a) - 1.0

    def uniform(self, a: float, b: float) -> float:
        return self._r.uniform(a, b)


class _Program:
    """The static program: function table and call graph as CSR arrays."""


def _build_program(rng, n_func, n_levels, n_threads, recursion, sync, repeat_prob,
                   task_cap, level_decay, rec_mean, binary_max, recursive_frac,
                   wait_frac, io_frac, deep, coverage=0.75, always_frac=0.3):
    L = n_levels
    level_sizes = _split_sizes(n_func, 1.0 + 0.15 * np.arange(L))
    level_lo = np.concatenate([[0], np.cumsum(level_sizes)])
    level_of = np.repeat(np.arange(L), level_sizes)

    prng = _ScalarRng(int(rng.integers(0, 2**63 - 1)))
    names, files, lines = _names(prng, level_of, L)
    cats = ["function"] * n_func
    kinds = [KIND_OTHER] * n_func
    entry_main = len(names)
    names.append("app.__main__.main"); files.append("/src/app/__main__.py"); lines.append(1)
    cats.append("function"); kinds.append(KIND_OTHER)
    entry_worker = entry_main
    if n_threads > 1:
        entry_worker = len(names)
        names.append("threading.Thread.run"); files.append("threading.py"); lines.append(971)
        cats.append("function"); kinds.append(KIND_OTHER)
    deep_fn = -1
    if deep:
        deep_fn = len(names)
        names.append("app.algo.Tree.descend"); files.append("/src/app/algo.py"); lines.append(42)
        cats.append("function"); kinds.append(KIND_OTHER)

    object_names: list[str] = []
    wait_fns, release_of, wait_objs, io_fns, io_objs = [], {}, [], [], []
    if sync:
        n_obj = {"lock": 3 + n_threads, "queue": 2 + n_threads // 2, "event": 2, "cond": 2}
        for wname, (rname, prefix) in SYNC_FUNCTIONS.items():
            w = len(names)
            names.append(wname); files.append(""); lines.append(-1)
            cats.append("sync"); kinds.append(KIND_WAIT)
            r = len(names)
            names.append(rname); files.append(""); lines.append(-1)
            cats.append("sync"); kinds.append(KIND_RELEASE)
            release_of[w] = r
            ids = []
            for j in range(n_obj[prefix]):
                ids.append(len(object_names))
                object_names.append(f"{prefix}#{j}")
            wait_fns.append(w)
            wait_objs.append(ids)
        pools = {"file": [], "socket": []}
        for nm in _FILES:
            pools["file"].append(len(object_names)); object_names.append(nm)
        for nm in _SOCKETS:
            pools["socket"].append(len(object_names)); object_names.append(nm)
        for iname, prefix in IO_FUNCTIONS.items():
            io_fns.append(len(names))
            names.append(iname); files.append(""); lines.append(-1)
            cats.append("io"); kinds.append(KIND_IO)
            io_objs.append(pools[prefix])
    n_total = len(names)

    # --- call sites, bottom-up so that expected subtree sizes are known
    S = [1.0] * n_total            # expected calls in a subtree of each function
    fn_rec = np.zeros(n_total, np.int8)
    fn_blocks: list[list] = [[] for _ in range(n_total)]   # [reps, [(callee, p, obj)]]
    if deep:
        fn_rec[deep_fn] = 1
        fn_blocks[deep_fn] = [[1.0, [(deep_fn, 1.0, -1)]]]
    rec_mult_lin = 1.0 + rec_mean
    rec_mult_bin = 2.0 ** (binary_max / 2.0 + 1.0) - 1.0

    called = np.zeros(n_total, bool)
    uncalled = [list(range(int(level_lo[lv]), int(level_lo[lv + 1]))) for lv in range(L)]

    def pick_in_level(lv):
        """A callee on level lv: half the time a function nobody calls yet (so that most
        of the table is used), else a log-uniform rank (P(rank r) ~ 1/r: Zipf-like)."""
        un = uncalled[lv]
        while un and called[un[-1]]:
            un.pop()
        if un and prng.random() < coverage:
            j = int(prng.integers(len(un)))
            un[j], un[-1] = un[-1], un[j]
            c = un.pop()
        else:
            size = int(level_sizes[lv])
            r = int(math.exp(prng.random() * math.log(size + 1.0))) - 1
            c = int(level_lo[lv]) + min(max(r, 0), size - 1)
        called[c] = True
        return c

    for lv in range(L - 1, -1, -1):
        leaf_p = 0.08 + 0.55 * (lv / max(L - 1, 1)) ** 2
        cap_l = max(2.0, task_cap * level_decay ** lv)
        for f in range(int(level_lo[lv]), int(level_lo[lv + 1])):
            blocks = []
            if lv < L - 1 and prng.random() >= leaf_p:
                nb = int(prng.geometric(0.55))
                for _ in range(nb):
                    k = min(int(prng.pareto(1.6)) + 1, 10)
                    reps = 1.0
                    if prng.random() < repeat_prob:
                        reps = float(min(2 + int(prng.pareto(1.1) * 3), 500))
                    sites = []
                    for _ in range(k):
                        jump = min(int(prng.geometric(0.55)), L - 1 - lv)
                        callee = pick_in_level(lv + jump)
                        p = 1.0 if prng.random() < always_frac else float(prng.uniform(0.1, 0.9))
                        sites.append((callee, p, -1))
                    blocks.append([reps, sites])
            # expected size and shrinking to the level's cap
            mult = 1.0
            if recursion and blocks and 0 < lv < L - 1 and prng.random() < recursive_frac:
                fn_rec[f] = 2 if prng.random() < 0.25 else 1
                mult = rec_mult_bin if fn_rec[f] == 2 else rec_mult_lin
            cap_f = cap_l / mult

            def size_of(bl):
                return 1.0 + sum(b[0] * sum(p * S[c] for c, p, _ in b[1]) for b in bl)

            s_f = size_of(blocks)
            guard = 0
            while s_f > cap_f and blocks and guard < 1000:
                guard += 1
                contrib = [b[0] * sum(p * S[c] for c, p, _ in b[1]) for b in blocks]
                bi = max(range(len(contrib)), key=contrib.__getitem__)
                b = blocks[bi]
                if b[0] > 1.0:
                    b[0] = max(1.0, math.floor(b[0] / 2.0))
                else:
                    sc = [p * S[c] for c, p, _ in b[1]]
                    si = max(range(len(sc)), key=sc.__getitem__)
                    del b[1][si]
                    if not b[1]:
                        del blocks[bi]
                s_f = size_of(blocks)
            if fn_rec[f] and blocks:
                selfsites = [(f, 1.0, -1)] * (2 if fn_rec[f] == 2 else 1)
                blocks.insert(int(prng.integers(len(blocks) + 1)), [1.0, selfsites])
            elif fn_rec[f]:
                fn_rec[f] = 0
                mult = 1.0
            if sync and lv > 0:
                if wait_fns and prng.random() < wait_frac:
                    j = int(prng.integers(len(wait_fns)))
                    o = wait_objs[j][int(prng.integers(len(wait_objs[j])))]
                    blocks.insert(int(prng.integers(len(blocks) + 1)), [1.0, [(wait_fns[j], 0.3, o)]])
                if io_fns and prng.random() < io_frac:
                    j = int(prng.integers(len(io_fns)))
                    o = io_objs[j][int(prng.integers(len(io_objs[j])))]
                    reps = float(prng.integers(1, 6))
                    blocks.insert(int(prng.integers(len(blocks) + 1)), [reps, [(io_fns[j], 0.4, o)]])
            S[f] = s_f * mult
            fn_blocks[f] = blocks

    # --- CSR arrays
    fn_block_ptr = np.zeros(n_total + 1, np.int32)
    block_site_ptr = [0]
    block_reps, site_callee, site_prob, site_obj = [], [], [], []
    for f in range(n_total):
        for reps, sites in fn_blocks[f]:
            block_reps.append(reps)
            for c, p, o in sites:
                site_callee.append(c); site_prob.append(p); site_obj.append(o)
            block_site_ptr.append(len(site_callee))
        fn_block_ptr[f + 1] = len(block_reps)
    n_sites = np.diff(np.asarray(block_site_ptr, np.int64))
    n_blocks = np.diff(fn_block_ptr.astype(np.int64))
    block_owner = np.repeat(np.arange(n_total, dtype=np.int32), n_blocks)
    prog = _Program()
    prog.site_caller = np.repeat(block_owner, n_sites).astype(np.int32)
    prog.names, prog.files, prog.lines, prog.cats = names, files, lines, cats
    prog.fn_kind = np.asarray(kinds, np.uint8)
    prog.fn_rec = fn_rec
    prog.fn_block_ptr = fn_block_ptr
    prog.block_site_ptr = np.asarray(block_site_ptr, np.int32)
    prog.block_reps = np.asarray(block_reps, np.float64)
    prog.site_callee = np.asarray(site_callee, np.int32)
    prog.site_prob = np.asarray(site_prob, np.float64)
    prog.site_obj = np.asarray(site_obj, np.int32)
    prog.release_fn_of = np.full(n_total, -1, np.int32)
    for w, r in release_of.items():
        prog.release_fn_of[w] = r
    # self time medians (µs): lognormal across functions; sync/io leaves set in the kernel
    mu = rng.normal(math.log(2.0), 1.0, n_total)
    mu[entry_main] = math.log(30.0)
    mu[entry_worker] = math.log(30.0)
    prog.fn_self_mu = mu
    tasks = np.arange(int(level_lo[0]), int(level_lo[1]), dtype=np.int32)
    w = 1.0 / np.arange(1, len(tasks) + 1)
    prog.task_ids = tasks
    prog.task_cdf = np.cumsum(w) / w.sum()
    prog.task_cdf[-1] = 1.0
    prog.entry_main, prog.entry_worker, prog.deep_fn = entry_main, entry_worker, deep_fn
    prog.object_names = object_names
    prog.expected_size = np.asarray(S)
    prog.level_of = level_of
    return prog


# --------------------------------------------------------------------------- generator
def synthetic_trace(n_calls: int, threads: int = 1, seed: int = 0, n_functions: int | None = None,
                    max_depth: int | None = None, recursion: bool = True, sync: bool = False,
                    outliers: bool = True, repeat_prob: float = 0.35, *,
                    deep_recursion: int = 0, n_levels: int | None = None,
                    task_size: float | None = None, level_decay: float = 0.7,
                    recursion_mean: float = 4.0, recursion_max: int = 60,
                    binary_recursion_max: int = 5, recursive_frac: float = 0.05,
                    outlier_rate: float = 2e-4, outlier_factor: float = 100.0,
                    wait_frac: float = 0.03, io_frac: float = 0.03, out: dict | None = None) -> Trace:
    """A synthetic trace of exactly ``n_calls`` calls on ``threads`` threads.

    n_functions: size of the static function table (default clip(4 sqrt(n), 8, 1500);
        at most 100 000: the program is built per function in Python, ~50 µs each).
    max_depth: no call deeper than this (root depth 0); the deep_recursion chain is exempt.
        Default: 200 (levels ~24 keep the usual depths at 5-30).
    recursion: recursive functions (``recursive_frac`` of inner functions; linear with
        mean ``recursion_mean`` levels up to ``recursion_max``, or binary up to
        ``binary_recursion_max`` levels).
    sync: wait/release/I/O calls with objects (``wait_frac``/``io_frac`` of the functions
        have such a call site); each wait has a release on another thread (threads >= 2).
    outliers: ``outlier_rate`` of the calls get ``outlier_factor`` x their self time.
    repeat_prob: probability that a block of call sites is a loop.
    deep_recursion: length of one chain of nested ``app.algo.Tree.descend`` calls at the
        start of thread 0 (0 = none); needs ``n_calls >= deep_recursion + threads``.
    task_size: target expected size of a task's subtree (default from n_calls/threads);
        deeper levels get ``task_size * level_decay**level``.

    out: where the per-call arrays are written (like numpy's ``out=``): a dict of 1-D
        arrays of the model's dtypes, ``func start end parent depth end_index kind thread``
        of ``n_calls`` entries and ``obj_ptr`` of ``n_calls + 1``, e.g. a file's mapped
        members (`save_synthetic`); the Trace holds them.  Default: new arrays.  Either
        way the calls are the same, and the memory used besides them is bounded (a
        stack per thread, chunks of ``obj_ptr``, the lists of objects, outliers and pairs).

    meta: ``source`` (the call), ``seed``, ``outliers`` (call indices),
    ``sync_pairs`` ((k, 2) int64: wait call, release call), ``deep_chain`` ((root, length)
    or None), ``program`` (levels, recursive function ids, task function ids).
    """
    n_calls = _check_int("n_calls", n_calls, 1, MAX_CALLS)
    threads = _check_int("threads", threads, 1, 4096)
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    if n_calls < threads:
        raise ValueError(f"n_calls ({n_calls}) must be >= threads ({threads}): each thread needs a call")
    deep_recursion = _check_int("deep_recursion", deep_recursion, 0, MAX_CALLS)
    if deep_recursion and n_calls < deep_recursion + threads:
        raise ValueError(f"deep_recursion={deep_recursion} needs n_calls >= deep_recursion + threads "
                         f"= {deep_recursion + threads}, got {n_calls}")
    if n_functions is None:
        n_functions = int(min(1500, max(8, round(4.0 * math.sqrt(n_calls)))))
    n_functions = _check_int("n_functions", n_functions, 1, 100_000)  # built per function in Python
    depth_cap = 200 if max_depth is None else _check_int("max_depth", max_depth, 1, 10_000_000)
    if n_levels is None:
        n_levels = min(24, max(1, depth_cap - 1))
    n_levels = _check_int("n_levels", n_levels, 1, 100_000)
    n_levels = min(n_levels, n_functions)
    repeat_prob = _check_prob("repeat_prob", repeat_prob)
    recursive_frac = _check_prob("recursive_frac", recursive_frac)
    wait_frac = _check_prob("wait_frac", wait_frac)
    io_frac = _check_prob("io_frac", io_frac)
    outlier_rate = _check_prob("outlier_rate", outlier_rate) if outliers else 0.0
    level_decay = _check_prob("level_decay", level_decay)
    recursion_max = _check_int("recursion_max", recursion_max, 0)
    binary_recursion_max = _check_int("binary_recursion_max", binary_recursion_max, 0, 20)
    for nm, v in (("recursion_mean", recursion_mean), ("outlier_factor", outlier_factor)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{nm} must be a finite number >= 0, got {v!r}")

    rng = np.random.default_rng(seed)
    # thread budgets: thread 0 (main) takes a larger share
    weights = np.concatenate([[1.5], rng.lognormal(0.0, 0.35, threads - 1)])
    budgets = _split_sizes(n_calls, weights)
    if deep_recursion and budgets[0] < deep_recursion + 1:
        rest = _split_sizes(n_calls - deep_recursion - 1, weights[1:]) if threads > 1 else np.zeros(0, np.int64)
        budgets = np.concatenate([[deep_recursion + 1], rest]).astype(np.int64)
    per_thread = n_calls / threads
    if task_size is None:
        task_size = float(min(20_000.0, max(10.0, per_thread / 40.0)))
    if not (isinstance(task_size, (int, float, np.integer, np.floating)) and task_size >= 1):
        raise ValueError(f"task_size must be a number >= 1, got {task_size!r}")

    prog = _build_program(rng, n_functions, n_levels, threads, recursion, sync, repeat_prob,
                          float(task_size), level_decay, float(recursion_mean), binary_recursion_max,
                          recursive_frac, wait_frac, io_frac, deep_recursion > 0)
    thread_t0 = np.zeros(threads)
    if threads > 1:
        thread_t0[1:] = np.cumsum(rng.uniform(20.0, 400.0, threads - 1))
    entry = np.full(threads, prog.entry_worker, np.int32)
    entry[0] = prog.entry_main

    from ..kernels.synth import generate_calls

    arrays = _call_arrays(n_calls, out)
    kseed = int(rng.integers(0, 2**31 - 1))
    obj_call, obj_id, outlier_call, pair_wait, pair_rel = generate_calls(
        *(arrays[k] for k in ("func", "start", "end", "parent", "depth", "end_index", "kind")),
        kseed, budgets.astype(np.int64), thread_t0, entry, bool(sync and threads > 1),
        prog.fn_block_ptr, prog.block_site_ptr, prog.block_reps,
        prog.site_callee, prog.site_prob, prog.site_obj,
        prog.fn_kind, prog.fn_rec, prog.fn_self_mu, prog.release_fn_of,
        prog.task_ids, prog.task_cdf,
        0.45, 0.6, float(outlier_rate), float(outlier_factor),
        float(recursion_mean), int(recursion_max), int(binary_recursion_max), int(depth_cap),
        int(prog.deep_fn), int(deep_recursion), 40.0, 5.0, 1.0)

    order = np.argsort(obj_call, kind="stable")  # emission order: threads interleave
    obj_call, obj_ids = obj_call[order], obj_id[order]
    _fill_obj_ptr(arrays["obj_ptr"], obj_call)
    del order, obj_id
    bounds = np.concatenate([[0], np.cumsum(budgets)])
    for t in range(threads):
        arrays["thread"][bounds[t]:bounds[t + 1]] = t
    func, start, end, parent, depth, end_index, kind, thread, obj_ptr = (arrays[k] for k in (
        "func", "start", "end", "parent", "depth", "end_index", "kind", "thread", "obj_ptr"))
    thread_names = ["MainThread"] + [f"Thread-{t} (worker)" for t in range(1, threads)]
    params = dict(n_calls=n_calls, threads=threads, seed=seed, n_functions=n_functions,
                  max_depth=max_depth, recursion=recursion, sync=sync, outliers=outliers,
                  repeat_prob=repeat_prob, deep_recursion=deep_recursion)
    from ..names import parse_function_name

    meta = {
        "source": "synthetic(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")",
        "format": "synthetic",
        "units": "us",
        "clock_origin": 0.0,
        "seed": seed,
        "params": params,
        "outliers": np.sort(outlier_call),
        "sync_pairs": np.stack([pair_wait, pair_rel], axis=1).astype(np.int64),
        "deep_chain": (1, deep_recursion) if deep_recursion else None,
        "program": {
            "n_levels": n_levels,
            "task_size": float(task_size),
            "task_functions": prog.task_ids,
            "recursive_functions": np.flatnonzero(prog.fn_rec).astype(np.int32),
            "budgets": budgets.astype(np.int64),
            "entry_functions": np.unique(entry),
            # static call graph: (caller, callee) of every call site (releases are extra:
            # a thread emits the release it owes under whatever call it is in)
            "call_graph": np.unique(np.stack([prog.site_caller, prog.site_callee], axis=1), axis=0)
            if len(prog.site_callee) else np.zeros((0, 2), np.int32),
        },
    }
    return Trace(
        func=func, start=start, end=end, depth=depth, parent=parent, end_index=end_index,
        thread=thread, kind=kind, obj_ptr=obj_ptr, obj_ids=obj_ids,
        function_names=prog.names, function_files=prog.files,
        function_lines=np.asarray(prog.lines, np.int32), function_cats=prog.cats,
        function_paths=[parse_function_name(s).path for s in prog.names],
        thread_pid=np.full(threads, 4242, np.int64),
        thread_tid=np.arange(4242, 4242 + threads, dtype=np.int64),
        thread_names=thread_names,
        thread_sort=np.arange(threads, dtype=np.int32),
        process_names=["python app"] * threads,
        object_names=prog.object_names,
        meta=meta,
    )


def save_synthetic(path, n_calls: int, threads: int = 1, seed: int = 0, **options) -> None:
    """Write ``synthetic_trace(n_calls, threads, seed, **options)`` to the native file
    ``path`` (``*.tv3d.npz``), its calls generated straight into the file's mapped pages
    (``out=``, `io.native.save_native_in_place`): a trace larger than the memory can be
    made (10^8 calls: 4.5 GB of file, about 0.1 GB of the process's own memory).  The
    file holds the same trace as ``save(synthetic_trace(...), path)``."""
    from .native import save_native_in_place

    n_calls = _check_int("n_calls", n_calls, 1, MAX_CALLS)
    if "out" in options:
        raise TypeError("save_synthetic writes the calls into the file: no out=")
    save_native_in_place(path, n_calls, lambda arrays: synthetic_trace(n_calls, threads, seed, out=arrays, **options))


_OUT_DTYPES = {**CALL_DTYPES, "obj_ptr": np.int64}  # what ``out=`` holds, in this order


def _call_arrays(n_calls: int, out: dict | None) -> dict:
    """The per-call arrays ``synthetic_trace`` writes: new ones, or ``out``'s checked."""
    if out is None:
        return {k: np.empty(n_calls + (k == "obj_ptr"), dt) for k, dt in _OUT_DTYPES.items()}
    if not isinstance(out, dict) or set(out) != set(_OUT_DTYPES):
        raise ValueError(f"out must be a dict of the arrays {', '.join(_OUT_DTYPES)}")
    for k, dt in _OUT_DTYPES.items():
        a, n = out[k], n_calls + (k == "obj_ptr")
        if not (isinstance(a, np.ndarray) and a.dtype == dt and a.shape == (n,) and a.flags.c_contiguous
                and a.flags.writeable):
            raise ValueError(f"out[{k!r}] must be a writable contiguous {np.dtype(dt)} array of {n} entries")
    return out


def _fill_obj_ptr(obj_ptr: np.ndarray, obj_call: np.ndarray, chunk: int = 1 << 18) -> None:
    """``obj_ptr`` of calls that have one object each, ``obj_call`` (sorted): entry i is the
    number of them before call i.  Written in chunks: memory bounded whatever its length."""
    for a in range(0, obj_ptr.shape[0], chunk):
        b = min(a + chunk, obj_ptr.shape[0])
        obj_ptr[a:b] = np.searchsorted(obj_call, np.arange(a, b, dtype=np.int64), side="left")


# --------------------------------------------------------------------------- second run
def perturb(trace: Trace, seed: int = 0, reorder: float = 0.05, shift: float = 0.05,
            drop: float = 0.02, insert: float = 0.02, stretch: float = 0.1, *,
            new_functions: float = 0.25, max_subtree: int = 50, speed: float = 1.0) -> Trace:
    """The "second run" of ``trace``: the same program, slightly different behaviour.

    Each rate is the probability, per call, that the call is the subject of that change
    (decisions in one pre-order pass, `kernels.synth.perturb_plan`):
      reorder: swap the call's subtree with its next sibling's;
      shift:   add a signed lognormal amount (scale: half its duration + 1 µs) to the gap
               before the call; everything after it on its thread moves;
      drop:    leave the call's subtree out (not roots, subtrees of <= max_subtree calls);
      insert:  put a copy of a random subtree of the same thread (<= max_subtree calls)
               before the call; a ``new_functions`` share of them under a new function
               (appended to the function table, named after the copied function);
      stretch: multiply the call's self time (gaps between its children, tail) by a
               factor in [1.3, 3] (20 %: its inverse).
    speed: all times (calls and instants) multiplied by this factor at the end (TraceDiff's
      case study: the second run took about 3x as long); 1.0 keeps the time scale.
    Function, thread and object ids are shared with ``trace``.  Works on any valid trace.

    ``meta["perturb"]`` records what was done: ``origin`` (int32 per output call: the
    original call it is, -1 if inserted), ``dropped`` (original subtree roots),
    ``dropped_calls``, ``moved`` ((k, 2) original calls swapped: each pair's first one
    now runs after the second), ``shifted``, ``stretched`` (original calls),
    ``inserted`` (output subtree roots), ``inserted_calls``, ``new_functions`` (ids),
    and ``counts``.  ``outliers`` / ``sync_pairs`` of a synthetic trace are re-indexed
    (pairs with a dropped end are removed); shifted times may break a pair's
    correspondence condition, so sync pairs are not guaranteed in the second run.
    Flows and args follow their calls; instants are kept unchanged.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"perturb needs a Trace, got {type(trace).__name__}")
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    rates = {nm: _check_prob(nm, v) for nm, v in (("reorder", reorder), ("shift", shift), ("drop", drop),
                                                 ("insert", insert), ("stretch", stretch),
                                                 ("new_functions", new_functions))}
    max_subtree = _check_int("max_subtree", max_subtree, 1)
    try:
        speed = float(speed)
    except (TypeError, ValueError):
        raise TypeError(f"speed must be a positive number, got {speed!r}") from None
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"speed must be a finite number > 0, got {speed}")
    n = len(trace)
    rng = np.random.default_rng(seed)
    ranges = trace.thread_ranges()
    lo = np.ascontiguousarray(ranges[:, 0])
    hi = np.ascontiguousarray(ranges[:, 1])
    from ..kernels.synth import perturb_apply, perturb_plan

    flags, partner, donor, shift_amt, stretch_fac, n_out = perturb_plan(
        int(rng.integers(0, 2**31 - 1)), trace.parent, trace.end_index, trace.start, trace.end,
        lo, hi, rates["reorder"], rates["shift"], rates["drop"], rates["insert"], rates["stretch"],
        rates["new_functions"], max_subtree)
    if int(n_out.sum()) > MAX_CALLS:
        raise ValueError(f"perturbed trace would have {int(n_out.sum())} calls, more than {MAX_CALLS}")
    nf = trace.n_functions
    (func, start, end, parent, depth, end_index, origin, source, inserted_root,
     wrap_donor) = perturb_apply(trace.func, trace.start, trace.end, trace.parent, trace.depth,
                                 trace.end_index, lo, hi, flags, partner, donor, shift_amt,
                                 stretch_fac, n_out, nf)
    m = len(func)
    instant_ts = trace.instant_ts.copy()
    if speed != 1.0:
        start *= speed
        end *= speed
        instant_ts *= speed
    # function table, extended by the new functions
    from ..names import parse_function_name

    names = list(trace.function_names)
    files = list(trace.function_files)
    cats = list(trace.function_cats)
    paths = list(trace.function_paths)
    lines = trace.function_lines
    if len(wrap_donor):
        taken = set(names)
        for k, fd in enumerate(wrap_donor.tolist()):
            p = paths[fd] if fd < len(paths) else ()
            prefix = ".".join(p[:-1]) if len(p) >= 2 else "added"
            nm = f"{prefix}.added_{k}"
            while nm in taken:
                nm += "_"
            taken.add(nm)
            names.append(nm)
            files.append("")
            cats.append("added")
            paths.append(parse_function_name(nm).path)
        lines = np.concatenate([lines, np.full(len(wrap_donor), -1, np.int32)])
    # per-call tables that follow the source call
    has_src = source >= 0
    src = np.where(has_src, source, 0)
    kind = np.where(has_src, trace.kind[src], KIND_OTHER).astype(np.uint8) if n else np.zeros(m, np.uint8)
    cnt = (trace.obj_ptr[1:] - trace.obj_ptr[:-1])
    out_cnt = np.where(has_src, cnt[src], 0) if n else np.zeros(m, np.int64)
    obj_ptr = np.zeros(m + 1, np.int64)
    np.cumsum(out_cnt, out=obj_ptr[1:])
    from ..model import csr_gather

    obj_ids = trace.obj_ids[csr_gather(trace.obj_ptr, src[out_cnt > 0])].astype(np.int32)
    thread = np.repeat(np.arange(trace.n_threads, dtype=np.int32), n_out)
    # where each original call went (-1: dropped)
    newpos = np.full(n, -1, np.int64)
    kept = origin >= 0
    newpos[origin[kept]] = np.flatnonzero(kept)
    # flows, args
    f_ok = np.zeros(len(trace.flow_id), bool)
    if len(trace.flow_id):
        f_ok = (newpos[trace.flow_from] >= 0) & (newpos[trace.flow_to] >= 0)
    a_new = newpos[trace.args_call] if len(trace.args_call) else np.zeros(0, np.int64)
    a_keep = np.flatnonzero(a_new >= 0)
    a_keep = a_keep[np.argsort(a_new[a_keep], kind="stable")]
    a_cnt = (trace.args_ptr[1:] - trace.args_ptr[:-1])[a_keep]
    args_ptr = np.zeros(len(a_keep) + 1, np.int64)
    np.cumsum(a_cnt, out=args_ptr[1:])
    args_blob = trace.args_blob[csr_gather(trace.args_ptr, a_keep)]

    dropped = np.flatnonzero(flags & 1).astype(np.int64)
    firsts = np.flatnonzero(partner >= 0)
    firsts = firsts[newpos[firsts] >= 0]
    moved = np.stack([firsts, partner[firsts]], axis=1).astype(np.int64)
    shifted = np.flatnonzero(shift_amt != 0.0)
    shifted = shifted[newpos[shifted] >= 0].astype(np.int64)
    stretched = np.flatnonzero(stretch_fac != 1.0)
    stretched = stretched[newpos[stretched] >= 0].astype(np.int64)
    inserted = np.flatnonzero(inserted_root).astype(np.int64)
    dropped_calls = int(n - kept.sum())
    new_fn_ids = np.arange(nf, nf + len(wrap_donor), dtype=np.int32)
    info = {
        "seed": seed, **rates, "max_subtree": max_subtree, "speed": speed,
        "origin": origin, "dropped": dropped, "dropped_calls": dropped_calls, "moved": moved,
        "shifted": shifted, "stretched": stretched, "inserted": inserted,
        "inserted_calls": int(m - kept.sum()), "new_functions": new_fn_ids,
        "counts": {"dropped": len(dropped), "dropped_calls": dropped_calls, "moved": len(moved),
                   "shifted": len(shifted), "stretched": len(stretched), "inserted": len(inserted),
                   "inserted_calls": int(m - kept.sum()), "new_functions": len(new_fn_ids)},
    }
    meta = dict(trace.meta)
    meta["source"] = (f"perturb({trace.meta.get('source', '?')}, seed={seed}, "
                      + ", ".join(f"{k}={v}" for k, v in rates.items()) + f", max_subtree={max_subtree}, speed={speed})")
    meta["perturb"] = info
    if isinstance(meta.get("outliers"), np.ndarray):
        o = newpos[meta["outliers"]]
        meta["outliers"] = o[o >= 0]
    sp = meta.get("sync_pairs")
    if isinstance(sp, np.ndarray) and sp.ndim == 2 and sp.shape[1] == 2:
        q = newpos[sp] if len(sp) else sp
        meta["sync_pairs"] = q[(q >= 0).all(axis=1)] if len(sp) else sp
    meta.pop("deep_chain", None)
    return Trace(
        func=func, start=start, end=end, depth=depth, parent=parent, end_index=end_index,
        thread=thread, kind=kind, obj_ptr=obj_ptr, obj_ids=obj_ids,
        function_names=names, function_files=files, function_lines=lines, function_cats=cats,
        function_paths=paths,
        thread_pid=trace.thread_pid.copy(), thread_tid=trace.thread_tid.copy(),
        thread_names=list(trace.thread_names), thread_sort=trace.thread_sort.copy(),
        process_names=list(trace.process_names), object_names=list(trace.object_names),
        instant_ts=instant_ts, instant_name=trace.instant_name.copy(),
        instant_thread=trace.instant_thread.copy(), instant_scope=trace.instant_scope.copy(),
        instant_pid=trace.instant_pid.copy(), instant_names=list(trace.instant_names),
        flow_id=trace.flow_id[f_ok], flow_from=newpos[trace.flow_from[f_ok]].astype(np.int32),
        flow_to=newpos[trace.flow_to[f_ok]].astype(np.int32), flow_cat=trace.flow_cat[f_ok],
        flow_cat_names=list(trace.flow_cat_names),
        args_call=a_new[a_keep].astype(np.int32), args_ptr=args_ptr, args_blob=args_blob,
        meta=meta, **trace.side_tracks(),
    )
