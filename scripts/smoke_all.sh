#!/usr/bin/env bash
# The smoke runs of every Blender line from blender_manifest.toml's blender_version_min (4.2.0) on
# (tests/smoke/smoke_bpy.py, each in its own venv of PyPI's bpy), after pytest in scripts/test.sh:
#   bpy 4.2 LTS  .venv-bpy42  Python 3.11 + numpy 1.26  tests/smoke/requirements-bpy42.txt (built here)
#   bpy 4.5 LTS  .venv-bpy45  Python 3.11 + numpy 1.26  tests/smoke/requirements-bpy45.txt (built here)
#   bpy 5.0      .venv        Python 3.11 + numpy 1.26  (scripts/setup.sh)
#   bpy 5.2      .venv313     Python 3.13 + numpy 2     (scripts/test.sh, when a python3.13 runs)
# A venv is built again only when its requirements file changed.  The extension zip is built once
# (tools/build_extension.py; the one pytest built is taken when no add-on file is newer) and shared.
# Then the figures of every line are compared with 5.0's (smoke_bpy.py --compare).  The figures
# stay in build/smoke/bpyNN/ to look at.  Exit status 0 only when every run passed.
#   TRACEVIS3D_SKIP_SMOKE_LTS=1  leaves out 4.2 and 4.5 (no venv built)
#   TRACEVIS3D_SMOKE_ZIP=PATH    the extension zip to use as it is (no freshness check, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/build/numba-cache}"
PY311=""
for cand in "${PYTHON311:-}" "$(command -v python3.11 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
  if [ -n "$cand" ] && "$cand" -c "import sys; assert sys.version_info[:2] == (3, 11)" >/dev/null 2>&1; then
    PY311="$cand"; break
  fi
done
lines=(".venv:50")
if [ "${TRACEVIS3D_SKIP_SMOKE_LTS:-0}" != 1 ] && [ -n "$PY311" ]; then
  for v in 42 45; do
    req="tests/smoke/requirements-bpy$v.txt"
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    if [ ! -x ".venv-bpy$v/bin/python" ] || [ "$(cat ".venv-bpy$v/.requirements.sha" 2>/dev/null)" != "$want" ]; then
      echo "smoke: creating .venv-bpy$v ($(head -n 1 "$req"))" >&2
      rm -rf ".venv-bpy$v"
      "$PY311" -m venv ".venv-bpy$v"
      ".venv-bpy$v/bin/python" -m pip install -q -r "$req" >&2
      echo "$want" > ".venv-bpy$v/.requirements.sha"
    fi
    lines+=(".venv-bpy$v:$v")
  done
fi
[ -x .venv313/bin/python ] && lines+=(".venv313:52")
# the extension zip: pytest's when no add-on file changed since, else built once here
zip="${TRACEVIS3D_SMOKE_ZIP:-$(ls -t dist/tracevis3d-*-linux_x64.zip 2>/dev/null | head -n 1 || true)}"
if [ -n "${TRACEVIS3D_SMOKE_ZIP:-}" ]; then :
elif [ -z "$zip" ] || [ -n "$(find __init__.py ui tracevis3d blender_manifest.toml -newer "$zip" -name '*.py' -o -newer "$zip" -name '*.toml' 2>/dev/null | head -n 1)" ]; then
  echo "smoke: building the extension zip" >&2
  zip="$(.venv/bin/python tools/build_extension.py --platform linux-x64 | tail -n 1)"
fi
status=0
dirs=()
for entry in "${lines[@]}"; do
  venv="${entry%%:*}"; tag="${entry##*:}"
  echo "smoke test: bpy $tag ($venv)" >&2
  # the line's interpreter's pre-built kernels (Python 3.13's, built beside tests/blender) installed
  # into the cache, as the extension installs them for a user: bpy 5.2's run loads them instead of
  # compiling them (its core step 61 s -> 9 s); never compiled here when the cache already has kernels
  [ "$venv" = .venv ] || "$venv/bin/python" tools/kernel_caches.py --seed "$NUMBA_CACHE_DIR" >&2 || true
  "$venv/bin/python" tests/smoke/smoke_bpy.py --out "build/smoke/bpy$tag" ${zip:+--zip "$zip"} || status=$?
  dirs+=("build/smoke/bpy$tag")
done
.venv/bin/python tests/smoke/smoke_bpy.py --compare "${dirs[@]}" || status=$?
exit $status
