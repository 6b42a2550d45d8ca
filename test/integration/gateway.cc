#include "test/integration/gateway.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace sluice::test {
namespace {

constexpr int kStartAttempts = 4;

// Reads a "VmXXX:   1234 kB" line of /proc/PID/status.
int64_t procStatusKiB(pid_t pid, const std::string& field) {
  std::string status = readFile("/proc/" + std::to_string(pid) + "/status");
  size_t at = status.find("\n" + field + ":");
  if (at == std::string::npos) return -1;
  return std::atoll(status.c_str() + at + field.size() + 2);
}

// Parses the JSON string literal starting at body[at] (the opening quote); sets *end past it.
std::string jsonString(const std::string& body, size_t at, size_t* end) {
  std::string out;
  size_t i = at + 1;
  while (i < body.size() && body[i] != '"') {
    if (body[i] == '\\' && i + 1 < body.size()) {
      char e = body[i + 1];
      if (e == 'u' && i + 5 < body.size()) {
        out.push_back(static_cast<char>(std::strtol(body.substr(i + 2, 4).c_str(), nullptr, 16)));
        i += 6;
        continue;
      }
      out.push_back(e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e);
      i += 2;
      continue;
    }
    out.push_back(body[i++]);
  }
  *end = i + 1;
  return out;
}

}  // namespace

DeadPort::DeadPort() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "cannot reserve a port";
    return;
  }
  port_ = ntohs(addr.sin_port);
}

DeadPort::~DeadPort() {
  if (fd_ >= 0) close(fd_);
}

std::string pluginPathsYaml() {
  return "[\"" + runfile("filters") + "\", \"" + runfile("balancers") + "\"]";
}

Gateway::Gateway(const std::string& yaml_template, const std::map<std::string, std::string>& vars,
                 std::vector<std::string> extra_args) {
  std::string last_log;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    port_ = freePort();
    admin_port_ = freePort();
    while (admin_port_ == port_) admin_port_ = freePort();
    std::map<std::string, std::string> all = vars;
    all["PORT"] = std::to_string(port_);
    all["ADMIN"] = std::to_string(admin_port_);
    all["PLUGINS"] = pluginPathsYaml();
    TempConfig config(substitute(yaml_template, all));
    config_path_ = config.path();
    std::vector<std::string> argv{runfile("core/sluice"), "-c", config_path_};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<Process>(argv, std::map<std::string, std::string>{}, "sluice");
    if (process_->waitForPort(port_, 15000) && process_->running()) {
      if (yaml_template.find("${ADMIN}") == std::string::npos ||
          process_->waitForPort(admin_port_, 5000)) {
        ready_ = true;
        return;
      }
    }
    last_log = process_->outputTail();
    bool port_race = last_log.find("in use") != std::string::npos;
    process_->kill();
    if (!port_race) break;
  }
  ADD_FAILURE() << "sluice did not start on 127.0.0.1:" << port_ << "; config "
                << readFile(config_path_) << "\nlog:\n"
                << last_log;
}

std::optional<std::string> echoString(const std::string& body, const std::string& key) {
  std::string marker = "\"" + key + "\": \"";
  size_t at = body.find(marker);
  if (at == std::string::npos) return std::nullopt;
  size_t end = 0;
  return jsonString(body, at + marker.size() - 1, &end);
}

int64_t echoNumber(const std::string& body, const std::string& key) {
  std::string marker = "\"" + key + "\": ";
  size_t at = body.find(marker);
  if (at == std::string::npos) return -1;
  return std::atoll(body.c_str() + at + marker.size());
}

std::vector<std::string> echoHeaders(const std::string& body) {
  std::vector<std::string> out;
  size_t at = body.find("\"headers\": [");
  if (at == std::string::npos) return out;
  size_t i = at + 12;
  while (i < body.size() && body[i] != ']') {
    if (body[i] == '"') {
      size_t end = 0;
      out.push_back(jsonString(body, i, &end));
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<std::string> echoHeaderValues(const std::string& body, const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& line : echoHeaders(body)) {
    size_t colon = line.find(": ");
    if (colon == name.size() && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0) {
      out.push_back(line.substr(colon + 2));
    }
  }
  return out;
}

std::map<std::string, uint64_t> adminStats(int admin_port) {
  std::map<std::string, uint64_t> out;
  Response r = httpGet(admin_port, "/stats");
  if (!r.complete || r.status != 200) return out;
  std::istringstream in(r.body);
  std::string line;
  while (std::getline(in, line)) {
    size_t q1 = line.find('"');
    size_t q2 = q1 == std::string::npos ? q1 : line.find('"', q1 + 1);
    size_t colon = q2 == std::string::npos ? q2 : line.find(':', q2);
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    size_t digit = value.find_first_of("0123456789");
    if (digit == std::string::npos) continue;
    out[line.substr(q1 + 1, q2 - q1 - 1)] = std::strtoull(value.c_str() + digit, nullptr, 10);
  }
  return out;
}

Exchange exchange(int port, const std::string& raw, int close_wait_ms) {
  Exchange out;
  RawConnection conn(port);
  if (!conn.connected()) {
    out.response.error = "cannot connect";
    return out;
  }
  conn.send(raw);  // may fail half-way when the server refuses early; the reply still counts
  out.response = conn.readResponse();
  out.closed = conn.isClosed(close_wait_ms);
  return out;
}

int64_t upstreamRequests(int admin_port) {
  std::map<std::string, uint64_t> stats = adminStats(admin_port);
  if (stats.count("upstream_cx_total") == 0) return -1;
  return static_cast<int64_t>(stats["upstream_cx_total"] + stats["upstream_cx_reused"]);
}

int64_t vmRssKiB(pid_t pid) { return procStatusKiB(pid, "VmRSS"); }

int64_t vmHwmKiB(pid_t pid) { return procStatusKiB(pid, "VmHWM"); }

::testing::AssertionResult isJsonError(const Response& r, int status) {
  if (!r.complete) return ::testing::AssertionFailure() << "incomplete response: " << r.error;
  if (r.status != status) {
    return ::testing::AssertionFailure()
           << "status " << r.status << ", expected " << status << "; body: " << r.body;
  }
  if (r.header("Content-Type") != "application/json") {
    return ::testing::AssertionFailure() << "Content-Type '" << r.header("Content-Type") << "'";
  }
  if (r.body.find("\"status\":" + std::to_string(status)) == std::string::npos) {
    return ::testing::AssertionFailure() << "body does not name the status: " << r.body;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sluice::test
