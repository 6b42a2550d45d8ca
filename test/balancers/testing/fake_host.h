// Test helper: what the core gives a balancer, faked with plain data. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/balancer.h"
#include "core/api/sdk/balancer.h"

namespace sluice::testing {

struct FakeHost {
  std::string address;
  uint32_t weight = 1;
  bool healthy = true;
};

// A sluice_host_set over `hosts` (owned; the views stay valid while this object lives).
class FakeHostSet {
 public:
  explicit FakeHostSet(std::vector<FakeHost> hosts, uint64_t version = 1);
  FakeHostSet(const FakeHostSet&) = delete;
  FakeHostSet& operator=(const FakeHostSet&) = delete;
  sdk::HostSet view() const { return sdk::HostSet(&set_, balancerApi()); }
  const sluice_host_set* raw() const { return &set_; }
  // In-flight requests that activeRequests(i) reports for host `i` (0 until set).
  void setActive(size_t i, uint32_t n) { active_.at(i) = n; }
  uint32_t active(size_t i) const { return i < active_.size() ? active_[i] : 0; }

  static const sluice_balancer_host_api* balancerApi();

 private:
  std::vector<FakeHost> hosts_;
  std::vector<sluice_host_entry> entries_;
  std::vector<uint32_t> active_;  // per host, read through the set's host_ctx (this)
  sluice_host_set set_{};
};

// A pick context with the given tried indexes.
class FakePick {
 public:
  explicit FakePick(std::vector<uint32_t> tried = {}, std::string hash_key = "");
  sdk::PickContext view() const { return sdk::PickContext(&ctx_); }
  const sluice_pick_context* raw() const { return &ctx_; }

 private:
  std::vector<uint32_t> tried_;
  std::string hash_key_;
  sluice_pick_context ctx_{};
};

// The host table: log to stderr, a fake clock, the real config accessors are NOT set (tests
// build configs with YamlConfig), random() from a generator seeded by seedRandom().
const sluice_host_api* fakeHostApi();
// Restarts the fake random() sequence (std::mt19937_64 seeded with `seed`).
void seedRandom(uint64_t seed);
// Sets what the fake clock (now_us) reads from now on; it starts at 0 and never moves by itself.
void setNowUs(uint64_t now_us);
// A balancer context for cluster "test", worker 0, over fakeHostApi().
sdk::BalancerContext fakeContext();

}  // namespace sluice::testing
