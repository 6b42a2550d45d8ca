// Fuzz target: the random balancer (weighted random) over changing host sets.
#include <cstddef>
#include <cstdint>

#include "balancers/random/random.h"
#include "test/balancers/testing/fake_host.h"
#include "test/core/plugin/testing/yaml_config.h"
#include "test/fuzz/balancer_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sluice::testing::YamlConfig kYaml("");
  static const sluice::balancers::RandomConfig kConfig(kYaml.node());
  sluice::testing::seedRandom(size);  // the same input always draws the same numbers
  sluice::balancers::Random balancer(kConfig, sluice::testing::fakeContext());
  sluice::fuzz::fuzzBalancer(balancer, data, size);
  return 0;
}
