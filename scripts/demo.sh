#!/usr/bin/env bash
# The main job: record a real multi-threaded program with VizTracer and render its 3D figure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
echo "demo: recording examples/threads_pipeline.py (5 threads, locks, a bounded queue) with VizTracer" >&2
.venv/bin/python -m viztracer --quiet -o out/threads_pipeline.json examples/threads_pipeline.py >&2
echo "demo: rendering its figure (Workbench, 1920x1080)" >&2
.venv/bin/python -m tracevis3d render-icicle out/threads_pipeline.json -o out/threads_pipeline.png \
  --resolution 1920x1080 --engine workbench --save out/threads_pipeline.blend >/dev/null
echo "figure: $(pwd)/out/threads_pipeline.png"
echo "scene:  $(pwd)/out/threads_pipeline.blend"
