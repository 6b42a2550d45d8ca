#include "core/upstream/health/checker.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "core/common/log.h"
#include "core/event/timeval.h"
#include "core/http/parser.h"

namespace sluice::upstream::health {
namespace {

constexpr size_t kMaxDrain = 64 * 1024;  // response bytes read after the verdict, at most

bool statusExpected(const config::HealthCheck& cfg, uint32_t status) {
  for (const auto& [low, high] : cfg.expected_statuses) {
    if (status >= low && status <= high) return true;
  }
  return false;
}

}  // namespace

// One host's probe loop. Checker thread only. The response is read with the proxy's own
// strict parser (core/http/parser.h), so a probe judges exactly what a request would see.
class Probe : public http::ParserCallbacks {
 public:
  Probe(HealthChecker& owner, event::Worker& thread, std::string cluster,
        std::shared_ptr<Host> host, const config::HealthCheck& cfg)
      : owner_(owner),
        thread_(thread),
        cluster_(std::move(cluster)),
        host_(std::move(host)),
        cfg_(cfg),
        key_(healthCheckKey(cfg)) {
    timer_ = evtimer_new(thread_.base(), &Probe::onTimer, this);
    deadline_ = evtimer_new(thread_.base(), &Probe::onDeadline, this);
    // The first probe soon, spread over up to a second so a big cluster does not probe in a
    // burst.
    uint64_t first = thread_.random() % (std::min<uint64_t>(cfg_.interval_ms, 1000) + 1);
    timeval tv = event::toTimeval(first);
    evtimer_add(timer_, &tv);
  }
  ~Probe() override {
    closeSocket();
    event_free(timer_);
    event_free(deadline_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  const Host* host() const { return host_.get(); }
  const std::string& key() const { return key_; }

 private:
  static void onTimer(evutil_socket_t, short, void* arg) { static_cast<Probe*>(arg)->start(); }
  static void onDeadline(evutil_socket_t, short, void* arg) {
    auto* self = static_cast<Probe*>(arg);
    if (self->verdict_ >= 0) {  // the status came in time; only the rest of the body did not
      self->finishWithVerdict();
      return;
    }
    self->finish(false, true, "timed out after " + std::to_string(self->cfg_.timeout_ms) + " ms");
  }
  static void onSocket(evutil_socket_t, short what, void* arg) {
    auto* self = static_cast<Probe*>(arg);
    if (!self->connected_) {
      self->onConnected();
    } else if (what & EV_READ) {
      self->onReadable();
    }
  }

  void start() {
    sockaddr_storage addr{};
    memcpy(&addr, host_->sockAddr(), host_->sockAddrLen());
    if (cfg_.port != 0) {
      uint16_t port = htons(static_cast<uint16_t>(cfg_.port));
      if (addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&addr)->sin_port = port;
      if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = port;
    }
    timeval tv = event::toTimeval(cfg_.timeout_ms);
    evtimer_add(deadline_, &tv);
    fd_ = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      finish(false, false, std::string("socket: ") + strerror(errno));
      return;
    }
    connected_ = false;
    verdict_ = -1;
    complete_ = false;
    drained_ = 0;
    parser_ =
        std::make_unique<http::Parser>(http::Parser::Type::kResponse, this, http::ParserLimits{});
    int rc = connect(fd_, reinterpret_cast<sockaddr*>(&addr), host_->sockAddrLen());
    if (rc != 0 && errno != EINPROGRESS) {
      finish(false, false, std::string("connect: ") + strerror(errno));
      return;
    }
    io_ = event_new(thread_.base(), fd_, EV_WRITE, &Probe::onSocket, this);
    event_add(io_, nullptr);
  }

  void onConnected() {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      finish(false, false, std::string("connect: ") + strerror(err));
      return;
    }
    connected_ = true;
    if (cfg_.type == config::HealthCheck::Type::kTcp) {
      finish(true, false, "");
      return;
    }
    std::string host = cfg_.host.empty() ? host_->address() : cfg_.host;
    std::string request = "GET " + cfg_.path + " HTTP/1.1\r\nHost: " + host +
                          "\r\nUser-Agent: sluice-health-check\r\nConnection: close\r\n\r\n";
    ssize_t n = send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    if (n != static_cast<ssize_t>(request.size())) {
      finish(false, false, n < 0 ? std::string("send: ") + strerror(errno) : "short send");
      return;
    }
    event_free(io_);
    io_ = event_new(thread_.base(), fd_, EV_READ | EV_PERSIST, &Probe::onSocket, this);
    event_add(io_, nullptr);
  }

