// The TLS session (transport/tls_session.hpp) fed what a hostile node
// might send: the input's bytes, cut into reads as the first byte says,
// arrive as the server's side of a handshake and, should one ever complete,
// of the session after it. Nothing may crash or leak; once the session has
// failed it stays failed and says why in printable text; what it asks to
// send stays bounded by what a client's handshake can need.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_support.hpp"
#include "redlock/config.hpp"
#include "transport/tls_session.hpp"

namespace {

using redlock::detail::TlsClientContext;
using redlock::detail::TlsSession;

// One context for the run: verification off (a fuzzed certificate is never
// trusted anyway, and this reaches the record layer past the handshake
// messages more often), the same path the library takes otherwise.
const std::shared_ptr<TlsClientContext>& context() {
  static const std::shared_ptr<TlsClientContext> shared = [] {
    redlock::TlsConfig config;
    config.enabled = true;
    config.verify = false;
    std::string error;
    return TlsClientContext::create(config, error);
  }();
  return shared;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > redlock::fuzz::kMaxInputBytes) return 0;
  REDLOCK_FUZZ_CHECK(context() != nullptr);
  const std::size_t read_size = 1 + data[0] % 64;  // as the socket may cut it
  ++data;
  --size;
  TlsSession session(context(), "localhost");
  REDLOCK_FUZZ_CHECK(session.valid());
  std::string out;
  REDLOCK_FUZZ_CHECK(session.start(out));
  REDLOCK_FUZZ_CHECK(!out.empty());  // the ClientHello
  bool failed = false;
  char plain[4096];
  for (std::size_t at = 0; at < size && !failed; at += read_size) {
    const std::size_t chunk = std::min(read_size, size - at);
    out.clear();
    if (!session.receive(reinterpret_cast<const char*>(data + at), chunk, out)) {
      failed = true;
      break;
    }
    // A client answers a server's flight with a few KiB at most.
    REDLOCK_FUZZ_CHECK(out.size() <= 64 * 1024);
    for (;;) {
      const long got = session.read(plain, sizeof plain);
      if (got < 0) {
        failed = true;
        break;
      }
      if (got == 0) break;
      REDLOCK_FUZZ_CHECK(session.established());
    }
  }
  if (failed) {
    REDLOCK_FUZZ_CHECK(!session.error().empty());
    // Printable: the text ends up in log lines and NodeOutcome::detail.
    for (const char c : session.error()) REDLOCK_FUZZ_CHECK(c >= 0x20 && c <= 0x7e);
    std::string more;
    REDLOCK_FUZZ_CHECK(!session.receive("x", 1, more));
    REDLOCK_FUZZ_CHECK(session.read(plain, sizeof plain) < 0);
  }
  return 0;
}
