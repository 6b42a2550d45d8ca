// A small synchronous ZooKeeper client (the C client's sync API) for tools and tests: connect,
// create with parents, set, delete recursively, read. Not used by the plugin (which is fully
// asynchronous). One object per session; calls from one thread at a time.
#pragma once

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <string>
#include <vector>

namespace sluice::zk {

class ZkClient {
 public:
  // Connects to `servers` (a connect string, chroot allowed) and waits up to `connect_timeout_ms`
  // for the session; check connected(). With `session`, joins that existing session instead of
  // opening a new one (ZooKeeper lets a second client take over a session with its password).
  explicit ZkClient(const std::string& servers, int session_timeout_ms = 10000,
                    int connect_timeout_ms = 10000, const clientid_t* session = nullptr);
  ~ZkClient();
  ZkClient(const ZkClient&) = delete;
  ZkClient& operator=(const ZkClient&) = delete;

  bool connected() const { return state_.load() == ZOO_CONNECTED_STATE; }
  // The last session state the client reported (ZOO_CONNECTED_STATE, ZOO_EXPIRED_SESSION_STATE..).
  int state() const { return state_.load(); }
  int64_t sessionId() const;
  clientid_t clientId() const;
  zhandle_t* handle() { return zh_; }

  // Adds digest credentials "user:password" to the session. Returns a ZooKeeper code.
  int addDigest(const std::string& user_password);
  // Creates `path` with `data`; missing parents are created first (persistent, empty). With
  // `creator_only`, the new node's ACL lets only this session's authenticated identity in.
  // Returns ZOK, ZNODEEXISTS or another ZooKeeper code.
  int create(const std::string& path, const std::string& data = "", bool ephemeral = false,
             bool creator_only = false);
  int set(const std::string& path, const std::string& data);
  // Deletes `path` and, with `recursive`, everything under it. ZNONODE when absent.
  int remove(const std::string& path, bool recursive = true);
  int get(const std::string& path, std::string* data);
  int children(const std::string& path, std::vector<std::string>* out);
  bool exists(const std::string& path);
  // Closes the session now (its ephemeral nodes go at once).
  void close();

 private:
  static void onWatch(zhandle_t*, int type, int state, const char*, void* ctx);
  zhandle_t* zh_ = nullptr;
  std::atomic<int> state_{0};
};

// Joins the session `id` from a second client and closes it, again until a join is answered
// "expired" (a close can be lost when the owner reconnects in between): the server has ended the
// session and its owner sees it expire at its next contact. Returns true when the session is
// gone (false when it was already gone before the first attempt, or never went).
bool expireSession(const std::string& servers, const clientid_t& id);

}  // namespace sluice::zk
