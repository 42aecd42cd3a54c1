#!/usr/bin/env python3
"""Pre-built numba kernel caches: the one place that makes them, for the extension zip
(tools/build_extension.py) and the wheel (tools/build_wheel.py) alike.

    python tools/kernel_caches.py STAGE_ROOT        # into STAGE_ROOT/tracevis3d/_kernel_cache/<tag>/
    python tools/kernel_caches.py --seed CACHE_DIR  # into the tests' numba cache (make test)

For every usable interpreter (below) the staged core's first-use kernels are compiled for the
generic x86-64 CPU (``python -m tracevis3d.warmup --part N``, its four parts two at a time, with
``NUMBA_CPU_NAME=generic``, each in its own cache, merged: `_compile`) and exported by `tracevis3d.kernel_cache.export_cache` into
``tracevis3d/_kernel_cache/<tag>/`` (tag: ``py3.11-numba0.68.1-x86_64``), and likewise for each
x86-64 level of `tracevis3d.kernel_cache.CPU_LEVELS` into ``<tag>/<level>/`` (``x86-64-v3``:
AVX2; ``x86-64-v4``: AVX-512); at run time `tracevis3d.kernel_cache.install_shipped` relocates
the folder matching the running Python, at the highest level its CPU runs, into the user's
cache.  Which CPUs a build compiles for: ``$TRACEVIS3D_KERNEL_CPUS`` (names separated by commas;
default every one, `CPUS`); the test run (scripts/test.sh) builds the generic ones only, which
its tests read: each level is another full compile (~4 min on two cores).  Results are kept in
``build/kernel-cache/<sources hash>[-<level>]/``, so an unchanged core is not compiled again.

Interpreters: this one, ``$TRACEVIS3D_KERNEL_PYTHONS`` (paths separated by ``os.pathsep``) and
``.venv313/bin/python`` (made by ``make test`` for the bpy 5.2 smoke test), each used when it
is CPython 3.11-3.13 on linux x86-64 with numba importable; one per Python version.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL_CACHE = REPO / "build" / "kernel-cache"
SHIPPED_DIRNAME = "_kernel_cache"  # = tracevis3d.kernel_cache.SHIPPED_DIRNAME
#: Python versions whose kernels can ship (requires-python of pyproject.toml)
PYTHONS = ((3, 11), (3, 12), (3, 13))


def _runtime_kernel_cache():
    """``tracevis3d/kernel_cache.py`` of this checkout (standard library only at import), loaded
    by its path: numba's cache folder names are its `cache_subdir`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tv3d_kernel_cache", REPO / "tracevis3d" / "kernel_cache.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: the CPUs a build can compile the kernels for: the generic x86-64 one (always shipped), then the
#: x86-64 levels (`tracevis3d.kernel_cache.CPUS`)
_LEVELS = _runtime_kernel_cache()
GENERIC, CPUS = _LEVELS.GENERIC_CPU, _LEVELS.CPUS


def host_level(python: str = sys.executable) -> str:
    """The highest CPU of `CPUS` this machine runs (`tracevis3d.kernel_cache.host_cpu_level`, in
    a child: it imports numba), generic when that cannot be told."""
    r = subprocess.run([python, "-c", "from tracevis3d.kernel_cache import host_cpu_level; print(host_cpu_level())"],
                       env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=300)
    level = (r.stdout.strip().splitlines() or [GENERIC])[-1]
    return level if r.returncode == 0 and level in CPUS else GENERIC


def build_cpus() -> tuple[str, ...]:
    """The CPUs this build compiles for: ``$TRACEVIS3D_KERNEL_CPUS`` (comma-separated names of
    `CPUS`; the generic one is always among them, first), default all of `CPUS`."""
    raw = os.environ.get("TRACEVIS3D_KERNEL_CPUS", "").strip()
    if not raw:
        return CPUS
    asked = [c.strip() for c in raw.split(",") if c.strip()]
    unknown = [c for c in asked if c not in CPUS]
    if unknown:
        raise KernelCacheError(f"TRACEVIS3D_KERNEL_CPUS: unknown CPU {', '.join(unknown)} (known: {', '.join(CPUS)})")
    return tuple(c for c in CPUS if c == GENERIC or c in asked)

