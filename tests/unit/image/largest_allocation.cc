#include "tests/unit/image/largest_allocation.h"

#include <atomic>
#include <cstdlib>
#include <new>

// Sanitizer builds own operator new and malloc: there the runtime's hooks see
// every allocation (C libraries' mallocs too); elsewhere this binary's
// operator new does (the C++ allocations: the pixel buffers).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INVARIANT_SANITIZER_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INVARIANT_SANITIZER_HOOKS 1
#endif
#endif

namespace {
std::atomic<bool> g_watching{false};
std::atomic<size_t> g_largest{0};

void Saw(size_t n) {
  if (!g_watching.load(std::memory_order_relaxed)) return;
  size_t seen = g_largest.load(std::memory_order_relaxed);
  while (n > seen && !g_largest.compare_exchange_weak(seen, n)) {
  }
}
}  // namespace

#ifdef INVARIANT_SANITIZER_HOOKS
#include <sanitizer/allocator_interface.h>

namespace {
void OnMalloc(const volatile void*, size_t n) { Saw(n); }
void OnFree(const volatile void*) {}
const int g_installed = __sanitizer_install_malloc_and_free_hooks(OnMalloc, OnFree);
}  // namespace
#else
namespace {
void* Allocate(size_t n) {
  Saw(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return Allocate(n); }
void* operator new[](size_t n) { return Allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#endif

namespace invariant::testing_images {

LargestAllocation::LargestAllocation() {
  g_largest = 0;
  g_watching = true;
}
LargestAllocation::~LargestAllocation() { g_watching = false; }
size_t LargestAllocation::largest() const { return g_largest.load(); }

}  // namespace invariant::testing_images
