// The argument parser: pure, no process, no network.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli_args.hpp"
#include "usage.hpp"

namespace redlock::cli {
namespace {

using std::chrono::milliseconds;

ParseResult parse(std::vector<std::string_view> arguments) { return parse_arguments(arguments); }

Invocation invocation_of(const ParseResult& result) {
  if (const auto* error = std::get_if<UsageError>(&result)) {
    ADD_FAILURE() << "usage error: " << error->message;
  }
  const auto* invocation = std::get_if<Invocation>(&result);
  return invocation != nullptr ? *invocation : Invocation{};
}

std::string error_of(const ParseResult& result) {
  const auto* error = std::get_if<UsageError>(&result);
  return error != nullptr ? error->message : std::string("<no error>");
}

TEST(CliArgs, RunWithEveryOption) {
  const Invocation run = invocation_of(
      parse({"run", "--config", "q.toml", "--resource", "job", "--ttl", "1500", "--wait", "0",
             "--fenced", "--grace", "250", "--", "sh", "-c", "echo --x"}));
  EXPECT_EQ(run.subcommand, Subcommand::run);
  EXPECT_EQ(run.config_path, "q.toml");
  EXPECT_EQ(run.resource, "job");
  EXPECT_EQ(run.ttl, milliseconds(1500));
  EXPECT_EQ(run.wait, milliseconds(0));
  EXPECT_EQ(run.grace, milliseconds(250));
  EXPECT_TRUE(run.fenced);
  EXPECT_EQ(run.command, (std::vector<std::string>{"sh", "-c", "echo --x"}));
}

TEST(CliArgs, EqualsFormAndDefaults) {
  const Invocation run = invocation_of(parse({"run", "--resource=a=b", "--", "true"}));
  EXPECT_EQ(run.resource, "a=b");
  EXPECT_FALSE(run.ttl.has_value());
  EXPECT_FALSE(run.wait.has_value());
  EXPECT_FALSE(run.grace.has_value());
  EXPECT_FALSE(run.fenced);
  EXPECT_FALSE(run.config_path.has_value());
}

TEST(CliArgs, RunCommandStartsAtTheFirstNonOption) {
  const Invocation run = invocation_of(parse({"run", "--resource", "r", "ls", "-l", "--ttl", "5"}));
  EXPECT_EQ(run.command, (std::vector<std::string>{"ls", "-l", "--ttl", "5"}));
  EXPECT_FALSE(run.ttl.has_value());
}

TEST(CliArgs, HelpAfterTheDoubleDashBelongsToTheCommand) {
  const Invocation run = invocation_of(parse({"run", "--resource", "r", "--", "cmd", "--help"}));
  EXPECT_EQ(run.command, (std::vector<std::string>{"cmd", "--help"}));
}

TEST(CliArgs, RunNeedsACommandAndAResource) {
  EXPECT_NE(error_of(parse({"run", "--resource", "r"})).find("expected a command"),
            std::string::npos);
  EXPECT_NE(error_of(parse({"run", "--resource", "r", "--"})).find("expected a command"),
            std::string::npos);
  EXPECT_NE(error_of(parse({"run", "--", "true"})).find("--resource R is required"),
            std::string::npos);
}

TEST(CliArgs, NodesRepeatAndExcludeConfig) {
  const Invocation acquire = invocation_of(
      parse({"acquire", "--node", "a:1", "--node", "b:2", "--node=c:3", "--resource", "r"}));
  EXPECT_EQ(acquire.node_addresses, (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  EXPECT_NE(error_of(parse({"acquire", "--node", "a:1", "--config", "f", "--resource", "r"}))
                .find("exclude each other"),
            std::string::npos);
}

TEST(CliArgs, ExtendAndReleaseNeedAValue) {
  const Invocation extend =
      invocation_of(parse({"extend", "--resource", "r", "--value", "abc", "--ttl", "9"}));
  EXPECT_EQ(extend.value, "abc");
  EXPECT_EQ(extend.ttl, milliseconds(9));
  EXPECT_NE(error_of(parse({"release", "--resource", "r"})).find("--value V is required"),
            std::string::npos);
  EXPECT_NE(error_of(parse({"extend", "--value", "v"})).find("--resource R is required"),
            std::string::npos);
}

TEST(CliArgs, StatusOptions) {
  const Invocation status = invocation_of(parse({"status"}));
  EXPECT_EQ(status.subcommand, Subcommand::status);
  EXPECT_FALSE(status.resource.has_value());
  EXPECT_FALSE(status.json);
  const Invocation detailed = invocation_of(parse({"status", "--resource", "r", "--json"}));
  EXPECT_EQ(detailed.resource, "r");
  EXPECT_TRUE(detailed.json);
}

TEST(CliArgs, CheckConfigTakesOneFile) {
  EXPECT_EQ(invocation_of(parse({"check-config", "q.toml"})).config_file, "q.toml");
  EXPECT_NE(error_of(parse({"check-config"})).find("expected the file"), std::string::npos);
  EXPECT_NE(error_of(parse({"check-config", "a", "b"})).find("unexpected argument \"b\""),
            std::string::npos);
  EXPECT_NE(error_of(parse({"check-config", "--config", "a"})).find("not an option"),
            std::string::npos);
}

TEST(CliArgs, FlagsAreCheckedPerSubcommand) {
  EXPECT_EQ(error_of(parse({"release", "--resource", "r", "--value", "v", "--ttl", "5"})),
            "--ttl is not an option of `redlock release`");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "r", "--grace", "5"})),
            "--grace is not an option of `redlock acquire`");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "r", "--json"})),
            "--json is not an option of `redlock acquire`");
  EXPECT_EQ(error_of(parse({"status", "--bogus"})), "unknown option \"--bogus\"");
  EXPECT_EQ(error_of(parse({"status", "-x"})), "unknown option \"-x\"");
}

