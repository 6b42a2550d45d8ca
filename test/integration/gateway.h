// Shared pieces of the integration tests: a real sluice process started from a YAML template on
// free ports, readers for the echo backend's JSON body and sluice's admin /stats, and /proc
// memory probes. Everything runs on loopback; nothing is mocked.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test/harness/harness.h"

namespace sluice::test {

// A running sluice serving `yaml_template` after substitution of:
//   ${PORT}     the listener port (a free port; use it in `address: 127.0.0.1:${PORT}`)
//   ${ADMIN}    the admin port (a free port)
//   ${PLUGINS}  a flow list of the plugin directories in the runfiles: `plugin_paths: ${PLUGINS}`
// plus `vars`. If the ports were taken between freePort() and sluice's bind (tests run in
// parallel), it retries with new ports a few times. ADD_FAILURE()s if it never comes up.
class Gateway {
 public:
  explicit Gateway(const std::string& yaml_template,
                   const std::map<std::string, std::string>& vars = {},
                   std::vector<std::string> extra_args = {});
  bool ready() const { return process_ != nullptr && ready_; }
  int port() const { return port_; }
  int adminPort() const { return admin_port_; }
  const std::string& configPath() const { return config_path_; }
  Process& process() { return *process_; }

 private:
  std::unique_ptr<Process> process_;
  std::string config_path_;
  int port_ = 0;
  int admin_port_ = 0;
  bool ready_ = false;
};

// A port on 127.0.0.1 that refuses connections for as long as this object lives: a socket is
// bound to it but never listens, so no other (parallel) test can take it. For "backend down".
class DeadPort {
 public:
  DeadPort();
  ~DeadPort();
  DeadPort(const DeadPort&) = delete;
  DeadPort& operator=(const DeadPort&) = delete;
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// `plugin_paths` value for configs run by tests: the filters and balancers runfiles directories.
std::string pluginPathsYaml();

// ---- the echo backend's JSON body (see tools/echo_backend --help)

// The string value of top-level `key` ("backend", "method", "path", "version", "client",
// "body_fnv1a"), JSON-unescaped; nullopt when absent.
std::optional<std::string> echoString(const std::string& body, const std::string& key);
// The numeric value of `key` ("body_length"), or -1.
int64_t echoNumber(const std::string& body, const std::string& key);
// The "headers" array: each received header as "Name: value", in order.
std::vector<std::string> echoHeaders(const std::string& body);
// Values of received header `name` (case-insensitive), in order.
std::vector<std::string> echoHeaderValues(const std::string& body, const std::string& name);

// ---- sluice's admin endpoint

// GET /stats on the admin port, parsed as {"name": number}; empty on failure.
std::map<std::string, uint64_t> adminStats(int admin_port);

// ---- memory of a process (Linux /proc)

// False in a build under AddressSanitizer, whose quarantine keeps freed memory resident, or
// ThreadSanitizer, whose shadow memory is several times the application's: RSS bounds say
// nothing there (tests assert them only in normal builds).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif

// VmRSS (current resident set) and VmHWM (peak resident set) of `pid` in KiB; -1 if unknown.
int64_t vmRssKiB(pid_t pid);
int64_t vmHwmKiB(pid_t pid);

// ---- responses

// One raw request on a fresh connection: the first response, and whether the peer closed the
// connection (FIN or reset) within `close_wait_ms` after it.
struct Exchange {
  Response response;
  bool closed = false;
};
Exchange exchange(int port, const std::string& raw, int close_wait_ms = 3000);

// Requests sluice sent upstream so far: new upstream connections plus reused pooled ones
// (admin /stats upstream_cx_total + upstream_cx_reused). -1 if /stats cannot be read.
int64_t upstreamRequests(int admin_port);

// True when `r` is a gateway-generated JSON error with this status: status line, Content-Type
// application/json and a body naming the status (`{"status":NNN,...}`).
::testing::AssertionResult isJsonError(const Response& r, int status);

}  // namespace sluice::test
