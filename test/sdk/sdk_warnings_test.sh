#!/usr/bin/env bash
# The SDK as a plugin author's -Werror build sees it: installed with tools/install_sdk into a
# temp prefix, then compiled with the installed sluice-plugin.pc by g++, and by clang++ when
# installed (it is not in the install lists), at -O0 and -O2 with -Wall -Wextra -Wpedantic -Werror:
#   - all_headers.cc (every header; a filter, a balancer and a discovery plugin with every hook
#     overridden and with none), once per plugin kind's entry macro;
#   - every header alone (each one is self-contained; not the *_impl.h parts, which
#     sdk/filter.h, balancer.h and discovery.h include at their end and say so);
#   - the C ABI headers as C (gcc -std=c99);
# and one build linked with the .pc's Libs exports exactly one symbol, sluice_plugin_entry.
set -euo pipefail

runfiles=${TEST_SRCDIR:?run under bazel test}/sluice
tmp=${TEST_TMPDIR:?}
prefix=$tmp/prefix
"$runfiles/tools/install_sdk" --prefix "$prefix" >"$tmp/install.log"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags sluice-plugin)
libs=$(pkg-config --libs sluice-plugin)
src=$runfiles/test/sdk/all_headers.cc
warn=(-Wall -Wextra -Wpedantic -Werror)
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
compile() { # compile LABEL COMMAND...: runs it, keeps its output on failure
  local label=$1
  shift
  if ! "$@" >"$tmp/out.txt" 2>&1; then
    fail "$label"
    echo "  $*" >&2
    sed 's/^/  | /' "$tmp/out.txt" | head -40 >&2
  fi
}

compilers=(g++)
if command -v clang++ >/dev/null; then
  compilers+=(clang++)
else
  echo "clang++ not installed: checking g++ only"
fi

headers=()
for h in "$prefix"/include/sluice/core/api/*.h "$prefix"/include/sluice/core/api/sdk/*.h; do
  headers+=("${h#"$prefix"/include/sluice/}")
done
((${#headers[@]} >= 15)) || fail "only ${#headers[@]} headers installed: ${headers[*]}"

for cxx in "${compilers[@]}"; do
  for opt in -O0 -O2; do
    for entry in 1 2 3; do
      # shellcheck disable=SC2086  # pkg-config output is a list of flags
      compile "$cxx $opt all_headers.cc (entry $entry)" \
        "$cxx" "${warn[@]}" "$opt" $cflags -DSDK_TEST_ENTRY=$entry -c "$src" -o "$tmp/all.o"
    done
  done
  for h in "${headers[@]}"; do
    [[ $h == *_impl.h ]] && continue
    printf '#include "%s"\n' "$h" >"$tmp/one.cc"
    # shellcheck disable=SC2086
    compile "$cxx $h alone" "$cxx" "${warn[@]}" $cflags -c "$tmp/one.cc" -o "$tmp/one.o"
  done
done

for h in common.h filter.h balancer.h discovery.h; do
  printf '#include "core/api/%s"\n' "$h" >"$tmp/one.c"
  compile "gcc -std=c99 core/api/$h" gcc -std=c99 "${warn[@]}" -I"$prefix/include/sluice" \
    -c "$tmp/one.c" -o "$tmp/one.o"
done

# shellcheck disable=SC2086
compile "link with --libs" g++ "${warn[@]}" -O2 "$src" $cflags $libs -o "$tmp/libsdk_test.so"
if [[ -f $tmp/libsdk_test.so ]]; then
  exported=$(nm -D --defined-only "$tmp/libsdk_test.so" | awk '{ print $3 }' | sort | tr '\n' ' ')
  [[ $exported == "sluice_plugin_entry " ]] ||
    fail "the plugin exports '$exported', expected only sluice_plugin_entry"
fi

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "SDK headers clean with ${warn[*]} under ${compilers[*]}"
