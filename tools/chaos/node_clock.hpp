// How the chaos harness moves a lock node's clock.
//
// emulated (the default): the node's real clock is left alone; a jump is
// applied to the library's expiring keys in one Lua step, exactly as the
// jump would act on them (docs/chaos.md). Needs nothing but redis-server.
//
// faketime: every node runs under libfaketime, and its wall clock really
// moves. Each node reads its offset from a file of its own
// (FAKETIME_TIMESTAMP_FILE, re-read on every clock call); a jump rewrites
// that file. Only the wall clock moves (FAKETIME_DONT_FAKE_MONOTONIC): key
// expiry in Redis follows the wall clock, as it does when NTP steps a real
// machine's clock, while the server's own timers keep the monotonic clock.
// Debian's redis-server links jemalloc, which cannot start under
// libfaketime, so a small preload (libc_malloc_preload.cpp) puts glibc's
// allocator in front of it; a redis-server built with MALLOC=libc
// ($REDLOCK_TEST_REDIS_SERVER) runs the same way.
//
// Main thread only; nothing here throws except where it says so.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::chaos {

enum class ClockMode { emulated, faketime };

[[nodiscard]] std::string_view to_string(ClockMode mode) noexcept;
[[nodiscard]] std::optional<ClockMode> clock_mode_from(std::string_view text) noexcept;

struct FaketimeLibraries {
  std::filesystem::path libfaketime;
  std::filesystem::path libc_malloc_preload;
};

// Both libraries, or nullopt with `error` saying which is missing and how
// to get it. libfaketime: $REDLOCK_CHAOS_LIBFAKETIME, else Debian's
// libfaketime package path. The preload: $REDLOCK_CHAOS_MALLOC_PRELOAD,
// else next to `self` (a build tree), else <prefix>/lib/redlock for
// <prefix>/bin/redlock-chaos.
[[nodiscard]] std::optional<FaketimeLibraries> find_faketime_libraries(
    const std::filesystem::path& self, std::string& error);

// The offset files of one run's nodes, in a temporary directory removed
// on destruction.
class FaketimeClocks {
 public:
  // Throws std::runtime_error when the directory or a file cannot be made.
  FaketimeClocks(FaketimeLibraries libraries, int nodes);
  ~FaketimeClocks();
  FaketimeClocks(const FaketimeClocks&) = delete;
  FaketimeClocks& operator=(const FaketimeClocks&) = delete;

  // "NAME=value" entries for node `node`'s environment.
  [[nodiscard]] std::vector<std::string> environment(int node) const;
  // Moves node `node`'s wall clock by delta_ms (negative: back). The new
  // offset replaces the file in one rename, so the node reads the old or
  // the new offset, never half a file. False when the file cannot be
  // written.
  bool shift(int node, double delta_ms);
  [[nodiscard]] double offset_ms(int node) const;

  // libfaketime keeps a shared-memory segment and a semaphore per process
  // in /dev/shm and removes them at a clean exit; a node killed with -9
  // leaves them behind. Call with the pid of a node this run started,
  // after it is gone.
  static void remove_leftovers(pid_t pid) noexcept;
  // remove_leftovers(pid) when this object is destroyed: for nodes still
  // running, stopped before then.
  void sweep_on_destruction(pid_t pid) { sweep_.push_back(pid); }

 private:
  [[nodiscard]] std::filesystem::path file(int node) const;

  FaketimeLibraries libraries_;
  std::filesystem::path directory_;
  std::vector<double> offsets_ms_;
  std::vector<pid_t> sweep_;
};

}  // namespace redlock::chaos
