#include "test/reload/reload_fixture.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace sluice::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStartAttempts = 4;

bool before(Clock::time_point deadline) { return Clock::now() < deadline; }
Clock::time_point after(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }
void nap(int ms = 20) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The number after `"key": ` in `json`, or -1.
int64_t jsonNumber(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return -1;
  return std::atoll(json.c_str() + at + key.size() + 4);
}

}  // namespace

std::string pluginPaths(const std::string& extra) {
  std::string out = "[";
  if (!extra.empty()) out += "\"" + extra + "\", ";
  return out + "\"" + runfile("filters") + "\", \"" + runfile("balancers") + "\"]";
}

ReloadGateway::ReloadGateway(const std::string& yaml_template,
                             std::map<std::string, std::string> vars)
    : vars_(std::move(vars)) {
  std::string last_log;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    port_ = freePort();
    admin_port_ = freePort();
    while (admin_port_ == port_) admin_port_ = freePort();
    vars_["PORT"] = std::to_string(port_);
    vars_["ADMIN"] = std::to_string(admin_port_);
    if (vars_.count("PLUGINS") == 0) vars_["PLUGINS"] = pluginPaths();
    config_ = std::make_unique<TempConfig>(substitute(yaml_template, vars_));
    process_ = std::make_unique<Process>(
        std::vector<std::string>{runfile("core/sluice"), "-c", config_->path()},
        std::map<std::string, std::string>{}, "sluice");
    if (process_->waitForPort(port_, 15000) && process_->waitForPort(admin_port_, 5000) &&
        process_->running()) {
      ready_ = true;
      return;
    }
    last_log = process_->outputTail();
    process_->kill();
    if (last_log.find("in use") == std::string::npos) break;  // not a port race
  }
  ADD_FAILURE() << "sluice did not start; config:\n"
                << readFile(config_->path()) << "\nlog:\n"
                << last_log;
}

std::string ReloadGateway::render(const std::string& yaml_template,
                                  const std::map<std::string, std::string>& vars) const {
  std::map<std::string, std::string> all = vars_;
  for (const auto& [k, v] : vars) all[k] = v;
  return substitute(yaml_template, all);
}

bool ReloadGateway::rewrite(const std::string& yaml_template,
                            const std::map<std::string, std::string>& vars) {
  return config_->rewrite(render(yaml_template, vars));
}

Response ReloadGateway::adminReload(bool dry_run) {
  return httpRequest(admin_port_, "POST", dry_run ? "/reload?dry_run=1" : "/reload");
}

uint64_t ReloadGateway::stat(const std::string& key) { return adminStats(admin_port_)[key]; }

bool ReloadGateway::waitStat(const std::string& key, uint64_t value, int timeout_ms) {
  auto deadline = after(timeout_ms);
  while (before(deadline)) {
    if (stat(key) >= value) return true;
    nap();
  }
  return false;
}

bool ReloadGateway::waitApplied(uint64_t version, int timeout_ms) {
  return process_->waitForOutput("config version " + std::to_string(version) + " running on all",
                                 timeout_ms);
}

uint64_t ReloadGateway::reload(Trigger trigger) {
  std::map<std::string, uint64_t> stats = adminStats(admin_port_);
  const uint64_t next = stats["config_version"] + 1;
  if (trigger == Trigger::kAdmin) {
    Response r = adminReload();
    if (r.status != 200 || r.body.find("\"ok\": true") == std::string::npos ||
        jsonNumber(r.body, "version") != static_cast<int64_t>(next)) {
      ADD_FAILURE() << "POST /reload: " << r.status << " " << r.body;
      return 0;
    }
  } else {
    process_->signal(SIGHUP);
    auto deadline = after(10000);
    while (true) {
      std::map<std::string, uint64_t> now = adminStats(admin_port_);
      if (now["config_version"] >= next) break;
      if (now["reloads_failed"] > stats["reloads_failed"] || !before(deadline)) {
        ADD_FAILURE() << "SIGHUP reload did not apply; log:\n" << process_->outputTail();
        return 0;
      }
      nap();
    }
  }
  if (!waitApplied(next)) {
    ADD_FAILURE() << "version " << next << " never ran on every worker; log:\n"
                  << process_->outputTail();
    return 0;
  }
  return next;
}

std::map<std::string, uint64_t> adminStats(int admin_port) {
  std::map<std::string, uint64_t> out;
  Response r = httpGet(admin_port, "/stats");
  if (!r.complete || r.status != 200) return out;
  static const std::regex kLine("\"([a-z0-9_]+)\": ([0-9]+)");
  for (std::sregex_iterator it(r.body.begin(), r.body.end(), kLine), end; it != end; ++it) {
    out[(*it)[1]] = std::strtoull((*it)[2].str().c_str(), nullptr, 10);
  }
  return out;
}

std::string adminGet(int admin_port, const std::string& path) {
  Response r = httpGet(admin_port, path);
  return r.complete && r.status == 200 ? r.body : "";
}

