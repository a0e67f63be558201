// One document processed by one worker, with a fenced write.
//
// A lock alone cannot stop a worker that stalled past its lease (a GC pause,
// a stopped VM) from writing after the next worker has. So the lock is taken
// fenced: it comes with a token larger than every earlier holder's, and the
// document store checks it. Every read and write goes through a FenceGate
// with that token; once a newer holder has touched the document, the older
// one is refused with errc::fenced_out and must stop.
//
// The document is a Redis string "revision N"; each run makes it N + 1.
//
//   redlock_example_fenced_document [--config FILE | --node HOST:PORT ...]
//       --store HOST:PORT [--document KEY] [--stale-token N]
//
// --stale-token plays an older holder that woke up late: the run uses N
// instead of its own token, and the gate refuses it once a newer one wrote.
#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "example_setup.hpp"

namespace {

// The store is one Redis server (not one of the lock nodes), so it is
// given as an address of its own.
std::optional<redlock::NodeConfig> store_node(const std::string& address) {
  const redlock::AddressResult parsed = redlock::parse_address(address);
  if (!parsed.address) return std::nullopt;
  redlock::NodeConfig node;
  node.host = parsed.address->host;
  node.port = parsed.address->port;
  node.name = node.host + ":" + std::to_string(node.port);  // never the password
  node.username = parsed.address->username;
  node.password = parsed.address->password;
  node.db = parsed.address->db.value_or(0);
  return node;
}

// "revision N" -> N; a missing or unreadable document starts at 0.
long long revision_of(const std::optional<std::string>& document) {
  constexpr std::string_view prefix = "revision ";
  long long revision = 0;
  if (document && document->starts_with(prefix)) {
    const char* digits = document->data() + prefix.size();
    std::from_chars(digits, document->data() + document->size(), revision);
  }
  return revision;
}

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags =
      example::parse_flags(argc, argv, {"--store", "--document", "--stale-token"});
  const std::optional<redlock::NodeConfig> store = store_node(flags.value("--store", ""));
  const auto stale_token = flags.number("--stale-token", 0, 1, (1LL << 53) - 1);
  if (!flags.error.empty() || !store || !stale_token) {
    return example::usage(flags,
                          "fenced_document [--config FILE | --node HOST:PORT ...]"
                          " --store HOST:PORT [--document KEY] [--stale-token N]");
  }
  std::optional<redlock::QuorumConfig> quorum = example::load_quorum(flags);
  if (!quorum) return example::exit_code::config;

  // The lock and the document share a name, but live apart: the lock on
  // the quorum, the document (and its high-water mark) on the store.
  const std::string document = flags.value("--document", "doc:readme");
  redlock::BlockingClient client(std::move(*quorum));
  redlock::GuardOptions options;
  options.acquire.fenced = true;  // one more round trip, for the token
  // Workers queue for the document; a release wakes the next one at once.
  options.acquire.wait = std::chrono::seconds(5);
  redlock::Guard guard = client.lock(redlock::Resource(document), options);
  if (!guard) {
    std::cerr << "cannot take " << document << ": " << guard.error().message() << '\n';
    return example::exit_code_for(guard.error());
  }
  std::cout << "took " << document << " with fencing token " << *guard.fence() << '\n';
  std::uint64_t token = *guard.fence();
  if (*stale_token > 0) {
    token = static_cast<std::uint64_t>(*stale_token);
    std::cout << "acting with stale token " << token << " instead\n";
  }

  // Fence the read too: it raises the document's mark, so a holder older
  // than us can no longer write back a value computed from an earlier read.
  // The gate, not a valid() check, is what makes the write safe: a check
  // could pass and the lease still end before the write lands.
  redlock::FenceGate gate(*store);
  redlock::FencedResult result = gate.get(document, token);
  if (result.ok()) {
    const long long revision = revision_of(result.value);
    result = gate.set(document, token, "revision " + std::to_string(revision + 1));
    if (result.ok()) {
      std::cout << "updated " << document << ": revision " << revision << " -> " << revision + 1
                << '\n';
      return example::exit_code::ok;  // the guard's destructor releases the lock
    }
  }
  if (result.error == redlock::errc::fenced_out) {
    // Not an error to retry: a newer holder exists, and whatever this run
    // read or computed is stale. Stop touching the document.
    std::cerr << "fenced out: token " << token << " is below the document's mark "
              << result.high_water_mark << "; a newer holder exists, stopping\n";
    return example::exit_code::lost;
  }
  std::cerr << "store failed: " << result.error.message() << " (" << result.detail << ")\n";
  return example::exit_code::not_acquired;  // the store is unreachable; try later
}
