// The three registry formats, one instance node at a time, on real-world shaped fixtures:
// Dubbo/dubbox provider URLs as ZooKeeper stores them (URL-encoded by java.net.URLEncoder),
// Curator ServiceInstance JSON as Spring Cloud Zookeeper writes it, sluice's own JSON, and
// malformed variants of each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "discovery/zookeeper/format.h"

namespace sluice::zookeeper {
namespace {

// What java.net.URLEncoder.encode(s, "UTF-8") writes.
std::string javaEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '.' || c == '-' || c == '*' || c == '_') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out += {'%', hex[c >> 4], hex[c & 15]};
    }
  }
  return out;
}

// "cluster address w=N zone=Z k=v..." or "skipped: reason" / "malformed: reason".
std::string show(const LeafResult& r) {
  if (r.kind == LeafResult::Kind::kSkipped) return "skipped: " + r.reason;
  if (r.kind == LeafResult::Kind::kMalformed) return "malformed: " + r.reason;
  std::string s = r.cluster + " " + r.endpoint.address;
  if (r.endpoint.weight != 0) s += " w=" + std::to_string(r.endpoint.weight);
  if (!r.endpoint.zone.empty()) s += " zone=" + r.endpoint.zone;
  for (const auto& [k, v] : r.endpoint.metadata) s += " " + k + "=" + v;
  return s;
}

// ---- dubbo --------------------------------------------------------------------------------

// A dubbox REST provider as it appears under /dubbo/<interface>/providers/ (hand-encoded, as
// found in a real registry: %3A, %2F, %3F, %3D, %26, and '+' for a space).
constexpr char kDubboxRestNode[] =
    "rest%3A%2F%2F10.1.2.3%3A8080%2Frestapi%2Fcom.example.UserService%3Fanyhost%3Dtrue%26"
    "application%3Duser+service%26dubbo%3D2.8.4%26generic%3Dfalse%26interface%3D"
    "com.example.UserService%26methods%3DgetUser%2CregisterUser%26pid%3D4242%26server%3Dtomcat"
    "%26side%3Dprovider%26timestamp%3D1428475462010%26weight%3D50";

LeafResult dubbo(const std::string& node, DubboOptions options = {}) {
  return makeDubboFormat(options)->parseLeaf({"com.example.UserService", "providers", node}, "");
}

TEST(DubboFormatTest, RestProviderBecomesContextPathEndpoint) {
  EXPECT_EQ(show(dubbo(kDubboxRestNode)),
            "restapi 10.1.2.3:8080 w=50 protocol=rest application=user service");
}

TEST(DubboFormatTest, JavaEncodedUrlsWithDefaultsAndCaps) {
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.0.0.9:80/orders/v2/com.example.OrderService?"
                                  "interface=com.example.OrderService&side=provider"))),
            "orders 10.0.0.9:80 w=100 protocol=rest");
  EXPECT_EQ(show(dubbo(javaEncode("rest://h.local:80/orders/S?weight=99999"))),
            "orders h.local:80 w=10000 protocol=rest");
  EXPECT_EQ(show(dubbo(javaEncode("rest://[fd00::5]:8080/orders/S"))),
            "orders [fd00::5]:8080 w=100 protocol=rest");
}

TEST(DubboFormatTest, FilteredAndDisabledProviders) {
  EXPECT_EQ(show(dubbo(javaEncode("dubbo://10.1.2.3:20880/com.example.UserService?anyhost=true"))),
            "skipped: protocol dubbo not kept");
  EXPECT_TRUE(dubbo(javaEncode("dubbo://10.1.2.3:20880/x.Y")).quiet);
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/restapi/S?enabled=false"))),
            "skipped: enabled=false");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/restapi/S?weight=0"))),
            "skipped: weight=0");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/restapi/S?category=configurators"))),
            "skipped: category=configurators");
  DubboOptions both;
  both.protocols = {"rest", "dubbo"};
  EXPECT_EQ(show(dubbo(javaEncode("dubbo://10.1.2.3:20880/app/x.Y"), both)),
            "app 10.1.2.3:20880 w=100 protocol=dubbo");
}

