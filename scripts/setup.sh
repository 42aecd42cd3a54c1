#!/usr/bin/env bash
# Create .venv (CPython 3.11, what bpy 5.0.1 needs) with the pinned requirements.
# Idempotent: reinstalls only when requirements-dev.txt changed.
set -euo pipefail
cd "$(dirname "$0")/.."
# a python3.11 that really runs (a pyenv shim for an inactive version does not)
PY=""
for cand in "${PYTHON311:-}" "$(command -v python3.11 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11*/bin/python3.11; do
  if [ -n "$cand" ] && "$cand" -c "import sys; assert sys.version_info[:2] == (3, 11)" >/dev/null 2>&1; then
    PY="$cand"; break
  fi
done
[ -n "$PY" ] || { echo "setup: python3.11 not found (bpy 5.0.1 needs CPython 3.11); set PYTHON311=/path/to/python3.11" >&2; exit 1; }
want="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.requirements.sha 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .venv with $PY" >&2
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip >&2 || true
  .venv/bin/python -m pip install -q -r requirements-dev.txt >&2
  echo "$want" > .venv/.requirements.sha
fi
# the commit habit (subject ≤ 72 characters): tools/git-hooks, in a git checkout that has no hooks path yet
if git rev-parse --git-dir >/dev/null 2>&1 && [ -z "$(git config --get core.hooksPath || true)" ]; then
  git config core.hooksPath tools/git-hooks || true
fi
