# shellcheck shell=bash disable=SC2034,SC2154  # sourced: its variables are the caller's
# bench/lib/common.sh — what the bench scripts share: process plumbing (temp dir, start/stop,
# cleanup on exit/error/Ctrl-C, CPU pinning, free ports, waiting for a server) and the configs of
# the backend and of the three proxies. Sourced, never run.
#
# The script that sources it sets, before sourcing:
#   bench_name       its name for messages ("bench/run")
#   keep pin         0|1 (--keep, --no-pin)
#   PROXY_CPU LOAD_CPU BUILD_TIMEOUT root
#   bench_tools      the programs it needs (default: nginx haproxy wrk curl)
# and may set CHAIN (the filters of the sluice+chain config).
# Then: sluice_prepare BUILD(0|1) PLUGIN...   builds (optionally) and copies sluice and plugins.

CHAIN=${CHAIN:-"request_id api_key_auth rate_limit concurrency_limit"}


# fd 9 = the script's stderr, also inside functions whose stderr is redirected (where a trap may
# run)
exec 9>&2
log() { echo "${bench_name#bench/}: $*" >&9; }
die() { echo "$bench_name: $*" >&9; exit 1; }

# bench_tools: what the sourcing script runs (default: what bench/run runs)
for tool in ${bench_tools:-nginx haproxy wrk curl}; do
  command -v "$tool" >/dev/null ||
    PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null ||
    die "$tool not found (tools/install_deps --test installs it)"
done
export PATH=$PATH:/usr/sbin:/sbin

# --- processes and cleanup ------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench.XXXXXX")
pids=()

