#include "usage.hpp"

namespace redlock::cli {
namespace {

constexpr std::string_view kOverview =
    "usage: redlock SUBCOMMAND [OPTIONS]\n"
    "\n"
    "A lock held by a majority of N independent Redis masters (Redlock): on one\n"
    "resource, on several at once (--resource repeated), or one permit of a\n"
    "semaphore that at most K holders share (--semaphore S --permits K).\n"
    "\n"
    "subcommands:\n"
    "  run           run a command while holding the lock (renewed as it runs)\n"
    "  acquire       take the lock and print it as JSON; it stays held until its TTL\n"
    "  extend        renew a lock taken with `acquire` (needs its --value)\n"
    "  release       release a lock taken with `acquire` (needs its --value)\n"
    "  status        node reachability, latency, role, persistence; a lock's holders\n"
    "  inspect       who holds a lock or a semaphore's permits, as JSON (read only)\n"
    "  campaign      run a command while leader of an election (REDLOCK_TERM set)\n"
    "  leader        the current leader of an election, as JSON (read only)\n"
    "  check-config  validate a quorum file\n"
    "  init          declare a quorum brand-new (its first use found a node down)\n"
    "\n"
    "The nodes come from --config FILE, else $REDLOCK_CONFIG, else ./redlock.toml,\n"
    "or from --node HOST:PORT flags (repeatable) instead of a file.\n"
    "\n"
    "exit codes: 0 success; 75 not acquired / not extended (busy, or no quorum);\n"
    "69 lock lost while running; 78 configuration error; 64 usage error.\n"
    "\n"
    "`redlock SUBCOMMAND --help` describes each subcommand; `redlock --version`.\n";

constexpr std::string_view kRun =
    "usage: redlock run [--config F | --node H:P ...] --resource R [--resource R2 ...]\n"
    "                   [--ttl MS] [--wait MS] [--fenced] [--fair] [--grace MS]\n"
    "                   [--at-risk-signal SIG] -- CMD [ARGS...]\n"
    "       redlock run [--config F | --node H:P ...] --resource R --shared\n"
    "                   [--ttl MS] [--wait MS] [--fenced] [--grace MS] -- CMD [ARGS...]\n"
    "       redlock run [--config F | --node H:P ...] --semaphore S --permits K\n"
    "                   [--ttl MS] [--wait MS] [--fenced] [--grace MS] -- CMD [ARGS...]\n"
    "\n"
    "Acquires the lock on R (on every R at once when --resource is repeated; or\n"
    "one free permit of semaphore S), runs CMD in its own process group while the\n"
    "lock is renewed (every ttl/3), releases the lock when CMD ends, and exits with\n"
    "CMD's exit code (128+N when a signal N killed it).\n"
    "\n"
    "CMD's environment adds REDLOCK_RESOURCE (the first R, or S), REDLOCK_RESOURCES\n"
    "(every R, one per line), REDLOCK_VALUE, REDLOCK_VALIDITY_MS; with --fenced\n"
    "REDLOCK_FENCE (the first R's fencing token) and REDLOCK_FENCES (every R's, one\n"
    "per line); with --semaphore REDLOCK_PERMIT (the permit held, 0..K-1) and\n"
    "REDLOCK_PERMITS (K); with --shared REDLOCK_SHARED=1.\n"
    "\n"
    "If the lock is lost while CMD runs, CMD's process group gets SIGTERM, then\n"
    "SIGKILL after the grace period, and run exits 69. SIGINT, SIGTERM and SIGHUP\n"
    "sent to run are passed on to CMD's process group; the lock is released.\n"
    "\n"
    "options:\n"
    "  --resource R   the name of the lock (any string); repeatable, up to 64\n"
    "                 distinct names: one lock over all of them, all or nothing\n"
    "  --semaphore S  instead of --resource: one permit of semaphore S\n"
    "  --permits K    S's count of permits, 1 to 1024; every client of S must\n"
    "                 name the same K\n"
    "  --shared       the read side of R: readers share R, a writer (any lock on\n"
    "                 R without --shared) excludes them; a waiting writer keeps\n"
    "                 new readers out\n"
    "  --fair         wait in line: served in the order of tickets drawn from the\n"
    "                 quorum, never overtaken by a later waiter (default: the\n"
    "                 file's lock.fair)\n"
    "  --ttl MS       lock TTL in milliseconds (default: the file's lock.ttl_ms)\n"
    "  --wait MS      wait at most MS for the lock; 0 = one attempt\n"
    "                 (default: the file's retry_count and retry_delay_ms)\n"
    "  --fenced       also obtain fencing tokens (REDLOCK_FENCE, REDLOCK_FENCES)\n"
    "  --grace MS     delay between SIGTERM and SIGKILL after a loss (default 5000)\n"
    "  --at-risk-signal SIG\n"
    "                 send SIG (USR1, SIGUSR1, or a number) to CMD's process group\n"
    "                 when the lock is at risk: renewals late and less than half\n"
    "                 the TTL left; once per episode (off by default)\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: CMD's status; 75 not acquired (busy: all K permits held, or one of the\n"
    "resources; or no quorum); 69 lock lost; 78 configuration; 64 usage, and a K\n"
    "other than the one the nodes record for S; 127 CMD not found; 126 CMD not\n"
    "executable.\n";

constexpr std::string_view kAcquire =
    "usage: redlock acquire [--config F | --node H:P ...] --resource R [--resource R2 ...]\n"
    "                       [--ttl MS] [--wait MS] [--fenced]\n"
    "       redlock acquire [--config F | --node H:P ...] --resource R --shared\n"
    "                       [--ttl MS] [--wait MS] [--fenced]\n"
    "       redlock acquire [--config F | --node H:P ...] --semaphore S --permits K\n"
    "                       [--ttl MS] [--wait MS] [--fenced]\n"
    "\n"
    "Takes the lock on R (on every R at once when --resource is repeated; or one\n"
    "free permit of semaphore S) and prints one JSON object: resource (the first R,\n"
    "or S), value, validity_ms, fence (or null), attempts, error (null on success)\n"
    "and nodes (what each node answered); for several resources also resources\n"
    "and fences (each R's token, or null), for a semaphore permit (the permit held,\n"
    "or null) and permits (K), for a reader shared (true). The lock stays held,\n"
    "without renewal, until its TTL runs out or `redlock release --value V`\n"
    "releases it; `redlock extend --value V` renews it (name the same resources,\n"
    "or --semaphore S --permit I, or --resource R --shared).\n"
    "\n"
    "options:\n"
    "  --resource R   the name of the lock (any string); repeatable, up to 64\n"
    "                 distinct names: one lock over all of them, all or nothing\n"
    "  --semaphore S  instead of --resource: one permit of semaphore S\n"
    "  --permits K    S's count of permits, 1 to 1024; every client of S must\n"
    "                 name the same K\n"
    "  --shared       the read side of R (see `redlock run --help`)\n"
    "  --fair         wait in line (see `redlock run --help`)\n"
    "  --ttl MS       lock TTL in milliseconds (default: the file's lock.ttl_ms)\n"
    "  --wait MS      wait at most MS for the lock; 0 = one attempt\n"
    "                 (default: the file's retry_count and retry_delay_ms)\n"
    "  --fenced       also obtain fencing tokens (the `fence` and `fences` fields)\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 acquired; 75 not acquired (busy, or no quorum); 78 configuration;\n"
    "64 usage, and a K other than the one the nodes record for S.\n";

constexpr std::string_view kExtend =
    "usage: redlock extend [--config F | --node H:P ...] --resource R [--resource R2 ...]\n"
    "                      --value V [--ttl MS]\n"
    "       redlock extend [--config F | --node H:P ...] --semaphore S --permit I\n"
    "                      --permits K --value V [--ttl MS]\n"
    "       redlock extend [--config F | --node H:P ...] --resource R --shared\n"
    "                      --value V [--ttl MS]\n"
    "\n"
    "Renews the lock on R (every R, as acquired; or permit I of semaphore S) held\n"
    "with value V (from `redlock acquire`) on every node where V is still the\n"
    "holder, and prints one JSON object: resource, value, validity_ms, fence (null:\n"
    "not known here), error and nodes; for several resources also resources and\n"
    "fences (one null per R), for a semaphore permit and permits. A lock that is\n"
    "gone from a majority is never re-created.\n"
    "\n"
    "options:\n"
    "  --resource R   the name of the lock; repeatable: every name it was acquired on\n"
    "  --semaphore S  instead of --resource: a permit of semaphore S\n"
    "  --permit I     the permit held (the `permit` printed by acquire)\n"
    "  --permits K    S's count, required: the nodes record it anew where it is gone\n"
    "  --shared       V is a reader of R (acquired with --shared)\n"
    "  --value V      the lock's value\n"
    "  --ttl MS       the new TTL in milliseconds (default: the file's lock.ttl_ms)\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 extended; 75 not extended (not held by V on a majority, or no quorum);\n"
    "78 configuration; 64 usage.\n";

constexpr std::string_view kRelease =
    "usage: redlock release [--config F | --node H:P ...] --resource R [--resource R2 ...]\n"
    "                       --value V\n"
    "       redlock release [--config F | --node H:P ...] --semaphore S --permit I\n"
    "                       [--permits K] --value V\n"
    "       redlock release [--config F | --node H:P ...] --resource R --shared --value V\n"
    "\n"
    "Deletes the lock on R (every R, as acquired; or permit I of semaphore S) from\n"
    "every node where V is the holder (never another holder's value) and prints one\n"
    "JSON object: resource, value, released (on how many nodes V was deleted),\n"
    "error and nodes; for several resources also resources, for a semaphore permit\n"
    "and permits (K, or null when not given).\n"
    "\n"
    "options:\n"
    "  --resource R   the name of the lock; repeatable: every name it was acquired on\n"
    "  --semaphore S  instead of --resource: a permit of semaphore S\n"
    "  --permit I     the permit held (the `permit` printed by acquire)\n"
    "  --permits K    S's count (optional: releasing a permit does not need it)\n"
    "  --shared       V is a reader of R (acquired with --shared)\n"
    "  --value V      the lock's value\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 when a majority of nodes answered (V is then held nowhere that counts,\n"
    "even if `released` is 0 because it had expired); 75 when fewer answered;\n"
    "78 configuration; 64 usage.\n";

constexpr std::string_view kStatus =
    "usage: redlock status [--config F | --node H:P ...] [--resource R] [--json]\n"
    "\n"
    "Asks every node, in parallel, for: reachability, PING round-trip time, role\n"
    "(INFO replication) and persistence (CONFIG GET appendonly / appendfsync;\n"
    "\"unknown\" where CONFIG is denied). With --resource, also each node's PTTL,\n"
    "holder value and fence counter for R, and whether the quorum could grant R\n"
    "now (free on a majority). Prints a table; --json prints one JSON object.\n"
    "\n"
    "options:\n"
    "  --resource R   also show the lock on R\n"
    "  --json         print JSON instead of a table\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 when a majority of nodes is reachable; 75 when not; 78 configuration;\n"
    "64 usage.\n";

constexpr std::string_view kInspect =
    "usage: redlock inspect [--config F | --node H:P ...] --resource R\n"
    "       redlock inspect [--config F | --node H:P ...] --semaphore S [--permits K]\n"
    "\n"
    "Reads, without writing anything, who holds the lock on R (or the permits of\n"
    "semaphore S) on every node, in one round, and prints one JSON object: for R\n"
    "resource, holder (the value a majority holds, or null), validity_ms (what is\n"
    "left of it for sure, or null), fence (the counter a majority stores); for S\n"
    "semaphore, permits (the count a majority records, else K, else null) and\n"
    "holders (permit, value, validity_ms, fence of each permit a majority holds);\n"
    "then error (null, or no_quorum) and nodes (what each node holds).\n"
    "\n"
    "The values printed are the holders' live lock values: whoever reads them can\n"
    "extend or release those locks. Keep the output where the nodes' data may be\n"
    "read.\n"
    "\n"
    "options:\n"
    "  --resource R   the lock to inspect\n"
    "  --semaphore S  instead of --resource: every permit of semaphore S\n"
    "  --permits K    read permits 0 to K-1 at least, 1 to 1024 (default: the\n"
    "                 count the nodes record)\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 when a majority of nodes answered (held or not); 75 when fewer did;\n"
    "78 configuration; 64 usage.\n";

constexpr std::string_view kCheckConfig =
    "usage: redlock check-config FILE\n"
    "\n"
    "Validates a quorum file and prints a summary: nodes, quorum, timing.\n"
    "\n"
    "exit: 0 valid; 78 invalid (FILE:LINE:COL: what was expected); 64 usage.\n";

constexpr std::string_view kInit =
    "usage: redlock init [--config F | --node H:P ...]\n"
    "\n"
    "Declares the quorum brand-new: marks every node that answers as initialised\n"
    "and clears the recovery delay a first use put there. A first use with a node\n"
    "down cannot tell a new quorum from a majority that lost its data, so the nodes\n"
    "that answered grant nothing for max_ttl; init is the operator's word that the\n"
    "nodes are new. It is taken only when a majority answers and no node that\n"
    "answers shows a sign of use: no lock key, no fence counter, and no identity\n"
    "marker but one a first use wrote. An empty node beside nodes in use is a\n"
    "restarted one: recovery, not init, brings it back. With a Redis Cluster\n"
    "member every slot is marked, on the server that has it.\n"
    "\n"
    "options:\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 declared (a majority marked); 75 refused, naming the nodes and what\n"
    "they hold (nothing written), or fewer than a majority marked; 78\n"
    "configuration, or members that are not independent; 64 usage.\n";

constexpr std::string_view kCampaign =
    "usage: redlock campaign [--config F | --node H:P ...] --name N [--payload P]\n"
    "                        [--ttl MS] [--wait MS] [--grace MS] -- CMD [ARGS...]\n"
    "\n"
    "Campaigns in election N: waits until this process leads (without bound unless\n"
    "--wait MS is given), then runs CMD like `redlock run` while the leader's lock\n"
    "is renewed, and resigns when CMD ends. The leader is the holder of the fenced\n"
    "lock on the resource election:N; its term is that lock's fencing token, larger\n"
    "than every term before it. `redlock leader --name N` shows the term and P.\n"
    "\n"
    "CMD's environment adds REDLOCK_TERM (the term) and what `redlock run --fenced`\n"
    "gives (REDLOCK_RESOURCE=election:N, REDLOCK_VALUE, REDLOCK_FENCE, ...).\n"
    "If leadership is lost while CMD runs, CMD's process group gets SIGTERM, then\n"
    "SIGKILL after the grace period, and campaign exits 69.\n"
    "\n"
    "options:\n"
    "  --name N       the election\n"
    "  --payload P    what the leader advertises (an address, say; at most 4096 bytes)\n"
    "  --ttl MS       the leader's lock TTL (default: the file's lock.ttl_ms)\n"
    "  --wait MS      give up after MS without being elected (exit 75)\n"
    "  --grace MS     delay between SIGTERM and SIGKILL after a loss (default 5000)\n"
    "  --at-risk-signal SIG\n"
    "                 send SIG (USR1, SIGUSR1, or a number) to CMD's process group\n"
    "                 when the lock is at risk: renewals late and less than half\n"
    "                 the TTL left; once per episode (off by default)\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: CMD's status; 75 not elected within --wait; 69 leadership lost;\n"
    "78 configuration; 64 usage; 127 CMD not found; 126 CMD not executable.\n";

constexpr std::string_view kLeader =
    "usage: redlock leader [--config F | --node H:P ...] --name N\n"
    "\n"
    "Reads the leader of election N on every node and prints one JSON object:\n"
    "{\"name\", \"term\", \"payload\", \"validity_ms\"} while a majority holds a leader,\n"
    "{\"name\", \"leader\": null} when a majority holds none (with \"error\" when\n"
    "fewer than a majority answered). Writes nothing; never prints the leader's\n"
    "lock value.\n"
    "\n"
    "options:\n"
    "  --name N       the election\n"
    "  --config F     the quorum file (default: $REDLOCK_CONFIG, then ./redlock.toml)\n"
    "  --node H:P     a node address, repeatable, instead of a file\n"
    "\n"
    "exit: 0 when a majority answered (leader or not); 75 when fewer did;\n"
    "78 configuration; 64 usage.\n";

}  // namespace

std::string_view help_text(std::optional<Subcommand> subcommand) noexcept {
  if (!subcommand) return kOverview;
  switch (*subcommand) {
    case Subcommand::run:
      return kRun;
    case Subcommand::acquire:
      return kAcquire;
    case Subcommand::extend:
      return kExtend;
    case Subcommand::release:
      return kRelease;
    case Subcommand::status:
      return kStatus;
    case Subcommand::inspect:
      return kInspect;
    case Subcommand::campaign:
      return kCampaign;
    case Subcommand::leader:
      return kLeader;
    case Subcommand::check_config:
      return kCheckConfig;
    case Subcommand::init:
      return kInit;
  }
  return kOverview;
}

}  // namespace redlock::cli
