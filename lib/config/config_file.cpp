#include "config/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#include "redlock/config.hpp"

namespace redlock::detail {

std::string too_large_message() {
  return "larger than " + std::to_string(kMaxConfigFileBytes) +
         " bytes, the most a quorum file may hold";
}

// Reads a whole regular file of at most kMaxConfigFileBytes, or says why it
// could not ("cannot open: ..."). Opened without blocking, so that a FIFO
// named as the file cannot hang the open, and refused unless fstat says it
// is a regular file: /dev/zero or a pipe would never end.
std::optional<std::string> read_quorum_file(const std::filesystem::path& file, std::string& text) {
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd >= 0) (void)::close(fd);
    }
  };
  const CloseFd opened{::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (opened.fd < 0) return "cannot open: " + std::generic_category().message(errno);
  struct stat status {};
  if (::fstat(opened.fd, &status) != 0) {
    return "cannot read: " + std::generic_category().message(errno);
  }
  if (S_ISDIR(status.st_mode)) return "cannot read: " + std::generic_category().message(EISDIR);
  if (!S_ISREG(status.st_mode)) {
    return "cannot read: not a regular file (a quorum file is never a device, pipe or socket)";
  }
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxConfigFileBytes) return too_large_message();
  // The file may grow while it is read: one byte past the limit is enough
  // to know.
  char buffer[16384];
  for (;;) {
    const ssize_t count = ::read(opened.fd, buffer, sizeof buffer);
    if (count < 0) {
      if (errno == EINTR) continue;
      return "cannot read: " + std::generic_category().message(errno);
    }
    if (count == 0) return std::nullopt;
    text.append(buffer, static_cast<std::size_t>(count));
    if (text.size() > kMaxConfigFileBytes) return too_large_message();
  }
}

}  // namespace redlock::detail
