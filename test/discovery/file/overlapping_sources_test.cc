// Two `file` discovery entries through the real binary: a cluster one source stops naming keeps
// the hosts another source still lists for it.
#include <chrono>
#include <map>
#include <string>

#include "test/discovery/file/e2e_fixture.h"

namespace sluice::test {
namespace {

using std::chrono::milliseconds;

constexpr char kTwoSources[] = R"(workers: 1
plugin_paths: [${FILE_DIR}, ${RR_DIR}]
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
discovery:
  - name: file
    config: { path: ${FIRST}, interval_ms: 100 }
  - name: file
    config: { path: ${SECOND}, interval_ms: 100 }
)";

// Two discovery entries (two files) naming one cluster: its endpoints are the union of both
// lists; when one source stops naming it, the cluster keeps the other source's hosts (before
// core commit b8dea11 it was emptied: 503 although the first file still listed A); when no
// source names it any more, it is emptied (503), not deleted.
TEST_F(FileGatewayTest, ClusterDroppedByOneSourceKeepsAnotherSourcesHosts) {
  std::string first = uniqueTmpPath("first.yaml");
  std::string second = uniqueTmpPath("second.yaml");
  ASSERT_TRUE(writeFile(first, "clusters:\n  restapi: " + list({&a_}) + "\n"));
  ASSERT_TRUE(writeFile(second, "clusters:\n  billing: " + list({&c_}) + "\n"));
  startSluice(kTwoSources, {{"FIRST", first}, {"SECOND", second}});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 a"; }, milliseconds(5000)));
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/billing/x") == "200 c"; }, milliseconds(5000)));

  // The second file names restapi too (with B): both lists serve.
  ASSERT_TRUE(writeFile(
      second, "clusters:\n  billing: " + list({&c_}) + "\n  restapi: " + list({&b_}) + "\n"));
  using Counts = std::map<std::string, int>;
  ASSERT_TRUE(waitUntil(
      [&] {
        return burst("/gateway/restapi/x", 10) == Counts{{"a", 5}, {"b", 5}};
      },
      milliseconds(5000)))
      << "restapi is not A + B";

  // The second stops naming it: the first file's A remains.
  ASSERT_TRUE(writeFile(second, "clusters:\n  billing: " + list({&c_}) + "\n"));
  EXPECT_TRUE(waitUntil(
      [&] {
        return burst("/gateway/restapi/x", 10) == Counts{{"a", 10}};
      },
      milliseconds(5000)))
      << sluice_->process().outputTail();
  EXPECT_EQ(burst("/gateway/restapi/x", 20), (Counts{{"a", 20}}));

  // No source names it: emptied, not deleted.
  ASSERT_TRUE(writeFile(first, "clusters: {}\n"));
  EXPECT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "503 "; }, milliseconds(5000)))
      << get("/gateway/restapi/x");
  EXPECT_EQ(get("/gateway/billing/x"), "200 c");
}

}  // namespace
}  // namespace sluice::test
