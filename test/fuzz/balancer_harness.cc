#include "test/fuzz/balancer_harness.h"

#include <memory>
#include <string>
#include <vector>

#include "test/balancers/testing/fake_host.h"
#include "test/fuzz/byte_reader.h"
#include "test/fuzz/fuzz_check.h"

namespace sluice::fuzz {
namespace {

using testing::FakeHost;
using testing::FakeHostSet;
using testing::FakePick;

uint32_t weightOf(uint8_t b) {
  if (b < 200) return 1 + b % 10;
  if (b < 250) return 1 + (b - 200) * 204;  // up to 10000, the config's maximum
  return b == 255 ? UINT32_MAX : 10000;     // discovery may send more than a config allows
}

std::unique_ptr<FakeHostSet> readHostSet(ByteReader& in, uint64_t version) {
  std::vector<FakeHost> hosts(in.below(51));
  for (FakeHost& h : hosts) {
    uint8_t a = in.u8();
    h.address = "10.0.0." + std::to_string(a % 64) + ":80";
    h.healthy = (a & 0x40) != 0;
    h.weight = weightOf(in.u8());
  }
  return std::make_unique<FakeHostSet>(std::move(hosts), version);
}

void checkPick(const FakeHostSet& set, const std::vector<uint32_t>& tried, int64_t picked) {
  sdk::HostSet hosts = set.view();
  bool any_healthy = false;
  bool any_untried = false;  // a healthy host not tried yet
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!hosts[i].healthy()) continue;
    any_healthy = true;
    bool was_tried = false;
    for (uint32_t t : tried) was_tried = was_tried || t == i;
    any_untried = any_untried || !was_tried;
  }
  if (picked == sdk::kPickNone) {
    SLUICE_FUZZ_CHECK(!any_healthy, "SLUICE_PICK_NONE while a healthy host exists");
    return;
  }
  SLUICE_FUZZ_CHECK(picked >= 0 && static_cast<size_t>(picked) < hosts.size(),
                    "pick outside the host set");
  SLUICE_FUZZ_CHECK(hosts[picked].healthy(), "picked an unhealthy host");
  bool picked_tried = false;
  for (uint32_t t : tried) picked_tried = picked_tried || t == picked;
  SLUICE_FUZZ_CHECK(!picked_tried || !any_untried, "picked a tried host while an untried exists");
}

}  // namespace

void fuzzBalancer(sdk::Balancer& balancer, const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  uint64_t version = 1;
  // The first set arrives before any pick (sdk/balancer.h call order), possibly empty.
  std::unique_ptr<FakeHostSet> set = std::make_unique<FakeHostSet>(std::vector<FakeHost>{});
  balancer.onHostSet(set->view());
  while (!in.empty()) {
    if (in.below(4) < 2) {
      // The old set stays alive until the balancer has the new one (as the core does).
      std::unique_ptr<FakeHostSet> next = readHostSet(in, ++version);
      balancer.onHostSet(next->view());
      set = std::move(next);
      continue;
    }
    std::vector<uint32_t> tried(in.below(5));
    const size_t n = set->view().size();
    for (uint32_t& t : tried) t = n == 0 ? 0 : in.u8() % n;
    if (n == 0) tried.clear();
    int64_t picked = balancer.pick(FakePick(tried).view());
    checkPick(*set, tried, picked);
  }
}

}  // namespace sluice::fuzz
