// Linked into parser_baseline_test: the whole parser suite runs with llhttp's baseline build
// (parser_test itself runs with the one the CPU picks, the SSE4.2 copy on most machines).
#include <gtest/gtest.h>

#include "core/http/llhttp_dispatch.h"

namespace {

class BaselineLlhttp : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_TRUE(sluice::http::setLlhttpBuild(sluice::http::LlhttpBuild::kBaseline));
  }
};

[[maybe_unused]] ::testing::Environment* const kBaseline =
    ::testing::AddGlobalTestEnvironment(new BaselineLlhttp);

}  // namespace
