#!/usr/bin/env bash
# Configures and builds gmmscore into build/ (Release). CUDA code is built when nvcc is found.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build "$@"
