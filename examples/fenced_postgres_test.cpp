// The fenced PostgreSQL example against a real PostgreSQL server (the
// fixture's initdb cluster, tests/support/postgres_fixture.hpp) and three
// real redis-server lock nodes: two holders of one document, the first
// stopped past its lease while the second takes the lock and writes. When
// the first wakes up, its late write must change nothing, in both forms of
// the check (one conditional UPDATE, or SELECT ... FOR UPDATE in a
// transaction), and the example must say it was fenced out.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "example_process.hpp"
#include "postgres_fixture.hpp"
#include "redis_fixture.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// The token in "took documents:ID with fencing token N".
std::optional<unsigned long long> token_in(const std::string& out) {
  const std::string label = "with fencing token ";
  const auto at = out.find(label);
  if (at == std::string::npos) return std::nullopt;
  std::istringstream digits(out.substr(at + label.size()));
  unsigned long long token = 0;
  if (digits >> token) return token;
  return std::nullopt;
}

// The real uid of process `pid`, from /proc.
std::optional<uid_t> uid_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      uid_t uid = 0;
      if (fields >> uid) return uid;
    }
  }
  return std::nullopt;
}

TEST(PostgresFixture, ServesQueriesAndStopsByPidLeavingNothingBehind) {
  std::filesystem::path directory;
  {
    PostgresServer server;
    directory = server.directory();
    ASSERT_TRUE(server.running());
    EXPECT_EQ(server.query_value("SELECT 6 * 7"), "42");
    EXPECT_EQ(server.query_value("SELECT current_setting('listen_addresses')"), "127.0.0.1");
    // initdb and postgres refuse root: under root the fixture runs them as
    // an unprivileged user.
    const std::optional<uid_t> uid = uid_of(server.pid());
    ASSERT_TRUE(uid.has_value());
    EXPECT_EQ(*uid, server.server_uid());
    EXPECT_NE(*uid, 0u);
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_EQ(server.pid(), -1);
    EXPECT_THROW((void)server.query_value("SELECT 1"), PostgresServerError);
    EXPECT_TRUE(std::filesystem::exists(directory));
  }
  EXPECT_FALSE(std::filesystem::exists(directory));
}

// Holder A takes the document's lock (fenced, 1 s lease) and stops itself
// before writing; holder B waits for the lock, which it gets only once A's
// unrenewed lease has run out, and writes with a larger token. Then A is
// continued and writes late.
void late_writer_is_fenced_out(const std::string& form) {
  RedisCluster cluster{3};
  PostgresServer database;
  const std::vector<std::string> common = {"--config",   cluster.write_config().string(),
                                           "--database", database.conninfo(),
                                           "--document", "doc-17",
                                           "--form",     form,
                                           "--ttl-ms",   "1000"};
  std::vector<std::string> a_arguments = common;
  a_arguments.insert(a_arguments.end(), {"--body", "from A", "--pause-before-write", "on"});
  Example a(FENCED_POSTGRES_BINARY, a_arguments);
  ASSERT_TRUE(a.wait_stopped(milliseconds(20000))) << a.out() << a.err();
  const std::optional<unsigned long long> a_token = token_in(a.out());
  ASSERT_TRUE(a_token.has_value()) << a.out() << a.err();

  std::vector<std::string> b_arguments = common;
  b_arguments.insert(b_arguments.end(), {"--body", "from B", "--wait-ms", "20000"});
  Example b(FENCED_POSTGRES_BINARY, b_arguments);
  ASSERT_EQ(b.wait(milliseconds(30000)), 0) << b.out() << b.err();
  const std::optional<unsigned long long> b_token = token_in(b.out());
  ASSERT_TRUE(b_token.has_value()) << b.out();
  EXPECT_GT(*b_token, *a_token);
  EXPECT_NE(b.out().find("wrote doc-17 with token " + std::to_string(*b_token)), std::string::npos)
      << b.out();

  // A wakes up believing it holds the lock, and writes.
  a.resume();
  EXPECT_EQ(a.wait(milliseconds(30000)), 69) << a.out() << a.err();
  EXPECT_NE(a.out().find("resumed"), std::string::npos) << a.out();
  EXPECT_NE(a.err().find("fenced out: token " + std::to_string(*a_token) +
                         " is below the row's fence " + std::to_string(*b_token)),
            std::string::npos)
      << a.err();
  EXPECT_EQ(a.out().find("wrote"), std::string::npos) << a.out();

  // The row holds B's write, and B's token as its fence.
  EXPECT_EQ(database.query_value("SELECT body FROM documents WHERE id = 'doc-17'"), "from B");
  EXPECT_EQ(database.query_value("SELECT fence FROM documents WHERE id = 'doc-17'"),
            std::to_string(*b_token));
}

TEST(FencedPostgres, ALateConditionalUpdateAffectsNoRow) { late_writer_is_fenced_out("update"); }

TEST(FencedPostgres, ALateTransactionSeesTheNewerFenceUnderTheRowLockAndRollsBack) {
  late_writer_is_fenced_out("transaction");
}

TEST(FencedPostgres, TheSameHolderAndNewerOnesWriteInTurn) {
  RedisCluster cluster{3};
  PostgresServer database;
  for (const std::string form : {"update", "transaction", "update"}) {
    Example run(FENCED_POSTGRES_BINARY,
                {"--config", cluster.write_config().string(), "--database", database.conninfo(),
                 "--form", form, "--body", "by " + form});
    ASSERT_EQ(run.wait(), 0) << run.out() << run.err();
    const std::optional<unsigned long long> token = token_in(run.out());
    ASSERT_TRUE(token.has_value()) << run.out();
    EXPECT_EQ(database.query_value("SELECT fence FROM documents WHERE id = 'readme'"),
              std::to_string(*token));
  }
  EXPECT_EQ(database.query_value("SELECT body FROM documents WHERE id = 'readme'"), "by update");
}

TEST(FencedPostgres, AnUnreachableDatabaseIsTryLaterAndABadFormIsAUsageError) {
  RedisCluster cluster{3};
  const std::string config = cluster.write_config().string();
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  Example unreachable(FENCED_POSTGRES_BINARY,
                      {"--config", config, "--database",
                       "host=127.0.0.1 port=1 sslmode=disable gssencmode=disable"});
  EXPECT_EQ(unreachable.wait(), 75) << unreachable.err();
  EXPECT_NE(unreachable.err().find("cannot connect to the database"), std::string::npos)
      << unreachable.err();
  Example bad_form(FENCED_POSTGRES_BINARY,
                   {"--config", config, "--database", "host=127.0.0.1", "--form", "upsert"});
  EXPECT_EQ(bad_form.wait(), 64);
  Example no_database(FENCED_POSTGRES_BINARY, {"--config", config});
  EXPECT_EQ(no_database.wait(), 64);
}

}  // namespace
}  // namespace redlock::test
