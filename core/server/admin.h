// The admin listener (main thread, libevent's evhttp): the operator's view and controls.
// Loopback by default (admin.address defaults to 127.0.0.1:9901).
//   GET /healthz            200 "ok" while the main loop runs (liveness)
//   GET /ready              200 "ready", or 503 "draining" once a drain began (readiness)
//   GET /stats              JSON counters summed over workers (from the metric families)
//   GET /stats/prometheus   every metric in the Prometheus text format 0.0.4
//   GET /stats/summary      JSON: uptime, config version, reloads, draining, and per listener
//                           (and in total) responses by class, connections and the request
//                           duration histogram with p50/p90/p99 (admin_summary.h)
//   GET /                   the dashboard: a page (and /dashboard/* scripts and styles) compiled
//                           into the binary that charts /stats/summary and /clusters
//   GET /clusters           JSON: every cluster, its balancer and hosts (weight, health,
//                           in-flight, total requests)
//   GET /config             JSON: running config version, its SHA-256, file, last reload, text
//   GET /plugins            JSON: loaded plugins (name, kind, version, ABI, file, content hash)
//   POST /reload            reload now (SIGHUP does the same); `?dry_run=1` validates and lists
//                           what would change. 200 with the changes, or 400 with the errors
//   POST /drain             graceful drain as SIGTERM's, without exiting: 202, then listeners
//                           close and in-flight requests finish; the process stays up (/ready
//                           503) until SIGTERM/SIGINT
// With `admin.token_file`, every POST needs `Authorization: Bearer <token>` (else 401 with
// `WWW-Authenticate: Bearer`); GETs stay open. The token is the running config's, so a reload
// that changes the file's content rotates it.
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
  void handle(evhttp_request* req, const std::string& path, bool post);
  bool authorized(evhttp_request* req) const;
  // Requests a web browser was made to send on someone else's behalf: on a loopback admin
  // address, a Host that is not an IP literal or `localhost` (DNS rebinding: a page whose name
  // resolves to 127.0.0.1); on any address, a POST whose Origin is not the admin itself
  // (cross-site request forgery: a page POSTing /drain). Sets *why.
  bool forgedByBrowser(evhttp_request* req, bool post, std::string* why) const;
  void drain(evhttp_request* req);
  // Serves the dashboard asset at `path` (admin_dashboard.cc); false when there is none.
  bool serveDashboard(evhttp_request* req, const std::string& path);

  // Views (admin_views.cc).
  std::string statsJson() const;
  std::string summaryJson() const;
  std::string prometheusText() const;
  std::string clustersJson() const;
  std::string configJson() const;
  std::string pluginsJson() const;

  Server& server_;
  evhttp* http_ = nullptr;
  bool draining_ = false;
  bool loopback_ = false;  // bound to 127.0.0.0/8 or ::1: only IP or localhost Hosts
};

}  // namespace sluice::server
