// redlock: the command-line face of the library (docs/cli.md).
#include <cstdio>
#include <string_view>
#include <variant>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "report.hpp"
#include "signal_channel.hpp"
#include "usage.hpp"

#ifndef REDLOCK_CLI_VERSION
#define REDLOCK_CLI_VERSION "unknown"
#endif

namespace redlock::cli {
namespace {

int dispatch(const Invocation& invocation) {
  switch (invocation.subcommand) {
    case Subcommand::run:
      return run_command(invocation);
    case Subcommand::acquire:
      return acquire_command(invocation);
    case Subcommand::extend:
      return extend_command(invocation);
    case Subcommand::release:
      return release_command(invocation);
    case Subcommand::status:
      return status_command(invocation);
    case Subcommand::inspect:
      return inspect_command(invocation);
    case Subcommand::campaign:
      return run_command(invocation);
    case Subcommand::leader:
      return leader_command(invocation);
    case Subcommand::check_config:
      return check_config_command(invocation);
    case Subcommand::init:
      return init_command(invocation);
  }
  return exit_code::usage;
}

int main_with(const std::vector<std::string_view>& arguments) {
  const ParseResult parsed = parse_arguments(arguments);
  if (const auto* help = std::get_if<HelpRequest>(&parsed)) {
    std::fputs(std::string(help_text(help->subcommand)).c_str(), stdout);
    return exit_code::success;
  }
  if (std::holds_alternative<VersionRequest>(parsed)) {
    std::puts("redlock " REDLOCK_CLI_VERSION);
    return exit_code::success;
  }
  if (const auto* error = std::get_if<UsageError>(&parsed)) {
    const std::string where =
        error->subcommand ? std::string(name_of(*error->subcommand)) + ": " : std::string();
    const std::string help = error->subcommand
                                 ? "redlock " + std::string(name_of(*error->subcommand)) + " --help"
                                 : std::string("redlock --help");
    print_error(where + error->message + " (see `" + help + "`)");
    return exit_code::usage;
  }
  return dispatch(std::get<Invocation>(parsed));
}

}  // namespace
}  // namespace redlock::cli

int main(int argc, char** argv) {
  using namespace redlock::cli;
  // Before anything else, and before any thread exists (see the function).
  ignore_sigpipe();
  try {
    const std::vector<std::string_view> arguments(argv + (argc > 0 ? 1 : 0), argv + argc);
    return main_with(arguments);
  } catch (const std::exception& error) {
    print_error(std::string("internal error: ") + error.what());
    return exit_code::internal_error;
  }
}
