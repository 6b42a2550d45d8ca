// A shared object without sluice_plugin_entry.
extern "C" __attribute__((visibility("default"))) int not_a_plugin(void) { return 42; }