stop_pid() { # stop_pid PID: TERM, up to 5 s, then KILL
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do stop_pid "$pid"; done
  pids=()
  if ((keep)); then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'echo >&9; log "interrupted"; cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# Pinning: the proxy alone on PROXY_CPU; wrk and the backend share LOAD_CPU.
ncpu=$(nproc)
if ((pin && ncpu >= 2 && PROXY_CPU < ncpu && LOAD_CPU < ncpu)) &&
  command -v taskset >/dev/null; then
  on_proxy_cpu=(taskset -c "$PROXY_CPU")
  on_load_cpu=(taskset -c "$LOAD_CPU")
  pinning="proxy on CPU $PROXY_CPU; wrk and backend on CPU $LOAD_CPU (taskset)"
else
  on_proxy_cpu=()
  on_load_cpu=()
  pinning="none (all processes share all CPUs)"
fi

declare -A used_ports=()
# Ports are picked below the kernel's ephemeral range, so that no outgoing connection (wrk's, a
# proxy's, anyone's) can hold the port when a server binds it.
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || ephemeral_low=32768
port_lo=10000
port_hi=$((ephemeral_low > port_lo + 1000 ? ephemeral_low - 1 : 65535))
# free_port: sets `port` to a loopback TCP port no socket uses and that this script has not
# handed out before (not in a $(...) subshell, so that used_ports is kept).
free_port() {
  local p i
  for ((i = 0; i < 500; i++)); do
    p=$((port_lo + (RANDOM * 32768 + RANDOM) % (port_hi - port_lo + 1)))
    [[ -n ${used_ports[$p]:-} ]] && continue
    if command -v ss >/dev/null; then
      [[ -z $(ss -Htan "( sport = :$p )" 2>/dev/null) ]] || continue
    fi
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      used_ports[$p]=1
      port=$p
      return 0
    fi
  done
  die "no free port found"
}

# start NAME CPU-PREFIX... -- CMD...: starts CMD in the background, logs to $tmp/NAME.out.
# Sets started_pid (taskset execs, so this is the server's own pid).
start() {
  local name=$1
  shift
  local prefix=()
  while [[ $1 != -- ]]; do prefix+=("$1"); shift; done
  shift
  "${prefix[@]}" "$@" >"$tmp/$name.out" 2>&1 </dev/null 9>&- &
  started_pid=$!
  pids+=("$started_pid")
}

# wait_http NAME PID URL: until URL answers 200 (10 s), or die with the server's log. Returns 1
# (for a retry on another port) when the server exited at start because its port was taken.
wait_http() {
  local name=$1 pid=$2 url=$3 i code
  local -a hdr=()
  [[ -n ${4:-} ]] && hdr=(-H "$4") # a header the target needs to answer 200 (sluice+chain's key)
  for ((i = 0; i < 100; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      forget "$pid"
      grep -qi "address already in use" "$tmp/$name.out" && return 1
      cat "$tmp/$name.out" >&9
      die "$name exited at start"
    fi
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${hdr[@]}" "$url" || true)
    [[ $code == 200 ]] && return 0
    sleep 0.1
  done
  cat "$tmp/$name.out" >&9
  die "$name did not answer 200 on $url within 10 s (last status: ${code:-none})"
}

forget() { # forget PID (no longer ours to stop)
  local pid=$1 p keep_pids=()
  for p in "${pids[@]}"; do [[ $p == "$pid" ]] || keep_pids+=("$p"); done
  pids=("${keep_pids[@]}")
}
stop() { stop_pid "$1"; forget "$1"; } # stop PID, and forget it

# waited CMD...: runs CMD in the background and waits for it. A foreground command would delay
# the INT/TERM traps until it ends (and wrk exits 0 on SIGINT, so bash would not act on Ctrl-C at
# all); `wait` returns at once on a trapped signal, and cleanup stops CMD with the rest.
waited() {
  "$@" 9>&- &
  local pid=$! rc=0
  pids+=("$pid")
  wait "$pid" || rc=$?
  forget "$pid"
  return "$rc"
}

# --- sluice build ---------------------------------------------------------------------------------
# sluice_prepare BUILD CHAIN_TOO: builds sluice and the plugins (`bazel build -c opt`) when BUILD
# is 1 and SLUICE_BIN is unset, then copies the binary and the plugins every config below uses
# (plus the gateway chain's when CHAIN_TOO is 1) into $tmp/sluice: a rebuild in the checkout during
# a run must not swap them. Sets sluice_version.
sluice_prepare() {
  local build=$1 chain_too=$2 so
  if [[ -n ${SLUICE_BIN:-} ]]; then
    build=0
    [[ -x $SLUICE_BIN ]] || die "SLUICE_BIN=$SLUICE_BIN is not executable"
  fi
  if ((build)); then
    command -v bazel >/dev/null || die "bazel not found (tools/install_deps installs bazel-bootstrap)"
    log "building sluice (bazel build -c opt)"
    if ! waited build_sluice >"$tmp/build.out" 2>&1 </dev/null; then
      tail -30 "$tmp/build.out" >&9
      die "bazel build failed (see above)"
    fi
  fi
  bin_dir=$root/bazel-bin
  local sluice_src=${SLUICE_BIN:-$bin_dir/core/sluice}
  [[ -x $sluice_src ]] || die "no sluice binary at $sluice_src (run without --no-build)"
  mkdir -p "$tmp/sluice/plugins"
  cp "$sluice_src" "$tmp/sluice/sluice"
  local plugins=(filters/request_id/librequest_id.so filters/headers/libheaders.so
    balancers/round_robin/libround_robin.so)
  ((chain_too)) && plugins+=(filters/api_key_auth/libapi_key_auth.so
    filters/rate_limit/librate_limit.so filters/concurrency_limit/libconcurrency_limit.so)
  for so in "${plugins[@]}"; do
    [[ -f $bin_dir/$so ]] || die "plugin $bin_dir/$so not built"
    cp "$bin_dir/$so" "$tmp/sluice/plugins/"
  done
  sluice_version=$("$tmp/sluice/sluice" --version 2>&1 | head -1 || true)
}
# In the background subshell that `waited` starts, so the cd stays there.
build_sluice() {
  cd "$root" &&
    exec timeout "$BUILD_TIMEOUT" bazel build -c opt //core:sluice //filters/... //balancers/...
}

# --- configs --------------------------------------------------------------------------------------
# Each writer puts its config under $tmp; the backend listens on backend_port (set by the caller,
# with free_port).
mkdir -p "$tmp/backend" "$tmp/nginx" "$tmp/haproxy"

nginx_common() { # nginx_common DIR [WORKERS]: the main-context lines shared by both nginx instances
  # One worker: master_process off, so that the one process is the worker (its pid is the one
  # measured). More: a master and WORKERS workers (the measuring sums the process tree).
  local workers=${2:-1} master=off
  ((workers > 1)) && master=on
  cat <<EOF
daemon off;
master_process $master;
worker_processes $workers;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections 4096; }
EOF
}
nginx_http_common() { # temp paths in DIR (the Debian defaults under /var/lib/nginx need root)
  cat <<EOF
  access_log off;
  keepalive_timeout 75s;
  keepalive_requests 1000000;
  client_body_temp_path $1/client_body;
  proxy_temp_path $1/proxy;
  fastcgi_temp_path $1/fastcgi;
  uwsgi_temp_path $1/uwsgi;
  scgi_temp_path $1/scgi;
EOF
}

write_backend() { # the backend nginx config, on backend_port: / answers "hello\n"; /16k a 16 KiB file
  head -c 16384 /dev/zero | tr '\0' 'x' >"$tmp/backend/16k.txt"
  {
    nginx_common "$tmp/backend"
    echo "http {"
    nginx_http_common "$tmp/backend"
    cat <<EOF
  server {
    listen 127.0.0.1:$backend_port;
    location / {
      default_type text/plain;
      return 200 "hello\n";
    }
    location = /16k {
      default_type text/plain;
      alias $tmp/backend/16k.txt;
    }
  }
}
EOF
  } >"$tmp/backend/nginx.conf"
}

write_nginx_proxy() { # PORT [EXTRA] (PROXY_WORKERS workers, default 1); EXTRA: lines for
  # `location /` (bench/bodies' streaming settings).
  # With several workers each gets its own listening socket (reuseport), as sluice's workers do.
  local reuseport=""
  ((${PROXY_WORKERS:-1} > 1)) && reuseport=" reuseport"
  {
    nginx_common "$tmp/nginx" "${PROXY_WORKERS:-1}"
    echo "http {"
    nginx_http_common "$tmp/nginx"
    cat <<EOF
  upstream backend {
    server 127.0.0.1:$backend_port;
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:$1$reuseport;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
${2:-}
    }
  }
}
EOF
  } >"$tmp/nginx/nginx.conf"
}

