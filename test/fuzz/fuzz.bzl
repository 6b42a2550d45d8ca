"""sluice_fuzz_test: a libFuzzer target run as an ordinary test over its seed corpus.

    sluice_fuzz_test(name = "config_fuzz", deps = ["//core/config"])

compiles <name>.cc (which defines LLVMFuzzerTestOneInput) with corpus_main.cc into the test
:<name>_test, which runs every file of corpus/<name>/ and 2000 deterministic mutations of them.
When known_crashes/<name>/ holds reproducers, :<name>_known_crashes (tagged manual, so not part
of //...) runs just those with every known-bug tolerance off (known_bugs.h): it fails until the
core fix lands.
"""

def sluice_fuzz_test(name, deps):
    pkg = native.package_name()
    native.cc_test(
        name = name + "_test",
        size = "small",
        srcs = [name + ".cc"],
        args = [pkg + "/corpus/" + name],
        data = native.glob(["corpus/" + name + "/**"]),
        deps = deps + [":corpus_main"],
    )
    crashes = native.glob(["known_crashes/" + name + "/**"])
    if crashes:
        native.cc_test(
            name = name + "_known_crashes",
            size = "small",
            srcs = [name + ".cc"],
            args = [pkg + "/known_crashes/" + name, "--mutations=0", "--strict"],
            data = crashes,
            tags = ["manual"],
            deps = deps + [":corpus_main"],
        )
