#include "tools/zk/zk_client.h"

#include <chrono>
#include <thread>

namespace sluice::zk {

void ZkClient::onWatch(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type == ZOO_SESSION_EVENT) static_cast<ZkClient*>(ctx)->state_.store(state);
}

ZkClient::ZkClient(const std::string& servers, int session_timeout_ms, int connect_timeout_ms,
                   const clientid_t* session) {
  // The C client's log off, once, before the first handle's threads start: its lines format
  // the server address in one static buffer (format_endpoint_info), a data race when two
  // handles log at once (tests hold several clients through a ZooKeeper outage). Callers get
  // every call's return code instead.
  static bool quiet = (zoo_set_debug_level(static_cast<ZooLogLevel>(0)), true);
  (void)quiet;
  zh_ = zookeeper_init(servers.c_str(), &ZkClient::onWatch, session_timeout_ms, session, this, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(connect_timeout_ms);
  while (zh_ != nullptr && !connected() && state_.load() != ZOO_EXPIRED_SESSION_STATE &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ZkClient::~ZkClient() { close(); }

void ZkClient::close() {
  if (zh_ != nullptr) zookeeper_close(zh_);
  zh_ = nullptr;
  state_.store(0);
}

int64_t ZkClient::sessionId() const { return zh_ != nullptr ? zoo_client_id(zh_)->client_id : 0; }

clientid_t ZkClient::clientId() const { return *zoo_client_id(zh_); }

int ZkClient::addDigest(const std::string& user_password) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  struct Wait {
    std::atomic<int> rc{1};
  } wait;
  int rc = zoo_add_auth(
      zh_, "digest", user_password.data(), static_cast<int>(user_password.size()),
      [](int r, const void* d) { static_cast<Wait*>(const_cast<void*>(d))->rc.store(r); }, &wait);
  if (rc != ZOK) return rc;
  for (int i = 0; i < 2000 && wait.rc.load() == 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return wait.rc.load();
}

int ZkClient::create(const std::string& path, const std::string& data, bool ephemeral,
                     bool creator_only) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
    int rc = zoo_create(zh_, path.substr(0, at).c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                        nullptr, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return rc;
  }
  return zoo_create(zh_, path.c_str(), data.empty() ? nullptr : data.data(),
                    data.empty() ? -1 : static_cast<int>(data.size()),
                    creator_only ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE,
                    ephemeral ? ZOO_EPHEMERAL : 0, nullptr, 0);
}

int ZkClient::set(const std::string& path, const std::string& data) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  return zoo_set(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), -1);
}

int ZkClient::remove(const std::string& path, bool recursive) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  if (recursive) {
    std::vector<std::string> kids;
    int rc = children(path, &kids);
    if (rc != ZOK) return rc;
    for (const std::string& k : kids) {
      rc = remove(path == "/" ? "/" + k : path + "/" + k, true);
      if (rc != ZOK && rc != ZNONODE) return rc;
    }
  }
  return zoo_delete(zh_, path.c_str(), -1);
}

int ZkClient::get(const std::string& path, std::string* data) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  std::vector<char> buf(1 << 20);
  int len = static_cast<int>(buf.size());
  int rc = zoo_get(zh_, path.c_str(), 0, buf.data(), &len, nullptr);
  if (rc == ZOK) data->assign(buf.data(), len > 0 ? len : 0);
  return rc;
}

int ZkClient::children(const std::string& path, std::vector<std::string>* out) {
  if (zh_ == nullptr) return ZINVALIDSTATE;
  String_vector v{};
  int rc = zoo_get_children(zh_, path.c_str(), 0, &v);
  out->clear();
  if (rc == ZOK) {
    for (int32_t i = 0; i < v.count; ++i) out->emplace_back(v.data[i]);
    deallocate_String_vector(&v);
  }
  return rc;
}

bool ZkClient::exists(const std::string& path) {
  return zh_ != nullptr && zoo_exists(zh_, path.c_str(), 0, nullptr) == ZOK;
}

bool expireSession(const std::string& servers, const clientid_t& id) {
  // One join-and-close can miss: when the owner reconnects between our join and our close, the
  // server moves the session back to it and drops our connection, so our closeSession is never
  // sent. Join again until the server answers that the session has expired.
  for (int attempt = 0; attempt < 20; ++attempt) {
    ZkClient other(servers, 10000, 10000, &id);
    if (other.state() == ZOO_EXPIRED_SESSION_STATE) return attempt > 0;
    if (other.connected()) other.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace sluice::zk
