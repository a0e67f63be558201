// One row of a PostgreSQL table written under a fenced lock.
//
// The database is the resource the lock protects, and it checks the lock's
// fencing token itself: the row keeps the highest token that wrote it, and
// a write carrying an older token changes nothing. So a holder that stalled
// past its lease (a GC pause, a stopped VM) and wakes up after a newer
// holder has written is refused by the database, however sure it is that
// it still holds the lock. Two forms of the check:
//
//   update        one conditional statement; 0 rows updated means fenced out
//       UPDATE documents SET body = $1, fence = $2 WHERE id = $3 AND fence <= $2
//   transaction   read, compare and write under the row's lock
//       BEGIN; SELECT body, fence FROM documents WHERE id = $1 FOR UPDATE;
//       (fence > token: ROLLBACK, fenced out)
//       UPDATE documents SET body = $2, fence = $3 WHERE id = $1; COMMIT
//
//   redlock_example_fenced_postgres [--config FILE | --node HOST:PORT ...]
//       --database CONNINFO [--document ID] [--body TEXT]
//       [--form update|transaction] [--ttl-ms N] [--wait-ms N]
//       [--pause-before-write on]
//
// --pause-before-write on plays the holder that stalls: after taking the
// lock it stops the whole process (SIGSTOP, its lock renewals included)
// until someone sends it SIGCONT, then writes as if nothing happened.
#include <libpq-fe.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "example_setup.hpp"

