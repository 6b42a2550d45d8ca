#!/bin/sh
# Usage: repro.sh SLUICE_BINARY PLUGIN_DIR   (PLUGIN_DIR holds libcors.so, libparam_validation.so, libround_robin.so)
set -u
SLUICE=${1:-/work/wt/tryout/bazel-bin/core/sluice}; PLUGINS=${2:-/tmp/tryout/plugins}
D=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
sed "s#\${PLUGINS}#$PLUGINS#" "$D/sluice.yaml" > "$T/sluice.yaml"
python3 -m http.server --bind 127.0.0.1 29381 >/dev/null 2>&1 & B=$!
"$SLUICE" -c "$T/sluice.yaml" > "$T/log" 2>&1 & S=$!
sleep 1.5
for n in 16 20 24 26; do
  o="https://$(head -c $n /dev/zero | tr '\0' a)!"
  /usr/bin/time -f "Origin of $n letters: %es" curl -s -o /dev/null -m 120 -H "Origin: $o" http://127.0.0.1:28380/
done
for n in 25 30 34; do
  /usr/bin/time -f "code= of $n letters: %es" curl -s -o /dev/null -m 120 "http://127.0.0.1:28380/?code=$(head -c $n /dev/zero | tr '\0' a)b"
done
# Meanwhile the worker serves nobody: one more slow origin and a plain request behind it.
o="https://$(head -c 25 /dev/zero | tr '\0' a)!"
curl -s -o /dev/null -m 120 -H "Origin: $o" http://127.0.0.1:28380/ & C=$!; sleep 0.2
/usr/bin/time -f "plain GET behind it: %es" curl -s -o /dev/null -m 120 http://127.0.0.1:28380/
wait $C
kill $S $B; rm -rf "$T"