TEST(CliArgs, DurationsAreWholeMilliseconds) {
  for (std::string_view bad : {"", "-1", "+5", "1.5", "5ms", "abc", "2147483648", " 5"}) {
    const std::string error = error_of(parse({"acquire", "--resource", "r", "--wait", bad}));
    EXPECT_NE(error.find("--wait: expected a non-negative whole number"), std::string::npos)
        << "'" << bad << "' gave: " << error;
  }
  EXPECT_NE(error_of(parse({"acquire", "--resource", "r", "--ttl", "0"}))
                .find("--ttl: expected a positive"),
            std::string::npos);
  EXPECT_EQ(invocation_of(parse({"acquire", "--resource", "r", "--ttl", "2147483647"})).ttl,
            milliseconds(2147483647));
}

TEST(CliArgs, RepeatedAndMissingValues) {
  EXPECT_EQ(error_of(parse({"status", "--resource", "a", "--resource", "b"})),
            "--resource given more than once");
  EXPECT_EQ(error_of(parse({"acquire", "--semaphore", "a", "--semaphore", "b", "--permits", "2"})),
            "--semaphore given more than once");
  EXPECT_EQ(error_of(parse({"acquire", "--resource"})), "--resource: expected a value after it");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", ""})),
            "--resource: expected a non-empty value");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "r", "--fenced=yes"})),
            "--fenced takes no value");
}

TEST(CliArgs, SeveralResourcesMakeOneLockInTheOrderGiven) {
  for (std::string_view subcommand : {"run", "acquire", "extend", "release"}) {
    std::vector<std::string_view> arguments{subcommand,     "--resource", "b",
                                            "--resource=a", "--resource", "c"};
    if (subcommand == "extend" || subcommand == "release") {
      arguments.insert(arguments.end(), {"--value", "v"});
    }
    if (subcommand == "run") arguments.insert(arguments.end(), {"--", "true"});
    const Invocation invocation = invocation_of(parse(arguments));
    EXPECT_EQ(invocation.resource, "b") << subcommand;
    EXPECT_EQ(invocation.resources, (std::vector<std::string>{"b", "a", "c"})) << subcommand;
  }
  const Invocation one = invocation_of(parse({"acquire", "--resource", "r"}));
  EXPECT_EQ(one.resources, (std::vector<std::string>{"r"}));
  EXPECT_EQ(invocation_of(parse({"status", "--resource", "r"})).resources,
            (std::vector<std::string>{"r"}));
}

TEST(CliArgs, SeveralResourcesMustBeDistinctAndAtMost64) {
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "a", "--resource", "b", "--resource", "a"})),
            "--resource \"a\" given twice: each resource is locked once");
  std::vector<std::string> names;
  for (int i = 0; i < 65; ++i) names.push_back("r" + std::to_string(i));
  std::vector<std::string_view> arguments{"acquire"};
  for (std::size_t i = 0; i < 64; ++i) arguments.insert(arguments.end(), {"--resource", names[i]});
  EXPECT_EQ(invocation_of(parse(arguments)).resources.size(), 64U);
  arguments.insert(arguments.end(), {"--resource", names[64]});
  EXPECT_EQ(error_of(parse(arguments)),
            "--resource given more than 64 times: one lock holds at most 64 resources");
}

