#!/usr/bin/env bash
# GPU check (issue 72 item 6): prepare everything a session lent an NVIDIA GPU machine needs to render
# a growth and a fly-through of a real deep trace there, with EEVEE and Workbench on the GPU, and to
# compare them with the CPU render of the same frames. Runs here (no GPU needed), in a few minutes:
#   1. records a real trace (VizTracer on `python -m pydoc -w tarfile`: ~175k calls) unless TRACE is given,
#   2. saves the two animations as .blend scenes (build/gpu/{growth,flythrough}.blend; each plays by itself),
#   3. packs the renderer with ../shared/gpu-render/make_payload.sh, trims what these renders never load
#      (USD's Python bindings, the Cycles GPU kernels, GPU denoiser plugins, CJK font, brush assets),
#      recompresses it (zstd level ZSTD_LEVEL, default 12: 274 MB; 19 gives 252 MB but takes ~12 min here)
#      and splits it into parts that fit one device call beside the working tree (64 MiB in all per call,
#      the tree counted at its current size: 12 parts of 23 MB with a 40 MB tree),
#   4. writes .gpu/gpu_jobs.sh (the render command of the last call) and prints the device calls to make.
# Then, with the PNGs brought back:  bash tools/gpu_check.sh compare GPU_PNG_DIR
#   renders the same frames here on the CPU (Workbench 1920x1080, EEVEE 960x540) into /tmp/gpu-check-cpu and
#   prints, per frame, the mean absolute difference and the share of pixels off by > 8/255 after a 3x3 blur.
# Usage, from the project root:  bash tools/gpu_check.sh [TRACE]
# Set CYCLES=1 to keep the Cycles kernels (OptiX's first compile took 7.7 min on an H100).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
export NUMBA_CACHE_DIR=$PWD/build/numba-cache
W=build/gpu
mkdir -p "$W"
if [ "${1:-}" = compare ]; then
  gpu_dir=$(cd "$2" && pwd) cpu_dir=/tmp/gpu-check-cpu
  mkdir -p "$cpu_dir"
  jobs=""
  for png in "$gpu_dir"/*_GPU_*.png; do   # NAME_ENGINE_GPU_WxH_FRAME.png -> the same job on the CPU
    b=$(basename "$png" .png); f=$((10#${b##*_})); b=${b%_*}; res=${b##*_}; b=${b%_GPU_*}; engine=${b##*_}
    scene=${b%_*}; samples=1; [ "$engine" = EEVEE ] && samples=16
    [ "$engine" = EEVEE ] && [ "$res" != 960x540 ] && continue   # EEVEE at 1080p takes ~1 min a frame here
    jobs="$jobs $W/$scene.blend:$engine:CPU:$res:$samples:$f-$f"
  done
  # shellcheck disable=SC2086
  .venv/bin/python ../shared/gpu-render/render.py -- $jobs "$cpu_dir" 2>/dev/null | grep RESULT
  cat > /tmp/gpu_check_compare.py <<'PY'
"""Per frame: mean |GPU - CPU| (of 255) and the share of pixels whose largest channel difference exceeds
8/255 after a 3x3 box blur of both (the blur forgives antialiasing that differs by a pixel)."""
import glob
import os
import sys

import bpy
import numpy as np


def load(path):
    image = bpy.data.images.load(path)
    w, h = image.size
    rgba = np.empty(w * h * 4, np.float32)
    image.pixels.foreach_get(rgba)
    bpy.data.images.remove(image)
    return rgba.reshape(h, w, 4)[..., :3] * 255.0


def blur(a):
    p = np.pad(a, ((1, 1), (1, 1), (0, 0)), mode="edge")
    return sum(p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3)) / 9.0


gpu_dir, cpu_dir = sys.argv[1:3]
for g in sorted(glob.glob(os.path.join(gpu_dir, "*_GPU_*.png"))):
    c = os.path.join(cpu_dir, os.path.basename(g).replace("_GPU_", "_CPU_"))
    if os.path.exists(c):
        a, b = load(g), load(c)
        off = (np.abs(blur(a) - blur(b)).max(axis=2) > 8).mean()
        print(f"{os.path.basename(g)[:-4]}: mean |diff| {np.abs(a - b).mean():.2f}/255, "
              f"pixels off > 8/255 after blur {100 * off:.2f} %")
PY
  .venv/bin/python /tmp/gpu_check_compare.py "$gpu_dir" "$cpu_dir" 2>/dev/null | grep 'mean |diff|'
  exit 0
fi
TRACE=${1:-}
if [ -z "$TRACE" ]; then
  TRACE=$W/pydoc.json
  [ -s "$TRACE" ] || (cd "$W" && ../../.venv/bin/viztracer --quiet -o pydoc.json -m pydoc -w tarfile >/dev/null)
fi
for kind in growth flythrough; do
  .venv/bin/python -m tracevis3d render-animation "$TRACE" --kind "$kind" --frames 1-1 --engine workbench \
    --resolution 1920x1080 --save "$W/$kind.blend" -o "/tmp/gpu-check-$kind/" >/dev/null
done
last=$(.venv/bin/python -c "
import bpy; bpy.ops.wm.open_mainfile(filepath='$W/growth.blend'); print('LAST', bpy.context.scene.frame_end)" 2>/dev/null |
       awk '/^LAST/{print $2}')
mid=$(( (last + 1) / 2 ))

bash ../shared/gpu-render/make_payload.sh "$W/growth.blend" "$W/flythrough.blend" >/dev/null
P=/tmp/tv3d-gpu/payload B=/tmp/tv3d-gpu/payload/site/bpy
rm -rf "$B/5.0/python/lib/python3.11/site-packages/pxr" "$B"/lib/libOpenImageDenoise_device_cuda* \
       "$B"/lib/libOpenImageDenoise_device_sycl* "$B/5.0/datafiles/fonts/Noto Sans CJK Regular.woff2" \
       "$B/5.0/datafiles/assets"
[ "${CYCLES:-0}" = 1 ] || rm -rf "$B"/5.0/scripts/addons_core/cycles/lib/*
rm -f /tmp/tv3d-gpu/payload.tar.zst .gpu/part.*
(cd /tmp/tv3d-gpu && tar cf - --exclude=payload/zbin payload | zstd -T0 "-${ZSTD_LEVEL:-12}" --long=27 -q -o payload.tar.zst)

# What travels besides .gpu: tracked files plus untracked files git does not ignore.
tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 stat -c %s 2>/dev/null |
        awk '{s += $1} END {print s + 0}')
part=$(( 67108864 - tree - 4000000 ))   # 4 MB margin: zbin.tar and the .debs (2.1 MB, first call), files added meanwhile
[ "$part" -gt 4000000 ] || { echo "the working tree ($tree bytes) leaves no room for payload parts" >&2; exit 1; }
mkdir -p /tmp/tv3d-gpu/parts && rm -f /tmp/tv3d-gpu/parts/part.*
(cd /tmp/tv3d-gpu/parts && split -b "$part" -d -a 2 ../payload.tar.zst part.)
n=$(ls /tmp/tv3d-gpu/parts | wc -l)

o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
mkdir -p /tmp/amd64/partial .gpu
# shellcheck disable=SC2086
(apt-get $o update >/dev/null && cd .gpu && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 \
   libglx0 libgles2 >/dev/null 2>&1)

jobs=""
for s in growth flythrough; do for f in 1 "$mid" "$last"; do
  jobs="$jobs scenes/$s.blend:WORKBENCH:GPU:1920x1080:1:$f-$f"; done; done
for s in growth flythrough; do for f in 1 "$mid" "$last"; do
  jobs="$jobs scenes/$s.blend:EEVEE:GPU:1920x1080:16:$f-$f"; done; done
jobs="$jobs scenes/growth.blend:EEVEE:GPU:960x540:16:$mid-$mid"
cat > .gpu/gpu_jobs.sh <<EOF
#!/bin/bash
# The last device call: stage the last part, unpack, render, pack the PNGs into pieces the tool brings back.
cp .gpu/part.* /tmp/stage/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
bash .gpu/run.sh $jobs | tee "\$OUT/render.log" | grep -v 'EGL Error'
cd "\$OUT" && tar cf pngs.tar ./*.png && split -b 15000000 -d -a 1 pngs.tar pngs.tar. && rm -f ./*.png pngs.tar
EOF
chmod +x .gpu/gpu_jobs.sh

echo "payload: $(stat -c %s /tmp/tv3d-gpu/payload.tar.zst) bytes in $n parts of $part bytes (/tmp/tv3d-gpu/parts)"
echo "frames: 1 $mid $last; CPU reference: build/gpu/*.blend"
cat <<EOF
Device calls (check the 'status' tool first; make each call at once, the machine goes back after 30 s idle):
  call 1:  mv /tmp/tv3d-gpu/parts/part.00 .gpu/
           run carry=[".gpu"] command: mkdir -p /tmp/stage && cp .gpu/part.* .gpu/zbin.tar .gpu/*.deb /tmp/stage/ && nvidia-smi -L
  call 2 first:  mv .gpu/*.deb .gpu/zbin.tar /tmp/tv3d-gpu/
  calls 2..$((n - 1)), for each next part NN:  rm .gpu/part.*; mv /tmp/tv3d-gpu/parts/part.NN .gpu/
           run carry=[".gpu"] command: mkdir -p /tmp/stage && cp .gpu/part.* /tmp/stage/
  call $n (the last part):  rm .gpu/part.*; mv /tmp/tv3d-gpu/parts/part.$(printf %02d $((n - 1))) .gpu/
           run carry=[".gpu"] timeout_s=400 command: bash .gpu/gpu_jobs.sh
  then give_back (or render more at once: the unpacked payload stays at /tmp/p/payload while the machine is warm);
  here: cd <files_at> && cat pngs.tar.* | tar xf -   (render.log holds one RESULT line per job)
EOF
