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
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "a", "--resource", "b"})),
            "--resource given more than once");
  EXPECT_EQ(error_of(parse({"acquire", "--resource"})), "--resource: expected a value after it");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", ""})),
            "--resource: expected a non-empty value");
  EXPECT_EQ(error_of(parse({"acquire", "--resource", "r", "--fenced=yes"})),
            "--fenced takes no value");
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
       {"run", "acquire", "extend", "release", "status", "check-config"}) {
    const auto result = parse({subcommand, "--bogus", "--help"});
    ASSERT_TRUE(std::holds_alternative<HelpRequest>(result)) << subcommand;
    const auto asked = std::get<HelpRequest>(result).subcommand;
    ASSERT_TRUE(asked.has_value());
    EXPECT_EQ(name_of(*asked), subcommand);
    EXPECT_NE(help_text(asked).find("usage: redlock " + std::string(subcommand)),
              std::string_view::npos);
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
