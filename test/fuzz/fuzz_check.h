// Invariant checks for fuzz targets: on failure, print what broke and trap, so libFuzzer (and the
// corpus test driver) report a crash with the reproducing input.
#pragma once

#include <cstdio>

#define SLUICE_FUZZ_CHECK(cond, what)                                                             \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s (%s)\n", __FILE__, __LINE__, what, \
                   #cond);                                                                        \
      std::fflush(stderr);                                                                        \
      __builtin_trap();                                                                           \
    }                                                                                             \
  } while (0)
