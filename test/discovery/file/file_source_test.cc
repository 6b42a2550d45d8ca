// The `file` discovery plugin's poller (FileSource), driven one poll() at a time against real
// files: what it publishes, what it refuses, what it logs, and which file changes it notices.
#include "discovery/file/file_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "test/discovery/testing/recording_host.h"
#include "test/harness/env.h"

namespace sluice::discovery {
namespace {

// Writes `text` in place (same inode: truncate + write), as a naive editor or `>` does.
void writeInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// Sets the file's mtime to `ns` nanoseconds since the epoch.
void setMtime(const std::string& path, int64_t ns) {
  timespec times[2];
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1].tv_sec = ns / 1000000000;
  times[1].tv_nsec = ns % 1000000000;
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Addresses of cluster `name` in `clusters`, joined with ','.
std::string addressesOf(const std::vector<sdk::DiscoveredCluster>& clusters,
                        const std::string& name) {
  for (const sdk::DiscoveredCluster& c : clusters) {
    if (c.name != name) continue;
    std::string out;
    for (const sdk::Endpoint& e : c.endpoints) out += (out.empty() ? "" : ",") + e.address;
    return out;
  }
  return "<none>";
}

class FileSourceTest : public ::testing::Test {
 protected:
  FileSourceTest() : path_(test::uniqueTmpPath("endpoints.yaml")), source_(path_, rec_.host()) {}

  testing::RecordingHost rec_;
  std::string path_;
  FileSource source_;
};

TEST_F(FileSourceTest, PublishesOnceThenOnlyOnChange) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  auto first = source_.poll();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(addressesOf(*first, "restapi"), "127.0.0.1:9001");
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("publishing 1 clusters, 1 endpoints"), 1u);
}

TEST_F(FileSourceTest, SeesAtomicRenameOver) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(source_.poll().has_value());
  // Same size, new inode (writeFile writes a temp file and renames it over).
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9002]}\n"));
  auto next = source_.poll();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(addressesOf(*next, "restapi"), "127.0.0.1:9002");
}

TEST_F(FileSourceTest, SeesInPlaceRewriteWithSameSizeAndSameMtime) {
  writeInPlace(path_, "clusters: {restapi: [127.0.0.1:9001]}\n");
  FileStamp before = FileStamp::ofPath(path_);
  ASSERT_TRUE(source_.poll().has_value());
  // Same inode, same size, and the mtime forced back: stat cannot tell. The mtime is recent,
  // so the content is compared.
  writeInPlace(path_, "clusters: {restapi: [127.0.0.1:9002]}\n");
  setMtime(path_, before.mtime_ns);
  ASSERT_EQ(FileStamp::ofPath(path_), before);
  auto next = source_.poll();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(addressesOf(*next, "restapi"), "127.0.0.1:9002");
}

TEST_F(FileSourceTest, TouchDoesNotRepublish) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(source_.poll().has_value());
  setMtime(path_, FileStamp::ofPath(path_).mtime_ns + 5'000'000'000);
  EXPECT_FALSE(source_.poll().has_value());
  // The same content under a new inode is no change either.
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  EXPECT_FALSE(source_.poll().has_value());
}

TEST_F(FileSourceTest, BrokenFileKeepsTheLastGoodSnapshotAndWarnsOnce) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(source_.poll().has_value());
  ASSERT_TRUE(
      test::writeFile(path_, "clusters:\n  restapi:\n    - 127.0.0.1:9002\n    - 127.0.0.1\n"));
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("WARN endpoints file " + path_ +
                           " refused (1 error); keeping the last good snapshot (1 clusters)"),
            1u);
  EXPECT_EQ(rec_.countLogs("WARN " + path_ +
                           ":4:7: invalid address '127.0.0.1': missing port (expected host:port)"),
            1u);
  // Fixed: published again.
  ASSERT_TRUE(test::writeFile(path_, "clusters:\n  restapi:\n    - 127.0.0.1:9002\n"));
  auto fixed = source_.poll();
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(addressesOf(*fixed, "restapi"), "127.0.0.1:9002");
  EXPECT_EQ(rec_.countLogs("is valid again"), 1u);
}

