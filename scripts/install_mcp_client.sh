#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK into tests/mcp_client/node_modules (pinned by its package-lock.json) for
# the tests that drive `relmem serve` with a client nobody here wrote. Idempotent; only the npm registry is contacted,
# and only when the SDK is missing. Without node/npm or the registry it warns and the tests skip.
set -uo pipefail
cd "$(dirname "$0")/../tests/mcp_client"
[ -f node_modules/@modelcontextprotocol/sdk/package.json ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
  echo "relmem: npm not found; the MCP client tests will be skipped" >&2
  exit 0
fi
if ! npm ci --no-audit --no-fund --loglevel=error >/dev/null; then
  echo "relmem: could not install @modelcontextprotocol/sdk from npm; the MCP client tests will be skipped" >&2
fi
exit 0
