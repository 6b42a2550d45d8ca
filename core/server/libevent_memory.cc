#include "core/server/libevent_memory.h"

#include <event2/event.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_LIBEVENT_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLUICE_LIBEVENT_POOL 0
#endif
#endif
#ifndef SLUICE_LIBEVENT_POOL
#define SLUICE_LIBEVENT_POOL 1
#endif

namespace sluice::server::libevent_memory {
namespace {

struct FreeSlot {
  FreeSlot* next;
};

constexpr size_t kRegionBytes = kSlots * kSlotBytes;

// Set once by install() before any other thread exists; read-only afterwards.
char* g_region = nullptr;

std::mutex g_mu;
size_t g_used = 0;           // slots ever handed out (the region's bump index)
FreeSlot* g_free = nullptr;  // released slots, reused first
size_t g_in_use = 0;

}  // namespace

bool owns(const void* p) {
  const char* c = static_cast<const char*>(p);
  return g_region != nullptr && c >= g_region && c < g_region + kRegionBytes;
}

void* allocate(size_t size) {
  if (size == 0) return nullptr;
  if (size <= kSlotBytes && g_region != nullptr) {
    std::lock_guard<std::mutex> lock(g_mu);
    void* p = nullptr;
    if (g_free != nullptr) {
      p = g_free;
      g_free = g_free->next;
    } else if (g_used < kSlots) {
      p = g_region + g_used * kSlotBytes;
      ++g_used;
    }
    if (p != nullptr) {
      ++g_in_use;
      return p;
    }
  }
  return malloc(size);
}

void release(void* p) {
  if (p == nullptr) return;
  if (!owns(p)) {
    free(p);
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  auto* slot = static_cast<FreeSlot*>(p);
  slot->next = g_free;
  g_free = slot;
  --g_in_use;
}

void* reallocate(void* p, size_t size) {
  if (p == nullptr) return allocate(size);
  if (!owns(p)) return realloc(p, size);
  if (size <= kSlotBytes) return p;
  void* q = malloc(size);
  if (q == nullptr) return nullptr;  // realloc's contract: `p` stays valid
  memcpy(q, p, kSlotBytes);
  release(p);
  return q;
}

size_t slotsInUse() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_in_use;
}

bool install() {
  if (!SLUICE_LIBEVENT_POOL || g_region != nullptr) return false;
  void* region = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return false;
  g_region = static_cast<char*>(region);
  event_set_mem_functions(&allocate, &reallocate, &release);
  return true;
}

}  // namespace sluice::server::libevent_memory
