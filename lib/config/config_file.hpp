// The bytes of a quorum file, read so that no file can stall or exhaust
// the reader (docs/configuration.md, "Limits"): regular files only, opened
// without blocking (a FIFO would wait for a writer in open(2)), at most
// kMaxConfigFileBytes of them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace redlock::detail {

// "larger than N bytes, the most a quorum file may hold".
[[nodiscard]] std::string too_large_message();

// Appends the file's bytes to `text`; nullopt on success, else why not
// ("cannot open: ...", "cannot read: ...", too_large_message()).
[[nodiscard]] std::optional<std::string> read_quorum_file(const std::filesystem::path& file,
                                                          std::string& text);

}  // namespace redlock::detail
