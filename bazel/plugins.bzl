"""Bazel macros for sluice plugins: one short BUILD per plugin folder.

    load("//bazel:plugins.bzl", "sluice_filter_plugin")

    sluice_filter_plugin(
        name = "request_id",
        srcs = ["request_id.cc"],
        hdrs = ["request_id.h"],
    )

makes two targets:
  :librequest_id.so    the plugin: a shared object compiled with hidden visibility and linked
                       with a version script, so it exports only `sluice_plugin_entry`; linked
                       with -z defs, so it cannot depend on symbols of the sluice binary. Name it in YAML as `request_id`.
  :request_id_lib      the same sources as a plain cc_library, for unit tests that call the plugin's
                       classes (or its hook table) without dlopen.
"""

_PLUGIN_COPTS = [
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
]

def _sluice_plugin(
        name,
        kind,
        srcs,
        hdrs = [],
        deps = [],
        copts = [],
        linkopts = [],
        visibility = None,
        testonly = None,
        tags = []):
    api = Label("//core/api:api")
    lds = Label("//bazel:plugin.lds")
    # For unit tests: default visibility, so a test linked against it (dynamically, as Bazel
    # links tests) sees the plugin's classes.
    native.cc_library(
        name = name + "_lib",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + [api],
        copts = copts,
        linkopts = linkopts,
        visibility = visibility,
        testonly = testonly,
        tags = tags,
    )
    native.cc_binary(
        name = "lib" + name + ".so",
        linkshared = 1,
        # The same sources compiled again with hidden visibility.
        srcs = srcs + hdrs,
        deps = deps + [api],
        copts = _PLUGIN_COPTS + copts,
        # Export only sluice_plugin_entry (also hides inline std:: instantiations), and refuse
        # undefined symbols: a plugin must not depend on the sluice binary's symbols.
        linkopts = linkopts + ["-Wl,-z,defs", "-Wl,--version-script=$(location %s)" % lds],
        additional_linker_inputs = [lds],
        visibility = visibility,
        testonly = testonly,
        tags = tags + ["sluice_" + kind + "_plugin"],
    )

def sluice_filter_plugin(name, srcs, **kwargs):
    """A filter plugin: lib<name>.so plus <name>_lib. Sources use SLUICE_FILTER_PLUGIN.

    Args:
      name: the plugin's name, as its descriptor and the YAML spell it.
      srcs: C++ sources (and private headers).
      **kwargs: hdrs, deps, copts, linkopts, visibility, testonly, tags.
    """
    _sluice_plugin(name = name, kind = "filter", srcs = srcs, **kwargs)

def sluice_balancer_plugin(name, srcs, **kwargs):
    """A balancer plugin: lib<name>.so plus <name>_lib. Sources use SLUICE_BALANCER_PLUGIN.

    Args:
      name: the plugin's name, as its descriptor and the YAML spell it.
      srcs: C++ sources (and private headers).
      **kwargs: hdrs, deps, copts, linkopts, visibility, testonly, tags.
    """
    _sluice_plugin(name = name, kind = "balancer", srcs = srcs, **kwargs)

def sluice_discovery_plugin(name, srcs, **kwargs):
    """A discovery plugin: lib<name>.so plus <name>_lib. Sources use SLUICE_DISCOVERY_PLUGIN.

    Args:
      name: the plugin's name, as its descriptor and the YAML spell it.
      srcs: C++ sources (and private headers).
      **kwargs: hdrs, deps, copts, linkopts, visibility, testonly, tags.
    """
    _sluice_plugin(name = name, kind = "discovery", srcs = srcs, **kwargs)
