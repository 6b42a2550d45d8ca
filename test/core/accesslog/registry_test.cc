// Access log files and the writer thread: files shared by path, lines written in order, a full
// worker buffer drops and counts, reopen after a rename, unused files closed after their last
// lines, and an unopenable path reported.
#include "core/accesslog/registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/accesslog/sink.h"

namespace sluice::accesslog {
namespace {

std::string tmpPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  static int n = 0;
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + std::to_string(getpid()) + "-" +
         std::to_string(++n) + "-" + name;
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool waitForFile(const std::string& path) {
  for (int i = 0; i < 1000 && access(path.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return access(path.c_str(), F_OK) == 0;
}

TEST(Registry, APathIsOpenedOnceAndShared) {
  Registry registry;
  std::string error;
  const std::string a = tmpPath("a.log");
  auto first = registry.acquire(a, &error);
  ASSERT_NE(first, nullptr) << error;
  EXPECT_EQ(registry.acquire(a, &error), first);
  auto other = registry.acquire(tmpPath("b.log"), &error);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  EXPECT_EQ(registry.openPaths().size(), 2u);
}

TEST(Registry, AnUnopenablePathIsAnErrorWithTheReason) {
  Registry registry;
  std::string error;
  EXPECT_EQ(registry.acquire("/nonexistent-dir/x/access.log", &error), nullptr);
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_TRUE(registry.openPaths().empty());
}

TEST(Registry, NoWriterUntilAFileIsOpenThenItWrites) {
  Registry registry;
  registry.start(10);
  EXPECT_FALSE(registry.writerRunning()) << "no access log: no thread";
  std::string error;
  const std::string path = tmpPath("late.log");
  auto file = registry.acquire(path, &error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_TRUE(registry.writerRunning());
  ASSERT_TRUE(file->append(0, "late\n", 1024));
  for (int i = 0; i < 1000 && contents(path).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(contents(path), "late\n") << "written by the writer, before stop";
  EXPECT_TRUE(registry.stop(5000));
  EXPECT_FALSE(registry.writerRunning());
  // After stop, a file opened starts nothing.
  EXPECT_NE(registry.acquire(tmpPath("after.log"), &error), nullptr) << error;
  EXPECT_FALSE(registry.writerRunning());
}

TEST(Registry, LinesOfEachWorkerAreWrittenInOrderAtStop) {
  Registry registry;
  std::string error;
  const std::string path = tmpPath("order.log");
  auto file = registry.acquire(path, &error);
  ASSERT_NE(file, nullptr) << error;
  registry.start(1000);
  std::string expected_w0;
  std::string expected_w3;
  for (int i = 0; i < 100; ++i) {
    std::string l0 = "w0 " + std::to_string(i) + "\n";
    std::string l3 = "w3 " + std::to_string(i) + "\n";
    ASSERT_TRUE(file->append(0, l0, 1 << 20));
    ASSERT_TRUE(file->append(3, l3, 1 << 20));
    expected_w0 += l0;
    expected_w3 += l3;
  }
  EXPECT_TRUE(registry.stop(5000));
  std::string text = contents(path);
  EXPECT_EQ(text.size(), expected_w0.size() + expected_w3.size());
  // Each worker's lines keep their order (workers interleave by batch).
  std::string w0, w3;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) (line[1] == '0' ? w0 : w3) += line + "\n";
  EXPECT_EQ(w0, expected_w0);
  EXPECT_EQ(w3, expected_w3);
}

TEST(Registry, AFullWorkerBufferDropsAndCounts) {
  Registry registry;  // no writer: nothing empties the buffers
  std::string error;
  auto file = registry.acquire(tmpPath("full.log"), &error);
  ASSERT_NE(file, nullptr) << error;
  const std::string line(10, 'x');
  EXPECT_TRUE(file->append(1, line, 25));
  EXPECT_TRUE(file->append(1, line, 25));
  EXPECT_FALSE(file->append(1, line, 25));  // 30 > 25
  EXPECT_FALSE(file->append(1, std::string(30, 'y'), 25));
  EXPECT_TRUE(file->append(2, line, 25));  // another worker has its own buffer
  EXPECT_EQ(file->dropped(), 2u);
  EXPECT_EQ(file->droppedBy(1), 2u);
  EXPECT_EQ(file->droppedBy(2), 0u);
  EXPECT_EQ(registry.dropped(), 2u);
  EXPECT_EQ(registry.droppedBy(1), 2u);
}

TEST(Registry, ReopenAfterRenameWritesNewLinesToTheOldPath) {
  Registry registry;
  std::string error;
  const std::string path = tmpPath("rotate.log");
  auto file = registry.acquire(path, &error);
  ASSERT_NE(file, nullptr) << error;
  registry.start(10);
  ASSERT_TRUE(file->append(0, "before\n", 1024));
  for (int i = 0; i < 1000 && contents(path).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  registry.requestReopen();
  ASSERT_TRUE(waitForFile(path));
  ASSERT_TRUE(file->append(0, "after\n", 1024));
  EXPECT_TRUE(registry.stop(5000));
  EXPECT_EQ(contents(path + ".1"), "before\n");
  EXPECT_EQ(contents(path), "after\n");
}

TEST(Registry, AFileNoOneUsesIsClosedAfterItsLastLines) {
  Registry registry;
  std::string error;
  const std::string path = tmpPath("unused.log");
  {
    auto file = registry.acquire(path, &error);
    ASSERT_NE(file, nullptr) << error;
    Sink sink(Format(), file, 1 << 20);
    proxy::RequestInfo info;
    info.path = "/last";
    ASSERT_TRUE(sink.log(0, info));
    ASSERT_TRUE(file->append(4, std::string(3, 'z'), 4));
    ASSERT_FALSE(file->append(4, std::string(3, 'z'), 4));  // one drop, kept after closing
  }
  registry.start(10);
  for (int i = 0; i < 1000 && !registry.openPaths().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(registry.openPaths().empty());
  EXPECT_NE(contents(path).find("\"path\":\"/last\""), std::string::npos) << contents(path);
  EXPECT_EQ(registry.dropped(), 1u);
  EXPECT_TRUE(registry.stop(5000));
}

}  // namespace
}  // namespace sluice::accesslog
