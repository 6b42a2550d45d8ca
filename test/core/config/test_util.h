// Helpers shared by the config loader tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config.h"

namespace sluice::config::testing {

// Errors of a config that must fail to load.
inline std::vector<std::string> loadErrors(const std::string& yaml) {
  std::vector<std::string> errors;
  auto config = loadString(yaml, "t.yaml", &errors);
  EXPECT_EQ(config, nullptr) << "config unexpectedly valid:\n" << yaml;
  EXPECT_FALSE(errors.empty());
  return errors;
}

// A config that must load; fails the test with its errors otherwise.
inline std::shared_ptr<const Config> loadOk(const std::string& yaml) {
  std::vector<std::string> errors;
  auto config = loadString(yaml, "t.yaml", &errors);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(config, nullptr) << all;
  EXPECT_TRUE(errors.empty()) << all;
  return config;
}

// True when one error is "t.yaml:<where>: <...reason...>".
inline ::testing::AssertionResult hasError(const std::vector<std::string>& errors,
                                           const std::string& where, const std::string& reason) {
  const std::string prefix = "t.yaml:" + where + ": ";
  for (const auto& e : errors) {
    if (e.rfind(prefix, 0) == 0 && e.find(reason, prefix.size()) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  auto failure = ::testing::AssertionFailure()
                 << "no error at " << where << " containing \"" << reason << "\"; got:";
  for (const auto& e : errors) failure << "\n  " << e;
  return failure;
}

// One listener entry (`e` on 127.0.0.1:1) with `extra` appended inside it: lines indented by four
// spaces (`    backlog: 8`) are keys of the listener; the first extra line is line 4 of the
// config (where its errors are reported).
inline std::string oneListener(const std::string& extra) {
  return "listeners:\n  - name: e\n    address: 127.0.0.1:1\n" + extra;
}

// The smallest valid config, to append sections to.
inline const char* kListener = "listeners: [{name: edge, address: 127.0.0.1:8080}]\n";

}  // namespace sluice::config::testing
