#!/usr/bin/env bash
# The main job: record a real program with VizTracer and render its 3D icicle figure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
echo "demo: recording examples/workload.py with VizTracer" >&2
.venv/bin/python -m viztracer --quiet -o out/workload.json examples/workload.py >&2
echo "demo: rendering the icicle (Workbench, 1920x1080)" >&2
.venv/bin/python -m tracevis3d render-icicle out/workload.json -o out/workload_icicle.png \
  --resolution 1920x1080 --engine workbench --save out/workload.blend
echo "figure: $(pwd)/out/workload_icicle.png"
echo "scene:  $(pwd)/out/workload.blend"
