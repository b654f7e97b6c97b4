#!/usr/bin/env bash
# Runs a command in the project's virtualenv (set up on first use), e.g.
#   bash scripts/run.sh python -m engine.analyse --position start --dice 31
set -e
here="$PWD"               # the command runs where it was given: its paths are the caller's
cd "$(dirname "$0")/.."
source scripts/env.sh
cd "$here"
exec "$@"