write_haproxy() { # PORT
  cat >"$tmp/haproxy/haproxy.cfg" <<EOF
global
  nbthread ${PROXY_WORKERS:-1}
  maxconn 4096
defaults
  mode http
  option http-keep-alive
  http-reuse always
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 60s
frontend fe
  bind 127.0.0.1:$1
  default_backend be
backend be
  server backend 127.0.0.1:$backend_port
EOF
}

# The API key wrk sends to sluice+chain (and the consumer api_key_auth names for it).
chain_key=bench-key-7d1f0c2a9b8e4f56
write_sluice() { # PORT FILTERS(0|1|chain) FILE [ADMIN_PORT] [ACCESS_LOG_PATH]
  {
    if [[ -n ${4:-} ]]; then echo "admin: { address: 127.0.0.1:$4 }"; fi
    cat <<EOF
workers: ${PROXY_WORKERS:-1}
drain_timeout_ms: 1000
plugin_paths: [$tmp/sluice/plugins]
listeners:
  - name: bench
    address: 127.0.0.1:$1
EOF
    # SLUICE_BALANCE=kernel: the workers keep what the kernel's SO_REUSEPORT hash gives them.
    if [[ -n ${SLUICE_BALANCE:-} ]]; then echo "    connection_balance: $SLUICE_BALANCE"; fi
    if [[ $2 == 1 ]]; then
      cat <<EOF
    filters:
      - name: request_id
      - name: headers
        config:
          request:
            set: { X-Gateway: sluice }
          response:
            add: { X-Served-By: sluice }
EOF
    elif [[ $2 == chain ]]; then
      # The gateway's chain as a deployment would have it: an id, the caller identified by its
      # API key, a per-consumer rate limit far above what wrk can send (never reached: every
      # request is admitted, the bucket is still taken), and a per-route in-flight limit above
      # the connection count.
      # CHAIN=none: no filter at all (what the chain target costs without its filters: the API
      # key header the client sends).
      if [[ $CHAIN == none ]]; then echo "    filters: []"; else echo "    filters:"; fi
      local f
      for f in $CHAIN; do
        case "$f" in
          none) ;;
          request_id) echo "      - name: request_id" ;;
          api_key_auth)
            cat <<EOF
      - name: api_key_auth
        config:
          keys:
            - { key: $chain_key, consumer: bench }
EOF
            ;;
          rate_limit)
            echo "      - name: rate_limit"
            echo "        config: { rate: 100000000, per: second, key: consumer }"
            ;;
          concurrency_limit)
            echo "      - name: concurrency_limit"
            echo "        config: { max: 100000, per: route }"
            ;;
          *) die "CHAIN: unknown filter '$f' (known: request_id api_key_auth rate_limit concurrency_limit)" ;;
        esac
      done
    fi
    if [[ -n ${5:-} ]]; then
      cat <<EOF
    access_log: { path: $5 }
EOF
    fi
    cat <<EOF
routes:
  - prefix: /
    cluster: backend
clusters:
  - name: backend
    balancer: { name: round_robin }
    endpoints: [127.0.0.1:$backend_port]
EOF
  } >"$3"
}

