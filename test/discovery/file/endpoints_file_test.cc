// Endpoints-file parsing of the `file` discovery plugin, called directly (no dlopen): valid
// files in YAML and JSON, weights, zones, metadata, and every kind of refusal with its position.
#include "discovery/file/endpoints_file.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::discovery {
namespace {

// "line:col: message" (or just the message when it has no position).
std::string show(const FileError& e) {
  return e.line == 0 ? e.message
                     : std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
}

// Every error, one per line.
std::string errorsOf(const ParsedEndpoints& p) {
  std::string out;
  for (const FileError& e : p.errors) out += show(e) + "\n";
  return out;
}

// Parses text that must be refused with exactly one error; returns it as show() does.
std::string oneError(const std::string& text) {
  ParsedEndpoints p = parseEndpoints(text);
  EXPECT_EQ(p.errors.size(), 1u) << errorsOf(p);
  return p.errors.empty() ? "" : show(p.errors[0]);
}

TEST(EndpointsFileTest, ParsesTheDocumentedExample) {
  ParsedEndpoints p = parseEndpoints(R"(clusters:
  restapi:
    - 127.0.0.1:9001
    - { address: 127.0.0.1:9002, weight: 5, zone: a, metadata: { version: v2 } }
  billing: []
)");
  ASSERT_TRUE(p.ok()) << errorsOf(p);
  ASSERT_EQ(p.clusters.size(), 2u);
  EXPECT_EQ(p.clusters[0].name, "restapi");
  ASSERT_EQ(p.clusters[0].endpoints.size(), 2u);
  const sdk::Endpoint& a = p.clusters[0].endpoints[0];
  EXPECT_EQ(a.address, "127.0.0.1:9001");
  EXPECT_EQ(a.weight, 0u);  // default: the host reads 0 as 1
  EXPECT_EQ(a.zone, "");
  EXPECT_TRUE(a.metadata.empty());
  const sdk::Endpoint& b = p.clusters[0].endpoints[1];
  EXPECT_EQ(b.address, "127.0.0.1:9002");
  EXPECT_EQ(b.weight, 5u);
  EXPECT_EQ(b.zone, "a");
  ASSERT_EQ(b.metadata.size(), 1u);
  EXPECT_EQ(b.metadata[0].first, "version");
  EXPECT_EQ(b.metadata[0].second, "v2");
  EXPECT_EQ(p.clusters[1].name, "billing");
  EXPECT_TRUE(p.clusters[1].endpoints.empty());
  EXPECT_EQ(p.endpointCount(), 2u);
}

TEST(EndpointsFileTest, ParsesJson) {
  ParsedEndpoints p = parseEndpoints(R"({"clusters": {
    "restapi": ["10.0.0.1:80", {"address": "10.0.0.2:80", "weight": 3,
                                 "metadata": {"canary": "true", "rev": 7}}],
    "empty": []}})");
  ASSERT_TRUE(p.ok()) << errorsOf(p);
  ASSERT_EQ(p.clusters.size(), 2u);
  ASSERT_EQ(p.clusters[0].endpoints.size(), 2u);
  EXPECT_EQ(p.clusters[0].endpoints[1].weight, 3u);
  ASSERT_EQ(p.clusters[0].endpoints[1].metadata.size(), 2u);
  EXPECT_EQ(p.clusters[0].endpoints[1].metadata[1].first, "rev");
  EXPECT_EQ(p.clusters[0].endpoints[1].metadata[1].second, "7");  // scalars read as text
}

TEST(EndpointsFileTest, EmptyClustersMapPublishesNothing) {
  ParsedEndpoints p = parseEndpoints("clusters: {}\n");
  ASSERT_TRUE(p.ok()) << errorsOf(p);
  EXPECT_TRUE(p.clusters.empty());
}

TEST(EndpointsFileTest, AcceptsHostNamesAndIpv6) {
  ParsedEndpoints p = parseEndpoints(R"(clusters:
  a: [backend-1.internal:8080, "[::1]:9000", { address: "[fe80::1]:1" }, my_host:65535]
)");
  ASSERT_TRUE(p.ok()) << errorsOf(p);
  EXPECT_EQ(p.clusters[0].endpoints.size(), 4u);
}

TEST(EndpointsFileTest, WeightBounds) {
  EXPECT_TRUE(parseEndpoints("clusters: {a: [{address: h:1, weight: 1}]}").ok());
  EXPECT_TRUE(parseEndpoints("clusters: {a: [{address: h:1, weight: 10000}]}").ok());
  EXPECT_EQ(oneError("clusters:\n  a:\n    - {address: h:1, weight: 0}\n"),
            "3:30: weight: expected an integer 1..10000, got '0'");
  EXPECT_EQ(oneError("clusters: {a: [{address: h:1, weight: 10001}]}"),
            "1:39: weight: expected an integer 1..10000, got '10001'");
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, weight: -1}]}").find("weight"),
            std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, weight: 2.5}]}").find("weight"),
            std::string::npos);
  // A quoted number is a string, as in the main config.
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, weight: \"5\"}]}").find("weight"),
            std::string::npos);
  EXPECT_NE(
      oneError("clusters: {a: [{address: h:1, weight: 99999999999999999999}]}").find("weight"),
      std::string::npos);
}

