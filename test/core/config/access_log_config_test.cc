// `access_log` on listeners: one entry or a list, defaults, relative paths, and the errors
// (unknown format fields, missing path, bad buffer size, a path twice) with file:line:col.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;

std::string listener(const std::string& access_log) {
  return "listeners:\n"
         "  - name: edge\n"
         "    address: 127.0.0.1:8080\n"
         "    access_log: " +
         access_log + "\n";
}

TEST(AccessLogConfig, OneEntryWithDefaults) {
  auto config = loadOk(listener("{path: stderr}"));
  ASSERT_NE(config, nullptr);
  ASSERT_EQ(config->listeners[0].access_logs.size(), 1u);
  const AccessLog& log = config->listeners[0].access_logs[0];
  EXPECT_EQ(log.path, "stderr");
  EXPECT_EQ(log.format, "json");
  EXPECT_EQ(log.buffer_bytes, 1048576u);
}

TEST(AccessLogConfig, AListWithFormatsAndARelativePath) {
  auto config = loadOk(
      listener("\n      - {path: /var/log/sluice/a.json}\n"
               "      - {path: logs/a.txt, format: '%{time} %{status}', buffer_bytes: 4096}"));
  ASSERT_NE(config, nullptr);
  const auto& logs = config->listeners[0].access_logs;
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].path, "/var/log/sluice/a.json");
  EXPECT_EQ(logs[1].format, "%{time} %{status}");
  EXPECT_EQ(logs[1].buffer_bytes, 4096u);
  EXPECT_EQ(logs[1].path.front(), '/');  // resolved against the config's directory
  EXPECT_NE(logs[1].path.find("/logs/a.txt"), std::string::npos);
}

TEST(AccessLogConfig, UnknownFieldInAFormatStringIsAnErrorAtTheValue) {
  auto errors = loadErrors(listener("{path: stderr, format: '%{time} %{stauts}'}"));
  EXPECT_TRUE(hasError(errors, "4:40",
                       "listeners[0].access_log.format: unknown field 'stauts' at offset 8 "
                       "(known: time,"));
}

TEST(AccessLogConfig, FormatErrorsInAList) {
  auto errors = loadErrors(listener("\n      - {path: stderr, format: '50%'}"));
  EXPECT_TRUE(hasError(errors, "5:32", "listeners[0].access_log[0].format: '%' at offset 2"));
}

TEST(AccessLogConfig, PathIsRequiredAndNotEmpty) {
  EXPECT_TRUE(
      hasError(loadErrors(listener("{format: json}")), "4:17", "missing required key 'path'"));
  EXPECT_TRUE(hasError(loadErrors(listener("{path: ''}")), "4:24",
                       "listeners[0].access_log.path: empty path"));
}

TEST(AccessLogConfig, UnknownKeysAndBadBufferSizes) {
  EXPECT_TRUE(hasError(loadErrors(listener("{path: stderr, fromat: json}")), "4:32",
                       "unknown key 'fromat' in access_log entry (allowed: path, format, "
                       "buffer_bytes)"));
  EXPECT_TRUE(hasError(loadErrors(listener("{path: stderr, buffer_bytes: 0}")), "4:46",
                       "listeners[0].access_log.buffer_bytes"));
}

TEST(AccessLogConfig, ThePathTwiceInOneListenerIsAnError) {
  auto errors = loadErrors(listener("[{path: stderr}, {path: stderr}]"));
  EXPECT_TRUE(hasError(errors, "4:41", "'stderr' is already this listener's access log"));
}

}  // namespace
}  // namespace sluice::config