TEST(CliArgs, SemaphoreOptions) {
  const Invocation run = invocation_of(
      parse({"run", "--semaphore", "llm-keys", "--permits", "10", "--", "./task.sh"}));
  EXPECT_EQ(run.semaphore, "llm-keys");
  EXPECT_EQ(run.permits, 10U);
  EXPECT_FALSE(run.resource.has_value());
  EXPECT_TRUE(run.resources.empty());
  EXPECT_FALSE(run.permit.has_value());
  const Invocation acquire =
      invocation_of(parse({"acquire", "--semaphore=s", "--permits=1024", "--fenced"}));
  EXPECT_EQ(acquire.permits, 1024U);
  const Invocation extend = invocation_of(
      parse({"extend", "--semaphore", "s", "--permit", "3", "--permits", "4", "--value", "v"}));
  EXPECT_EQ(extend.permit, 3U);
  EXPECT_EQ(extend.permits, 4U);
  // Releasing a permit needs no count.
  const Invocation release =
      invocation_of(parse({"release", "--semaphore", "s", "--permit", "1023", "--value", "v"}));
  EXPECT_EQ(release.permit, 1023U);
  EXPECT_FALSE(release.permits.has_value());
}

TEST(CliArgs, SemaphoreUsageErrors) {
  const auto error = [](std::vector<std::string_view> arguments) {
    return error_of(parse(arguments));
  };
  EXPECT_NE(error({"acquire", "--semaphore", "s", "--resource", "r", "--permits", "2"})
                .find("--semaphore and --resource exclude each other"),
            std::string::npos);
  EXPECT_NE(error({"run", "--resource", "r", "--semaphore", "s", "--permits", "2", "--", "true"})
                .find("--semaphore and --resource exclude each other"),
            std::string::npos);
  EXPECT_EQ(error({"acquire", "--resource", "r", "--permits", "2"}),
            "--permits K is the count of a semaphore: it needs --semaphore S");
  EXPECT_EQ(error({"release", "--resource", "r", "--permit", "0", "--value", "v"}),
            "--permit I names a permit of a semaphore: it needs --semaphore S");
  EXPECT_NE(error({"acquire", "--semaphore", "s"}).find("--semaphore S needs --permits K"),
            std::string::npos);
  EXPECT_NE(error({"run", "--semaphore", "s", "--", "true"}).find("needs --permits K"),
            std::string::npos);
  EXPECT_NE(error({"extend", "--semaphore", "s", "--permit", "0", "--value", "v"})
                .find("--semaphore S needs --permits K to extend"),
            std::string::npos);
  EXPECT_NE(
      error({"release", "--semaphore", "s", "--value", "v"}).find("--semaphore S needs --permit I"),
      std::string::npos);
  for (std::string_view subcommand : {"acquire", "run"}) {
    std::vector<std::string_view> arguments{subcommand, "--semaphore", "s", "--permits",
                                            "2",        "--permit",    "1"};
    if (subcommand == "run") arguments.insert(arguments.end(), {"--", "true"});
    EXPECT_EQ(error(arguments), "--permit is not an option of `redlock " + std::string(subcommand) +
                                    "`: the nodes choose which permit is free (--permits K "
                                    "gives the count)");
  }
  EXPECT_EQ(
      error({"release", "--semaphore", "s", "--permit", "2", "--permits", "2", "--value", "v"}),
      "--permit 2 is not a permit of a 2-permit semaphore (its permits are 0 to 1)");
  for (std::string_view bad : {"0", "1025", "-1", "+2", "2.0", "", "4294967297", "ten"}) {
    EXPECT_EQ(error({"acquire", "--semaphore", "s", "--permits", bad}),
              "--permits: expected a whole number from 1 to 1024, got \"" + std::string(bad) + "\"")
        << bad;
  }
  EXPECT_EQ(error({"release", "--semaphore", "s", "--permit", "1024", "--value", "v"}),
            "--permit: expected a whole number from 0 to 1023, got \"1024\"");
  EXPECT_EQ(error({"status", "--semaphore", "s"}),
            "--semaphore is not an option of `redlock status`");
  EXPECT_EQ(error({"acquire", "--semaphore", ""}), "--semaphore: expected a non-empty value");
}

