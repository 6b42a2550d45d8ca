// register — puts backends into ZooKeeper in sluice's layout (<root>/<cluster>/<host:port>,
// optional JSON data) and keeps them there while it runs. The nodes are ephemeral: they live as
// long as this process's session, so the command stays in the foreground (run it next to the
// backend, or under the same supervisor) and Ctrl-C / SIGTERM / the process dying deregisters
// them (at once on a clean exit; after the session timeout on a crash).
//
//   register --servers 127.0.0.1:2181 restapi=10.0.0.5:8080 restapi=10.0.0.6:8080
//   register --servers 127.0.0.1:2181 --weight 5 --zone a --meta version=v2 billing=10.0.0.7:80
//   register --servers 127.0.0.1:2181 --file endpoints.txt     # lines: CLUSTER HOST:PORT [JSON]
//   register --servers 127.0.0.1:2181 --path /services/x/1 --data '{"address":...}'  # any layout
//   register --servers 127.0.0.1:2181 --persistent ...        # create, then exit (no ephemeral)
//   register --servers 127.0.0.1:2181 --delete /sluice/restapi/10.0.0.5:8080
//
// When the session expires (e.g. the process was stopped for longer than the session timeout)
// it opens a new one and registers again.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tools/zk/zk_client.h"

namespace {

volatile sig_atomic_t g_stop = 0;

void usage() {
  std::fprintf(stderr,
               "usage: register --servers HOSTS [--root /sluice] [--session-timeout-ms N]\n"
               "                [--weight N] [--zone Z] [--meta K=V]... [--data JSON]\n"
               "                [--persistent | --delete] [--file FILE] [--path NODE]...\n"
               "                [CLUSTER=HOST:PORT]...\n");
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

struct Options {
  std::string servers;
  std::string root = "/sluice";
  int session_timeout_ms = 10000;
  std::string data;
  bool persistent = false;
  bool remove = false;
  std::vector<std::pair<std::string, std::string>> nodes;  // path, data
};

bool parse(int argc, char** argv, Options* o) {
  std::string weight, zone, meta, file;
  std::vector<std::string> pairs, paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--servers")
      o->servers = next();
    else if (a == "--root")
      o->root = next();
    else if (a == "--session-timeout-ms")
      o->session_timeout_ms = std::atoi(next().c_str());
    else if (a == "--weight")
      weight = next();
    else if (a == "--zone")
      zone = next();
    else if (a == "--meta") {
      std::string kv = next();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) return false;
      meta +=
          (meta.empty() ? "" : ", ") + quote(kv.substr(0, eq)) + ": " + quote(kv.substr(eq + 1));
    } else if (a == "--data")
      o->data = next();
    else if (a == "--persistent")
      o->persistent = true;
    else if (a == "--delete")
      o->remove = true;
    else if (a == "--file")
      file = next();
    else if (a == "--path")
      paths.push_back(next());
    else if (a == "-h" || a == "--help")
      return false;
    else if (a.find('=') != std::string::npos && a[0] != '-')
      pairs.push_back(a);
    else if (a[0] == '/' && o->remove)
      paths.push_back(a);
    else
      return false;
  }
  if (o->servers.empty()) return false;
  if (o->data.empty()) {
    std::string json;
    if (!weight.empty()) json += "\"weight\": " + weight;
    if (!zone.empty()) json += (json.empty() ? "" : ", ") + std::string("\"zone\": ") + quote(zone);
    if (!meta.empty())
      json += (json.empty() ? "" : ", ") + std::string("\"metadata\": {") + meta + "}";
    if (!json.empty()) o->data = "{" + json + "}";
  }
  for (const std::string& p : pairs) {
    size_t eq = p.find('=');
    o->nodes.emplace_back(o->root + "/" + p.substr(0, eq) + "/" + p.substr(eq + 1), o->data);
  }
  for (const std::string& p : paths) o->nodes.emplace_back(p, o->data);
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "register: cannot read %s\n", file.c_str());
      return false;
    }
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string cluster, address, json;
      if (!(words >> cluster >> address) || cluster[0] == '#') continue;
      std::getline(words, json);
      size_t start = json.find_first_not_of(' ');
      json = start == std::string::npos ? o->data : json.substr(start);
      o->nodes.emplace_back(o->root + "/" + cluster + "/" + address, json);
    }
  }
  return !o->nodes.empty();
}

// One create, retried while the connection is lost and the session still lives (a busy server
// or a failover between ensemble members: the client reconnects within the session timeout).
// A create whose answer was lost may have happened; the retry then finds the node (below).
int createRetrying(sluice::zk::ZkClient& zk, const std::string& path, const std::string& data,
                   bool ephemeral) {
  int rc = ZCONNECTIONLOSS;
  for (int attempt = 0; attempt < 100 && !g_stop; ++attempt) {
    rc = zk.create(path, data, ephemeral);
    if ((rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) ||
        zk.state() == ZOO_EXPIRED_SESSION_STATE) {
      return rc;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return rc;
}

// Creates every node; false when one fails for another reason than already existing.
bool createAll(sluice::zk::ZkClient& zk, const Options& o) {
  for (const auto& [path, data] : o.nodes) {
    int rc = createRetrying(zk, path, data, !o.persistent);
    if (rc == ZNODEEXISTS && !o.persistent) {
      // An earlier run's node still waiting for its session to end, or ours when a retried
      // create had gone through: replace it so that it belongs to this session.
      zk.remove(path, false);
      rc = createRetrying(zk, path, data, true);
    }
    if (rc != ZOK && rc != ZNODEEXISTS) {
      std::fprintf(stderr, "register: %s: %s\n", path.c_str(), zerror(rc));
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  while (!g_stop) {
    sluice::zk::ZkClient zk(o.servers, o.session_timeout_ms, 10000);
    if (!zk.connected()) {
      std::fprintf(stderr, "register: cannot connect to %s; retrying\n", o.servers.c_str());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (o.remove) {
      for (const auto& node : o.nodes) {
        int rc = zk.remove(node.first, true);
        std::printf("deleted %s: %s\n", node.first.c_str(), zerror(rc));
      }
      return 0;
    }
    if (!createAll(zk, o)) return 1;
    std::printf("registered %zu %s nodes (session 0x%llx)%s\n", o.nodes.size(),
                o.persistent ? "persistent" : "ephemeral",
                static_cast<unsigned long long>(zk.sessionId()),
                o.persistent ? "" : "; Ctrl-C deregisters them");
    std::fflush(stdout);
    if (o.persistent) return 0;
    while (!g_stop && zk.state() != ZOO_EXPIRED_SESSION_STATE) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!g_stop) std::fprintf(stderr, "register: session expired; registering again\n");
  }
  return 0;
}