TEST(DubboFormatTest, NoContextPathRule) {
  std::string bare =
      javaEncode("rest://10.1.2.3:8080/com.example.UserService?interface=com.example.UserService");
  EXPECT_EQ(show(dubbo(bare)),
            "skipped: no context path in rest://10.1.2.3:8080/com.example.UserService "
            "(no_context_path: skip)");
  DubboOptions by_interface;
  by_interface.no_context_path = DubboOptions::NoContextPath::kInterface;
  EXPECT_EQ(show(dubbo(bare, by_interface)),
            "com.example.UserService 10.1.2.3:8080 w=100 protocol=rest");
  DubboOptions fixed;
  fixed.no_context_path = DubboOptions::NoContextPath::kCluster;
  fixed.no_context_path_cluster = "legacy";
  EXPECT_EQ(show(dubbo(bare, fixed)), "legacy 10.1.2.3:8080 w=100 protocol=rest");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/"), fixed)),
            "legacy 10.1.2.3:8080 w=100 protocol=rest");
  // One segment that is not the interface is a context path.
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/restapi?interface=com.example.S"))),
            "restapi 10.1.2.3:8080 w=100 protocol=rest");
  // An interface name that is not a cluster name ('$' of a nested class).
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/a.Outer$Inner"), by_interface)),
            "malformed: bad cluster name 'a.Outer$Inner'");
}

TEST(DubboFormatTest, MalformedNodes) {
  EXPECT_EQ(show(dubbo("rest%3A%2F%2F10.1.2.3%3A8080%2Fa%2Fb%3Fx%3D%ZZ")),
            "malformed: bad %-escape in URL");
  EXPECT_EQ(show(dubbo(javaEncode("10.1.2.3:8080/restapi/S"))),
            "malformed: bad URL: missing 'scheme://'");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:99999/restapi/S"))),
            "malformed: bad URL: bad port '99999'");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3/restapi/S"))),
            "malformed: bad URL: missing port");
  EXPECT_EQ(show(dubbo(javaEncode("rest://0.0.0.0:8080/restapi/S"))),
            "malformed: unroutable host 0.0.0.0");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/restapi/S?weight=heavy"))),
            "malformed: bad weight 'heavy'");
  EXPECT_EQ(show(dubbo(javaEncode("rest://10.1.2.3:8080/rest api/S"))),
            "malformed: bad cluster name 'rest api'");
  EXPECT_EQ(show(dubbo("")), "malformed: bad URL: missing 'scheme://'");
}

// ---- curator ------------------------------------------------------------------------------

// Spring Cloud Zookeeper 3.x, as `get /services/restapi/<id>` shows it.
constexpr char kSpringCloudInstance[] =
    R"({"name":"restapi","id":"5f1e5d7c-2a4b-4f6e-9a43-0b1c2d3e4f50",
"address":"10.1.2.3","port":8080,"sslPort":null,"payload":{"@class":
"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance","id":"restapi-1","name":"restapi",
"metadata":{"instance_status":"UP","zone":"eu-1","version":"2.4.1"}},
"registrationTimeUTC":1690000000000,"serviceType":"DYNAMIC","enabled":true,
"uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},
{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}})";

LeafResult curator(const std::string& data, const std::string& service = "restapi") {
  return makeCuratorFormat()->parseLeaf({service, "5f1e5d7c"}, data);
}

TEST(CuratorFormatTest, SpringCloudInstance) {
  EXPECT_EQ(show(curator(kSpringCloudInstance)),
            "restapi 10.1.2.3:8080 zone=eu-1 instance_status=UP zone=eu-1 version=2.4.1 "
            "instance_id=5f1e5d7c-2a4b-4f6e-9a43-0b1c2d3e4f50");
}

TEST(CuratorFormatTest, PlainCuratorAndUnknownFields) {
  // Curator without a payload, with fields a newer Curator might add.
  EXPECT_EQ(show(curator(R"({"name":"restapi","id":"i1","address":"backend.local","port":"9000",
                             "sslPort":null,"payload":null,"serviceType":"STATIC",
                             "future":{"nested":[1,2,3]}})")),
            "restapi backend.local:9000 instance_id=i1");
  EXPECT_EQ(
      show(curator(R"({"address":"fe80::2","port":81,"payload":{"metadata":{"weight":"7"}}})")),
      "restapi [fe80::2]:81 w=7 weight=7");
  // Nested metadata values are dropped, the scalars kept.
  EXPECT_EQ(
      show(curator(R"({"address":"h","port":1,"payload":{"metadata":{"a":{"b":1},"c":"d"}}})")),
      "restapi h:1 c=d");
}

