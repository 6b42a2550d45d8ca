#include "discovery/zookeeper/cache_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {
namespace {

std::string emit(const std::vector<sdk::DiscoveredCluster>& clusters, const std::string& comment) {
  // Cluster names and keys are plain ([A-Za-z0-9._-]); every other string is double-quoted so
  // that no value reads back as something else ("true", "null", "# x").
  YAML::Emitter out;
  out << YAML::Comment(comment) << YAML::BeginMap << YAML::Key << "clusters" << YAML::Value
      << YAML::BeginMap;
  for (const sdk::DiscoveredCluster& c : clusters) {
    out << YAML::Key << c.name << YAML::Value;
    if (c.endpoints.empty()) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const sdk::Endpoint& e : c.endpoints) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "address" << YAML::Value
          << YAML::DoubleQuoted << e.address;
      if (e.weight != 0) out << YAML::Key << "weight" << YAML::Value << e.weight;
      if (!e.zone.empty())
        out << YAML::Key << "zone" << YAML::Value << YAML::DoubleQuoted << e.zone;
      if (!e.metadata.empty()) {
        out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
        for (const auto& [k, v] : e.metadata) {
          out << YAML::Key << YAML::DoubleQuoted << k << YAML::Value << YAML::DoubleQuoted << v;
        }
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

bool writeCacheFile(const std::string& path, const std::vector<sdk::DiscoveredCluster>& clusters,
                    const std::string& comment, std::string* error) {
  std::string text = emit(clusters, comment);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  bool ok = ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool readCacheFile(const std::string& path, std::vector<sdk::DiscoveredCluster>* out,
                   std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<sdk::DiscoveredCluster> clusters;
  try {
    YAML::Node root = YAML::Load(text.str());
    YAML::Node map = root["clusters"];
    if (!map.IsMap()) {
      *error = path + ": expected `clusters:` with a map of cluster lists";
      return false;
    }
    for (const auto& kv : map) {
      sdk::DiscoveredCluster c;
      c.name = kv.first.Scalar();
      if (!isClusterName(c.name)) {
        *error = path + ": bad cluster name '" + c.name + "'";
        return false;
      }
      for (const YAML::Node& e : kv.second) {
        sdk::Endpoint ep;
        ep.address = e.IsScalar() ? e.Scalar() : e["address"].as<std::string>();
        std::string why;
        if (!checkHostPort(ep.address, &why)) {
          *error = path + ": cluster " + c.name + ": " + ep.address + ": " + why;
          return false;
        }
        if (e.IsMap()) {
          if (e["weight"]) ep.weight = e["weight"].as<uint32_t>();
          if (e["zone"]) ep.zone = e["zone"].as<std::string>();
          if (e["metadata"]) {
            for (const auto& m : e["metadata"]) {
              ep.metadata.emplace_back(m.first.as<std::string>(), m.second.as<std::string>());
            }
          }
        }
        c.endpoints.push_back(std::move(ep));
      }
      clusters.push_back(std::move(c));
    }
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  *out = std::move(clusters);
  return true;
}

}  // namespace sluice::zookeeper