std::vector<std::string> echoHeaderValues(const std::string& body, const std::string& name) {
  std::vector<std::string> out;
  const std::regex line("\"" + name + ": ([^\"]*)\"", std::regex::icase);
  for (std::sregex_iterator it(body.begin(), body.end(), line), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

uint64_t ClusterStat::total() const {
  uint64_t sum = 0;
  for (const HostStat& h : hosts) sum += h.total;
  return sum;
}

ClusterStat clusterStat(int admin_port, const std::string& cluster) {
  ClusterStat out;
  std::string body = adminGet(admin_port, "/clusters");
  size_t at = body.find("{\"name\": \"" + cluster + "\", ");
  if (at == std::string::npos) return out;
  size_t end = body.find("]}", at);
  std::string text = body.substr(at, end - at);
  static const std::regex kBalancer("\"balancer\": \"([^\"]*)\"");
  static const std::regex kHost(
      "\\{\"address\": \"([^\"]*)\", \"weight\": ([0-9]+), \"healthy\": (true|false), "
      "\"active_requests\": ([0-9]+), \"total_requests\": ([0-9]+)[,}]");
  std::smatch m;
  if (std::regex_search(text, m, kBalancer)) out.balancer = m[1];
  for (std::sregex_iterator it(text.begin(), text.end(), kHost), e; it != e; ++it) {
    HostStat h;
    h.address = (*it)[1];
    h.weight = std::strtoull((*it)[2].str().c_str(), nullptr, 10);
    h.healthy = (*it)[3] == "true";
    h.active = std::strtoull((*it)[4].str().c_str(), nullptr, 10);
    h.total = std::strtoull((*it)[5].str().c_str(), nullptr, 10);
    out.hosts.push_back(h);
  }
  out.found = true;
  return out;
}

std::map<std::string, double> measureShares(int admin_port, const std::string& cluster,
                                            uint64_t requests, int timeout_ms) {
  ClusterStat start = clusterStat(admin_port, cluster);
  auto deadline = after(timeout_ms);
  while (before(deadline)) {
    nap(50);
    ClusterStat now = clusterStat(admin_port, cluster);
    if (now.total() < start.total() + requests) continue;
    std::map<std::string, double> shares;
    for (const HostStat& h : now.hosts) {
      uint64_t was = 0;
      for (const HostStat& s : start.hosts) {
        if (s.address == h.address) was = s.total;
      }
      shares[h.address] =
          static_cast<double>(h.total - was) / static_cast<double>(now.total() - start.total());
    }
    return shares;
  }
  return {};
}

LoadClients::LoadClients(int port, int connections, std::string path, Headers headers, Mode mode)
    : port_(port), mode_(mode) {
  if (mode == Mode::kFresh) headers.emplace_back("Connection", "close");
  request_ = buildRequest("GET", path, headers, "", port);
  for (int i = 0; i < connections; ++i) threads_.emplace_back([this, i] { run(i); });
}

LoadClients::~LoadClients() { stop(); }

void LoadClients::stop() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void LoadClients::fail(const std::string& what) {
  ++failures_;
  std::lock_guard<std::mutex> lock(mu_);
  if (samples_.size() < 10) samples_.push_back(what);
}

std::vector<std::string> LoadClients::failureSamples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

void LoadClients::watchHeader(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  header_ = name;
  header_values_.clear();
  ok_at_watch_ = ok_.load();
}

uint64_t LoadClients::okSinceWatch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ok_.load() - ok_at_watch_;
}

std::map<std::string, uint64_t> LoadClients::headerValues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return header_values_;
}

bool LoadClients::waitResponses(uint64_t n, int timeout_ms) const {
  const uint64_t target = ok() + failures() + n;
  auto deadline = after(timeout_ms);
  while (ok() + failures() < target) {
    if (!before(deadline)) return false;
    nap();
  }
  return true;
}

void LoadClients::run(int index) {
  while (!stop_) {
    RawConnection conn(port_, 10000);
    if (!conn.connected()) {
      fail("client " + std::to_string(index) + ": connect failed");
      nap(50);
      continue;
    }
    while (!stop_) {
      if (!conn.send(request_)) {
        fail("client " + std::to_string(index) + ": send failed");
        break;
      }
      Response r = conn.readResponse();
      const bool closed_ok = mode_ == Mode::kFresh;
      if (!r.complete || r.status < 200 || r.status > 299 || (!r.keep_alive && !closed_ok)) {
        fail("client " + std::to_string(index) + ": status " + std::to_string(r.status) +
             (r.complete ? "" : " incomplete: " + r.error) + (r.keep_alive ? "" : " (closed)") +
             " " + r.body.substr(0, 200));
        break;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);  // with the count, so headerValues() adds up
        ++ok_;
        if (!header_.empty()) ++header_values_[r.header(header_)];
      }
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      if (closed_ok) break;  // next request on a new connection
    }
  }
}

}  // namespace sluice::test
