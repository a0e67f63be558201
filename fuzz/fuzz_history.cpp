// The chaos history reader (tools/chaos/history.hpp, docs/chaos.md): the
// fuzz bytes are the content of one JSONL history file, read by
// load_history() as the runner reads a run's files, then checked by the
// checker as the runner does. Every event read must survive a round trip
// through its JSON line. The file lives in memory (memfd), so the target
// writes nothing to disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "checker.hpp"
#include "fuzz_support.hpp"
#include "history.hpp"

namespace {

namespace chaos = redlock::chaos;

// One in-memory file for the whole run, rewritten for every input.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("redlock-fuzz-history", MFD_CLOEXEC)) {
    REDLOCK_FUZZ_CHECK(fd_ >= 0);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  [[nodiscard]] std::filesystem::path path() const {
    return "/proc/self/fd/" + std::to_string(fd_);
  }

  void assign(std::string_view content) const {
    REDLOCK_FUZZ_CHECK(::ftruncate(fd_, 0) == 0);
    std::size_t written = 0;
    while (written < content.size()) {
      const ssize_t count = ::pwrite(fd_, content.data() + written, content.size() - written,
                                     static_cast<off_t>(written));
      REDLOCK_FUZZ_CHECK(count > 0);
      written += static_cast<std::size_t>(count);
    }
  }

 private:
  int fd_;
};

void check_round_trip(const chaos::Event& event) {
  const std::string line = chaos::to_json_line(event);
  std::string error;
  const std::optional<chaos::Event> again = chaos::parse_event_line(line, error);
  REDLOCK_FUZZ_CHECK(again.has_value());
  REDLOCK_FUZZ_CHECK(chaos::to_json_line(*again) == line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > redlock::fuzz::kMaxInputBytes) return -1;
  static const MemoryFile file;
  file.assign(redlock::fuzz::as_text(data, size));
  const chaos::HistoryLoadResult loaded = chaos::load_history({file.path()});
  if (redlock::fuzz::showing()) {
    std::fprintf(stderr, "%s\n",
                 loaded.history
                     ? ("ok: " + std::to_string(loaded.history->events.size()) + " events").c_str()
                     : loaded.error.c_str());
  }
  if (!loaded.history) {
    REDLOCK_FUZZ_CHECK(!loaded.error.empty());
    return 0;
  }
  for (const chaos::Event& event : loaded.history->events) check_round_trip(event);
  const chaos::CheckResult checked = chaos::check_history(*loaded.history);
  for (const chaos::Finding& finding : checked.findings) {
    REDLOCK_FUZZ_CHECK(finding.invariant >= 0 && finding.invariant < chaos::kInvariantCount);
  }
  return 0;
}