_PROBE = ("import json, platform, sys, importlib.util, importlib.metadata as m; "
          "ok = importlib.util.find_spec('numba') is not None and importlib.util.find_spec('numpy') is not None; "
          "print(json.dumps({'python': list(sys.version_info[:2]), 'impl': sys.implementation.name, "
          "'platform': sys.platform, 'machine': platform.machine().lower(), "
          "'numba': m.version('numba') if ok else None}))")


class KernelCacheError(Exception):
    pass


def probe(python: str) -> dict | None:
    """What ``python`` is (version, platform, numba), or None when it does not run."""
    try:
        r = subprocess.run([python, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def interpreters() -> list[tuple[str, dict]]:
    """The interpreters that can make shippable caches here, one per Python version."""
    cands = [sys.executable]
    cands += [p for p in os.environ.get("TRACEVIS3D_KERNEL_PYTHONS", "").split(os.pathsep) if p]
    cands.append(str(REPO / ".venv313" / "bin" / "python"))
    out, seen = [], set()
    for py in cands:
        if not os.path.exists(py):
            continue
        info = probe(py)
        if (info is None or info["impl"] != "cpython" or info["platform"] != "linux"
                or info["machine"] not in ("x86_64", "amd64") or not info["numba"]
                or tuple(info["python"]) not in PYTHONS or tuple(info["python"]) in seen):
            continue
        seen.add(tuple(info["python"]))
        out.append((py, info))
    return out


def sources_digest(core: Path, info: dict) -> str:
    """sha256 over the core's kernel sources (the .py files numba caches: they use ``njit``;
    path and content), the warm-up, and the Python and numba versions."""
    h = hashlib.sha256(f"py{info['python']} numba {info['numba']} {info['machine']}".encode())
    for f in sorted(core.rglob("*.py")):
        if SHIPPED_DIRNAME in f.parts:
            continue
        text = f.read_bytes()
        if re.search(rb"(?m)^\s*@(numba\.|nb\.)?n?jit\b", text) or f.name == "warmup.py":
            h.update(str(f.relative_to(core)).encode() + b"\0" + text)
    return h.hexdigest()[:20]


def _read_index(path: Path) -> tuple:
    """A numba cache index (.nbi): (numba version, source stamp, {key: data file name})."""
    with open(path, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    return version, stamp, overloads


def merge_cache(dest: Path, src: Path) -> int:
    """Add the entries of numba cache folder ``src`` to ``dest`` (each made by its own process
    over the same sources: `_compile`'s parts).  An index only ``src`` has is copied with its
    data files; one both have gets ``src``'s keys that ``dest`` lacks, each data file copied
    under the first number the index does not use (numba's own naming,
    ``<function>.<n>.nbc``), so no entry of either is lost or overwritten.  Returns the
    entries added."""
    added = 0
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        out = dest / folder.name
        out.mkdir(parents=True, exist_ok=True)
        for index in sorted(folder.glob("*.nbi")):
            base = index.name[: -len(".nbi")]
            version, stamp, theirs = _read_index(index)
            target = out / index.name
            mine = {}
            if target.exists():
                v2, stamp2, mine = _read_index(target)
                if (v2, stamp2) != (version, stamp):
                    raise KernelCacheError(f"cannot merge {index}: made from other sources than {target}")
            used = set(mine.values())
            n = 0
            for key, data in theirs.items():
                if key in mine:
                    continue
                n += 1
                while f"{base}.{n}.nbc" in used:
                    n += 1
                name = f"{base}.{n}.nbc"
                shutil.copyfile(folder / data, out / name)
                mine[key] = name
                used.add(name)
                added += 1
            tmp = target.with_suffix(".nbi.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(version, f, protocol=-1)
                f.write(pickle.dumps((stamp, mine), protocol=4))
            os.replace(tmp, target)
    return added


#: the warm-up's parts (`tracevis3d.warmup.PARTS`) as `_compile` runs them, two at a time:
#: (part, the part whose finished cache it starts from, or None: an empty one)
JOBS = ((1, None), (2, None), (3, 1), (4, 1))
SLOTS = 2


def _compile(python: str, stage_root: Path, out: Path, cpu: str = GENERIC) -> None:
    """Warm-up for the CPU ``cpu`` (`CPUS`) in empty caches, exported into ``out``: the warm-up's parts
    (`JOBS`, `tracevis3d.warmup.PARTS`) in processes two at a time, each with its own cache, all
    merged into the first's (`merge_cache`).  Part 1 compiles the loads of the made-up traces
    alone, beside part 2 (the formats, which need no traces); parts 3 (compare) and 4 (the
    views) start from a copy of part 1's cache, so they load its kernels instead of compiling
    them again.  On two cores ~245 s (1 then 3) beside ~145 s (2 then 4) of CPU from nothing,
    quiet (each part's CPU seconds and steps in ``<out>.log``)."""
    core = stage_root / "tracevis3d"
    with tempfile.TemporaryDirectory(prefix="tv3d-kernels-") as tmp:
        caches = {part: Path(tmp) / f"part{part}" for part, _ in JOBS}
        pending, running, done, report, t0 = list(JOBS), {}, set(), [], time.perf_counter()
        try:
            while pending or running:
                while len(running) < SLOTS:
                    job = next((j for j in pending if j[1] is None or j[1] in done), None)
                    if job is None:
                        break
                    pending.remove(job)
                    proc = _start_part(python, stage_root, job, caches, Path(tmp), cpu)
                    running[proc[0].pid] = (job[0], *proc)
                pid, status, usage = os.wait4(-1, 0)  # the part's own CPU seconds
                if pid not in running:
                    continue
                part, proc, log = running.pop(pid)
                proc.returncode = os.waitstatus_to_exitcode(status)
                log.seek(0)
                report.append(f"part {part}: ended at {time.perf_counter() - t0:.0f} s wall, "
                              f"{usage.ru_utime + usage.ru_stime:.0f} s CPU")
                report += log.read().strip().splitlines()
                log.close()
                if proc.returncode != 0:
                    raise KernelCacheError(f"pre-building the kernels with {python} failed: {report[-1]}")
                done.add(part)
        finally:
            for _, proc, log in running.values():
                proc.kill()
                proc.wait()
                log.close()
        _write_whole(Path(str(out) + ".log"), f"{python}\n" + "\n".join(report) + "\n")
        first = caches[JOBS[0][0]]
        for part, _ in JOBS[1:]:
            merge_cache(first, caches[part])
        env = dict(os.environ, PYTHONPATH=str(stage_root))
        r = subprocess.run([python, "-c", "import sys; from tracevis3d.kernel_cache import export_cache; "
                                          "export_cache(sys.argv[1], sys.argv[2], sys.argv[3], cpu=sys.argv[4])",
                            str(first), str(core), str(out) + ".tmp", cpu], env=env, cwd=str(stage_root),
                           capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["failed"])[-1]
            raise KernelCacheError(f"exporting the pre-built kernels of {python} failed: {last}")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(str(out) + ".tmp", out)


def _start_part(python: str, stage_root: Path, job: tuple, caches: dict, tmp: Path, cpu: str = GENERIC):
    """Start ``python -m tracevis3d.warmup --part N`` for `JOBS` entry ``job`` in its own cache
    (a copy of its base part's, or empty), compiling for ``cpu`` (LLVM's CPU name, no features
    beyond the ones it implies): (the process, its log file)."""
    part, base = job
    if base is not None and caches[base].is_dir():
        shutil.copytree(caches[base], caches[part])
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="", NUMBA_CACHE_DIR=str(caches[part]),
               PYTHONPATH=str(stage_root))
    log = open(tmp / f"part{part}.log", "w+")
    proc = subprocess.Popen([python, "-m", "tracevis3d.warmup", "--part", str(part)], env=env, cwd=str(stage_root),
                            stdout=log, stderr=subprocess.STDOUT)
    return proc, log


def prebuild(stage_root: Path, pythons: list[tuple[str, dict]] | None = None) -> str:
    """Put the generic-CPU kernel caches of every usable interpreter into the staged core
    (``stage_root/tracevis3d/_kernel_cache/<tag>/``); a one-line summary."""
    core = Path(stage_root) / "tracevis3d"
    pythons = interpreters() if pythons is None else pythons
    if not pythons:
        return "no pre-built kernels: no CPython 3.11-3.13 with numba on linux x86-64 here"
    shipped = core / SHIPPED_DIRNAME
    shutil.rmtree(shipped, ignore_errors=True)
    parts = []
    cpus = build_cpus()
    for python, info in pythons:
        for cpu in cpus:        # generic first (counted before the levels go into its folder)
            out, _ = built_cache(python, info, Path(stage_root), cpu)
            tag = json.loads((out / "manifest.json").read_text())["tag"]
            dest = shipped / tag if cpu == GENERIC else shipped / tag / cpu
            shutil.copytree(out, dest)
            n = sum(1 for _ in dest.rglob("*.nbi"))
            size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
            parts.append(f"{tag} {cpu}: {n} kernel indexes, {size / 1e6:.1f} MB ({out.name})")
    return "pre-built kernels: " + "; ".join(parts)


def built_cache(python: str, info: dict, root: Path, cpu: str = GENERIC) -> tuple[Path, bool]:
    """The kernel cache of ``root``'s sources for ``python`` and the CPU ``cpu`` (`CPUS`) in
    ``build/kernel-cache/`` (keyed by `sources_digest`, then ``-<cpu>`` for a level), compiled
    first where missing: (its folder, whether it was
    compiled now).  One build at a time per folder (a lock file beside it): a build that finds
    another process compiling the same folder (``make test``'s others session compiling Python
    3.13's while the extension test builds the zip) waits for it and takes its result instead of
    compiling it a second time."""
    digest = sources_digest(root / "tracevis3d", info)
    return _build_once(python, root, KERNEL_CACHE / (digest if cpu == GENERIC else f"{digest}-{cpu}"), cpu)


def _build_once(python: str, root: Path, out: Path, cpu: str = GENERIC) -> tuple[Path, bool]:
    """`_compile` into ``out`` unless it is built, under ``out``'s lock (`built_cache`)."""
    import fcntl

    if (out / "manifest.json").is_file():
        return out, False
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(str(out) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the process ends)
        if (out / "manifest.json").is_file():
            return out, False
        _compile(python, root, out, cpu)
    return out, True


def _write_whole(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def prebuild_all() -> str:
    """The checkout's kernel caches for every usable interpreter (`interpreters`) and CPU (`build_cpus`),
    compiled into ``build/kernel-cache/`` where missing, as `prebuild` would for a staged copy of
    the same sources (the caches are keyed by `sources_digest`, which a staged copy shares).
    What ``make test`` runs before pytest: the extension test's build then finds them instead of
    compiling Python 3.13's kernels beside the test sessions (on 2 busy cores, past its time
    limit); a one-line summary."""
    parts = []
    cpus = build_cpus()
    for python, info in interpreters():
        for cpu in cpus:
            _, compiled = built_cache(python, info, REPO, cpu)
            parts.append(f"Python {'.'.join(map(str, info['python'][:2]))} {cpu}: "
                         f"{'compiled' if compiled else 'built'}")
    return "kernel caches: " + ("; ".join(parts) or "no interpreter can make them here")


def _has_kernels_of(cache_dir: Path, core: Path) -> bool:
    """Whether numba's cache folder ``cache_dir`` holds any index of the sources under ``core``
    (numba names a source folder's cache subfolder after its absolute path:
    `tracevis3d.kernel_cache.cache_subdir`)."""
    kc = _runtime_kernel_cache()
    for rel in kc.package_dirs(str(core)):
        sub = cache_dir / kc.cache_subdir(str(core / rel))
        if sub.is_dir() and any(f.suffix == ".nbi" for f in sub.iterdir()):
            return True
    return False


def seed_cache(cache_dir: Path, compile_if_cold: bool = True, signatures: Path | None = None,
               cpu: str = GENERIC) -> str:
    """The checkout's pre-built kernels (this interpreter's, `prebuild`'s ``build/kernel-cache/``)
    installed into numba's cache folder ``cache_dir`` for the checkout's own sources, by
    `tracevis3d.kernel_cache.install_shipped` (as the extension installs them for a user: index
    keys rewritten to this CPU, only the indexes the folder lacks).

    What ``make test`` runs first: on a clean checkout the suite would compile every kernel
    for this CPU while it runs and then the extension test would compile them all again for
    the generic CPU; seeded, they are compiled once (the tests then run the very kernels the
    zip and the wheel ship).  They are compiled here only when ``cache_dir`` holds no kernel of
    the checkout yet (``compile_if_cold``): a developer's warm cache is topped up from an
    existing build, never made to wait for one.

    ``cpu``: the CPU of `CPUS` whose kernels are installed (the tests read the generic ones, which
    every build ships), or "best": the highest this machine runs (`host_level`), what a wheel
    installs here (the benches); a level other than generic is compiled whenever it is not built,
    warm folder or not (the benches must run that level's code, not what the folder held).

    ``signatures`` (tests/support/test_signatures.txt, `tools/test_signatures.py`): the kernel
    signatures only the tests meet, compiled for this CPU after the install, two processes side
    by side, on the installed kernels (seconds where the cache has them).  Compiled beside the
    warm-up instead, in a cache of their own, they took 220 s of one process (the callees the
    install brings compiled again for this CPU) and the seed 370 s instead of ~320 s.  A summary
    (one line each)."""
    core = REPO / "tracevis3d"
    info = probe(sys.executable)
    if info is None or not info.get("numba"):
        return "kernels: not seeded (numba is not importable here)"
    if cpu == "best":
        cpu = host_level()
    if cpu not in CPUS:
        raise KernelCacheError(f"unknown CPU {cpu!r} (known: {', '.join(CPUS)}, best)")
    digest = sources_digest(core, info)
    out = KERNEL_CACHE / (digest if cpu == GENERIC else f"{digest}-{cpu}")
    if not (out / "manifest.json").is_file():
        # a level is asked for by name (the benches): built whatever the folder holds
        if not compile_if_cold or (cpu == GENERIC and _has_kernels_of(cache_dir, core)):
            return f"kernels: not seeded ({cache_dir} is warm and {out.name} is not built)"
        _build_once(sys.executable, REPO, out, cpu)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-c", "import json, sys; from tracevis3d.kernel_cache import install_shipped; "
                        "print(json.dumps(install_shipped(sys.argv[1], sys.argv[2], sys.argv[3])))",
                        str(out), str(core), str(cache_dir)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        raise KernelCacheError(f"installing the pre-built kernels into {cache_dir} failed: {last}")
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    lines = [f"kernels: {rep['installed']} pre-built kernel indexes ({rep['entries']} signatures) installed into "
             f"{cache_dir} ({out.name}){'; ' + rep['skipped'] if rep['skipped'] else ''}"]
    if signatures is not None:
        r = subprocess.run([sys.executable, str(REPO / "tools" / "test_signatures.py"), "--compile", str(cache_dir),
                            "--signatures", str(signatures)], cwd=str(REPO), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        lines.append(r.stdout.strip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stage_root", type=Path, nargs="?", help="folder holding the tracevis3d package to pre-build for")
    ap.add_argument("--seed", type=Path, metavar="NUMBA_CACHE_DIR",
                    help="instead: install this interpreter's pre-built kernels into this numba cache folder for "
                         "the checkout's own sources (compiled first when the folder holds none of them)")
    ap.add_argument("--cpu", default=GENERIC, choices=[*CPUS, "best"],
                    help="with --seed: the CPU whose kernels are installed (default generic, what the tests read; "
                         "best: the highest this machine runs, what a wheel installs here)")
    ap.add_argument("--all-interpreters", action="store_true",
                    help="instead: compile the checkout's caches for every usable interpreter where missing "
                         "(build/kernel-cache/; what the extension's and the wheel's builds then copy)")
    ap.add_argument("--test-signatures", type=Path, metavar="FILE",
                    help="with --seed: also compile the tests' own kernel signatures listed in FILE "
                         "(tools/test_signatures.py), after the install")
    args = ap.parse_args(argv)
    if args.all_interpreters:
        try:
            print(prebuild_all())
        except (KernelCacheError, OSError, ValueError) as e:
            print(f"kernel_caches: error: {e}", file=sys.stderr)
            return 1
        return 0
    if args.seed is not None:
        try:
            print(seed_cache(args.seed.resolve(), signatures=args.test_signatures, cpu=args.cpu))
        except (KernelCacheError, OSError, ValueError) as e:
            print(f"kernel_caches: error: {e}", file=sys.stderr)
            return 1
        return 0
    if args.stage_root is None:
        ap.error("a stage root or --seed is needed")
    if not (args.stage_root / "tracevis3d" / "__init__.py").is_file():
        print(f"kernel_caches: error: no tracevis3d package in {args.stage_root}", file=sys.stderr)
        return 1
    try:
        print(prebuild(args.stage_root))
    except (KernelCacheError, OSError, ValueError) as e:
        print(f"kernel_caches: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
