// Fuzz target: the YAML config loader. Any text must give either a config or at least one error
// line naming the file; nothing may crash or throw. A config that loads must keep the promises
// core/config/config.h makes about its fields.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "test/fuzz/fuzz_check.h"

namespace {

using sluice::config::Config;

bool isName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void checkCluster(const sluice::config::Cluster& c, bool named) {
  SLUICE_FUZZ_CHECK(!named || isName(c.name), "cluster name outside [A-Za-z0-9._-]+");
  SLUICE_FUZZ_CHECK(isName(c.balancer.name), "balancer name outside [A-Za-z0-9._-]+");
  for (const sluice::config::Endpoint& e : c.endpoints) {
    SLUICE_FUZZ_CHECK(e.weight >= 1 && e.weight <= 10000, "endpoint weight outside 1..10000");
    SLUICE_FUZZ_CHECK(!e.address.empty(), "empty endpoint address");
  }
}

void checkConfig(const Config& config) {
  std::set<std::string> names;
  for (const auto& c : config.clusters) {
    checkCluster(c, true);
    SLUICE_FUZZ_CHECK(names.insert(c.name).second, "duplicate cluster name");
  }
  for (const auto& d : config.discovery) {
    SLUICE_FUZZ_CHECK(isName(d.plugin.name), "discovery name outside [A-Za-z0-9._-]+");
    checkCluster(d.cluster_defaults, false);
  }
  std::set<std::string> addresses;
  for (const auto& l : config.listeners) {
    SLUICE_FUZZ_CHECK(isName(l.name), "listener name outside [A-Za-z0-9._-]+");
    SLUICE_FUZZ_CHECK(addresses.insert(l.address).second, "duplicate listener address");
    const std::string& cp = l.context_path;
    SLUICE_FUZZ_CHECK(cp.empty() || (cp[0] == '/' && cp.back() != '/'),
                      "context_path not normalised");
    for (const auto& f : l.filters) SLUICE_FUZZ_CHECK(isName(f.name), "bad filter name");
  }
  for (const auto& r : config.routes) {
    SLUICE_FUZZ_CHECK(!r.prefix.empty() && r.prefix[0] == '/', "route prefix without '/'");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> errors;
  std::shared_ptr<const Config> config;
  try {
    config = sluice::config::loadString(text, "fuzz.yaml", &errors);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loadString threw: %s\n", e.what());
    SLUICE_FUZZ_CHECK(false, "loadString threw");
  } catch (...) {
    SLUICE_FUZZ_CHECK(false, "loadString threw a non-std exception");
  }
  if (config == nullptr) {
    SLUICE_FUZZ_CHECK(!errors.empty(), "no config and no error");
  } else {
    SLUICE_FUZZ_CHECK(errors.empty(), "a config and errors");
    checkConfig(*config);
  }
  for (const std::string& e : errors) {
    if (e.rfind("fuzz.yaml:", 0) != 0) std::fprintf(stderr, "bad error line: %s\n", e.c_str());
    SLUICE_FUZZ_CHECK(e.rfind("fuzz.yaml:", 0) == 0, "error line not starting with fuzz.yaml:");
  }
  return 0;
}
