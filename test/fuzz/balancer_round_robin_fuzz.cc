// Fuzz target: the round_robin balancer (smooth weighted round robin) over changing host sets.
#include <cstddef>
#include <cstdint>

#include "balancers/round_robin/round_robin.h"
#include "test/balancers/testing/fake_host.h"
#include "test/core/plugin/testing/yaml_config.h"
#include "test/fuzz/balancer_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const sluice::testing::YamlConfig kYaml("");
  static const sluice::balancers::RoundRobinConfig kConfig(kYaml.node());
  // Byte 0: the worker index, which staggers the schedule's start.
  sluice::sdk::BalancerContext context(sluice::sdk::Host(sluice::testing::fakeHostApi()), "fuzz",
                                       data[0]);
  sluice::balancers::RoundRobin balancer(kConfig, context);
  sluice::fuzz::fuzzBalancer(balancer, data + 1, size - 1);
  return 0;
}
