#include "test/balancers/testing/fake_host.h"

#include <cstdio>
#include <random>
#include <utility>

namespace sluice::testing {
namespace {

std::mt19937_64& generator() {
  static std::mt19937_64 g(1);
  return g;
}

uint64_t& fakeNow() {
  static uint64_t now_us = 0;
  return now_us;
}

const sluice_balancer_host_api kBalancerApi = {
    sizeof(sluice_balancer_host_api),
    [](const sluice_host_set* set, uint32_t index) -> uint32_t {
      const auto* fake = static_cast<const FakeHostSet*>(set->host_ctx);
      return fake != nullptr ? fake->active(index) : 0;
    },
    []() -> uint64_t { return generator()(); },
};

const sluice_host_api kHostApi = {
    sizeof(sluice_host_api),
    SLUICE_ABI_MAJOR,
    SLUICE_ABI_MINOR,
    [](const void*, sluice_log_level level, const char* msg, size_t len) {
      std::fprintf(stderr, "plugin log %u: %.*s\n", level, static_cast<int>(len), msg);
    },
    nullptr,
    []() -> uint64_t { return fakeNow(); },
    nullptr,
    nullptr,
    &kBalancerApi,
    nullptr,
};

sluice_str str(const std::string& s) { return {s.data(), s.size()}; }

}  // namespace

FakeHostSet::FakeHostSet(std::vector<FakeHost> hosts, uint64_t version) : hosts_(std::move(hosts)) {
  for (const FakeHost& h : hosts_) {
    entries_.push_back({str(h.address), h.weight, h.healthy ? 1u : 0u, {nullptr, 0}, nullptr, 0});
  }
  active_.assign(hosts_.size(), 0);
  set_ = {version, entries_.size(), entries_.data(), this};
}

const sluice_balancer_host_api* FakeHostSet::balancerApi() { return &kBalancerApi; }

FakePick::FakePick(std::vector<uint32_t> tried, std::string hash_key)
    : tried_(std::move(tried)), hash_key_(std::move(hash_key)) {
  ctx_ = {sizeof(sluice_pick_context), str(hash_key_), tried_.data(), tried_.size()};
}

const sluice_host_api* fakeHostApi() { return &kHostApi; }
void seedRandom(uint64_t seed) { generator().seed(seed); }
void setNowUs(uint64_t now_us) { fakeNow() = now_us; }
sdk::BalancerContext fakeContext() { return sdk::BalancerContext(sdk::Host(&kHostApi), "test", 0); }

}  // namespace sluice::testing
