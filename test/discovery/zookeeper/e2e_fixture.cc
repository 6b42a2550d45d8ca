#include "test/discovery/zookeeper/e2e_fixture.h"

#include <signal.h>

#include <utility>

namespace sluice::test {
namespace {

std::string dirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

constexpr char kConfig[] = R"(workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: [${ZK_DIR}, ${RR_DIR}]
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
discovery:
${ENTRIES})";

}  // namespace

std::unique_ptr<ZkServer> ZkGatewayTest::server_;

bool waitUntil(const std::function<bool()>& done, milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

std::string zkEntry(const std::string& config) {
  return "  - name: zookeeper\n    config: { " + config +
         " }\n    cluster_defaults: { balancer: round_robin, connect_timeout_ms: 1000 }\n";
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
    if (!r.keep_alive) conn.reset();
  }
}

void ZkGatewayTest::SetUp() {
  ASSERT_NE(server_, nullptr);
  if (!server_->running() || !server_->serving()) ASSERT_TRUE(server_->start());
  root_ = std::string("/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  zk_ = std::make_unique<zk::ZkClient>(server_->servers());
  ASSERT_TRUE(zk_->connected());
}

std::string ZkGatewayTest::zkConfig(const std::string& more) const {
  return "servers: '" + server_->servers() + "', root: " + root_ + ", session_timeout_ms: 4000" +
         (more.empty() ? "" : ", " + more);
}

std::string ZkGatewayTest::configText(const std::vector<std::string>& entries) const {
  std::string list;
  for (const std::string& e : entries) list += e;
  std::map<std::string, std::string> vars = {
      {"ZK_DIR", dirOf(runfile("discovery/zookeeper/libzookeeper.so"))},
      {"RR_DIR", dirOf(runfile("balancers/round_robin/libround_robin.so"))},
      {"PORT", std::to_string(port_)},
      {"ADMIN", std::to_string(admin_port_)},
      {"ENTRIES", list}};
  return substitute(kConfig, vars);
}

void ZkGatewayTest::startSluice(const std::vector<std::string>& entries) {
  port_ = freePort();
  admin_port_ = freePort();
  reloads_ = 0;
  config_ = std::make_unique<TempConfig>(configText(entries));
  sluice_ = std::make_unique<Sluice>(config_->path(), port_);
}

bool ZkGatewayTest::reloadWith(const std::vector<std::string>& entries) {
  if (!config_->rewrite(configText(entries)) || !sluice_->process().signal(SIGHUP)) return false;
  ++reloads_;
  return sluice_->process().waitForOutput("config version " + std::to_string(reloads_ + 1), 10000);
}

void ZkGatewayTest::registerBackend(const std::string& cluster, const EchoBackend& backend,
                                    const std::string& data) {
  std::string path = root_ + "/" + cluster + "/" + backend.address();
  auto session = std::make_unique<zk::ZkClient>(server_->servers());
  ASSERT_TRUE(session->connected());
  ASSERT_EQ(session->create(path, data, true), ZOK) << path;
  sessions_[path] = std::move(session);
}

void ZkGatewayTest::deregister(const std::string& cluster, const EchoBackend& backend) {
  sessions_.erase(root_ + "/" + cluster + "/" + backend.address());
}

std::string ZkGatewayTest::get(const std::string& path) {
  Response r = httpGet(port_, path);
  return std::to_string(r.status) + " " + r.header("X-Backend");
}

std::map<std::string, int> ZkGatewayTest::burst(const std::string& path, int n) {
  std::map<std::string, int> out;
  RawConnection conn(port_);
  for (int i = 0; i < n; ++i) {
    Response r =
        conn.send(buildRequest("GET", path, {}, "", port_)) ? conn.readResponse() : Response{};
    ++out[r.complete && r.status == 200 ? r.header("X-Backend") : "!"];
  }
  return out;
}

size_t ZkGatewayTest::countOutput(const std::string& text) {
  std::string out = sluice_->process().output();
  size_t n = 0;
  for (size_t at = out.find(text); at != std::string::npos; at = out.find(text, at + 1)) ++n;
  return n;
}

}  // namespace sluice::test
