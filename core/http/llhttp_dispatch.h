// Which build of llhttp's state machine parses: the baseline one (Debian's x86-64 baseline,
// no SSE4.2) or a second copy built with -msse4.2, whose token and header-value spans compare
// 16 bytes at a time (third_party/llhttp.BUILD). The choice is made once at startup from the
// CPU (__builtin_cpu_supports); both copies share the parser state layout and api.c's
// callbacks, so a parser set up by llhttp_init runs on either. Not part of the public API.
#pragma once

#include <cstddef>

#include "llhttp.h"

namespace sluice::http {

enum class LlhttpBuild { kBaseline, kSse42 };

// llhttp_execute(parser, data, len) through the build in use. Any thread.
llhttp_errno_t llhttpExecute(llhttp_t* parser, const char* data, size_t len);

// The build in use.
LlhttpBuild llhttpBuild();
// Whether this binary has the SSE4.2 copy and the CPU can run it.
bool llhttpSse42Available();
// Tests only (both builds must parse alike): selects `build` for every parser from now on.
// False, and nothing changes, when kSse42 is not available. Not thread-safe: call it while no
// parser runs.
bool setLlhttpBuild(LlhttpBuild build);

}  // namespace sluice::http
