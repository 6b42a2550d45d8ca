// Access log formatting: JSON escaping of hostile values (the line must always be one valid
// JSON object), text escaping, format-string parsing and its errors, and every field's output.
#include "core/accesslog/format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/accesslog/escape.h"

namespace sluice::accesslog {
namespace {

std::string json(std::string_view value) {
  std::string out;
  appendJsonString(value, &out);
  return out;
}

std::string text(std::string_view value) {
  std::string out;
  appendTextValue(value, &out);
  return out;
}

// Parses a JSON string literal back; fails the test when it is not valid JSON.
std::string roundTrip(std::string_view value) {
  nlohmann::json j = nlohmann::json::parse(json(value), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << json(value);
  return j.is_string() ? j.get<std::string>() : "<not a string>";
}

proxy::RequestInfo sample() {
  proxy::RequestInfo info;
  info.start_unix_us = 1767225600123456;  // 2026-01-01T00:00:00.123456Z
  info.total_us = 2500;
  info.upstream_us = 1234;
  info.client_address = "127.0.0.1:5000";
  info.listener = "edge";
  info.method = "GET";
  info.path = "/gateway/echo/x?y=1";
  info.protocol = "HTTP/1.1";
  info.request_id = "abc";
  info.cluster = "echo";
  info.upstream_host = "127.0.0.1:9001";
  info.retries = 1;
  info.status = 200;
  info.bytes_in = 5;
  info.bytes_out = 42;
  return info;
}

TEST(JsonEscape, QuotesBackslashesAndControlBytes) {
  EXPECT_EQ(json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json("\n\r\t"), "\"\\n\\r\\t\"");
  EXPECT_EQ(json(std::string("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(roundTrip(std::string("x\"\\\n\x00y", 6)), std::string("x\"\\\n\x00y", 6));
}

TEST(JsonEscape, ValidUtf8IsKept) {
  const std::string s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";  // é € 😀
  EXPECT_EQ(json(s), "\"" + s + "\"");
  EXPECT_EQ(roundTrip(s), s);
}

TEST(JsonEscape, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xef\xbf\xbd";  // U+FFFD once decoded
  EXPECT_EQ(roundTrip("/p\xff\xfe"), "/p" + r + r);
  EXPECT_EQ(roundTrip("\x80"), r);                          // stray continuation byte
  EXPECT_EQ(roundTrip("\xc0\xaf"), r + r);                  // overlong '/'
  EXPECT_EQ(roundTrip("\xed\xa0\x80"), r + r + r);          // UTF-16 surrogate
  EXPECT_EQ(roundTrip("ok\xe2\x82"), "ok" + r + r);         // truncated at the end
  EXPECT_EQ(roundTrip("\xf4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(json("\xff"), "\"\\ufffd\"");
}

TEST(TextEscape, ControlBytesQuotesAndBackslashesBecomeHex) {
  EXPECT_EQ(text("a b"), "a b");
  EXPECT_EQ(text("a\"b\\c\nd\x7f"), "a\\x22b\\x5cc\\x0ad\\x7f");
  EXPECT_EQ(text("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(text(""), "-");
}

TEST(FormatParse, FieldsLiteralsAndPercent) {
  Format f;
  std::string error;
  ASSERT_TRUE(Format::parse("%{method} %{path} %% done", &f, &error)) << error;
  EXPECT_FALSE(f.json());
  std::string out;
  f.append(sample(), &out);
  EXPECT_EQ(out, "GET /gateway/echo/x?y=1 % done\n");
}

TEST(FormatParse, JsonIsTheDefault) {
  Format f;
  EXPECT_TRUE(f.json());
  std::string error;
  ASSERT_TRUE(Format::parse("json", &f, &error));
  EXPECT_TRUE(f.json());
}

TEST(FormatParse, UnknownFieldIsAnErrorNamingItAndTheKnownOnes) {
  Format f;
  std::string error;
  EXPECT_FALSE(Format::parse("%{method} %{bogus}", &f, &error));
  EXPECT_NE(error.find("unknown field 'bogus' at offset 10"), std::string::npos) << error;
  EXPECT_NE(error.find("known: time, request_id,"), std::string::npos) << error;
}

TEST(FormatParse, StrayPercentAndUnterminatedFieldAreErrors) {
  Format f;
  std::string error;
  EXPECT_FALSE(Format::parse("100%", &f, &error));
  EXPECT_NE(error.find("'%' at offset 3"), std::string::npos) << error;
  EXPECT_FALSE(Format::parse("%d", &f, &error));
  EXPECT_NE(error.find("write '%%'"), std::string::npos) << error;
  EXPECT_FALSE(Format::parse("x %{status", &f, &error));
  EXPECT_NE(error.find("unterminated '%{' at offset 2"), std::string::npos) << error;
  EXPECT_FALSE(Format::parse("%{}", &f, &error));
  EXPECT_NE(error.find("unknown field ''"), std::string::npos) << error;
}

TEST(FormatText, EveryFieldAndItsEmptyForm) {
  Format f;
  std::string error;
  std::string all;
  for (size_t i = 0; i < static_cast<size_t>(Field::kCount); ++i) {
    all += (i == 0 ? "" : " ") + std::string("%{") + std::string(fieldName(static_cast<Field>(i))) +
           "}";
  }
  ASSERT_TRUE(Format::parse(all, &f, &error)) << error;
  proxy::RequestInfo info = sample();
  info.setFlag(proxy::kUpstreamConnectFailure);
  info.setFlag(proxy::kLocalReply);
  std::string out;
  f.append(info, &out);
  EXPECT_EQ(
      out,
      "2026-01-01T00:00:00.123Z abc 127.0.0.1:5000 - - GET /gateway/echo/x?y=1 HTTP/1.1 200 5 "
      "42 127.0.0.1:9001 1.234 2.500 1 edge echo - upstream_connect_failure,local_reply\n");
  out.clear();
  f.append(proxy::RequestInfo(), &out);
  EXPECT_EQ(out, "1970-01-01T00:00:00.000Z - - - - - - - 0 0 0 - - 0.000 0 - - - -\n");
}

TEST(FormatJson, OneObjectWithEveryField) {
  Format f;
  proxy::RequestInfo info = sample();
  info.tls_version = "TLSv1.3";
  info.sni = "example.com";
  info.local_reply_filter = "deny";
  info.setFlag(proxy::kClientReset);
  std::string out;
  f.append(info, &out);
  ASSERT_EQ(out.back(), '\n');
  ASSERT_EQ(out.find('\n'), out.size() - 1);
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j.size(), static_cast<size_t>(Field::kCount) + 1);  // every field and "ctx"
  EXPECT_EQ(j["ctx"], nlohmann::json::object());
  EXPECT_EQ(j["time"], "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(j["request_id"], "abc");
  EXPECT_EQ(j["client_address"], "127.0.0.1:5000");
  EXPECT_EQ(j["tls_version"], "TLSv1.3");
  EXPECT_EQ(j["sni"], "example.com");
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/gateway/echo/x?y=1");
  EXPECT_EQ(j["protocol"], "HTTP/1.1");
  EXPECT_EQ(j["status"], 200);
  EXPECT_EQ(j["bytes_in"], 5);
  EXPECT_EQ(j["bytes_out"], 42);
  EXPECT_EQ(j["upstream_host"], "127.0.0.1:9001");
  EXPECT_DOUBLE_EQ(j["upstream_time_ms"].get<double>(), 1.234);
  EXPECT_DOUBLE_EQ(j["total_time_ms"].get<double>(), 2.5);
  EXPECT_EQ(j["retries"], 1);
  EXPECT_EQ(j["listener"], "edge");
  EXPECT_EQ(j["cluster"], "echo");
  EXPECT_EQ(j["local_reply_filter"], "deny");
  EXPECT_EQ(j["response_flags"], "client_reset");
}

TEST(FormatJson, HostileValuesStayOneValidLine) {
  Format f;
  proxy::RequestInfo info = sample();
  const std::string path = std::string("/a\"b\\c\n{\"x\":1}\x01\xff\xc3", 17);
  const std::string id = "\"}, \"status\": 999, \"x\": \"";
  info.path = path;
  info.request_id = id;
  info.upstream_us = -1;
  std::string out;
  f.append(info, &out);
  ASSERT_EQ(out.find('\n'), out.size() - 1) << out;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["status"], 200);
  EXPECT_EQ(j["request_id"], id);
  EXPECT_EQ(j["path"], "/a\"b\\c\n{\"x\":1}\x01\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_TRUE(j["upstream_time_ms"].is_null());
}

TEST(FormatText, ContextKeysAndTheirAbsentForm) {
  Format f;
  std::string error;
  ASSERT_TRUE(Format::parse("%{status} %{ctx.consumer} %{ctx.jwt.sub} %{ctx.none}", &f, &error))
      << error;
  proxy::RequestContext ctx = {{"consumer", "alice \"a\""}, {"jwt.sub", "u-1"}};
  proxy::RequestInfo info = sample();
  info.context = &ctx;
  std::string out;
  f.append(info, &out);
  EXPECT_EQ(out, "200 alice \\x22a\\x22 u-1 -\n");  // escaped like every text value
  out.clear();
  f.append(sample(), &out);  // no context at all
  EXPECT_EQ(out, "200 - - -\n");
}

TEST(FormatParse, InvalidContextKeysAreErrors) {
  Format f;
  std::string error;
  EXPECT_FALSE(Format::parse("%{ctx.}", &f, &error));
  EXPECT_NE(error.find("context key '' at offset 0"), std::string::npos) << error;
  EXPECT_FALSE(Format::parse("x %{ctx.a b}", &f, &error));
  EXPECT_NE(error.find("context key 'a b' at offset 2"), std::string::npos) << error;
  EXPECT_FALSE(Format::parse("%{ctx." + std::string(65, 'k') + "}", &f, &error));
}

TEST(FormatJson, TheContextIsAnObjectOfStrings) {
  Format f;
  proxy::RequestContext ctx = {
      {"consumer", "alice"}, {"auth.method", "jwt"}, {"jwt.x", "\"},\n\xff"}};
  proxy::RequestInfo info = sample();
  info.context = &ctx;
  std::string out;
  f.append(info, &out);
  ASSERT_EQ(out.find('\n'), out.size() - 1) << out;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["ctx"]["consumer"], "alice");
  EXPECT_EQ(j["ctx"]["auth.method"], "jwt");
  EXPECT_EQ(j["ctx"]["jwt.x"], "\"},\n\xef\xbf\xbd");
  EXPECT_EQ(j["ctx"].size(), 3u);
  EXPECT_EQ(j["status"], 200);
}

TEST(FormatTime, MillisecondsAcrossSecondsAndCachedPrefix) {
  Format f;
  std::string error;
  ASSERT_TRUE(Format::parse("%{time}", &f, &error));
  proxy::RequestInfo info;
  std::string out;
  for (int64_t us : {1767225600000000, 1767225600999999, 1767225601000000, 1767225659001000}) {
    info.start_unix_us = us;
    f.append(info, &out);
  }
  EXPECT_EQ(out,
            "2026-01-01T00:00:00.000Z\n2026-01-01T00:00:00.999Z\n2026-01-01T00:00:01.000Z\n"
            "2026-01-01T00:00:59.001Z\n");
}

}  // namespace
}  // namespace sluice::accesslog
