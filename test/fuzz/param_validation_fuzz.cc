// Fuzz target: the param_validation filter (no dlopen) over a fixed set of query, header and JSON
// body rules. Input: a request target, then '\n', then a header value for X-Tenant, then '\n',
// then the body (absent parts are empty). Checks: no crash or exception; the request either
// passes with no reply, or gets a 400 whose body is valid JSON listing at least one violation
// with "in" query/header/body, or a 415 (never for a JSON content type).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "filters/param_validation/param_validation.h"
#include "test/filters/testing/filter_harness.h"
#include "test/fuzz/fuzz_check.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace {

constexpr char kConfig[] = R"(
unknown_query: reject
query:
  page: {type: int, min: 1, max: 1000}
  price: {type: number, min: 0.5, max: 1e6}
  sort: {type: enum, values: [asc, desc]}
  on: {type: bool}
  q: {max_length: 64, pattern: '^[a-z ]+$'}
  tag: {repeated: true, min_length: 1, max_length: 8}
headers:
  X-Tenant: {pattern: '^[a-z0-9-]{1,32}$'}
body:
  max_bytes: 65536
  max_depth: 8
  required: [name]
  fields:
    name: {type: string, max_length: 16, pattern: '^[A-Za-z]+$'}
    age: {type: integer, min: 0, max: 150}
    level: {type: number, enum: [1, 2.5]}
    tags: {type: array, max_length: 4}
    a.b.c: {type: boolean}
    meta: {type: object}
)";

void checkReply(const sluice::testing::FakeStream& s) {
  if (!s.local_reply) return;
  SLUICE_FUZZ_CHECK(s.local_reply->status == 400 || s.local_reply->status == 415, "status");
  SLUICE_FUZZ_CHECK(s.local_reply->content_type == "application/json", "content type");
  nlohmann::json body = nlohmann::json::parse(s.local_reply->body, nullptr, false);
  SLUICE_FUZZ_CHECK(body.is_object(), "reply body is JSON");
  if (s.local_reply->status != 400) return;
  SLUICE_FUZZ_CHECK(body["violations"].is_array() && !body["violations"].empty(), "violations");
  for (const auto& v : body["violations"]) {
    std::string in = v.value("in", "");
    SLUICE_FUZZ_CHECK(in == "query" || in == "header" || in == "body", "violation 'in'");
    SLUICE_FUZZ_CHECK(v["reason"].is_string() && !v["reason"].get<std::string>().empty(),
                      "violation reason");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static sluice::testing::FilterHarness* harness =
      new sluice::testing::FilterHarness(sluice_plugin_entry(), kConfig);
  SLUICE_FUZZ_CHECK(harness->configured(), "config loads");
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  std::string target = "/" + std::string(in.substr(0, nl));
  std::string_view rest = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  size_t nl2 = rest.find('\n');
  std::string tenant(rest.substr(0, nl2));
  std::string body(nl2 == std::string_view::npos ? std::string_view() : rest.substr(nl2 + 1));

  sluice::testing::Headers headers = {{"Content-Type", "application/json"}};
  if (!tenant.empty() && tenant.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos) {
    headers.push_back({"X-Tenant", tenant});
  }
  sluice::testing::FakeStream s(body.empty() ? "GET" : "POST", target, headers);
  sluice_filter_status st = harness->requestHeaders(s, body.empty());
  if (st == SLUICE_FILTER_STOP) {
    checkReply(s);
    SLUICE_FUZZ_CHECK(s.local_reply && s.local_reply->status == 400, "JSON type never 415");
    return 0;
  }
  SLUICE_FUZZ_CHECK(st == SLUICE_FILTER_CONTINUE, "headers status");
  SLUICE_FUZZ_CHECK(!s.local_reply, "no reply on CONTINUE");
  if (body.empty()) return 0;
  SLUICE_FUZZ_CHECK(s.buffer_request[SLUICE_BODY_REQUEST].has_value(), "body buffered");
  st = harness->requestBody(s, body, true);
  SLUICE_FUZZ_CHECK(st == SLUICE_FILTER_CONTINUE || st == SLUICE_FILTER_STOP, "body status");
  SLUICE_FUZZ_CHECK((st == SLUICE_FILTER_STOP) == s.local_reply.has_value(), "STOP iff reply");
  checkReply(s);
  SLUICE_FUZZ_CHECK(!s.replaced_body[SLUICE_BODY_REQUEST], "body never replaced");
  return 0;
}
