// Peak EWMA of a latency, as in Finagle's P2CPeakEwma (and Linkerd's): an exponentially weighted
// moving average in time (not per sample) that jumps up at once on a sample above it, so a host
// that turns slow is avoided on its first slow response but recovers gradually.
//
//   observe(x, t):  w = exp(-(t - stamp) / decay);  cost = x > cost ? x : cost * w + x * (1 - w)
//   value(t):       cost * exp(-(t - stamp) / decay)    (decays toward 0 while no sample arrives,
//                                                          so an idle slow host is probed again)
//
// Unlike Finagle, reading does not store the decayed value: value() is const and only observe()
// moves the state. Plain data, one per host per worker; no locks.
#pragma once

#include <cmath>
#include <cstdint>

namespace sluice::balancers {

class PeakEwma {
 public:
  // Adds a sample of `sample_us` seen at `now_us` (a monotonic clock), with time constant
  // `decay_us` > 0.
  void observe(double sample_us, uint64_t now_us, double decay_us) {
    double w = sampled_ ? weightSince(now_us, decay_us) : 0;
    cost_ = sample_us > cost_ ? sample_us : cost_ * w + sample_us * (1 - w);
    stamp_us_ = now_us > stamp_us_ ? now_us : stamp_us_;
    sampled_ = true;
  }
  // The estimate at `now_us`, decayed since the last sample; 0 before any sample.
  double value(uint64_t now_us, double decay_us) const {
    return sampled_ ? cost_ * weightSince(now_us, decay_us) : 0;
  }
  bool sampled() const { return sampled_; }

 private:
  double weightSince(uint64_t now_us, double decay_us) const {
    double elapsed = now_us > stamp_us_ ? static_cast<double>(now_us - stamp_us_) : 0;
    return std::exp(-elapsed / decay_us);
  }

  double cost_ = 0;
  uint64_t stamp_us_ = 0;
  bool sampled_ = false;
};

}  // namespace sluice::balancers
