// What the echo backend records about one request, and how it turns that into a reply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::echo {

// One received request: filled by the parser callbacks, read when the message is complete.
struct Request {
  std::string method;
  std::string url;  // path with query, as received
  int http_major = 1;
  int http_minor = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // in arrival order, duplicates kept
  uint64_t body_length = 0;
  uint32_t body_fnv1a = 2166136261u;  // FNV-1a (32 bit) of the body bytes
  bool keep_alive = true;
};

// What a request asks the backend to do, decided from the end of its path so the special paths
// also work behind a proxy prefix (`/gateway/demo/status/503` ends in `/status/503`).
struct Action {
  enum class Kind { kEcho, kDelay, kBytes, kDrop, kBadPath };
  Kind kind = Kind::kEcho;
  int status = 200;             // for kEcho (`/status/NNN`)
  uint64_t number = 0;          // milliseconds for kDelay, byte count for kBytes
  bool content_length = false;  // kBytes: `?framing=length` frames with Content-Length
};

// Folds `data` into a running FNV-1a 32-bit hash (start with 2166136261).
uint32_t fnv1a(uint32_t hash, std::string_view data);

// Decides what `request` asks for (see Action).
Action parseAction(const Request& request);

// The JSON echo body: backend name, method, path, version, client address, headers as
// "Name: value" strings, body length and checksum.
std::string echoBody(const Request& request, const std::string& backend, const std::string& client);

// A status line plus the headers every reply carries (X-Backend, Connection as needed), ending
// with the blank line. `framing` is a complete framing header line without CRLF
// ("Content-Length: 12", "Transfer-Encoding: chunked") or empty for none.
std::string responseHead(int status, const std::string& backend, const std::string& content_type,
                         const std::string& framing, const Request& request, bool close);

// The standard reason phrase for `status` ("Unknown" if none).
const char* reasonPhrase(int status);

// Returns the first value of header `name` (case-insensitive), or "" when absent.
std::string headerValue(const Request& request, std::string_view name);

}  // namespace sluice::echo
