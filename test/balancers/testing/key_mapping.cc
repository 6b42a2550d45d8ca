#include "test/balancers/testing/key_mapping.h"

#include <algorithm>
#include <cmath>

namespace sluice::testing {

std::string testKey(size_t i) { return "key-" + std::to_string(i); }

std::vector<FakeHost> numberedHosts(size_t count, uint32_t weight, size_t first) {
  std::vector<FakeHost> hosts;
  for (size_t i = first; i < first + count; ++i) {
    hosts.push_back({"10.0.0." + std::to_string(i) + ":80", weight});
  }
  return hosts;
}

std::vector<FakeHost> weightedHosts(const std::vector<uint32_t>& weights) {
  std::vector<FakeHost> hosts = numberedHosts(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) hosts[i].weight = weights[i];
  return hosts;
}

std::vector<std::string> mapKeys(sdk::Balancer& balancer, const FakeHostSet& set, size_t count,
                                 const std::vector<uint32_t>& tried) {
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    FakePick pick(tried, testKey(i));
    int64_t index = balancer.pick(pick.view());
    out.push_back(index < 0 ? "NONE" : std::string(set.view()[index].address()));
  }
  return out;
}

double movedFraction(const std::vector<std::string>& before,
                     const std::vector<std::string>& after) {
  size_t moved = 0;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) moved += before[i] != after[i];
  return before.empty() ? 0 : static_cast<double>(moved) / before.size();
}

std::map<std::string, double> shares(const std::vector<std::string>& mapping) {
  std::map<std::string, double> out;
  for (const std::string& a : mapping) out[a] += 1.0 / mapping.size();
  return out;
}

double worstRelativeError(const std::map<std::string, double>& actual,
                          const std::map<std::string, double>& expected) {
  double worst = 0;
  for (const auto& [address, share] : expected) {
    auto it = actual.find(address);
    double got = it == actual.end() ? 0 : it->second;
    worst = std::max(worst, std::fabs(got / share - 1));
  }
  return worst;
}

std::map<std::string, double> weightShares(const std::vector<FakeHost>& hosts) {
  double total = 0;
  for (const FakeHost& h : hosts) total += h.healthy ? h.weight : 0;
  std::map<std::string, double> out;
  for (const FakeHost& h : hosts) {
    if (h.healthy) out[h.address] += h.weight / total;
  }
  return out;
}

}  // namespace sluice::testing
