#!/bin/sh
# scripts/node.sh <node args>: the Node every npm script runs on. It is the Node that runs npm when that
# one is supported (24 or newer: CI's, a developer's), else the Node `npm ci` installed (the pinned
# `node` devDependency), so `npm ci && npm test` works on a machine whose own Node is older.
# A deliberate choice: inside npm scripts node_modules/.bin, where that package links its `node`, comes
# first on PATH, so a plain `node` would always be the devDependency's. The choice is made once and
# handed to nested scripts in PAR_IDENTITY_NODE.
set -eu
NEEDED_MAJOR=24
if [ -z "${PAR_IDENTITY_NODE:-}" ]; then
  # npm's own Node: npm_node_execpath; its version is in npm's user agent ("npm/11.6.0 node/v24.1.0 …").
  caller=${npm_node_execpath:-}
  major=
  if [ -n "$caller" ]; then
    major=$(printf '%s\n' "${npm_config_user_agent:-}" | sed -n 's/.* node\/v\([0-9][0-9]*\)\..*/\1/p')
  else
    caller=$(command -v node || true)
  fi
  if [ -z "$major" ] && [ -n "$caller" ]; then major=$("$caller" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0); fi
  if [ "${major:-0}" -ge "$NEEDED_MAJOR" ]; then
    PAR_IDENTITY_NODE=$caller
  else
    PAR_IDENTITY_NODE=$(cd "$(dirname "$0")/.." && pwd)/node_modules/node/bin/node
    if [ ! -x "$PAR_IDENTITY_NODE" ]; then
      echo "scripts/node.sh: Node.js ${NEEDED_MAJOR}+ needed, found ${caller:-none} (major ${major:-?}), and the pinned devDependency is not installed: run npm ci (with install scripts allowed), or put Node.js ${NEEDED_MAJOR}+ first on PATH." >&2
      exit 13
    fi
  fi
  export PAR_IDENTITY_NODE
fi
exec "$PAR_IDENTITY_NODE" "$@"
