// The plugin metrics ABI (1.1) seen from the loader: a plugin built against 1.0 still loads; a
// plugin's declared metrics are exported under its name with their values, shared by the config
// instances of a reload, and gone with the last one; declaring outside config_create is refused.
#include <gtest/gtest.h>

#include <string>

#include "core/stats/registry.h"
#include "test/core/plugin/loader_fixture.h"

namespace sluice::plugin {
namespace {

std::string scrape() {
  std::string out = "\n";
  stats::defaultRegistry().writePrometheus(&out);
  return out;
}

// The value on the sample line `name` (with labels), or "<absent>".
std::string sample(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return "<absent>";
  size_t start = at + name.size() + 2;
  return text.substr(start, text.find('\n', start) - start);
}

class MetricsAbiTest : public LoaderTest {
 protected:
  static config::PluginRef probe(const std::string& yaml) {
    config::PluginRef r = ref("metrics_probe", yaml);
    r.path = test::runfile("test/integration/plugins/libmetrics_probe.so");
    return r;
  }
};

TEST_F(MetricsAbiTest, PluginBuiltAgainstTheOlderMinorLoads) {
  std::string error;
  auto filter = createFilter(*loader_, ref("old_minor"), &error);
  ASSERT_NE(filter, nullptr) << error;
  EXPECT_EQ(filter->library().descriptor().abi_minor, 0u);
  EXPECT_EQ(filter->library().hostApi()->abi_minor, SLUICE_ABI_MINOR);
  EXPECT_GE(SLUICE_ABI_MINOR, 1u);
}

TEST_F(MetricsAbiTest, DeclaredMetricsAreExportedUnderThePluginsNameUntilTheLastInstanceGoes) {
  std::string error;
  auto first = createFilter(*loader_, probe("level: 7"), &error);
  ASSERT_NE(first, nullptr) << error;
  std::string text = scrape();
  EXPECT_EQ(sample(text, "sluice_plugin_metrics_probe_level"), "7");
  EXPECT_EQ(sample(text, "sluice_plugin_metrics_probe_requests_total{path_class=\"any\"}"), "0");
  EXPECT_EQ(sample(text, "sluice_plugin_metrics_probe_work_seconds_count"), "0");
  EXPECT_NE(text.find("# TYPE sluice_plugin_metrics_probe_work_seconds histogram"),
            std::string::npos);

  // A reload builds a second instance beside the first: same series, one value.
  auto second = createFilter(*loader_, probe("level: 9"), &error);
  ASSERT_NE(second, nullptr) << error;
  EXPECT_EQ(sample(scrape(), "sluice_plugin_metrics_probe_level"), "9");
  first.reset();
  EXPECT_EQ(sample(scrape(), "sluice_plugin_metrics_probe_level"), "9");
  second.reset();
  EXPECT_EQ(sample(scrape(), "sluice_plugin_metrics_probe_level"), "<absent>");
}

TEST_F(MetricsAbiTest, DeclaringOutsideConfigCreateIsRefused) {
  std::string error;
  auto filter = createFilter(*loader_, probe(""), &error);
  ASSERT_NE(filter, nullptr) << error;
  const sluice_host_api* host = filter->library().hostApi();
  ASSERT_NE(host->metrics, nullptr);
  sluice_metric_spec spec{};
  spec.struct_size = sizeof(spec);
  spec.kind = SLUICE_METRIC_COUNTER;
  spec.name = {"late_total", 10};
  char message[256] = "";
  sluice_error err{message, sizeof(message), 0, 0};
  EXPECT_EQ(host->metrics->declare(host->host_ctx, &spec, &err), nullptr);
  EXPECT_NE(std::string(message).find("only allowed during config_create"), std::string::npos)
      << message;
  // Updates through a NULL handle are ignored rather than crashing.
  host->metrics->add(nullptr, 1);
  host->metrics->set(nullptr, 1);
  host->metrics->observe(nullptr, 1);
}

}  // namespace
}  // namespace sluice::plugin