TEST(CliArgs, ResourceNamesAreAnyBytes) {
  const std::string_view name("quote\" back\\ nl\n \xff\xfe \xc3\xa9");
  EXPECT_EQ(invocation_of(parse({"acquire", "--resource", name})).resource, std::string(name));
}

TEST(CliArgs, HelpAndVersion) {
  EXPECT_TRUE(std::holds_alternative<HelpRequest>(parse({"--help"})));
  EXPECT_TRUE(std::holds_alternative<HelpRequest>(parse({"-h"})));
  EXPECT_TRUE(std::holds_alternative<VersionRequest>(parse({"--version"})));
  const auto help = parse({"help", "extend"});
  ASSERT_TRUE(std::holds_alternative<HelpRequest>(help));
  EXPECT_EQ(std::get<HelpRequest>(help).subcommand, Subcommand::extend);
  // --help wins over mistakes elsewhere on the line.
  for (std::string_view subcommand :
       {"run", "acquire", "extend", "release", "status", "inspect", "check-config"}) {
    const auto result = parse({subcommand, "--bogus", "--help"});
    ASSERT_TRUE(std::holds_alternative<HelpRequest>(result)) << subcommand;
    const auto asked = std::get<HelpRequest>(result).subcommand;
    ASSERT_TRUE(asked.has_value());
    EXPECT_EQ(name_of(*asked), subcommand);
    EXPECT_NE(help_text(asked).find("usage: redlock " + std::string(subcommand)),
              std::string_view::npos);
  }
}

TEST(CliArgs, InspectTakesOneResourceOrOneSemaphore) {
  const Invocation resource = invocation_of(parse({"inspect", "--node", "a:1", "--resource", "r"}));
  EXPECT_EQ(resource.subcommand, Subcommand::inspect);
  EXPECT_EQ(resource.resource, "r");
  EXPECT_FALSE(resource.semaphore.has_value());
  const Invocation counted = invocation_of(parse({"inspect", "--semaphore", "s", "--permits=7"}));
  EXPECT_EQ(counted.semaphore, "s");
  EXPECT_EQ(counted.permits, 7U);
  EXPECT_FALSE(invocation_of(parse({"inspect", "--semaphore", "s"})).permits.has_value());

  EXPECT_NE(error_of(parse({"inspect"})).find("--resource R or --semaphore S is required"),
            std::string::npos);
  EXPECT_NE(error_of(parse({"inspect", "--resource", "r", "--semaphore", "s"}))
                .find("--semaphore and --resource exclude each other"),
            std::string::npos);
  EXPECT_NE(error_of(parse({"inspect", "--resource", "r", "--permits", "3"}))
                .find("--permits K is the count of a semaphore"),
            std::string::npos);
  EXPECT_NE(
      error_of(parse({"inspect", "--semaphore", "s", "--permits", "1025"})).find("from 1 to 1024"),
      std::string::npos);
  for (std::string_view flag : {"--permit", "--value", "--ttl", "--wait", "--json"}) {
    EXPECT_NE(error_of(parse({"inspect", "--semaphore", "s", flag, "1"}))
                  .find(std::string(flag) + " is not an option of `redlock inspect`"),
              std::string::npos)
        << flag;
  }
}

TEST(CliArgs, UnknownSubcommands) {
  EXPECT_NE(error_of(parse({})).find("expected a subcommand"), std::string::npos);
  EXPECT_EQ(error_of(parse({"lock"})), "unknown subcommand \"lock\"");
  EXPECT_EQ(error_of(parse({"--bogus"})), "unknown option \"--bogus\"");
  EXPECT_EQ(error_of(parse({"help", "nope"})), "help: unknown subcommand \"nope\"");
}

TEST(CliArgs, ErrorsNameTheirSubcommand) {
  const auto result = parse({"extend", "--resource", "r"});
  ASSERT_TRUE(std::holds_alternative<UsageError>(result));
  EXPECT_EQ(std::get<UsageError>(result).subcommand, Subcommand::extend);
}

TEST(Printable, QuotesAndEscapesForOneTerminalLine) {
  EXPECT_EQ(printable("plain"), "\"plain\"");
  EXPECT_EQ(printable("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(printable("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(printable("\x1b[31m"), "\"\\x1b[31m\"");
  EXPECT_EQ(printable("\x7f"), "\"\\x7f\"");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");
  EXPECT_EQ(printable("\xff\xc3"), "\"\\xff\\xc3\"");
  EXPECT_EQ(printable(std::string_view("a\0b", 3)), "\"a\\x00b\"");
}

}  // namespace
}  // namespace redlock::cli
