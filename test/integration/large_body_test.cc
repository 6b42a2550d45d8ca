// Huge bodies stream through the real binary with bounded memory: 1 GiB down and 1 GiB up,
// verified byte for byte (pattern / FNV-1a), while sluice's resident set is sampled from /proc.
// Measured on the 2-core CI machine: each 1 GiB transfer takes a few seconds, so 1 GiB it is
// (an eighth of every size in a sanitizer build, see kScale).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;
constexpr uint64_t kMiB = 1024ull * 1024;
// What sluice may hold resident while moving a body of any size (the binary, plugins, worker
// stacks and a few 256 KiB watermark buffers take well under this).
constexpr int64_t kMaxRssKiB = 64 * 1024;
// Body sizes: in a sanitizer build (5-15x slower, RSS bounds off) an eighth of them, which
// takes the same streaming paths in a time the test's timeout allows.
constexpr uint64_t kScale = kRssIsMeaningful ? 1 : 8;
constexpr uint64_t kBig = kGiB / kScale;

constexpr char kConfig[] = R"(
workers: 2
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: big
    response_timeout_ms: 60000
    endpoints: [${BACKEND}]
)";

// Samples VmRSS of `pid` every 10 ms on its own thread until destroyed.
class RssSampler {
 public:
  explicit RssSampler(pid_t pid)
      : thread_([this, pid] {
          while (!stop_) {
            peak_ = std::max<int64_t>(peak_, vmRssKiB(pid));
            ++samples_;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~RssSampler() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t peakKiB() const { return peak_; }
  int samples() const { return samples_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> peak_{0};
  std::atomic<int> samples_{0};
  std::thread thread_;
};

// The echo backend's pattern, long enough to take any 26-aligned window of `size` bytes.
std::string patternBuffer(size_t size) { return patternBytes(0, size + 26); }

class LargeBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<EchoBackend>("big");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_->address()}});
    ASSERT_TRUE(gateway_->ready());
    pid_ = gateway_->process().pid();
  }

  // Reads the response to a /bytes/N request on `conn`, checking every byte against the pattern.
  void readPattern(RawConnection& conn, uint64_t size, bool expect_chunked) {
    uint64_t offset = 0;
    uint64_t mismatches = 0;
    ReadOptions options;
    options.on_body = [&](std::string_view piece) {
      for (unsigned char c : piece) {
        mismatches += c != static_cast<unsigned char>('a' + offset % 26);
        ++offset;
      }
    };
    Response r = conn.readResponse(options);
    ASSERT_TRUE(r.complete) << r.error << " after " << offset << " bytes";
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.chunked, expect_chunked);
    EXPECT_EQ(r.body_length, size);
    EXPECT_EQ(offset, size);
    EXPECT_EQ(mismatches, 0u);
  }

  // Streams `size` pattern bytes as the body of an upload (Content-Length or chunked) and checks
  // the length and FNV-1a the backend reports.
  void upload(uint64_t size, bool chunked) {
    constexpr size_t kPiece = 256 * 1024;
    const std::string pattern = patternBuffer(kPiece);
    RawConnection conn(gateway_->port(), 30000);
    ASSERT_TRUE(conn.connected());
    Headers headers{{chunked ? "Transfer-Encoding" : "Content-Length",
                     chunked ? "chunked" : std::to_string(size)}};
    ASSERT_TRUE(conn.send(buildRequest("POST", "/gateway/big/upload", headers, "", 1)));
    uint32_t hash = fnv1a("");
    for (uint64_t sent = 0; sent < size;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - sent));
      std::string_view piece(pattern.data() + sent % 26, n);
      hash = fnv1a(piece, hash);
      if (chunked) {
        char line[32];
        snprintf(line, sizeof(line), "%zx\r\n", n);
        ASSERT_TRUE(conn.send(line)) << "at " << sent;
      }
      ASSERT_TRUE(conn.send(piece)) << "send stalled at " << sent << " bytes";
      if (chunked) {
        ASSERT_TRUE(conn.send("\r\n"));
      }
      sent += n;
    }
    if (chunked) {
      ASSERT_TRUE(conn.send("0\r\n\r\n"));
    }
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(echoNumber(r.body, "body_length"), static_cast<int64_t>(size)) << r.body;
    EXPECT_EQ(echoString(r.body, "body_fnv1a"), hex8(hash)) << r.body;
  }

  void expectBoundedMemory(const RssSampler& sampler) {
    EXPECT_GT(sampler.samples(), 0);
    if (kRssIsMeaningful)
      EXPECT_LT(sampler.peakKiB(), kMaxRssKiB)
          << "sampled peak VmRSS " << sampler.peakKiB() << " KiB";
    int64_t hwm = vmHwmKiB(pid_);
    std::printf("[ MEMORY   ] sluice VmRSS peak %lld KiB over %d samples; VmHWM %lld KiB\n",
                static_cast<long long>(sampler.peakKiB()), sampler.samples(),
                static_cast<long long>(hwm));
    if (kRssIsMeaningful) EXPECT_LT(hwm, kMaxRssKiB) << "VmHWM " << hwm << " KiB";
  }

  std::unique_ptr<EchoBackend> backend_;
  std::unique_ptr<Gateway> gateway_;
  pid_t pid_ = 0;
};

