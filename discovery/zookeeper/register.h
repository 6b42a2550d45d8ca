// Self-registration (`register:`): this gateway's own addresses as ephemeral nodes in the
// sluice layout, <path>/<host:port> with optional JSON data, so whatever sits in front of a fleet
// of gateways (a load balancer's discovery, another sluice with `format: sluice`) finds them.
// The original gateway called this its "virtual service".
//
// Ephemeral nodes live as long as the session: they are created (with their parents, persistent)
// on every connection, re-created on a new session, re-created when someone deletes them
// (an exists watch), and vanish at once when sluice stops (stop() closes the session) or ~session
// timeout after it dies. A node left by an earlier run (another session owns it) is replaced.
// Loop thread only.
#pragma once

#include <string>
#include <vector>

#include "core/api/sdk/host.h"
#include "discovery/zookeeper/config.h"
#include "discovery/zookeeper/session.h"

namespace sluice::zookeeper {

class Registrar {
 public:
  Registrar(const RegisterConfig& config, Session& session, sdk::Host host, std::string label);

  void onConnected();
  void onWatch(const std::string& path);
  // The full paths of the nodes this gateway keeps.
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  void ensure(const std::string& path, int attempt);

  const RegisterConfig& config_;
  Session& session_;
  sdk::Host host_;
  std::string label_;
  std::vector<std::string> paths_;
};

// "auto:PORT" → "<first non-loopback IPv4 of this host>:PORT" (127.0.0.1 when there is none);
// other addresses unchanged.
std::string resolveAutoAddress(const std::string& address);

}  // namespace sluice::zookeeper
