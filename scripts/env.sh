#!/usr/bin/env bash
# Source this: makes ./.venv (once) with the project installed, and activates it.
# Works on a fresh Debian machine with only python3 and pip: falls back to virtualenv
# when python3-venv is missing. Reinstalls when pyproject.toml changes.
set -e
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
extras="${NARDY_EXTRAS:-test,train,web,cluster}"
if [ ! -x "$venv/bin/python" ]; then
  echo "setting up $venv (first run only)..." >&2
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    python3 -m pip install --user --quiet virtualenv >&2
    python3 -m virtualenv --quiet "$venv" >&2
  fi
fi
stamp="$venv/.nardy-installed"
want="$(cat "$root/pyproject.toml" | sha256sum | cut -c1-16)-$extras"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[$extras]" >&2
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
export VIRTUAL_ENV="$venv"
