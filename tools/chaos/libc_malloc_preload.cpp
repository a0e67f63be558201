// Preloaded into a lock node (before libfaketime) for the chaos harness's
// libfaketime clock mode: routes the allocator entry points to glibc's
// malloc, whatever allocator the redis-server binary links.
//
// Why: Debian's redis-server links jemalloc, and jemalloc reads the clock
// while it initialises; libfaketime allocates (through dlsym) while it
// initialises its clock_gettime. The two recurse into each other and the
// server never starts. With glibc's allocator in front, libfaketime's
// allocations no longer start jemalloc, and the node runs under a faked
// wall clock. A server built with MALLOC=libc needs no help and is
// unaffected (its malloc is glibc's already).
//
// Built without sanitizers or exceptions: it runs inside redis-server.
#include <dlfcn.h>

#include <cerrno>
#include <cstddef>

extern "C" {

// glibc's own allocator, exported under these names for exactly this use.
void* __libc_malloc(std::size_t size);
void __libc_free(void* pointer);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);

__attribute__((visibility("default"))) void* malloc(std::size_t size) {
  return __libc_malloc(size);
}

__attribute__((visibility("default"))) void free(void* pointer) { __libc_free(pointer); }

__attribute__((visibility("default"))) void* calloc(std::size_t count, std::size_t size) {
  return __libc_calloc(count, size);
}

__attribute__((visibility("default"))) void* realloc(void* pointer, std::size_t size) {
  return __libc_realloc(pointer, size);
}

__attribute__((visibility("default"))) void* memalign(std::size_t alignment, std::size_t size) {
  return __libc_memalign(alignment, size);
}

__attribute__((visibility("default"))) void* aligned_alloc(std::size_t alignment,
                                                           std::size_t size) {
  return __libc_memalign(alignment, size);
}

__attribute__((visibility("default"))) int posix_memalign(void** out, std::size_t alignment,
                                                          std::size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = pointer;
  return 0;
}

// Redis sizes its allocations with malloc_usable_size; it must be glibc's
// (the binary's own allocator would misread glibc's blocks). glibc has no
// __libc_ alias for it, so it is looked up in libc itself, once.
__attribute__((visibility("default"))) std::size_t malloc_usable_size(void* pointer) {
  using UsableSize = std::size_t (*)(void*);
  static UsableSize glibc_usable_size = [] {
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    return libc == nullptr ? nullptr
                           : reinterpret_cast<UsableSize>(dlsym(libc, "malloc_usable_size"));
  }();
  return glibc_usable_size == nullptr || pointer == nullptr ? 0 : glibc_usable_size(pointer);
}

}  // extern "C"
