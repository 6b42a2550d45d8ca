// greeter — a test filter plugin for hot-swap tests, built twice from this source with a different
// GREETING (see BUILD.bazel): both builds call themselves "greeter", so a reload that finds the
// other build under the same path loads it side by side with the running one. Adds the response
// header "X-Greeting: GREETING" and writes "greeter GREETING unloaded" to stderr when the shared
// object is unloaded, so a test can see when the old build goes.
#include <unistd.h>

#include <cstring>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

#define GREETER_STR2(x) #x
#define GREETER_STR(x) GREETER_STR2(x)

namespace {

constexpr char kGreeting[] = GREETER_STR(GREETING);

struct GreeterConfig {
  explicit GreeterConfig(const sluice::sdk::ConfigNode& node) { node.requireOnlyKeys({}); }
};

class GreeterFilter : public sluice::sdk::Filter {
 public:
  explicit GreeterFilter(const GreeterConfig&) {}
  sluice::sdk::FilterStatus onResponseHeaders(sluice::sdk::Stream& stream, bool) override {
    stream.setHeader(sluice::sdk::HeaderMap::kResponse, "X-Greeting", kGreeting);
    return sluice::sdk::FilterStatus::kContinue;
  }
};

__attribute__((destructor)) void onUnload() {
  char line[128] = "greeter ";
  std::strncat(line, kGreeting, 64);
  std::strcat(line, " unloaded\n");
  ssize_t ignored = ::write(2, line, std::strlen(line));
  (void)ignored;
}

}  // namespace

SLUICE_FILTER_PLUGIN("greeter", "1.0.0", GreeterConfig, GreeterFilter)
