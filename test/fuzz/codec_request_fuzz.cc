// Fuzz target: the strict HTTP/1.x codec parsing requests from a downstream client.
#include <cstddef>
#include <cstdint>

#include "test/fuzz/codec_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::fuzzCodec(sluice::http::Parser::Type::kRequest, data, size);
  return 0;
}
