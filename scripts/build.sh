#!/usr/bin/env bash
# Configures and builds gmmscore (Release): into build/, with CUDA code when nvcc is found; or,
# with BUILD_DIR and CMAKE_ARGS set, elsewhere and otherwise (scripts/test.sh builds build-nocuda/
# with -DGMMSCORE_CUDA=OFF). Extra arguments go to ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
build="${BUILD_DIR:-build}"
# shellcheck disable=SC2086 # CMAKE_ARGS is a list of options
echo "build: configuring $build/ (CMake), then compiling (ninja shows each step)" >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
ninja -C "$build" "$@"
