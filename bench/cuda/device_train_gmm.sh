#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle made by make_device_bundle.sh: train-gmm's E-step on the
# first GPU and on every GPU (--devices 0, then --devices all), on FRAMES random 40-dimensional
# frames (default 3,125,600: the seed paper's case of Machlica et al.) drawn from 64 clusters, for
# a GAUSS-Gaussian model (default 2048) and ITERS iterations (default 4). Compare the lines
# "iteration N: ... E-step S s (F frames/s)" of the two runs. Logs go to $OUT. Needs python3 with
# numpy (to write the features as a Kaldi binary archive). BACKEND=cpu runs the same on the CPU
# (a check of the script where there is no GPU).
# Usage: device_train_gmm.sh [FRAMES] [GAUSS] [ITERS]
set -uo pipefail
cd "$(dirname "$0")" || exit 1
[ -d lib ] || { mkdir lib && tar xzf lib.tar.gz -C lib; }
[ -x gmmscore ] || tar xzf bin.tar.gz
out="${OUT:-.}"
export LD_LIBRARY_PATH="$PWD/lib"
frames=${1:-3125600}
gauss=${2:-2048}
iters=${3:-4}
ark=/tmp/train-gmm-frames.ark
python3 - "$frames" "$ark" <<'PY' || exit 1
import struct, sys
import numpy as np
frames, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(7)
centers = rng.normal(0.0, 3.0, size=(64, 40)).astype(np.float32)
x = centers[rng.integers(0, 64, size=frames)] + rng.normal(0.0, 1.0, size=(frames, 40)).astype(np.float32)
with open(path, "wb") as f:  # one utterance: key, binary marker, float matrix
    f.write(b"frames \0BFM " + struct.pack("<bibi", 4, frames, 4, 40))
    f.write(np.ascontiguousarray(x, dtype="<f4").tobytes())
PY
status=0
backend=${BACKEND:-cuda}
for devices in 0 all; do
  select=(--devices "$devices")
  if [ "$backend" = cpu ]; then
    [ "$devices" = all ] && break
    select=()
  fi
  ./gmmscore train-gmm --backend "$backend" "${select[@]}" --num-gauss "$gauss" \
    --num-gauss-init "$gauss" --num-iters "$iters" --num-frames 0 "ark:$ark" "/tmp/ubm-$devices.dubm" \
    >"$out/train-gmm-$devices.log" 2>&1 || status=1
  echo "== --backend $backend ${select[*]}"
  grep -E 'iteration [0-9]+:|streaming|ERROR' "$out/train-gmm-$devices.log"
done
exit $status
