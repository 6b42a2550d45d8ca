#include "test/discovery/file/e2e_fixture.h"

#include <cstdlib>
#include <utility>

namespace sluice::test {
namespace {

std::string dirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

constexpr char kOneSource[] = R"(workers: 2
plugin_paths: [${FILE_DIR}, ${RR_DIR}]
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
discovery:
  - name: file
    config: { path: ${ENDPOINTS}, interval_ms: ${INTERVAL} }
    cluster_defaults: { balancer: round_robin, connect_timeout_ms: 1000 }
)";

}  // namespace

int intervalMs() {
  const char* env = std::getenv("FILE_DISCOVERY_INTERVAL_MS");
  return env != nullptr && std::atoi(env) >= 50 ? std::atoi(env) : 100;
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::map<std::string, std::string> pluginDirs() {
  return {{"FILE_DIR", dirOf(runfile("discovery/file/libfile.so"))},
          {"RR_DIR", dirOf(runfile("balancers/round_robin/libround_robin.so"))}};
}

ClientLoop::ClientLoop(int port, std::string path, int threads)
    : port_(port), path_(std::move(path)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

void ClientLoop::stop() {
  stop_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::map<std::string, int> ClientLoop::served() {
  std::lock_guard<std::mutex> lock(mutex_);
  return served_;
}

void ClientLoop::resetCounts() {
  std::lock_guard<std::mutex> lock(mutex_);
  served_.clear();
}

Clock::time_point ClientLoop::lastServedBy(const std::string& backend) {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_[backend];
}

std::vector<std::string> ClientLoop::failures() {
  std::lock_guard<std::mutex> lock(mutex_);
  return failures_;
}

void ClientLoop::run() {
  std::unique_ptr<RawConnection> conn;
  for (int i = 0; !stop_; ++i) {
    if (conn == nullptr) conn = std::make_unique<RawConnection>(port_, 5000);
    bool sent = conn->send(buildRequest("GET", path_ + std::to_string(i), {}, "", port_));
    Response r = sent ? conn->readResponse() : Response{};
    std::lock_guard<std::mutex> lock(mutex_);
    ++total_;
    if (!sent || !r.complete || r.status != 200) {
      failures_.push_back("request " + std::to_string(i) + ": sent=" + std::to_string(sent) +
                          " status " + std::to_string(r.status) + " " + r.error + " " + r.body);
      conn.reset();
      continue;
    }
    std::string backend = r.header("X-Backend");
    ++served_[backend];
    last_[backend] = Clock::now();
    if (!r.keep_alive) conn.reset();  // the proxy may close a connection if it says so
  }
}

std::string FileGatewayTest::list(std::initializer_list<const EchoBackend*> backends) {
  std::string out = "[";
  for (const EchoBackend* b : backends) out += (out.size() > 1 ? ", " : "") + b->address();
  return out + "]";
}

std::string oneSourceConfig(const std::string& endpoints, int port, int interval_ms) {
  std::map<std::string, std::string> vars = pluginDirs();
  vars["PORT"] = std::to_string(port);
  vars["ENDPOINTS"] = endpoints;
  vars["INTERVAL"] = std::to_string(interval_ms);
  return substitute(kOneSource, vars);
}

void FileGatewayTest::startSluice() {
  port_ = freePort();
  config_ = std::make_unique<TempConfig>(oneSourceConfig(endpoints_, port_, intervalMs()));
  sluice_ = std::make_unique<Sluice>(config_->path(), port_);
}

void FileGatewayTest::startSluice(const std::string& config_template,
                                  std::map<std::string, std::string> vars) {
  port_ = freePort();
  vars["PORT"] = std::to_string(port_);
  vars.merge(pluginDirs());
  config_ = std::make_unique<TempConfig>(substitute(config_template, vars));
  sluice_ = std::make_unique<Sluice>(config_->path(), port_);
}

std::string FileGatewayTest::get(const std::string& path) {
  Response r = httpGet(port_, path);
  return std::to_string(r.status) + " " + r.header("X-Backend");
}

std::map<std::string, int> FileGatewayTest::burst(const std::string& path, int n) {
  std::map<std::string, int> out;
  RawConnection conn(port_);
  for (int i = 0; i < n; ++i) {
    Response r =
        conn.send(buildRequest("GET", path, {}, "", port_)) ? conn.readResponse() : Response{};
    ++out[r.complete && r.status == 200 ? r.header("X-Backend") : "!"];
  }
  return out;
}

size_t FileGatewayTest::countOutput(const std::string& text) {
  std::string out = sluice_->process().output();
  size_t n = 0;
  for (size_t at = out.find(text); at != std::string::npos; at = out.find(text, at + 1)) ++n;
  return n;
}

}  // namespace sluice::test
