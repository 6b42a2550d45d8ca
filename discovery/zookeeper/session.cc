#include "discovery/zookeeper/session.h"

#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <random>
#include <utility>

namespace sluice::zookeeper {
namespace {

constexpr int64_t kFirstBackoffMs = 200;
constexpr int64_t kMaxBackoffMs = 10000;

// The C client's own log lines are switched off, once per process, before its first handle
// starts its threads. Its messages format the server address in one static buffer shared by
// every handle (format_endpoint_info in libzookeeper_mt 3.8), so two handles logging at once —
// two discovery entries, both reconnecting during a ZooKeeper outage — race on it (TSan: a
// data race in the library's sprintf). The plugin logs every session state change itself
// (connecting, connected, lost, expired) with the session id, which is what an operator acts on.
void quietClientLog() {
  static std::once_flag once;
  std::call_once(once, [] { zoo_set_debug_level(static_cast<ZooLogLevel>(0)); });
}

// A completion's context: the loop to post to and the caller's callback. Owned by the C client
// between a successful send and the completion, which takes it back.
template <typename DoneT>
struct Call {
  Loop* loop;
  DoneT done;
};

template <typename DoneT>
std::unique_ptr<Call<DoneT>> takeCall(const void* data) {
  return std::unique_ptr<Call<DoneT>>(static_cast<Call<DoneT>*>(const_cast<void*>(data)));
}

void postDone(std::unique_ptr<Call<Session::Done>> c, int rc) {
  c->loop->post([d = std::move(c->done), rc] { d(rc); });
}

// Sends one asynchronous call: `send(ctx)` hands `ctx` to the C client as the completion's data
// and returns its code. Unless that is ZOK the completion never runs, so `fail(done, rc)` is
// posted to the loop instead (no handle: ZCONNECTIONLOSS).
template <typename DoneT, typename Send, typename Fail>
void dispatch(Loop& loop, zhandle_t* zh, DoneT done, Send&& send, Fail fail) {
  auto call = std::make_unique<Call<DoneT>>(Call<DoneT>{&loop, std::move(done)});
  int rc = zh == nullptr ? ZCONNECTIONLOSS : send(call.get());
  if (rc == ZOK) {
    call.release();  // the completion takes it back
    return;
  }
  std::shared_ptr<Call<DoneT>> owned(std::move(call));
  loop.post([owned, rc, fail] { fail(owned->done, rc); });
}

const char* stateName(int state) {
  if (state == ZOO_CONNECTED_STATE) return "connected";
  if (state == ZOO_CONNECTING_STATE) return "connecting";
  if (state == ZOO_ASSOCIATING_STATE) return "associating";
  if (state == ZOO_EXPIRED_SESSION_STATE) return "expired";
  if (state == ZOO_AUTH_FAILED_STATE) return "auth failed";
  return "not connected";
}

}  // namespace

std::string sessionIdText(int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, static_cast<uint64_t>(id));
  return buf;
}

struct Session::HandleCtx {
  Session* session;
  uint64_t generation;
};

Session::Session(const ZookeeperConfig& config, Loop& loop, sdk::Host host, std::string label,
                 Events events)
    : config_(config),
      loop_(loop),
      host_(host),
      label_(std::move(label)),
      events_(std::move(events)) {}

Session::~Session() { close(); }

void Session::open() {
  closed_ = false;
  quietClientLog();
  openHandle();
}

void Session::close() {
  closed_ = true;
  if (reopen_timer_ != 0) loop_.cancel(reopen_timer_);
  reopen_timer_ = 0;
  closeHandle();
}

void Session::openHandle() {
  ++generation_;
  ctx_ = std::make_unique<HandleCtx>(HandleCtx{this, generation_});
  zh_ = zookeeper_init(config_.servers.c_str(), &Session::onWatcher,
                       static_cast<int>(config_.session_timeout_ms), nullptr, ctx_.get(), 0);
  if (zh_ == nullptr) {
    host_.log(sdk::LogLevel::kError, label_ + ": cannot start a ZooKeeper client for '" +
                                         config_.servers + "' (no server address resolves?)");
    ctx_.reset();
    reopenLater();
    return;
  }
  if (config_.auth.has_value()) {
    std::string cred = config_.auth->first + ":" + config_.auth->second;
    zoo_add_auth(zh_, "digest", cred.data(), static_cast<int>(cred.size()), nullptr, nullptr);
  }
}

void Session::closeHandle() {
  if (zh_ != nullptr) {
    zookeeper_close(zh_);  // joins the client's threads: no callback of zh_ after this
    zh_ = nullptr;
  }
  ctx_.reset();
  connected_ = false;
}

void Session::reopenLater() {
  if (closed_) return;
  int64_t delay = backoff_ms_;
  backoff_ms_ = backoff_ms_ == 0 ? kFirstBackoffMs : std::min(backoff_ms_ * 2, kMaxBackoffMs);
  if (delay > 0) {
    static thread_local std::mt19937 rng(std::random_device{}());
    delay = std::uniform_int_distribution<int64_t>(delay * 4 / 5, delay * 6 / 5)(rng);
  }
  reopen_timer_ = loop_.runAfter(std::chrono::milliseconds(delay), [this] {
    reopen_timer_ = 0;
    if (!closed_) openHandle();
  });
}

