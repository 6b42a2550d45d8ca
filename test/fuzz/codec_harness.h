// Drives sluice::http::Parser over fuzz input the way the proxy does, checking invariants.
//
// Input layout:
//   byte 0  how the stream is cut into execute() calls: (byte & 7) == 0 feeds it whole; otherwise
//           pieces of 1..{1,2,3,5,8,64,512}[byte & 7] bytes from a generator seeded by the byte
//   byte 1  options: bit 0 small limits (target 64, header bytes 512, 8 fields); bit 1 a body
//           limit (16 small / 4096); bit 2 responses: never pause (as upstream connections do);
//           bits 3-7 responses: messages 0-4 answer HEAD requests
//   rest    the bytes a peer sends
// The stream is parsed whole, then (unless byte 0 says whole) in pieces; both runs must deliver
// the same messages and agree on success or failure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/http/parser.h"

namespace sluice::fuzz {

void fuzzCodec(http::Parser::Type type, const uint8_t* data, size_t size);

}  // namespace sluice::fuzz
