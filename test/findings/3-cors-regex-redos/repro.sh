#!/bin/sh
# Usage: repro.sh SLUICE_BINARY PLUGIN_DIR   (PLUGIN_DIR holds libcors.so, libparam_validation.so, libround_robin.so)
# Times crafted Origins and query values against the two patterns of sluice.yaml. Fixed (RE2): every
# line is milliseconds and the answers are 403 (origin not allowed) / 400 (pattern violated).
set -u
SLUICE=${1:-bazel-bin/core/sluice}; PLUGINS=${2:-/tmp/tryout/plugins}
D=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
sed "s#\${PLUGINS}#$PLUGINS#" "$D/sluice.yaml" > "$T/sluice.yaml"
python3 -m http.server --bind 127.0.0.1 29381 >/dev/null 2>&1 & B=$!
"$SLUICE" -c "$T/sluice.yaml" > "$T/log" 2>&1 & S=$!
sleep 1.5
letters() { head -c "$1" /dev/zero | tr '\0' a; }
for n in 16 20 24 26 40 1000; do
  o="https://$(letters $n)!"
  /usr/bin/time -f "  %es" curl -s -o /dev/null -w "preflight, Origin of $n letters: %{http_code}" -m 120 \
    -X OPTIONS -H "Origin: $o" -H "Access-Control-Request-Method: GET" http://127.0.0.1:28380/
done
for n in 25 30 34 1000; do
  /usr/bin/time -f "  %es" curl -s -o /dev/null -w "code= of $n letters: %{http_code}" -m 120 \
    "http://127.0.0.1:28380/?code=$(letters $n)b"
done
# Allowed values still pass: 204 and 200.
curl -s -o /dev/null -w "preflight, https://pr42.example.com: %{http_code}\n" -X OPTIONS \
  -H "Origin: https://pr42.example.com" -H "Access-Control-Request-Method: GET" http://127.0.0.1:28380/
curl -s -o /dev/null -w "code= of 1000 letters, no b: %{http_code}\n" "http://127.0.0.1:28380/?code=$(letters 1000)"
# Before the fix the worker served nobody meanwhile: one slow origin and a plain request behind it.
o="https://$(letters 40)!"
curl -s -o /dev/null -m 120 -H "Origin: $o" http://127.0.0.1:28380/ & C=$!; sleep 0.2
/usr/bin/time -f "  %es" curl -s -o /dev/null -w "plain GET behind it: %{http_code}" -m 120 http://127.0.0.1:28380/
wait $C
kill $S $B; cat "$T/log" | grep -i -E "error|refused" ; rm -rf "$T"
