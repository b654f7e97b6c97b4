#!/usr/bin/env bash
# Runs the test suite in the project's virtualenv (set up on first use).
set -e
cd "$(dirname "$0")/.."
source scripts/env.sh
exec python -m pytest "$@"
