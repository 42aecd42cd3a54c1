#!/usr/bin/env bash
# Set everything up and run every test (pytest on bpy 5.0.1 / Python 3.11), then the smoke runs
# of bpy 4.2 LTS, 4.5 LTS, 5.0 and (on Python 3.13 + numpy 2, when a python3.13 is available) 5.2.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/build/numba-cache}"
# the extension and wheel builds the tests make compile the generic kernels only (what the tests
# read); a release build (make wheel / make extension) adds the x86-64-v3 and -v4 ones: each is
# another full compile, ~4 min of two cores (tools/kernel_caches.py)
export TRACEVIS3D_KERNEL_CPUS="${TRACEVIS3D_KERNEL_CPUS:-generic}"
# this run's logs only (tools/failure_digest.py reads them; each session's compile log, TV3D_COMPILE_LOG,
# lists the kernels it compiled: `tools/test_signatures.py --update build/test-logs/compile-*.jsonl`)
mkdir -p build/test-logs && rm -f build/test-logs/*.log build/test-logs/*.jsonl
# a python3.13 that really runs (a pyenv shim for an inactive version does not)
PY313=""
for cand in "${PYTHON313:-}" "$(command -v python3.13 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do
  if [ -n "$cand" ] && "$cand" -c "import sys; assert sys.version_info[:2] == (3, 13)" >/dev/null 2>&1; then
    PY313="$cand"; break
  fi
done
# .venv313 built before the tests (beside the kernels' compile: mostly waiting on pip):
# tests/realtraces/test_live_monitoring.py runs the Python 3.13 hooks in it (built after them, as
# before, they skipped on every clean clone)
venv313_pid=""
if [ -n "$PY313" ] && [ "${TRACEVIS3D_SKIP_SMOKE52:-0}" != 1 ]; then
  want="$(sha256sum tests/smoke/requirements-bpy52.txt | cut -d' ' -f1)"
  if [ ! -x .venv313/bin/python ] || [ "$(cat .venv313/.requirements.sha 2>/dev/null)" != "$want" ]; then
    ( "$PY313" -m venv .venv313 && .venv313/bin/python -m pip install -q -r tests/smoke/requirements-bpy52.txt >&2 &&
      echo "$want" > .venv313/.requirements.sha ) &
    venv313_pid=$!
  fi
fi
# the kernels compiled once, for the generic CPU as the extension zip and the wheel ship them, and
# installed into the tests' cache (compiled only when that cache is cold: a clean checkout); each
# part's steps and CPU seconds in build/kernel-cache/<sources hash>.log
kernels_t0=$SECONDS
# then the signatures only the tests meet (the twins' small arrays, int32 overlaps, ...:
# tests/support/test_signatures.txt, tools/test_signatures.py), compiled in two processes instead of
# inside each session's first caller (a cache that has them: seconds)
.venv/bin/python tools/kernel_caches.py --seed "$NUMBA_CACHE_DIR" --test-signatures tests/support/test_signatures.txt >&2 ||
  echo "kernels: not seeded; the tests compile them" >&2
echo "kernels: $(( SECONDS - kernels_t0 )) s" >&2
[ -z "$venv313_pid" ] || wait "$venv313_pid" || { echo "setup: building .venv313 failed" >&2; exit 1; }
status=0
pids=()
# a pytest session in the background, its output kept whole in build/test-logs/NAME.log:
# start_session NAME PYTEST-ARGS...
start_session() {
  local name=$1; shift
  TV3D_COMPILE_LOG="build/test-logs/compile-$name.jsonl" \
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
# tests/unit as two pytest sessions side by side, one a core, its files dealt by their measured
# durations (tools/deal_tests.py: tests/support/unit_durations.txt) so that both end together;
# each session's JUnit XML gives this run's durations (build/test-logs/unit-durations.txt)
unit_layer() {
  local line_a line_b unit_a unit_b
  { read -r line_a; read -r line_b; } < <(.venv/bin/python tools/deal_tests.py tests/unit)
  read -ra unit_a <<< "$line_a"; read -ra unit_b <<< "$line_b"
  # (a session of no files would run every layer)
  [ ${#unit_a[@]} -gt 0 ] && [ ${#unit_b[@]} -gt 0 ] || { echo "tests/unit: its files were not dealt" >&2; exit 1; }
  local t0=$SECONDS
  start_session unit-a --junitxml=build/test-logs/unit-a.xml "${unit_a[@]}"
  start_session unit-b --junitxml=build/test-logs/unit-b.xml "${unit_b[@]}"
  end_sessions "unit-a:tests/unit, session a (${#unit_a[@]} files)" "unit-b:tests/unit, session b (${#unit_b[@]} files)"
  .venv/bin/python tools/deal_tests.py --record build/test-logs/unit-a.xml build/test-logs/unit-b.xml \
    > build/test-logs/unit-durations.txt 2>/dev/null || true
  echo "== tests/unit: $(( (SECONDS - t0) / 60 )) min $(( (SECONDS - t0) % 60 )) s wall for both sessions (budget 2 min)"
}
if [ "$*" = tests/unit ]; then
  unit_layer  # make test-fast
elif [ $# -gt 0 ]; then
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=$?
else
  # every layer (a folder of tests/ holding test_*.py): tests/unit first (its failures show in a
  # few minutes, `unit_layer`); then the others as two sessions side by side: tests/blender in
  # one; in the other the other interpreters' generic-CPU kernels (Python 3.13's, for the
  # extension zip, the wheel and bpy 5.2: tools/kernel_caches.py --all-interpreters, where
  # build/kernel-cache/ lacks them), then the rest.  Each session one test at a time, in file
  # order, as before: the same order and fixtures as a session of its own.  The 3.13 kernels run
  # there because tests/blender outlasts the rest by about their time (10.5 and 5.5 min); the
  # extension and wheel tests' builds wait for them (built_cache's lock) rather than compile
  # them again.  Each session's output is kept whole in build/test-logs/ and printed, one after
  # the other, when both have ended.
  mapfile -t layers < <(for d in tests/*/; do compgen -G "${d}test_*.py" >/dev/null && echo "${d%/}"; done)
  rest=()
  for d in "${layers[@]}"; do [ "$d" = tests/unit ] || [ "$d" = tests/blender ] || rest+=("$d"); done
  unit_layer
  start_session blender tests/blender
  ( t0=$SECONDS
    .venv/bin/python tools/kernel_caches.py --all-interpreters || echo "kernels: the extension build compiles them"
    echo "kernels of the other interpreters: $(( SECONDS - t0 )) s"
    [ ${#rest[@]} -eq 0 ] || exec env TV3D_COMPILE_LOG=build/test-logs/compile-others.jsonl .venv/bin/python -m pytest -q -p no:cacheprovider "${rest[@]}"
  ) > build/test-logs/others.log 2>&1 &
  pids+=($!)
  end_sessions "blender:tests/blender" "others:other interpreters' kernels, ${rest[*]}"
fi
# the smoke runs of every Blender line: 4.2 LTS, 4.5 LTS, 5.0, and 5.2 where .venv313 is (scripts/smoke_all.sh)
[ -n "$PY313" ] || echo "smoke test: bpy 5.2 skipped (no python3.13 found)" >&2
[ "${TRACEVIS3D_SKIP_SMOKE52:-0}" = 1 ] || bash scripts/smoke_all.sh || status=$?
# the failures of the pytest sessions again, a few lines each, as the run's last lines: CI keeps
# the head and the tail of the output, and a traceback in the middle was cut (tools/failure_digest.py)
if [ "$status" != 0 ] && compgen -G "build/test-logs/*.log" >/dev/null; then
  echo "== failures of the pytest sessions (build/test-logs/)"
  .venv/bin/python tools/failure_digest.py build/test-logs/*.log || true
fi
exit $status
