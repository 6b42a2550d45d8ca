#!/bin/sh
# Usage: repro.sh SLUICE_BINARY PLUGIN_DIR   (PLUGIN_DIR holds libapi_key_auth.so, libround_robin.so)
set -u
SLUICE=${1:-/work/wt/tryout/bazel-bin/core/sluice}; PLUGINS=${2:-/tmp/tryout/plugins}
D=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
sed "s#\${PLUGINS}#$PLUGINS#" "$D/sluice.yaml" > "$T/sluice.yaml"
python3 -m http.server --bind 127.0.0.1 29281 >/dev/null 2>&1 & B=$!
"$SLUICE" -c "$T/sluice.yaml" > "$T/log" 2>&1 & S=$!
sleep 1.5
python3 "$D/client.py"
kill $S $B; rm -rf "$T"
