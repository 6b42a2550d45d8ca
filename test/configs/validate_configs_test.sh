#!/usr/bin/env bash
# Every config shipped in configs/ must pass `sluice --validate` (config and plugins), and a
# broken copy must be refused with file:line:col — so the examples users copy never rot.
# --no-bind-check: the examples' fixed ports (8080, 9901) may be in use on a test machine; that
# says nothing about the files.
set -euo pipefail
sluice="$1"
shift
failed=0
for cfg in "$@"; do
  if out=$("$sluice" --validate --no-bind-check -c "$cfg" 2>&1); then
    echo "ok: $cfg"
  else
    echo "FAILED: $cfg"
    echo "$out"
    failed=1
  fi
done
broken="${TEST_TMPDIR:-/tmp}/broken.yaml"
{ cat "$1"; echo "no_such_key: 1"; } > "$broken"
if out=$("$sluice" --validate --no-bind-check -c "$broken" 2>&1); then
  echo "FAILED: a config with an unknown key was accepted"
  failed=1
elif ! grep -q "broken.yaml:[0-9]*:[0-9]*: .*no_such_key" <<<"$out"; then
  echo "FAILED: the refusal does not name file:line:col and the key:"
  echo "$out"
  failed=1
else
  echo "ok: unknown key refused with its position"
fi
exit $failed
