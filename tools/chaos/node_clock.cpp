#include "node_clock.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>

#ifndef REDLOCK_CHAOS_LIBFAKETIME
#define REDLOCK_CHAOS_LIBFAKETIME "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
#endif
#ifndef REDLOCK_CHAOS_MALLOC_PRELOAD_NAME
#define REDLOCK_CHAOS_MALLOC_PRELOAD_NAME "libredlock-chaos-libc-malloc.so"
#endif

namespace redlock::chaos {
namespace {

std::optional<std::filesystem::path> from_environment(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before threads
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::filesystem::path(value);
}

bool is_file(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

// libfaketime's offset syntax: seconds with a fraction, signed. The
// fraction delimiter follows LC_NUMERIC, which redis-server leaves at "C".
std::string offset_text(double offset_ms) {
  char text[64];
  std::snprintf(text, sizeof text, "%+.3f\n", offset_ms / 1000.0);
  return text;
}

}  // namespace

std::string_view to_string(ClockMode mode) noexcept {
  return mode == ClockMode::faketime ? "faketime" : "emulated";
}

std::optional<ClockMode> clock_mode_from(std::string_view text) noexcept {
  if (text == "emulated") return ClockMode::emulated;
  if (text == "faketime") return ClockMode::faketime;
  return std::nullopt;
}

std::optional<FaketimeLibraries> find_faketime_libraries(const std::filesystem::path& self,
                                                         std::string& error) {
  FaketimeLibraries found;
  found.libfaketime =
      from_environment("REDLOCK_CHAOS_LIBFAKETIME").value_or(REDLOCK_CHAOS_LIBFAKETIME);
  if (!is_file(found.libfaketime)) {
    error = "--clock faketime needs libfaketime; " + found.libfaketime.string() +
            " does not exist (install Debian's libfaketime package, or set "
            "REDLOCK_CHAOS_LIBFAKETIME to libfaketime.so.1)";
    return std::nullopt;
  }
  if (auto preload = from_environment("REDLOCK_CHAOS_MALLOC_PRELOAD")) {
    found.libc_malloc_preload = *preload;
  } else {
    const std::filesystem::path beside = self.parent_path() / REDLOCK_CHAOS_MALLOC_PRELOAD_NAME;
    const std::filesystem::path installed =
        self.parent_path().parent_path() / "lib" / "redlock" / REDLOCK_CHAOS_MALLOC_PRELOAD_NAME;
    found.libc_malloc_preload = is_file(beside) ? beside : installed;
  }
  if (!is_file(found.libc_malloc_preload)) {
    error = "--clock faketime needs " + found.libc_malloc_preload.string() +
            ", built with redlock-chaos (or set REDLOCK_CHAOS_MALLOC_PRELOAD)";
    return std::nullopt;
  }
  return found;
}

FaketimeClocks::FaketimeClocks(FaketimeLibraries libraries, int nodes)
    : libraries_(std::move(libraries)), offsets_ms_(static_cast<std::size_t>(nodes), 0.0) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "redlock-faketime-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a directory for the node clocks: " +
                             std::error_code(errno, std::generic_category()).message());
  }
  directory_ = pattern;
  for (int node = 0; node < nodes; ++node) {
    if (!shift(node, 0)) {
      throw std::runtime_error("cannot write " + file(node).string());
    }
  }
}

FaketimeClocks::~FaketimeClocks() {
  for (pid_t pid : sweep_) remove_leftovers(pid);
  std::error_code error;
  std::filesystem::remove_all(directory_, error);
}

std::filesystem::path FaketimeClocks::file(int node) const {
  return directory_ / ("n" + std::to_string(node) + ".faketime");
}

std::vector<std::string> FaketimeClocks::environment(int node) const {
  return {
      // The preload first: glibc's allocator must be in place before
      // libfaketime's first allocation.
      "LD_PRELOAD=" + libraries_.libc_malloc_preload.string() + ":" +
          libraries_.libfaketime.string(),
      "FAKETIME_TIMESTAMP_FILE=" + file(node).string(),
      "FAKETIME_NO_CACHE=1",
      "FAKETIME_DONT_FAKE_MONOTONIC=1",
  };
}

bool FaketimeClocks::shift(int node, double delta_ms) {
  double& offset = offsets_ms_.at(static_cast<std::size_t>(node));
  const double next = offset + delta_ms;
  const std::filesystem::path target = file(node);
  const std::filesystem::path temporary = target.string() + ".next";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << offset_text(next);
    if (!out.flush()) return false;
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) return false;
  offset = next;
  return true;
}

double FaketimeClocks::offset_ms(int node) const {
  return offsets_ms_.at(static_cast<std::size_t>(node));
}

void FaketimeClocks::remove_leftovers(pid_t pid) noexcept {
  if (pid <= 0) return;
  const std::string id = std::to_string(pid);
  std::error_code error;
  std::filesystem::remove("/dev/shm/faketime_shm_" + id, error);
  std::filesystem::remove("/dev/shm/sem.faketime_sem_" + id, error);
}

}  // namespace redlock::chaos
