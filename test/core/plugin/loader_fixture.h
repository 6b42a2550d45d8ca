// Shared setup of the loader tests: a Loader over the runfiles directories that hold the built
// plugins, with fake host tables, and PluginRefs with a known config mark.
#pragma once

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "core/plugin/plugin.h"
#include "test/balancers/testing/fake_host.h"
#include "test/filters/testing/fake_stream.h"
#include "test/harness/env.h"

namespace sluice::plugin {

// Where a test plugin sits once built: the directory of a file listed in `data`.
inline std::string runfilesDir(const std::string& file) {
  std::string path = test::runfile(file);
  return path.substr(0, path.rfind('/'));
}

inline std::string parentDir(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

inline std::string realPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? buf : path;
}

class LoaderTest : public ::testing::Test {
 protected:
  LoaderTest() {
    HostTables tables;
    tables.filter = testing::FakeStream::api();
    tables.balancer = testing::FakeHostSet::balancerApi();
    tables.discovery = &discovery_api_;
    loader_ = std::make_unique<Loader>(
        std::vector<std::string>{bad_dir_, filters_dir_, balancers_dir_, fixtures_dir_}, tables);
  }

  // `name` as named on line 7, column 9 of /etc/sluice/sluice.yaml; `yaml` is its config block,
  // which starts on line 8 of that file (so its nodes report lines 8 and on).
  static config::PluginRef ref(const std::string& name, const std::string& yaml = "") {
    config::PluginRef r;
    r.name = name;
    r.config = yaml.empty() ? YAML::Node() : YAML::Load(std::string(7, '\n') + yaml);
    r.mark = {"/etc/sluice/sluice.yaml", 7, 9};
    return r;
  }
  // The message prefix for a plugin loaded from `dir`: the file as the search path names it
  // (symbolic links kept), not where they lead.
  static std::string prefix(const std::string& name, const std::string& dir,
                            const std::string& at = "/etc/sluice/sluice.yaml:7:9") {
    return at + ": plugin '" + name + "' (" + dir + "/lib" + name + ".so): ";
  }

  const std::string bad_dir_ = runfilesDir("test/core/plugin/bad/libno_entry.so");
  const std::string filters_dir_ = parentDir(runfilesDir("filters/headers/libheaders.so"));
  const std::string balancers_dir_ = parentDir(runfilesDir("balancers/random/librandom.so"));
  const std::string fixtures_dir_ = runfilesDir("test/core/plugin/fixtures/libstatic_list.so");

  // Discovery sink: records the clusters and endpoints of every published snapshot.
  static inline std::vector<std::string> published_;
  static int publish(sluice_discovery_sink*, const sluice_discovery_snapshot* s) {
    for (size_t c = 0; c < s->cluster_count; ++c) {
      const sluice_discovered_cluster& cl = s->clusters[c];
      for (size_t e = 0; e < cl.endpoint_count; ++e) {
        const sluice_endpoint& ep = cl.endpoints[e];
        std::string line = std::string(cl.name.data, cl.name.len) + " " +
                           std::string(ep.address.data, ep.address.len) + " w" +
                           std::to_string(ep.weight) + " " + std::string(ep.zone.data, ep.zone.len);
        for (size_t m = 0; m < ep.metadata_count; ++m) {
          line += " " + std::string(ep.metadata[2 * m].data, ep.metadata[2 * m].len) + "=" +
                  std::string(ep.metadata[2 * m + 1].data, ep.metadata[2 * m + 1].len);
        }
        published_.push_back(line);
      }
    }
    return 0;
  }
  const sluice_discovery_host_api discovery_api_ = {sizeof(sluice_discovery_host_api), &publish};
  std::unique_ptr<Loader> loader_;
};

}  // namespace sluice::plugin