void Session::onWatcher(zhandle_t*, int type, int state, const char* path, void* ctx) {
  auto* c = static_cast<HandleCtx*>(ctx);
  Session* self = c->session;
  uint64_t generation = c->generation;
  if (type == ZOO_SESSION_EVENT) {
    self->loop_.post([self, generation, state] { self->onState(generation, state); });
  } else if (path != nullptr) {
    self->loop_.post(
        [self, generation, p = std::string(path)] { self->onNodeEvent(generation, p); });
  }
}

void Session::onState(uint64_t generation, int state) {
  if (generation != generation_ || zh_ == nullptr) return;
  if (state == ZOO_CONNECTED_STATE) {
    const clientid_t* id = zoo_client_id(zh_);
    int64_t sid = id != nullptr ? id->client_id : 0;
    bool fresh = sid != session_id_;
    session_id_ = sid;
    connected_ = true;
    backoff_ms_ = 0;
    host_.log(sdk::LogLevel::kInfo, label_ + ": connected to ZooKeeper (" +
                                        (fresh ? "new session " : "session ") + sessionIdText(sid) +
                                        ", timeout " + std::to_string(zoo_recv_timeout(zh_)) +
                                        " ms)");
    if (events_.connected) events_.connected(fresh);
    return;
  }
  if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
    host_.log(state == ZOO_AUTH_FAILED_STATE ? sdk::LogLevel::kError : sdk::LogLevel::kWarn,
              label_ + ": ZooKeeper session " + sessionIdText(session_id_) + " " +
                  stateName(state) + "; opening a new session");
    closeHandle();
    if (events_.expired) events_.expired();
    reopenLater();
    return;
  }
  if (connected_) {
    connected_ = false;
    host_.log(sdk::LogLevel::kWarn, label_ + ": connection to ZooKeeper lost (" + stateName(state) +
                                        "); reconnecting, clusters unchanged");
    if (events_.disconnected) events_.disconnected();
  }
}

void Session::onNodeEvent(uint64_t generation, const std::string& path) {
  if (generation != generation_ || zh_ == nullptr) return;
  if (events_.watch) events_.watch(path);
}

bool Session::clientId(clientid_t* out) const {
  if (zh_ == nullptr || !connected_) return false;
  *out = *zoo_client_id(zh_);
  return true;
}

void Session::getChildren(const std::string& path, bool watch, ChildrenDone done) {
  auto cb = [](int rc, const String_vector* strings, const void* data) {
    auto c = takeCall<ChildrenDone>(data);
    std::vector<std::string> names;
    if (rc == ZOK && strings != nullptr) {
      for (int32_t i = 0; i < strings->count; ++i) names.emplace_back(strings->data[i]);
    }
    c->loop->post(
        [d = std::move(c->done), rc, n = std::move(names)]() mutable { d(rc, std::move(n)); });
  };
  dispatch(
      loop_, zh_, std::move(done),
      [&](void* ctx) { return zoo_aget_children(zh_, path.c_str(), watch ? 1 : 0, cb, ctx); },
      [](const ChildrenDone& d, int rc) { d(rc, {}); });
}

void Session::getData(const std::string& path, bool watch, DataDone done) {
  auto cb = [](int rc, const char* value, int len, const Stat* stat, const void* data) {
    auto c = takeCall<DataDone>(data);
    std::string text = rc == ZOK && value != nullptr && len > 0 ? std::string(value, len) : "";
    int64_t owner = rc == ZOK && stat != nullptr ? stat->ephemeralOwner : 0;
    c->loop->post([d = std::move(c->done), rc, t = std::move(text), owner]() mutable {
      d(rc, std::move(t), owner);
    });
  };
  dispatch(
      loop_, zh_, std::move(done),
      [&](void* ctx) { return zoo_aget(zh_, path.c_str(), watch ? 1 : 0, cb, ctx); },
      [](const DataDone& d, int rc) { d(rc, "", 0); });
}

void Session::exists(const std::string& path, bool watch, Done done) {
  auto cb = [](int rc, const Stat*, const void* data) { postDone(takeCall<Done>(data), rc); };
  dispatch(
      loop_, zh_, std::move(done),
      [&](void* ctx) { return zoo_aexists(zh_, path.c_str(), watch ? 1 : 0, cb, ctx); },
      [](const Done& d, int rc) { d(rc); });
}

void Session::create(const std::string& path, const std::string& data, bool ephemeral, Done done) {
  auto cb = [](int rc, const char*, const void* d) { postDone(takeCall<Done>(d), rc); };
  dispatch(
      loop_, zh_, std::move(done),
      [&](void* ctx) {
        return zoo_acreate(zh_, path.c_str(), data.empty() ? nullptr : data.data(),
                           data.empty() ? -1 : static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE,
                           ephemeral ? ZOO_EPHEMERAL : 0, cb, ctx);
      },
      [](const Done& d, int rc) { d(rc); });
}

void Session::remove(const std::string& path, Done done) {
  auto cb = [](int rc, const void* d) { postDone(takeCall<Done>(d), rc); };
  dispatch(
      loop_, zh_, std::move(done),
      [&](void* ctx) { return zoo_adelete(zh_, path.c_str(), -1, cb, ctx); },
      [](const Done& d, int rc) { d(rc); });
}

}  // namespace sluice::zookeeper