TEST_F(FileSourceTest, HalfWrittenFileIsNotPublished) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(source_.poll().has_value());
  writeInPlace(path_, "");  // truncated, nothing written yet
  EXPECT_FALSE(source_.poll().has_value());
  writeInPlace(path_, "clusters:\n");  // cut after the first line
  EXPECT_FALSE(source_.poll().has_value());
  writeInPlace(path_, "clusters:\n  restapi:\n");  // cut after a cluster's key
  EXPECT_FALSE(source_.poll().has_value());
  writeInPlace(path_, "clusters:\n  restapi: [127.0.0.1:9002, 127.0");  // cut mid-list
  EXPECT_FALSE(source_.poll().has_value());
  writeInPlace(path_, "clusters:\n  restapi: [127.0.0.1:9002, 127.0.0.1:9003]\n");
  auto full = source_.poll();
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(addressesOf(*full, "restapi"), "127.0.0.1:9002,127.0.0.1:9003");
}

TEST_F(FileSourceTest, DeletedFileWarnsOnceAndIsReadAgainWhenBack) {
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(source_.poll().has_value());
  ASSERT_EQ(unlink(path_.c_str()), 0);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("WARN endpoints file " + path_ +
                           ": No such file or directory; keeping the last snapshot (1 clusters)"),
            1u);
  // Back with the same content: nothing new to publish.
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9001]}\n"));
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("is back"), 1u);
  // Deleted again, back with new content: published.
  ASSERT_EQ(unlink(path_.c_str()), 0);
  EXPECT_FALSE(source_.poll().has_value());
  ASSERT_TRUE(test::writeFile(path_, "clusters: {restapi: [127.0.0.1:9002]}\n"));
  auto back = source_.poll();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(addressesOf(*back, "restapi"), "127.0.0.1:9002");
  EXPECT_EQ(rec_.countLogs("No such file or directory"), 2u);
}

TEST_F(FileSourceTest, MissingAtStartIsInfoAndPublishedWhenItAppears) {
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("INFO endpoints file " + path_ +
                           ": No such file or directory; publishing nothing until it appears"),
            1u);
  EXPECT_EQ(rec_.countLogs("WARN"), 0u);
  ASSERT_TRUE(test::writeFile(path_, "clusters: {billing: []}\n"));
  auto appeared = source_.poll();
  ASSERT_TRUE(appeared.has_value());
  EXPECT_EQ(addressesOf(*appeared, "billing"), "");
}

TEST_F(FileSourceTest, UnreadableFileWarnsOnce) {
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);  // a directory where the file should be
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_FALSE(source_.poll().has_value());
  EXPECT_EQ(rec_.countLogs("cannot be read: not a regular file"), 1u);
  ASSERT_EQ(rmdir(path_.c_str()), 0);
  ASSERT_TRUE(test::writeFile(path_, "clusters: {a: [h:1]}\n"));
  EXPECT_TRUE(source_.poll().has_value());
}

TEST_F(FileSourceTest, FifoAtThePathDoesNotBlockThePoller) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0);
  EXPECT_FALSE(source_.poll().has_value());  // returns at once: no writer is waited for
  EXPECT_EQ(rec_.countLogs("cannot be read: not a regular file"), 1u);
}

TEST(ReadStableTest, ReadsContentAndStamp) {
  std::string path = test::uniqueTmpPath("read.yaml");
  ASSERT_TRUE(test::writeFile(path, "hello\n"));
  std::string text, error;
  FileStamp stamp;
  ASSERT_TRUE(readStable(path, &text, &stamp, &error)) << error;
  EXPECT_EQ(text, "hello\n");
  EXPECT_EQ(stamp, FileStamp::ofPath(path));
  EXPECT_EQ(stamp.size, 6);
  EXPECT_FALSE(readStable(path + ".nope", &text, &stamp, &error));
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace sluice::discovery
