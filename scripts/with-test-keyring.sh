#!/usr/bin/env bash
# Runs a command with a real Secret Service: a private D-Bus session and an unlocked GNOME Keyring
# whose files live in a throw-away directory. Used by .ci/run around `npm test`.
# Usage: scripts/with-test-keyring.sh <command...>
set -euo pipefail
if [ -z "${PAR_TEST_KEYRING_SESSION:-}" ]; then
  if ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
    echo "with-test-keyring: dbus-run-session or gnome-keyring-daemon missing; running without a keychain" >&2
    exec "$@"
  fi
  export PAR_TEST_KEYRING_SESSION=1
  exec dbus-run-session -- "$0" "$@"
fi
keyring_home=$(mktemp -d)
trap 'rm -rf "$keyring_home"' EXIT
# The daemon keeps its keyrings under its own HOME; clients reach it over D-Bus only.
eval "$(printf 'par-identity-test' | HOME="$keyring_home" gnome-keyring-daemon --daemonize --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL PAR_TEST_KEYRING=1
"$@"
