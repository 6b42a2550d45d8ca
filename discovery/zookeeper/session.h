// One ZooKeeper session at a time, over the C client's asynchronous API (libzookeeper_mt).
//
// Threads: every method and every callback handed in runs on the discovery's loop thread
// (loop.h). The C client runs two threads of its own per handle (I/O and completions); its
// watcher and completion callbacks only post copies of what they got to the loop, tagged with
// the handle's generation, so an answer of a closed handle is recognised and dropped.
//
// Connection handling: the C client reconnects by itself while its session lives (it tries the
// servers of the connect string in turn; watches are re-registered by the client). When the
// session is gone (expired, or refused authentication) the handle is closed and a new one is
// opened after a backoff (0, 200 ms, 400 ms, ... up to 10 s, with jitter); `zookeeper_init`
// failing (e.g. no server name resolves) is retried the same way. The owner hears about all of
// it through Events and re-reads what it needs on `connected(new_session)`.
#pragma once

#include <zookeeper/zookeeper.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/api/sdk/host.h"
#include "discovery/zookeeper/config.h"
#include "discovery/zookeeper/loop.h"

namespace sluice::zookeeper {

class Session {
 public:
  struct Events {
    // Connected; `new_session` when this is a session we did not have before (watches and
    // ephemeral nodes of an older one are gone).
    std::function<void(bool new_session)> connected;
    // The connection dropped; the session (and its watches) may still live.
    std::function<void()> disconnected;
    // The session is gone for good (expired, auth failed); a new one is on its way.
    std::function<void()> expired;
    // A node watch fired on `path` (created, deleted, data or children changed).
    std::function<void(const std::string& path)> watch;
  };
  using Done = std::function<void(int rc)>;
  using ChildrenDone = std::function<void(int rc, std::vector<std::string> children)>;
  using DataDone = std::function<void(int rc, std::string data, int64_t ephemeral_owner)>;

  Session(const ZookeeperConfig& config, Loop& loop, sdk::Host host, std::string label,
          Events events);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Opens the first handle (connecting happens in the background).
  void open();
  // Closes the handle: the session ends on the server (its ephemeral nodes go at once), and no
  // callback of it runs after this returns. Blocks while the C client says goodbye.
  void close();

  bool connected() const { return connected_; }
  // The current session's id (0 before the first connection).
  int64_t sessionId() const { return session_id_; }
  // The current session's id and password, for tests that expire it from another client.
  bool clientId(clientid_t* out) const;

  // Asynchronous calls; `done` runs on the loop thread with a ZooKeeper result code (ZOK,
  // ZNONODE, ZNODEEXISTS, ZCONNECTIONLOSS, ...). With `watch`, the node's watch is set (exists,
  // data or children) and reported through Events::watch. Without a handle, done gets
  // ZCONNECTIONLOSS.
  void getChildren(const std::string& path, bool watch, ChildrenDone done);
  void getData(const std::string& path, bool watch, DataDone done);
  void exists(const std::string& path, bool watch, Done done);
  void create(const std::string& path, const std::string& data, bool ephemeral, Done done);
  void remove(const std::string& path, Done done);

 private:
  struct HandleCtx;
  static void onWatcher(zhandle_t* zh, int type, int state, const char* path, void* ctx);
  void onState(uint64_t generation, int state);
  void onNodeEvent(uint64_t generation, const std::string& path);
  void openHandle();
  void closeHandle();
  void reopenLater();

  const ZookeeperConfig& config_;
  Loop& loop_;
  sdk::Host host_;
  std::string label_;
  Events events_;
  zhandle_t* zh_ = nullptr;
  std::unique_ptr<HandleCtx> ctx_;  // the watcher context of zh_
  uint64_t generation_ = 0;
  bool connected_ = false;
  bool closed_ = false;
  int64_t session_id_ = 0;
  int64_t backoff_ms_ = 0;
  uint64_t reopen_timer_ = 0;
};

// "0x" + hex of a session id, as ZooKeeper prints it.
std::string sessionIdText(int64_t id);

}  // namespace sluice::zookeeper
