#!/usr/bin/env bash
# The README's second command: installs what is missing, builds everything, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
