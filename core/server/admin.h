// The admin listener (main thread, libevent's evhttp): operators' read-only view.
//   GET /ready     200 "ready", or 503 "draining" once a drain began (for load balancers)
//   GET /stats     JSON counters summed over workers
//   GET /clusters  JSON: every cluster, its balancer and hosts (weight, health, in-flight,
//                  total requests)
//   GET /config    JSON: running config version, its SHA-256, file, last reload outcome, text
//   POST /reload   reload now (SIGHUP does the same); `?dry_run=1` validates and lists what
//                  would change without applying it. 200 with the changes, or 400 with the
//                  errors (file:line:col: reason) while the old config keeps serving
#pragma once

#include <event2/http.h>

#include <string>

namespace sluice::server {

class Server;

class Admin {
 public:
  explicit Admin(Server& server);
  ~Admin();
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;

  // Binds `address` ("ip:port"). False with *error when it cannot.
  bool listen(const std::string& address, std::string* error);
  void setDraining() { draining_ = true; }

 private:
  static void onRequest(evhttp_request* req, void* arg);
  std::string statsJson() const;
  std::string clustersJson() const;
  std::string configJson() const;

  Server& server_;
  evhttp* http_ = nullptr;
  bool draining_ = false;
};

}  // namespace sluice::server
