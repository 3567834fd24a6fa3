#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with the bundle of make_device_bundle.sh:
# `gmmscore score --backend cuda` against `--backend cpu` on the shipped Kaldi features, for one
# random model and two fused (max, log-add, select: on the device with CUDA). Prints the largest
# difference of each; float32 paths are within 1e-3 nats of float64, so within 2e-3 of each other.
# Usage: bench/cuda/device_score_check.sh
set -euo pipefail
bundle=.device-bundle
[ -d "$bundle/lib" ] || { mkdir "$bundle/lib" && tar xzf "$bundle/lib.tar.gz" -C "$bundle/lib"; }
export LD_LIBRARY_PATH="$PWD/$bundle/lib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
feats=ark:tests/data/kaldi-mono/feats.ark
"$bundle/gmmscore" convert random:300x16x39:1 "$tmp/a.gmms" 2>/dev/null
"$bundle/gmmscore" convert random:300x16x39:2 "$tmp/b.gmms" 2>/dev/null
compare() {
  python3 - "$@" <<'PY'
import sys
def read(path):
    tables, key = {}, None
    for line in open(path):
        tokens = line.split()
        if tokens and tokens[-1] == "[":
            key = tokens[0]
            tables[key] = []
        elif tokens:
            tables[key] += [float(t) for t in tokens if t != "]"]
    return tables
a, b = read(sys.argv[2]), read(sys.argv[3])
assert a.keys() == b.keys() and all(len(a[k]) == len(b[k]) for k in a)
worst = max(abs(x - y) for k in a for x, y in zip(a[k], b[k]))
print(f"{sys.argv[1]}: {len(a)} utterances, largest |cuda - cpu| {worst:.2e}")
PY
}
for rule in single max log-add select; do
  models=(--model "$tmp/a.gmms")
  [ "$rule" = single ] || models+=(--model "$tmp/b.gmms" --fusion "$rule")
  for backend in cpu cuda; do
    "$bundle/gmmscore" score --quiet --backend "$backend" "${models[@]}" --feats "$feats" \
      --out "ark,t:$tmp/$backend.txt"
  done
  compare "$rule" "$tmp/cpu.txt" "$tmp/cuda.txt"
done