TEST_F(LargeBodyTest, Download1GiBChunkedWithBoundedMemory) {
  RssSampler sampler(pid_);
  RawConnection conn(gateway_->port(), 30000);
  ASSERT_TRUE(
      conn.send(buildRequest("GET", "/gateway/big/bytes/" + std::to_string(kBig), {}, "", 1)));
  readPattern(conn, kBig, true);
  sampler.stop();
  expectBoundedMemory(sampler);
}

TEST_F(LargeBodyTest, Download1GiBContentLengthWithBoundedMemory) {
  RssSampler sampler(pid_);
  RawConnection conn(gateway_->port(), 30000);
  ASSERT_TRUE(conn.send(buildRequest(
      "GET", "/gateway/big/bytes/" + std::to_string(kBig) + "?framing=length", {}, "", 1)));
  readPattern(conn, kBig, false);
  sampler.stop();
  expectBoundedMemory(sampler);
}

TEST_F(LargeBodyTest, StalledClientDoesNotMakeSluiceBuffer) {
  // The client reads nothing for 2 s: without backpressure sluice would pull the whole body
  // from the (fast) backend into memory.
  RssSampler sampler(pid_);
  RawConnection conn(gateway_->port(), 30000);
  ASSERT_TRUE(conn.send(
      buildRequest("GET", "/gateway/big/bytes/" + std::to_string(512 * kMiB / kScale), {}, "", 1)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  if (kRssIsMeaningful) EXPECT_LT(vmRssKiB(pid_), kMaxRssKiB);
  readPattern(conn, 512 * kMiB / kScale, true);
  sampler.stop();
  expectBoundedMemory(sampler);
}

TEST_F(LargeBodyTest, Upload1GiBContentLengthWithBoundedMemory) {
  RssSampler sampler(pid_);
  upload(kBig, false);
  sampler.stop();
  expectBoundedMemory(sampler);
}

TEST_F(LargeBodyTest, Upload256MiBChunkedWithBoundedMemory) {
  // Chunked uploads take the same streaming path plus re-chunking; 256 MiB keeps it quick.
  RssSampler sampler(pid_);
  upload(256 * kMiB / kScale, true);
  sampler.stop();
  expectBoundedMemory(sampler);
}

TEST_F(LargeBodyTest, PipelineFloodFromAClientThatNeverReadsStaysBounded) {
  // Up to 700 000 pipelined requests (about 40 MiB; 64 KiB of response each) and no reading:
  // sluice must stop reading the pipeline instead of queueing requests or responses. What the
  // client manages to send is then bounded by the kernel's socket buffers plus sluice's.
  RssSampler sampler(pid_);
  RawConnection conn(gateway_->port(), 2000);
  std::string one = buildRequest("GET", "/gateway/big/bytes/65536", {}, "", 1);
  std::string batch;
  for (int i = 0; i < 100; ++i) batch += one;
  int sent = 0;
  while (sent < 7000 && conn.send(batch)) ++sent;  // stops when sluice stops reading
  EXPECT_LT(sent, 7000) << "sluice read the whole flood without the client reading anything";
  std::this_thread::sleep_for(std::chrono::seconds(1));
  sampler.stop();
  expectBoundedMemory(sampler);
  // Still serving: read a few of the answers.
  conn.setTimeout(10000);
  for (int i = 0; i < 3; ++i) {
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body_length, 65536u);
  }
}

}  // namespace
}  // namespace sluice::test
