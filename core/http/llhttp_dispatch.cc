#include "core/http/llhttp_dispatch.h"

#if defined(__x86_64__)
// The SSE4.2 copy's entry point (llhttp.c's llhttp__internal_execute, renamed).
extern "C" int llhttp__internal_execute_sse42(llhttp__internal_t* s, const char* p,
                                              const char* endp);
#endif

namespace sluice::http {
namespace {

using ExecuteFn = int (*)(llhttp__internal_t*, const char*, const char*);

bool cpuHasSse42() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // (this runs from a static initialiser)
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

ExecuteFn executeOf(LlhttpBuild build) {
#if defined(__x86_64__)
  if (build == LlhttpBuild::kSse42) return &llhttp__internal_execute_sse42;
#endif
  (void)build;
  return &llhttp__internal_execute;
}

// The baseline until this file's initialisers ran (a parser run from another static
// initialiser before them gets it: the pointer itself is constant-initialised).
ExecuteFn g_execute = &llhttp__internal_execute;
LlhttpBuild g_build = LlhttpBuild::kBaseline;
const bool kSse42Available = cpuHasSse42();
[[maybe_unused]] const bool kChosen =
    setLlhttpBuild(kSse42Available ? LlhttpBuild::kSse42 : LlhttpBuild::kBaseline);

}  // namespace

llhttp_errno_t llhttpExecute(llhttp_t* parser, const char* data, size_t len) {
  // As api.c's llhttp_execute, through the chosen copy.
  return static_cast<llhttp_errno_t>(g_execute(parser, data, data + len));
}

LlhttpBuild llhttpBuild() { return g_build; }

bool llhttpSse42Available() { return kSse42Available; }

bool setLlhttpBuild(LlhttpBuild build) {
  if (build == LlhttpBuild::kSse42 && !kSse42Available) return false;
  g_build = build;
  g_execute = executeOf(build);
  return true;
}

}  // namespace sluice::http
