// libevent's per-descriptor records in pages of their own.
//
// An event_base keeps one 16-byte record per descriptor number it has ever watched (its evmap
// entry, allocated when the number is first used and kept until the base is freed). glibc
// places each one among whatever was allocated at the same moment: during a burst of new
// connections, among the connections' transports and buffers. When the burst is over those are
// freed, but every 4 KiB page still holds a record or two, so neither free() nor malloc_trim()
// can give the pages back: after one burst of 5,000 `Connection: close` connections 5,031
// records of 16 bytes kept 1,729 pages (~7 MiB) resident (bench/memory, heap walk).
//
// install() routes libevent's allocations (event_set_mem_functions) through functions that
// serve requests of at most kSlotBytes from one reserved region, densely, and pass everything
// else to malloc/realloc/free unchanged. The region is reserved once (virtual, MAP_NORESERVE:
// a page becomes resident only when a record is put in it); its slots are reused through a free
// list and a mutex guards them (any thread may allocate; such requests are rare: a descriptor
// number seen for the first time). When the region is full, small requests go to malloc.
//
// Call install() once, first thing in main(), before any libevent call: libevent must free
// memory with the functions it allocated it with. Sanitizer builds do not install (the region
// would hide a use after free from ASan). Thread-safe after that.
#pragma once

#include <cstddef>

namespace sluice::server::libevent_memory {

constexpr size_t kSlotBytes = 16;           // evmap_io on epoll (no per-fd backend data)
constexpr size_t kSlots = size_t{1} << 20;  // 16 MiB of address space, resident as used

// Routes libevent's allocations through the functions below. Returns false (and changes
// nothing) in sanitizer builds or when the region cannot be reserved.
bool install();

// The functions install() gives libevent (exposed for tests). allocate(0) returns nullptr.
void* allocate(size_t size);
void* reallocate(void* p, size_t size);
void release(void* p);
// Whether `p` is a slot of the region (tests).
bool owns(const void* p);
// Slots handed out and not released (tests, diagnostics).
size_t slotsInUse();

}  // namespace sluice::server::libevent_memory
