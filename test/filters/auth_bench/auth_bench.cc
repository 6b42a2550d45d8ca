// Per-request cost of api_key_auth, basic_auth (cache hit) and jwt_auth (HS256, RS256, ES256)
// through their C hook tables over the fake host: stream_create, on_request_headers, on_log,
// stream_destroy, as the core calls them. Prints ns per request. Single thread.
//
// The three plugins are linked into one binary; each exports sluice_plugin_entry, so they are
// reached through their classes' hook tables instead (the SDK's FilterPlugin<...>::kHooks).
#include <crypt.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "filters/api_key_auth/api_key_auth.h"
#include "filters/auth_common/auth_common.h"
#include "filters/basic_auth/basic_auth.h"
#include "filters/jwt_auth/jwt_auth.h"
#include "test/filters/jwt_auth/jwt_test_util.h"
#include "test/filters/testing/filter_harness.h"
#include "test/harness/env.h"

namespace {

using sluice::testing::FakeStream;
using sluice::testing::FilterHarness;
namespace sdk = sluice::sdk;
namespace f = sluice::filters;
namespace tj = sluice::testing::jwt;

template <typename Config, typename Worker, typename Filter>
const sluice_plugin_descriptor* descriptor() {
  static const sluice_plugin_descriptor d = {
      SLUICE_ABI_MAJOR,
      SLUICE_ABI_MINOR,
      sizeof(sluice_plugin_descriptor),
      SLUICE_PLUGIN_KIND_FILTER,
      "bench",
      "0",
      &sdk::internal::FilterPlugin<Config, Worker, Filter>::kHooks};
  return &d;
}

void run(const char* name, const sluice_plugin_descriptor* d, const std::string& yaml,
         const sluice::testing::Headers& headers, int iterations) {
  FilterHarness h(d, yaml);
  if (!h.configured()) {
    std::printf("%s: config refused: %s\n", name, h.error().c_str());
    return;
  }
  auto once = [&] {
    FakeStream s("GET", "/api/x", headers);
    sluice_filter_status st = h.requestHeaders(s);
    if (st != SLUICE_FILTER_CONTINUE) std::printf("%s: not admitted (%d)\n", name, st);
  };
  for (int i = 0; i < iterations / 10 + 1; ++i) once();  // warm up (caches, allocator)
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) once();
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
      iterations;
  std::printf("%-28s %9.0f ns/request\n", name, ns);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  // api_key_auth with 10,000 keys.
  std::string keys;
  for (int i = 0; i < 10000; ++i)
    keys += "c" + std::to_string(i) + " key-" + std::to_string(i) + "\n";
  std::string keys_file = sluice::test::uniqueTmpPath("bench-keys");
  sluice::test::writeFile(keys_file, keys);
  run("api_key_auth (10k keys)",
      descriptor<f::ApiKeyAuthConfig, sdk::NoWorker, f::ApiKeyAuthFilter>(),
      "keys_file: " + keys_file + "\n", {{"X-Api-Key", "key-4242"}}, n);
  // basic_auth, bcrypt cost 10, answered from the cache after the first request.
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  crypt_gensalt_rn("$2b$", 10, nullptr, 0, setting, sizeof(setting));
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  std::string htpasswd = sluice::test::uniqueTmpPath("bench-htpasswd");
  sluice::test::writeFile(
      htpasswd, std::string("alice:") + crypt_rn("pw", setting, &data, sizeof(data)) + "\n");
  run("basic_auth (cache hit)",
      descriptor<f::BasicAuthConfig, f::BasicAuthWorker, f::BasicAuthFilter>(),
      "htpasswd_file: " + htpasswd + "\nverify_threads: 0\n",
      {{"Authorization", "Basic YWxpY2U6cHc="}}, n);
  // jwt_auth.
  const std::string secret = "bench-secret-bench-secret-bench-secret!!";
  tj::Pkey rsa = tj::generateRsa(2048), ec = tj::generateP256();
  nlohmann::json jwks = {{"keys", {tj::publicJwk(rsa.get(), "r"), tj::publicJwk(ec.get(), "e")}}};
  std::string jwks_file = sluice::test::uniqueTmpPath("bench-jwks");
  sluice::test::writeFile(jwks_file, jwks.dump());
  nlohmann::json claims = {{"sub", "u"},
                           {"iss", "https://idp"},
                           {"aud", "api"},
                           {"exp", 4000000000},
                           {"scope", "read write"}};
  std::string yaml = "algorithms: [HS256, RS256, ES256]\njwks_file: " + jwks_file +
                     "\nsecret: " + secret + "\nissuers: https://idp\naudiences: api\n" +
                     "forward_claims: [{claim: scope, header: X-Scope}]\n";
  const auto* jwt = descriptor<f::JwtAuthConfig, f::JwtAuthWorker, f::JwtAuthFilter>();
  for (const char* cache : {"1000", "0"}) {
    std::string y = yaml + "signature_cache_size: " + cache + "\n";
    std::string suffix = std::string(cache) == "0" ? " (no cache)" : " (cached)";
    run(("jwt_auth HS256" + suffix).c_str(), jwt, y,
        {{"Authorization",
          "Bearer " + tj::signWithSecret(secret, nlohmann::json::object(), claims)}},
        n);
    run(("jwt_auth RS256" + suffix).c_str(), jwt, y,
        {{"Authorization", "Bearer " + tj::signWithKey(rsa.get(), {{"kid", "r"}}, claims)}}, n);
    run(("jwt_auth ES256" + suffix).c_str(), jwt, y,
        {{"Authorization", "Bearer " + tj::signWithKey(ec.get(), {{"kid", "e"}}, claims)}}, n);
  }
  return 0;
}
