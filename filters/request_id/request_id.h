// request_id — gives every request an id in a header (X-Request-Id by default) and echoes it in
// the response.
//
// An incoming id is kept when `trust_incoming` is on and it is valid (1..200 visible ASCII
// characters, 0x21..0x7E, in exactly one field); otherwise it is replaced by a random UUIDv4
// from a per-worker generator (xoshiro256**) seeded from std::random_device.
//
// YAML:
//   filters:
//     - name: request_id
//       config:
//         header: X-Request-Id      # header name (a token)
//         echo_in_response: true    # also set it on the response
//         trust_incoming: true      # keep a valid id the client sent
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct RequestIdConfig {
  RequestIdConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  std::string header = "X-Request-Id";
  sdk::HeaderName header_name;  // `header`, resolved by the host once (ABI 1.4)
  bool echo_in_response = true;
  bool trust_incoming = true;
};

// True when `id` may be kept: 1..200 bytes of visible ASCII (0x21..0x7E).
bool isValidRequestId(std::string_view id);
// A UUID version 4 (RFC 9562) from 128 random bits: "xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx",
// lowercase hex, variant V in 8..b.
std::string formatUuidV4(uint64_t high, uint64_t low);
// The same into out[0..36) (no terminating NUL).
constexpr size_t kUuidLength = 36;
void formatUuidV4(uint64_t high, uint64_t low, char* out);

// xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, 64 bits per call in a few
// instructions. Not a cryptographic generator (neither was the mt19937_64 before it): request ids
// need to be unique, not secret.
class Xoshiro256 {
 public:
  // `seed`: any 256 bits; all zero (the one state the generator cannot leave) is replaced.
  explicit Xoshiro256(const uint64_t (&seed)[4]);
  uint64_t operator()() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Per-worker state: the generator. Worker thread only.
class RequestIdWorker {
 public:
  RequestIdWorker(const RequestIdConfig& config, uint32_t worker_index);
  std::string newId() { return formatUuidV4(rng_(), rng_()); }
  // A new id into out[0..kUuidLength) (no allocation).
  void newId(char* out) {
    const uint64_t high = rng_();
    formatUuidV4(high, rng_(), out);
  }

 private:
  Xoshiro256 rng_;
};

// Per request.
class RequestIdFilter : public sdk::Filter {
 public:
  RequestIdFilter(const RequestIdConfig& config, RequestIdWorker& worker)
      : config_(config), worker_(worker) {}

  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;
  sdk::FilterStatus onResponseHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  const RequestIdConfig& config_;
  RequestIdWorker& worker_;
  // The request's id, once onRequestHeaders ran: a view of `uuid_` (generated, no allocation
  // per request) or of `incoming_` (a trusted id from the client).
  std::string_view id_;
  char uuid_[kUuidLength] = {};
  std::string incoming_;
};

}  // namespace sluice::filters