TEST(CuratorFormatTest, StatusAndPorts) {
  EXPECT_EQ(
      show(curator(
          R"({"address":"h","port":1,"payload":{"metadata":{"instance_status":"OUT_OF_SERVICE"}}})")),
      "skipped: instance_status OUT_OF_SERVICE");
  EXPECT_EQ(
      show(curator(R"({"address":"h","port":1,"payload":{"metadata":{"instance_status":"up"}}})")),
      "restapi h:1 instance_status=up");
  EXPECT_EQ(show(curator(R"({"address":"h","port":null,"sslPort":8443})")),
            "skipped: only an sslPort (TLS upstreams are not supported)");
}

TEST(CuratorFormatTest, MalformedInstances) {
  EXPECT_EQ(show(curator("")), "malformed: no ServiceInstance data");
  EXPECT_EQ(show(curator(R"({"address":"h","port":)")).substr(0, 20), "malformed: bad JSON:");
  EXPECT_EQ(show(curator("[1,2]")), "malformed: expected a JSON object");
  EXPECT_EQ(show(curator(R"({"port":8080})")), "malformed: missing \"address\"");
  EXPECT_EQ(show(curator(R"({"address":"h"})")), "malformed: missing \"port\"");
  EXPECT_EQ(show(curator(R"({"address":"h","port":70000})")), "malformed: bad \"port\"");
  EXPECT_EQ(show(curator(R"({"address":"h","port":"eighty"})")), "malformed: bad \"port\"");
  EXPECT_EQ(show(curator(R"({"address":"bad host","port":80})")).substr(0, 31),
            "malformed: bad address 'bad hos");
  EXPECT_EQ(show(curator(kSpringCloudInstance, "my service")),
            "malformed: bad service name 'my service'");
}

// ---- sluice -------------------------------------------------------------------------------

LeafResult sluiceNode(const std::string& address, const std::string& data,
                      const std::string& context = "restapi") {
  return makeSluiceFormat()->parseLeaf({context, address}, data);
}

TEST(SluiceFormatTest, AddressAndOptionalJson) {
  EXPECT_EQ(show(sluiceNode("10.0.0.1:8080", "")), "restapi 10.0.0.1:8080");
  EXPECT_EQ(show(sluiceNode("10.0.0.1:8080", "null")), "restapi 10.0.0.1:8080");
  EXPECT_EQ(show(sluiceNode("10.0.0.1:8080", R"({"weight": 10, "zone": "a",
                                               "metadata": {"version": "v2", "canary": true}})")),
            "restapi 10.0.0.1:8080 w=10 zone=a version=v2 canary=true");
  LeafResult typo = sluiceNode("h:1", R"({"wieght": 3})");
  EXPECT_EQ(show(typo), "restapi h:1");
  EXPECT_EQ(typo.warning, "unknown keys ignored: 'wieght'");
}

TEST(SluiceFormatTest, MalformedNodes) {
  EXPECT_EQ(show(sluiceNode("10.0.0.1", "")),
            "malformed: bad address '10.0.0.1': missing port (expected host:port)");
  EXPECT_EQ(show(sluiceNode("h:1", "{weight: ")).substr(0, 20), "malformed: bad JSON:");
  EXPECT_EQ(show(sluiceNode("h:1", "\"just a string\"")), "malformed: expected a JSON object");
  EXPECT_EQ(show(sluiceNode("h:1", R"({"weight": 0})")),
            "malformed: weight: expected an integer 1..10000");
  EXPECT_EQ(show(sluiceNode("h:1", R"({"weight": "x"})")),
            "malformed: weight: expected an integer 1..10000");
  EXPECT_EQ(show(sluiceNode("h:1", R"({"zone": ["a"]})")), "malformed: zone: expected a string");
  EXPECT_EQ(show(sluiceNode("h:1", R"({"metadata": {"a": {"b": 1}}})")),
            "malformed: metadata: expected string values");
  EXPECT_EQ(show(sluiceNode("h:1", "", "bad name")), "malformed: bad context path 'bad name'");
}

}  // namespace
}  // namespace sluice::zookeeper
