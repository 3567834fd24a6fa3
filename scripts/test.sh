#!/usr/bin/env bash
# The README's second command: installs what is missing, builds everything and runs every test as
# configured here (CUDA code built when nvcc is found; GPU tests skip, saying why, where no GPU is
# present). The build with CUDA turned off is tested by scripts/sanitize.sh asan (CI runs both).
#   NOCUDA=1 scripts/test.sh     also builds and tests build-nocuda/ (-DGMMSCORE_CUDA=OFF)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
if [ -n "${NOCUDA:-}" ]; then
  BUILD_DIR=build-nocuda CMAKE_ARGS=-DGMMSCORE_CUDA=OFF scripts/build.sh
  ctest --test-dir build-nocuda --output-on-failure -j2
fi
