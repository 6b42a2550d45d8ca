// Stream's memory: a per-thread free list of Stream-sized blocks. One Stream is created and
// destroyed per request, and at about 2.3 KiB it is above what malloc's per-thread cache serves
// (1 KiB), so each one cost a trip through glibc's main heap to allocate and another (with
// chunk consolidation) to free. Streams are created and deleted on their worker thread, so the
// list needs no lock; it keeps at most kMaxFree blocks per thread (about 150 KiB).
//
// Sanitizer builds bypass the list: a recycled block would hide a use after free from ASan.
#include <cstddef>
#include <new>

#include "core/proxy/stream.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_STREAM_FREE_LIST 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLUICE_STREAM_FREE_LIST 0
#endif
#endif
#ifndef SLUICE_STREAM_FREE_LIST
#define SLUICE_STREAM_FREE_LIST 1
#endif

namespace sluice::proxy {
namespace {

constexpr size_t kMaxFree = 64;

struct FreeBlock {
  FreeBlock* next;
};

// Set when the thread's list was destroyed (thread exit): later frees go to the heap. Trivially
// destructible, so it can still be read while the thread's other thread_locals are destroyed.
thread_local bool t_list_gone = false;

struct FreeList {
  FreeBlock* head = nullptr;
  size_t count = 0;
  ~FreeList() {
    while (head != nullptr) {
      FreeBlock* b = head;
      head = b->next;
      ::operator delete(b);
    }
    count = 0;
    t_list_gone = true;
  }
};

thread_local FreeList t_free;

}  // namespace

void* Stream::operator new(size_t size) {
  if (SLUICE_STREAM_FREE_LIST && size == sizeof(Stream) && !t_list_gone && t_free.head != nullptr) {
    FreeBlock* b = t_free.head;
    t_free.head = b->next;
    --t_free.count;
    return b;
  }
  return ::operator new(size);
}

void Stream::operator delete(void* p, size_t size) {
  if (SLUICE_STREAM_FREE_LIST && size == sizeof(Stream) && !t_list_gone &&
      t_free.count < kMaxFree) {
    auto* b = static_cast<FreeBlock*>(p);
    b->next = t_free.head;
    t_free.head = b;
    ++t_free.count;
    return;
  }
  ::operator delete(p);
}

}  // namespace sluice::proxy
