#!/bin/sh
# Usage: repro.sh SLUICE_BINARY PLUGIN_DIR  (PLUGIN_DIR: libapi_key_auth.so, libbasic_auth.so, libround_robin.so)
set -u
SLUICE=${1:-/work/wt/tryout/bazel-bin/core/sluice}; PLUGINS=${2:-/tmp/tryout/plugins}
D=$(cd "$(dirname "$0")" && pwd); T=$(mktemp -d)
sed "s#\${PLUGINS}#$PLUGINS#; s#\${DIR}#$T#" "$D/sluice.yaml" > "$T/sluice.yaml"
echo "alice old-key" > "$T/keys"
echo "bob:$(openssl passwd -6 -salt aaaaaaaa oldpw)" > "$T/htpasswd"
python3 -m http.server --bind 127.0.0.1 29481 >/dev/null 2>&1 & B=$!
"$SLUICE" -c "$T/sluice.yaml" > "$T/log" 2>&1 & S=$!
sleep 1.5
req() { curl -s -o /dev/null -w '%{http_code}' -u "bob:$2" -H "X-Api-Key: $1" http://127.0.0.1:28480/; }
echo "before: old key + old password -> $(req old-key oldpw)"
# Rotate: revoke old-key, change bob's password; the YAML stays the same. Reload.
echo "alice new-key" > "$T/keys"
echo "bob:$(openssl passwd -6 -salt bbbbbbbb newpw)" > "$T/htpasswd"
kill -HUP $S; sleep 1; grep reload "$T/log"
echo "after:  old key + old password -> $(req old-key oldpw)   (expected 401)"
echo "after:  new key + new password -> $(req new-key newpw)   (expected 200)"
# Break the file: the reload is refused, so the file *is* read, and then thrown away.
echo "bob" > "$T/htpasswd"; kill -HUP $S; sleep 1; grep -A1 refused "$T/log"
kill $S $B; rm -rf "$T"
