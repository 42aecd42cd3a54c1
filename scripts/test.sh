#!/usr/bin/env bash
# Set everything up and run every test (pytest on bpy 5.0.1 / Python 3.11), then the smoke runs
# of bpy 4.2 LTS, 4.5 LTS, 5.0 and (on Python 3.13 + numpy 2, when a python3.13 is available) 5.2.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/build/numba-cache}"
# the kernels compiled once, for the generic CPU as the extension zip and the wheel ship them, and
# installed into the tests' cache (compiled only when that cache is cold: a clean checkout)
.venv/bin/python tools/kernel_caches.py --seed "$NUMBA_CACHE_DIR" >&2 || echo "kernels: not seeded; the tests compile them" >&2
# a python3.13 that really runs (a pyenv shim for an inactive version does not)
PY313=""
for cand in "${PYTHON313:-}" "$(command -v python3.13 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do
  if [ -n "$cand" ] && "$cand" -c "import sys; assert sys.version_info[:2] == (3, 13)" >/dev/null 2>&1; then
    PY313="$cand"; break
  fi
done
# .venv313 built before the tests: tests/realtraces/test_live_monitoring.py runs the Python 3.13
# hooks in it (built after them, as before, they skipped on every clean clone)
if [ -n "$PY313" ] && [ "${TRACEVIS3D_SKIP_SMOKE52:-0}" != 1 ]; then
  want="$(sha256sum tests/smoke/requirements-bpy52.txt | cut -d' ' -f1)"
  if [ ! -x .venv313/bin/python ] || [ "$(cat .venv313/.requirements.sha 2>/dev/null)" != "$want" ]; then
    "$PY313" -m venv .venv313
    .venv313/bin/python -m pip install -q -r tests/smoke/requirements-bpy52.txt >&2
    echo "$want" > .venv313/.requirements.sha
  fi
fi
status=0
pids=()
# a pytest session in the background, its output kept whole in build/test-logs/NAME.log:
# start_session NAME PYTEST-ARGS...
start_session() {
  local name=$1; shift
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" > "build/test-logs/$name.log" 2>&1 &
  pids+=($!)
}
# wait for the sessions started (an interrupted make test leaves none running; a failed one sets
# the status), then print each one's log under its title: end_sessions "NAME:TITLE"...
end_sessions() {
  trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
  trap - INT TERM
  pids=()
  local spec
  for spec in "$@"; do
    echo "== ${spec#*:} (build/test-logs/${spec%%:*}.log)"
    cat "build/test-logs/${spec%%:*}.log"
  done
}
if [ $# -eq 0 ]; then
  # the whole suite: every interpreter's generic-CPU kernels (Python 3.13's for bpy 5.2) compiled
  # now, while nothing else runs, where build/kernel-cache/ lacks them (the extension test's
  # build copies them instead of compiling them beside the two test sessions)
  .venv/bin/python tools/kernel_caches.py --all-interpreters >&2 || echo "kernels: the extension build compiles them" >&2
fi
if [ $# -gt 0 ]; then
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=$?
else
  # every layer (a folder of tests/ holding test_*.py): tests/unit first (its failures show in a
  # few minutes), its files dealt alternately to two pytest sessions side by side, one a core;
  # then the others as two sessions side by side: tests/blender in one, the rest in the other
  # (each session one test at a time, in file order, as before: the same order and fixtures as
  # a session of its own).  Each session's output is kept whole in build/test-logs/ and printed,
  # one after the other, when both have ended.
  mapfile -t layers < <(for d in tests/*/; do compgen -G "${d}test_*.py" >/dev/null && echo "${d%/}"; done)
  rest=()
  for d in "${layers[@]}"; do [ "$d" = tests/unit ] || [ "$d" = tests/blender ] || rest+=("$d"); done
  mkdir -p build/test-logs
  mapfile -t unit_files < <(ls tests/unit/test_*.py)
  unit_a=(); unit_b=()
  for i in "${!unit_files[@]}"; do
    if (( i % 2 )); then unit_b+=("${unit_files[$i]}"); else unit_a+=("${unit_files[$i]}"); fi
  done
  unit_t0=$SECONDS
  start_session unit-a "${unit_a[@]}"
  start_session unit-b "${unit_b[@]}"
  end_sessions "unit-a:tests/unit, even files" "unit-b:tests/unit, odd files"
  echo "== tests/unit: $(( (SECONDS - unit_t0) / 60 )) min $(( (SECONDS - unit_t0) % 60 )) s wall for both sessions (budget 2 min)"
  : > build/test-logs/others.log
  start_session blender tests/blender
  [ ${#rest[@]} -eq 0 ] || start_session others "${rest[@]}"
  end_sessions "blender:tests/blender" "others:${rest[*]}"
fi
# the smoke runs of every Blender line: 4.2 LTS, 4.5 LTS, 5.0, and 5.2 where .venv313 is (scripts/smoke_all.sh)
[ -n "$PY313" ] || echo "smoke test: bpy 5.2 skipped (no python3.13 found)" >&2
[ "${TRACEVIS3D_SKIP_SMOKE52:-0}" = 1 ] || bash scripts/smoke_all.sh || status=$?
exit $status