  void onReadable() {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      // After the final head the verdict stands (a close-delimited or cut-short body says
      // nothing more about health).
      if (verdict_ >= 0) {
        finishWithVerdict();
      } else {
        finish(false, false,
               n == 0 ? "closed before a response head" : std::string("recv: ") + strerror(errno));
      }
      return;
    }
    size_t consumed = 0;
    http::Parser::Result r = parser_->execute(buf, static_cast<size_t>(n), &consumed);
    if (complete_) {
      finishWithVerdict();  // the whole response was read: close cleanly, no reset
      return;
    }
    if (r == http::Parser::Result::kError) {
      if (verdict_ >= 0) {
        finishWithVerdict();
      } else {
        finish(false, false, "bad response: " + parser_->errorReason());
      }
      return;
    }
    // The rest of the response is read (up to kMaxDrain), as asked by Connection: close:
    // closing with unread bytes would reset the connection, which backends log as an error on
    // every probe.
    if (verdict_ >= 0 && (drained_ += static_cast<size_t>(n)) > kMaxDrain) finishWithVerdict();
  }

  // http::ParserCallbacks.
  int onHead(http::MessageHead& head) override {
    if (head.status < 200) return 0;  // interim (RFC 9110 §15.2): the final head follows
    verdict_ = statusExpected(cfg_, head.status) ? 1 : 0;
    verdict_detail_ = verdict_ == 1 ? "" : "status " + std::to_string(head.status);
    return 0;
  }
  void onBody(const char*, size_t) override {}
  bool onMessageComplete() override {
    if (verdict_ < 0) return false;  // an interim response ended: parse on
    complete_ = true;
    return true;
  }

  void finishWithVerdict() { finish(verdict_ == 1, false, verdict_detail_); }

  void closeSocket() {
    if (io_ != nullptr) {
      event_free(io_);
      io_ = nullptr;
    }
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
  }

  void finish(bool ok, bool timed_out, std::string detail) {
    closeSocket();
    evtimer_del(deadline_);
    uint64_t next = cfg_.interval_ms;
    if (cfg_.interval_jitter_ms != 0) next += thread_.random() % (cfg_.interval_jitter_ms + 1);
    timeval tv = event::toTimeval(next);
    evtimer_add(timer_, &tv);
    ProbeResult result{ok, timed_out, std::move(detail)};
    owner_.on_result_(cluster_, host_, result);
  }

  HealthChecker& owner_;
  event::Worker& thread_;
  std::string cluster_;
  std::shared_ptr<Host> host_;
  config::HealthCheck cfg_;
  std::string key_;
  ::event* timer_ = nullptr;
  ::event* deadline_ = nullptr;
  ::event* io_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
  std::unique_ptr<http::Parser> parser_;  // one per probe (each uses its own connection)
  int verdict_ = -1;       // from the final response head: 1 pass, 0 fail, -1 not yet
  bool complete_ = false;  // the whole response has been read
  std::string verdict_detail_;
  size_t drained_ = 0;  // response bytes read after the status line
};

HealthChecker::HealthChecker(OnResult on_result)
    : on_result_(std::move(on_result)), thread_(std::make_unique<event::Worker>(0)) {
  thread_->start([] { log::setThreadName("health"); });
}

HealthChecker::~HealthChecker() {
  thread_->post([this] { probes_.clear(); });
  thread_->stop();
  thread_->join();
}

void HealthChecker::setTargets(const std::string& cluster, const config::HealthCheck& cfg,
                               std::vector<std::shared_ptr<Host>> hosts) {
  thread_->post(
      [this, cluster, cfg, hosts = std::move(hosts)] { applyTargets(cluster, cfg, hosts); });
}

void HealthChecker::applyTargets(const std::string& cluster, const config::HealthCheck& cfg,
                                 const std::vector<std::shared_ptr<Host>>& hosts) {
  std::vector<std::unique_ptr<Probe>>& current = probes_[cluster];
  std::vector<std::unique_ptr<Probe>> next;
  const std::string key = healthCheckKey(cfg);
  for (const auto& host : hosts) {
    std::unique_ptr<Probe> probe;
    for (auto& p : current) {
      if (p != nullptr && p->host() == host.get() && p->key() == key) probe = std::move(p);
    }
    if (probe == nullptr) probe = std::make_unique<Probe>(*this, *thread_, cluster, host, cfg);
    next.push_back(std::move(probe));
  }
  current = std::move(next);  // probes of hosts that left are destroyed (socket closed)
  if (current.empty()) probes_.erase(cluster);
}

}  // namespace sluice::upstream::health