namespace {

struct ConnectionCloser {
  void operator()(PGconn* connection) const noexcept { PQfinish(connection); }
};
struct ResultClearer {
  void operator()(PGresult* result) const noexcept { PQclear(result); }
};
using Connection = std::unique_ptr<PGconn, ConnectionCloser>;
using Result = std::unique_ptr<PGresult, ResultClearer>;

// Runs `sql` with text parameters ($1, $2, ...). Null when libpq could not
// even build a result (out of memory); check ok() before reading it.
Result run(PGconn* connection, const char* sql, const std::vector<std::string>& parameters = {}) {
  std::vector<const char*> values;
  values.reserve(parameters.size());
  for (const std::string& parameter : parameters) values.push_back(parameter.c_str());
  return Result(PQexecParams(connection, sql, static_cast<int>(values.size()), nullptr,
                             values.data(), nullptr, nullptr, 0));
}

bool ok(const Result& result) {
  const ExecStatusType status = PQresultStatus(result.get());
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

// Prints the failed statement's error; the database is unreachable or
// broken, which is "try later", not "a newer holder exists".
int database_failed(PGconn* connection, const char* what) {
  std::cerr << what << " failed: " << PQerrorMessage(connection);
  return example::exit_code::not_acquired;
}

// The table, and the document's row with fence 0, which any token passes.
// A service would create the table in a migration; the example makes its
// own so that it runs against an empty database.
bool prepare_document(PGconn* connection, const std::string& document) {
  return ok(run(connection, "SET client_min_messages = warning")) &&
         ok(run(connection,
                "CREATE TABLE IF NOT EXISTS documents ("
                " id text PRIMARY KEY, body text NOT NULL, fence bigint NOT NULL)")) &&
         ok(run(connection,
                "INSERT INTO documents (id, body, fence) VALUES ($1, '', 0)"
                " ON CONFLICT (id) DO NOTHING",
                {document}));
}

int fenced_out(const std::string& token, const std::string& fence) {
  // Not an error to retry: a newer holder wrote, and whatever this holder
  // computed is stale. Stop touching the document.
  std::cerr << "fenced out: token " << token << " is below the row's fence " << fence
            << "; a newer holder exists, stopping\n";
  return example::exit_code::lost;
}

// The single-statement form: the check and the write are one UPDATE, and
// the row count says which way it went.
int write_with_update(PGconn* connection, const std::string& document, const std::string& body,
                      const std::string& token) {
  const Result updated = run(connection,
                             "UPDATE documents SET body = $1, fence = $2"
                             " WHERE id = $3 AND fence <= $2",
                             {body, token, document});
  if (!ok(updated)) return database_failed(connection, "UPDATE");
  if (std::string(PQcmdTuples(updated.get())) == "0") {
    // Only to say why; the refusal was the UPDATE's.
    const Result fence = run(connection, "SELECT fence FROM documents WHERE id = $1", {document});
    const bool known = ok(fence) && PQntuples(fence.get()) == 1;
    std::cout << "UPDATE matched no row\n";
    return fenced_out(token, known ? PQgetvalue(fence.get(), 0, 0) : "(unknown)");
  }
  std::cout << "wrote " << document << " with token " << token << '\n';
  return example::exit_code::ok;
}

// The transaction form: the row lock taken by SELECT ... FOR UPDATE keeps
// every other writer out from the comparison to the COMMIT, so the read,
// the check and the write act on one version of the row. This is the form
// for a read-modify-write, whose new body depends on the old one.
int write_in_transaction(PGconn* connection, const std::string& document, const std::string& body,
                         const std::string& token, std::uint64_t token_value) {
  if (!ok(run(connection, "BEGIN"))) return database_failed(connection, "BEGIN");
  const Result row =
      run(connection, "SELECT body, fence FROM documents WHERE id = $1 FOR UPDATE", {document});
  if (!ok(row)) {
    const int code = database_failed(connection, "SELECT ... FOR UPDATE");
    run(connection, "ROLLBACK");
    return code;
  }
  if (PQntuples(row.get()) != 1) {  // deleted since prepare_document
    run(connection, "ROLLBACK");
    std::cerr << "the row of " << document << " is gone\n";
    return example::exit_code::not_acquired;
  }
  const std::string old_body = PQgetvalue(row.get(), 0, 0);
  const std::string fence = PQgetvalue(row.get(), 0, 1);
  if (std::stoull(fence) > token_value) {
    run(connection, "ROLLBACK");
    return fenced_out(token, fence);
  }
  if (!ok(run(connection, "UPDATE documents SET body = $2, fence = $3 WHERE id = $1",
              {document, body, token})) ||
      !ok(run(connection, "COMMIT"))) {
    const int code = database_failed(connection, "UPDATE ... COMMIT");
    run(connection, "ROLLBACK");
    return code;
  }
  std::cout << "wrote " << document << " with token " << token << " (it held \"" << old_body
            << "\" at fence " << fence << ")\n";
  return example::exit_code::ok;
}

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags =
      example::parse_flags(argc, argv,
                           {"--database", "--document", "--body", "--form", "--ttl-ms", "--wait-ms",
                            "--pause-before-write"});
  const std::string form = flags.value("--form", "update");
  const std::string pause = flags.value("--pause-before-write", "off");
  const auto ttl = flags.number("--ttl-ms", 10000, 100, 3600000);
  const auto wait = flags.number("--wait-ms", 10000, 0, 3600000);
  if (!flags.error.empty() || !flags.values.contains("--database") ||
      (form != "update" && form != "transaction") || (pause != "on" && pause != "off") || !ttl ||
      !wait) {
    return example::usage(flags,
                          "fenced_postgres [--config FILE | --node HOST:PORT ...]"
                          " --database CONNINFO [--document ID] [--body TEXT]"
                          " [--form update|transaction] [--ttl-ms N] [--wait-ms N]"
                          " [--pause-before-write on]");
  }
  std::optional<redlock::QuorumConfig> quorum = example::load_quorum(flags);
  if (!quorum) return example::exit_code::config;

  // Connect before locking: a lock held while the database is unreachable
  // only keeps the other holders waiting.
  const Connection connection(PQconnectdb(flags.value("--database", "").c_str()));
  if (PQstatus(connection.get()) != CONNECTION_OK) {
    std::cerr << "cannot connect to the database: " << PQerrorMessage(connection.get());
    return example::exit_code::not_acquired;
  }
  const std::string document = flags.value("--document", "readme");
  if (!prepare_document(connection.get(), document)) {
    return database_failed(connection.get(), "creating the document");
  }

  // Tokens are ordered per lock name: one name per row.
  const std::string resource = "documents:" + document;
  redlock::BlockingClient client(std::move(*quorum));
  redlock::GuardOptions options;
  options.acquire.fenced = true;
  options.acquire.ttl = std::chrono::milliseconds(*ttl);
  options.acquire.wait = std::chrono::milliseconds(*wait);
  redlock::Guard guard = client.lock(redlock::Resource(resource), options);
  if (!guard) {
    std::cerr << "cannot take " << resource << ": " << guard.error().message() << '\n';
    return example::exit_code_for(guard.error());
  }
  const std::uint64_t token_value = *guard.fence();
  const std::string token = std::to_string(token_value);
  std::cout << "took " << resource << " with fencing token " << token << '\n' << std::flush;

  if (pause == "on") {
    std::cout << "pausing before the write (SIGSTOP); continue with SIGCONT\n" << std::flush;
    std::raise(SIGSTOP);  // every thread stops: the lease runs out unrenewed
    std::cout << "resumed; writing as if the lock were still held\n" << std::flush;
  }
  // No valid() check before writing: it could pass and the lease still end
  // before the statement lands. The database's comparison is what decides.
  const std::string body = flags.value("--body", "written with token " + token);
  return form == "update"
             ? write_with_update(connection.get(), document, body, token)
             : write_in_transaction(connection.get(), document, body, token, token_value);
}
