// sluice — edge proxy and API gateway.
//
//   sluice [-c FILE] [--validate [--no-bind-check]] [--plugins] [--log-level LEVEL] [--version]
//
// Without -c, sluice serves its embedded default config (configs/demo.yaml at build time).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/accesslog/registry.h"
#include "core/common/log.h"
#include "core/config/config.h"
#include "core/plugin/host_api.h"
#include "core/plugin/plugin.h"
#include "core/server/bootstrap.h"
#include "core/server/libevent_memory.h"
#include "core/server/listen.h"
#include "core/server/server.h"
#include "core/server/version.h"

namespace sluice {

extern const char kEmbeddedConfig[];  // generated from configs/demo.yaml

namespace {

// How long the exit waits for the access log writer to write the buffered lines.
constexpr uint32_t kAccessLogFlushTimeoutMs = 5000;

void usage(FILE* out) {
  fprintf(out,
          "usage: sluice [-c FILE] [--validate [--no-bind-check]] [--plugins] [--log-level LEVEL]\n"
          "              [--version]\n"
          "\n"
          "  -c, --config FILE   YAML config to serve (default: the embedded demo config)\n"
          "  --validate          load the config and every plugin, check that every listener\n"
          "                      and the admin address can be bound, print OK or the errors\n"
          "                      (file:line:col: reason), exit 0 or 1 without serving\n"
          "  --no-bind-check     with --validate: skip the bind check (for a config meant for\n"
          "                      another host, or one a running sluice already serves)\n"
          "  --plugins           list every plugin found in the config's plugin_paths and in the\n"
          "                      filters, balancers and discovery folders next to this binary\n"
          "                      (name, kind, version, ABI, file), exit 0\n"
          "  --log-level LEVEL   debug, info, warn, error or off: minimum level logged to\n"
          "                      stderr (default info)\n"
          "  --version           print the version and the plugin ABI version\n"
          "\n"
          "Signals: SIGTERM/SIGINT drain (stop accepting, finish in-flight requests, exit 0);\n"
          "a second one stops at once. SIGHUP reloads the config; SIGUSR1 reopens the access\n"
          "log files (after logrotate renamed them); SIGUSR2 gives free heap memory back to\n"
          "the system at once (malloc_trim, as after a connection burst).\n");
}

// --validate: whether every listener address and the admin address could be bound now (held by
// another process, a port below 1024 without the right, an address not on this host). Each
// probe socket is closed at once: nothing is kept, nothing accepts.
void checkAddresses(const config::Config& cfg, std::vector<std::string>* errors) {
  server::OwnAddresses own;
  for (const config::Listener& l : cfg.listeners) {
    std::string error;
    if (!server::checkBindable(l.address, own, &error)) {
      errors->push_back(l.mark.str() + ": listener '" + l.name + "': " + error);
    }
    own.all.push_back(l.address);
  }
  std::string error;
  if (!cfg.admin_address.empty() && !server::checkBindable(cfg.admin_address, own, &error)) {
    errors->push_back(cfg.admin_mark.str() + ": admin: " + error);
  }
}

// --plugins: every plugin file the config's loader could find, one line each, in search order
// (the first of a name and kind is the one a config naming it gets).
int listPlugins(const config::Config& cfg) {
  std::vector<std::string> dirs = cfg.plugin_paths;
  for (sluice_plugin_kind kind :
       {SLUICE_PLUGIN_KIND_FILTER, SLUICE_PLUGIN_KIND_BALANCER, SLUICE_PLUGIN_KIND_DISCOVERY}) {
    std::string dir = plugin::builtinPluginDir(kind);
    if (!dir.empty()) dirs.push_back(dir);
  }
  printf("plugin search folders (in order):\n");
  for (size_t i = 0; i < dirs.size(); ++i) {
    printf("  %s%s\n", dirs[i].c_str(),
           i < cfg.plugin_paths.size() ? "  (plugin_paths)" : "  (next to the binary)");
  }
  std::vector<plugin::PluginFile> found = plugin::scanPlugins(dirs);
  size_t w_name = 4, w_kind = 4, w_version = 7;
  for (const auto& p : found) {
    w_name = std::max(w_name, p.name.size());
    w_kind = std::max(w_kind, p.kind.size());
    w_version = std::max(w_version, p.version.size());
  }
  printf("\n%-*s  %-*s  %-*s  %-5s  %s\n", static_cast<int>(w_name), "NAME",
         static_cast<int>(w_kind), "KIND", static_cast<int>(w_version), "VERSION", "ABI", "FILE");
  for (const auto& p : found) {
    std::string abi = std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor);
    printf("%-*s  %-*s  %-*s  %-5s  %s\n", static_cast<int>(w_name), p.name.c_str(),
           static_cast<int>(w_kind), p.kind.c_str(), static_cast<int>(w_version), p.version.c_str(),
           abi.c_str(), p.file.c_str());
  }
  printf("\n%zu plugin%s; this sluice has plugin ABI %u.%u (loads ABI %u.0 to %u.%u)\n",
         found.size(), found.size() == 1 ? "" : "s", SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR,
         SLUICE_ABI_MAJOR, SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR);
  return 0;
}

int mainImpl(int argc, char** argv) {
  // Before any libevent call: its per-descriptor records go to pages of their own
  // (libevent_memory.h: otherwise they pin the pages of a connection burst after it closed).
  server::libevent_memory::install();
  plugin::setExecutablePath(argc > 0 ? argv[0] : "");
  std::string config_path;
  bool validate = false;
  bool list_plugins = false;
  bool bind_check = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "sluice: %s needs a value\n", what);
        exit(2);
      }
      return argv[++i];
    };
    if (a == "-c" || a == "--config") {
      config_path = next("-c");
    } else if (a.rfind("--config=", 0) == 0) {
      config_path = a.substr(9);
    } else if (a == "--validate" || a == "-t") {
      validate = true;
    } else if (a == "--plugins") {
      list_plugins = true;
    } else if (a == "--no-bind-check") {
      bind_check = false;
    } else if (a == "--log-level") {
      log::Level l;
      const char* v = next("--log-level");
      if (!log::parseLevel(v, &l)) {
        fprintf(stderr, "sluice: unknown log level '%s' (debug, info, warn, error, off)\n", v);
        return 2;
      }
      log::setLevel(l);
      plugin::setPluginLogLevel(static_cast<sluice_log_level>(
          l == log::Level::kOff ? SLUICE_LOG_ERROR + 1 : static_cast<uint32_t>(l)));
    } else if (a == "--version" || a == "-v") {
      printf("sluice %s (plugin ABI %u.%u)\n", server::kVersion, SLUICE_ABI_MAJOR,
             SLUICE_ABI_MINOR);
      return 0;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "sluice: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }

  std::vector<std::string> errors;
  std::shared_ptr<const config::Config> cfg =
      config_path.empty() ? config::loadString(kEmbeddedConfig, "<embedded demo config>", &errors)
                          : config::loadFile(config_path, &errors);
  if (cfg != nullptr && list_plugins) return listPlugins(*cfg);
  if (cfg != nullptr) {
    auto loader = server::makeLoader(*cfg);
    server::Built built;
    const bool built_ok = server::build(cfg, *loader, nullptr, &built, &errors);
    if (validate && bind_check) checkAddresses(*cfg, &errors);
    if (validate && errors.empty()) {
      printf("OK: %s\n", cfg->file.c_str());
      return 0;
    }
    if (!validate && built_ok) {
      int rc;
      {
        server::Server server;
        rc = server.run(server::ConfigSource{config_path, kEmbeddedConfig}, std::move(built),
                        std::move(loader));
      }
      // The workers are gone (their last requests logged): write what the buffers hold.
      accesslog::Registry::global().stop(kAccessLogFlushTimeoutMs);
      return rc;
    }
  }
  for (const std::string& e : errors) fprintf(stderr, "%s\n", e.c_str());
  fprintf(stderr, "sluice: configuration %s refused (%zu error%s)\n",
          config_path.empty() ? "<embedded>" : config_path.c_str(), errors.size(),
          errors.size() == 1 ? "" : "s");
  return 1;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::mainImpl(argc, argv); }