TEST(EndpointsFileTest, BadAddressesNameTheirPosition) {
  EXPECT_EQ(oneError("clusters:\n  a:\n    - 127.0.0.1\n"),
            "3:7: invalid address '127.0.0.1': missing port (expected host:port)");
  EXPECT_EQ(oneError("clusters:\n  a: [127.0.0.1:0]\n"),
            "2:7: invalid address '127.0.0.1:0': bad port '0' (expected 1..65535)");
  EXPECT_NE(oneError("clusters: {a: [h:70000]}").find("bad port '70000'"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [':80']}").find("missing host"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: ['bad host:80']}").find("bad host"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: ['::1:80']}").find("bad host"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: ['[::1]80']}").find("[v6]:port"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [[1, 2]]}").find("expected an endpoint"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{weight: 2}]}").find("without 'address'"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{address: [h:1]}]}").find("expected an address"),
            std::string::npos);
}

TEST(EndpointsFileTest, UnknownKeysAreRefused) {
  EXPECT_EQ(oneError("clusters: {}\nendpoints: {}\n"),
            "2:1: unknown key 'endpoints' (expected: clusters)");
  EXPECT_EQ(oneError("clusters:\n  a:\n    - { address: h:1, wieght: 2 }\n"),
            "3:23: unknown key 'wieght' (expected one of: address, weight, zone, metadata)");
}

TEST(EndpointsFileTest, DuplicatesAreRefused) {
  EXPECT_EQ(oneError("clusters:\n  a: []\n  a: [h:1]\n"), "3:3: cluster 'a' given twice");
  EXPECT_EQ(oneError("clusters:\n  a: [h:1, {address: h:1, weight: 2}]\n"),
            "2:22: cluster 'a': address 'h:1' given twice");
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, address: h:2}]}").find("given twice"),
            std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, metadata: {k: 1, k: 2}}]}").find("given twice"),
            std::string::npos);
}

TEST(EndpointsFileTest, ClusterNamesAreChecked) {
  EXPECT_EQ(oneError("clusters:\n  \"bad name\": []\n"),
            "2:3: bad cluster name 'bad name' (want 1..200 of A-Z a-z 0-9 . _ -)");
  EXPECT_TRUE(parseEndpoints("clusters: {a.b_c-D9: []}").ok());
  EXPECT_TRUE(isClusterName(std::string(200, 'x')));
  EXPECT_FALSE(isClusterName(std::string(201, 'x')));
  EXPECT_FALSE(isClusterName(""));
  EXPECT_FALSE(isClusterName("a/b"));
}

TEST(EndpointsFileTest, MetadataMustBeAFlatMapOfStrings) {
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, metadata: [x]}]}").find("metadata: expected"),
            std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, metadata: {k: {n: 1}}}]}").find("value of 'k'"),
            std::string::npos);
  EXPECT_NE(oneError("clusters: {a: [{address: h:1, zone: [a]}]}").find("zone: expected"),
            std::string::npos);
}

TEST(EndpointsFileTest, EmptyValuesAreErrorsNotEmptyLists) {
  // What a half-written file often looks like: it must not empty every cluster.
  EXPECT_EQ(oneError(""),
            "the file is empty (expected a 'clusters' map; write 'clusters: {}' for none)");
  EXPECT_NE(oneError("# only a comment\n").find("the file is empty"), std::string::npos);
  EXPECT_EQ(oneError("clusters:\n"),
            "1:1: 'clusters' is empty (write 'clusters: {}' to publish no clusters)");
  EXPECT_EQ(oneError("clusters:\n  restapi:\n  billing: []\n"),
            "2:3: cluster 'restapi' has no value (write [] for a cluster with no endpoints)");
  EXPECT_EQ(errorsOf(parseEndpoints("other: 1\n")),
            "1:1: unknown key 'other' (expected: clusters)\n"
            "1:1: missing key 'clusters' (write 'clusters: {}' for none)\n");
  ParsedEndpoints p = parseEndpoints("{}");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].message.find("missing key 'clusters'"), std::string::npos);
  EXPECT_NE(oneError("- a\n- b\n").find("expected a map"), std::string::npos);
  EXPECT_NE(oneError("clusters: [a]\n").find("expected a map of cluster names"), std::string::npos);
  EXPECT_NE(oneError("clusters: {a: h:1}\n").find("expected a list of endpoints"),
            std::string::npos);
}

TEST(EndpointsFileTest, SyntaxErrorsCarryTheirPosition) {
  ParsedEndpoints p = parseEndpoints("clusters:\n  a: [127.0.0.1:1, {address: h:2\n");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].message.rfind("YAML syntax error: ", 0), 0u) << p.errors[0].message;
  EXPECT_GE(p.errors[0].line, 2u);
  EXPECT_TRUE(p.clusters.empty());
}

TEST(EndpointsFileTest, ReportsEveryErrorInFileOrder) {
  ParsedEndpoints p = parseEndpoints(R"(clusters:
  good: [h:1]
  a:
    - h:0
    - { address: h:2, weight: 0 }
    - h:3
  "b c": []
)");
  EXPECT_EQ(errorsOf(p),
            "4:7: invalid address 'h:0': bad port '0' (expected 1..65535)\n"
            "5:31: weight: expected an integer 1..10000, got '0'\n"
            "7:3: bad cluster name 'b c' (want 1..200 of A-Z a-z 0-9 . _ -)\n");
}

TEST(EndpointsFileTest, FormatWithoutPosition) {
  EXPECT_EQ((FileError{0, 0, "boom"}).format("/x.yaml"), "/x.yaml: boom");
  EXPECT_EQ((FileError{3, 4, "boom"}).format("/x.yaml"), "/x.yaml:3:4: boom");
}

}  // namespace
}  // namespace sluice::discovery
