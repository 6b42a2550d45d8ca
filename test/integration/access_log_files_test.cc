// Access log files through the real binary: SIGUSR1 reopens them (logrotate), a writer that
// cannot keep up makes sluice drop and count lines instead of blocking requests, a reload
// switches formats and refuses a file it cannot open, and buffered lines reach the file when
// sluice exits after a drain.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    access_log: { path: '${LOG}'${EXTRA} }
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class AccessLogFilesTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_ = std::make_unique<EchoBackend>("echo"); }

  std::unique_ptr<Gateway> start(const std::string& log, const std::string& extra = "") {
    auto g = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()}, {"LOG", log}, {"EXTRA", extra}});
    return g;
  }

  // POST /reload with the config template rewritten for `log` and `extra`.
  Response reload(Gateway& g, const std::string& log, const std::string& extra) {
    std::map<std::string, std::string> vars{{"BACKEND", backend_->address()},
                                            {"LOG", log},
                                            {"EXTRA", extra},
                                            {"PORT", std::to_string(g.port())},
                                            {"ADMIN", std::to_string(g.adminPort())},
                                            {"PLUGINS", pluginPathsYaml()}};
    EXPECT_TRUE(writeFile(g.configPath(), substitute(kConfig, vars)));
    return httpRequest(g.adminPort(), "POST", "/reload");
  }

  std::unique_ptr<EchoBackend> backend_;
};

TEST_F(AccessLogFilesTest, Sigusr1ReopensTheFileAfterARename) {
  const std::string log = uniqueTmpPath("rotate.log");
  auto g = start(log);
  ASSERT_TRUE(g->ready());
  ASSERT_EQ(httpGet(g->port(), "/gateway/echo/before").status, 200);
  ASSERT_EQ(waitForRequests(log, "/gateway/echo/before").size(), 1u);

  ASSERT_EQ(std::rename(log.c_str(), (log + ".1").c_str()), 0);  // what logrotate does
  ASSERT_TRUE(g->process().signal(SIGUSR1));
  // The reopen creates a new file at the old path; lines logged after that go there.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (access(log.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(access(log.c_str(), F_OK), 0) << "no new file at " << log;
  ASSERT_EQ(httpGet(g->port(), "/gateway/echo/after").status, 200);

  EXPECT_EQ(waitForRequests(log, "/gateway/echo/after").size(), 1u);
  EXPECT_TRUE(waitForRequests(log, "/gateway/echo/before", 0).empty());
  EXPECT_EQ(waitForRequests(log + ".1", "/gateway/echo/before").size(), 1u);
  EXPECT_TRUE(waitForRequests(log + ".1", "/gateway/echo/after", 0).empty());
}

TEST_F(AccessLogFilesTest, AWriterThatCannotKeepUpDropsAndCountsLines) {
  // A FIFO whose reader never reads: the writer thread blocks once the pipe is full, so the
  // worker's 2 KiB buffer fills and lines are dropped. Requests must all be answered.
  const std::string fifo = uniqueTmpPath("stuck.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  auto g = start(fifo, ", buffer_bytes: 2048");
  ASSERT_TRUE(g->ready());
  constexpr int kRequests = 400;  // ~200 bytes a line: far more than the pipe and the buffer
  RawConnection conn(g->port());
  ASSERT_TRUE(conn.connected());
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/" + std::to_string(i), {}, "", 1)));
    Response r = conn.readResponse();
    ASSERT_EQ(r.status, 200) << "request " << i << ": " << r.error;
  }
  std::map<std::string, uint64_t> stats = adminStats(g->adminPort());
  ASSERT_EQ(stats.count("access_log_dropped"), 1u);
  EXPECT_GT(stats["access_log_dropped"], 0u);
  EXPECT_LT(stats["access_log_dropped"], static_cast<uint64_t>(kRequests));
  EXPECT_TRUE(g->process().waitForOutput("lines dropped")) << g->process().outputTail();
  g.reset();  // before the reader goes
  close(reader);
}

TEST_F(AccessLogFilesTest, ReloadSwitchesTheFormatAndKeepsTheFileOpen) {
  const std::string log = uniqueTmpPath("reload.log");
  auto g = start(log);
  ASSERT_TRUE(g->ready());
  ASSERT_EQ(httpGet(g->port(), "/gateway/echo/json-line").status, 200);
  ASSERT_EQ(waitForRequests(log, "/gateway/echo/json-line").size(), 1u);

  Response r = reload(*g, log, ", format: 'text %{method} %{path} %{status}'");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(httpGet(g->port(), "/gateway/echo/text-line").status, 200);
  EXPECT_EQ(waitForLines(log, 1, "text GET /gateway/echo/text-line 200").size(), 1u);
  EXPECT_EQ(logLines(log).size(), 2u);
}

TEST_F(AccessLogFilesTest, AFileThatCannotBeOpenedIsRefusedAndTheOldOneKeepsServing) {
  const std::string log = uniqueTmpPath("kept.log");
  auto g = start(log);
  ASSERT_TRUE(g->ready());
  const std::string bad = testTmpDir() + "/no-such-dir/access.log";
  Response r = reload(*g, bad, "");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("cannot open access log '" + bad + "': No such file or directory"),
            std::string::npos)
      << r.body;
  ASSERT_EQ(httpGet(g->port(), "/gateway/echo/still-logged").status, 200);
  EXPECT_EQ(waitForRequests(log, "/gateway/echo/still-logged").size(), 1u);
}

TEST_F(AccessLogFilesTest, ValidateNamesTheFileItCannotOpen) {
  const std::string bad = testTmpDir() + "/missing-dir/access.log";
  std::map<std::string, std::string> vars{
      {"BACKEND", backend_->address()}, {"LOG", bad}, {"EXTRA", ""}, {"PORT", "1"}, {"ADMIN", "2"},
      {"PLUGINS", pluginPathsYaml()}};
  TempConfig config(substitute(kConfig, vars));
  Process p({runfile("core/sluice"), "--validate", "-c", config.path()});
  EXPECT_EQ(p.waitExit(), 1);
  // listeners[0].access_log.path is on line 9 of the config.
  EXPECT_NE(p.output().find(config.path() + ":9:"), std::string::npos) << p.output();
  EXPECT_NE(p.output().find("cannot open access log '" + bad + "': No such file or directory"),
            std::string::npos)
      << p.output();
}

TEST_F(AccessLogFilesTest, BufferedLinesAreWrittenWhenSluiceExits) {
  const std::string log = uniqueTmpPath("exit.log");
  auto g = start(log);
  ASSERT_TRUE(g->ready());
  constexpr int kRequests = 50;
  RawConnection conn(g->port());
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/" + std::to_string(i), {}, "", 1)));
    ASSERT_EQ(conn.readResponse().status, 200);
  }
  conn.close();
  ASSERT_TRUE(g->process().signal(SIGTERM));
  EXPECT_EQ(g->process().waitExit(), 0);
  EXPECT_EQ(logLines(log).size(), static_cast<size_t>(kRequests));
}

}  // namespace
}  // namespace sluice::test
