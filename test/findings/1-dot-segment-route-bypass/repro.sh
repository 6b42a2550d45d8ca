#!/bin/sh
# Usage: repro.sh SLUICE_BINARY PLUGIN_DIR   (PLUGIN_DIR holds libapi_key_auth.so, libround_robin.so)
set -u
SLUICE=${1:-/work/wt/tryout/bazel-bin/core/sluice}; PLUGINS=${2:-/tmp/tryout/plugins}
D=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
sed "s#\${PLUGINS}#$PLUGINS#" "$D/sluice.yaml" > "$T/sluice.yaml"
python3 "$D/normalizing_backend.py" 29181 & B=$!
"$SLUICE" -c "$T/sluice.yaml" > "$T/log" 2>&1 & S=$!
sleep 1.5
for p in /api/x /public/x /public/../api/x /public/%2e%2e/api/x /public/.%2E/api/x; do
  printf '%-24s -> ' "$p"; curl -s --path-as-is -w ' [%{http_code}]\n' "http://127.0.0.1:28180$p"
done
kill $S $B; rm -rf "$T"
