#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and scores the demo features
# (a real Kaldi monophone model and six utterances shipped in tests/data/kaldi-mono).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh gmmscore gmmscored
mkdir -p out
data=tests/data/kaldi-mono
./build/tools/gmmscore info "$data/final.mdl"
./build/tools/gmmscore score --model "$data/final.mdl" --feats "ark:$data/feats.ark" \
  --out ark,t:out/demo-scores.txt
echo "demo: scores (frames x 56 pdfs, Kaldi text archive) are in $(pwd)/out/demo-scores.txt"
echo "demo: the programs are build/tools/gmmscore and build/server/gmmscored;" \
  "scripts/install.sh puts them (and the Python package) in /usr/local"
