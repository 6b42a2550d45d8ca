#include "discovery/zookeeper/config.h"

#include "discovery/zookeeper/json.h"
#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {
namespace {

void readServers(const sdk::ConfigNode& node, std::string* out) {
  if (node.isNull())
    node.fail("missing key 'servers' (e.g. 127.0.0.1:2181 or h1:2181,h2:2181/chroot)");
  std::string s = node.asString();
  size_t slash = s.find('/');
  std::string hosts = s.substr(0, slash);
  if (slash != std::string::npos && !isZkPath(s.substr(slash))) {
    node.fail("bad chroot '" + s.substr(slash) + "' (expected /a/b)");
  }
  size_t start = 0;
  while (true) {
    size_t comma = hosts.find(',', start);
    std::string host = hosts.substr(start, comma - start);
    std::string error;
    if (!checkHostPort(host, &error)) node.fail("servers: '" + host + "': " + error);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  *out = s;
}

void readDubbo(const sdk::ConfigNode& node, DubboOptions* out) {
  node.requireOnlyKeys({"protocols", "no_context_path", "default_weight"});
  if (node.has("protocols")) {
    out->protocols.clear();
    for (std::string p : node["protocols"].asStringList()) {
      for (char& c : p) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (p.empty()) node["protocols"].fail("empty protocol name");
      out->protocols.push_back(p);
    }
    if (out->protocols.empty()) node["protocols"].fail("expected at least one protocol");
  }
  sdk::ConfigNode ncp = node["no_context_path"];
  if (ncp.isMap()) {
    ncp.requireOnlyKeys({"cluster"});
    std::string cluster = ncp.getString("cluster", "");
    if (!isClusterName(cluster)) ncp.fail("expected { cluster: NAME } with a valid cluster name");
    out->no_context_path = DubboOptions::NoContextPath::kCluster;
    out->no_context_path_cluster = cluster;
  } else if (!ncp.isNull()) {
    std::string v = ncp.asString();
    if (v == "skip") {
      out->no_context_path = DubboOptions::NoContextPath::kSkip;
    } else if (v == "interface") {
      out->no_context_path = DubboOptions::NoContextPath::kInterface;
    } else {
      ncp.fail("expected skip, interface or { cluster: NAME }");
    }
  }
  out->default_weight = static_cast<uint32_t>(node.getInt("default_weight", 100, 1, kMaxWeight));
}

RegisterConfig readRegister(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"path", "addresses", "weight", "zone", "metadata"});
  if (!node.isMap()) node.fail("expected { path: /..., addresses: [host:port] }");
  RegisterConfig r;
  r.path = node.getString("path", "");
  if (!isZkPath(r.path) || r.path == "/")
    node["path"].fail("expected an absolute path like /sluice-gateways/edge");
  if (!node.has("addresses")) node.fail("missing key 'addresses' (this gateway's host:port list)");
  for (const std::string& a : node["addresses"].asStringList()) {
    std::string error;
    std::string check = a.rfind("auto:", 0) == 0 ? "127.0.0.1:" + a.substr(5) : a;
    if (!checkHostPort(check, &error)) node["addresses"].fail("'" + a + "': " + error);
    r.addresses.push_back(a);
  }
  if (r.addresses.empty()) node["addresses"].fail("expected at least one address");
  std::string json;
  if (node.has("weight")) {
    json += "\"weight\": " + std::to_string(node.getInt("weight", 1, 1, kMaxWeight));
  }
  if (node.has("zone"))
    json += (json.empty() ? "" : ", ") + std::string("\"zone\": ") +
            jsonQuote(node.getString("zone", ""));
  if (node.has("metadata")) {
    std::string m;
    for (const auto& [k, v] : node["metadata"].asStringMap()) {
      m += (m.empty() ? "" : ", ") + jsonQuote(k) + ": " + jsonQuote(v);
    }
    json += (json.empty() ? "" : ", ") + std::string("\"metadata\": {") + m + "}";
  }
  r.data = json.empty() ? "" : "{" + json + "}";
  return r;
}

}  // namespace

const char* defaultRoot(FormatKind format) {
  switch (format) {
    case FormatKind::kDubbo:
      return "/dubbo";
    case FormatKind::kCurator:
      return "/services";
    default:
      return "/sluice";
  }
}

const char* formatName(FormatKind format) {
  switch (format) {
    case FormatKind::kDubbo:
      return "dubbo";
    case FormatKind::kCurator:
      return "curator";
    default:
      return "sluice";
  }
}

bool isZkPath(const std::string& path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (static_cast<unsigned char>(c) < 0x20) return false;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

ZookeeperConfig::ZookeeperConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"servers", "format", "root", "session_timeout_ms", "auth",
                        "empty_protection", "cache_file", "debounce_ms", "initial_wait_ms", "dubbo",
                        "register"});
  if (node.isNull()) node.fail("missing config (at least `servers:`)");
  readServers(node["servers"], &servers);
  std::string f = node.getString("format", "sluice");
  if (f == "sluice") {
    format = FormatKind::kSluice;
  } else if (f == "dubbo") {
    format = FormatKind::kDubbo;
  } else if (f == "curator") {
    format = FormatKind::kCurator;
  } else {
    node["format"].fail("expected sluice, dubbo or curator");
  }
  root = node.getString("root", defaultRoot(format));
  if (!isZkPath(root))
    node["root"].fail("expected an absolute path like /services (no trailing '/')");
  session_timeout_ms = node.getInt("session_timeout_ms", 10000, 1000, 600000);
  if (node.has("auth")) {
    sdk::ConfigNode a = node["auth"];
    a.requireOnlyKeys({"user", "password"});
    std::string user = a.getString("user", "");
    if (user.empty() || user.find(':') != std::string::npos)
      a.fail("auth: expected { user: NAME, password: SECRET } (no ':' in the user)");
    auth.emplace(user, a.getString("password", ""));
  }
  empty_protection = node.getBool("empty_protection", true);
  cache_file = node.getString("cache_file", "");
  debounce_ms = node.getInt("debounce_ms", 20, 0, 60000);
  initial_wait_ms = node.getInt("initial_wait_ms", 3000, 0, 600000);
  if (node.has("dubbo")) {
    if (format != FormatKind::kDubbo) node["dubbo"].fail("dubbo options need `format: dubbo`");
    readDubbo(node["dubbo"], &dubbo);
  }
  if (node.has("register")) register_self = readRegister(node["register"]);

  sdk::Metrics m(host);
  const std::string registry = servers + (root == "/" ? "" : root);
  const sdk::MetricLabels labels = {{"registry", registry}};
  metrics.publications = m.counter("publications_total", "Snapshots published to sluice.", labels);
  metrics.malformed = m.gauge("malformed_nodes",
                              "Nodes that could not be read (bad URL, JSON, port or name) in the "
                              "last snapshot built.",
                              labels);
  metrics.skipped =
      m.gauge("skipped_nodes",
              "Nodes read but not used (disabled, not UP, other protocol) in the last "
              "snapshot built.",
              labels);
  metrics.connected =
      m.gauge("session_connected", "1 while connected to ZooKeeper, else 0.", labels);
  metrics.session_expirations = m.counter("session_expirations_total",
                                          "ZooKeeper sessions lost (expired or refused).", labels);
}

}  // namespace sluice::zookeeper
