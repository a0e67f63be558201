// The subcommands. Each returns the process exit code; each prints its
// result on stdout and its errors on stderr (see report.hpp).
#pragma once

#include "cli_args.hpp"

namespace redlock::cli {

[[nodiscard]] int run_command(const Invocation& invocation);
[[nodiscard]] int acquire_command(const Invocation& invocation);
[[nodiscard]] int extend_command(const Invocation& invocation);
[[nodiscard]] int release_command(const Invocation& invocation);
[[nodiscard]] int status_command(const Invocation& invocation);
[[nodiscard]] int inspect_command(const Invocation& invocation);
// `redlock leader` (leader_command.cpp); `campaign` is run_command's.
[[nodiscard]] int leader_command(const Invocation& invocation);
[[nodiscard]] int check_config_command(const Invocation& invocation);
[[nodiscard]] int init_command(const Invocation& invocation);

}  // namespace redlock::cli
