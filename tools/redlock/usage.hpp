// The help texts of `redlock` and its subcommands.
#pragma once

#include <optional>
#include <string_view>

#include "cli_args.hpp"

namespace redlock::cli {

// The overview (`redlock --help`) or one subcommand's help, ending in '\n'.
[[nodiscard]] std::string_view help_text(std::optional<Subcommand> subcommand) noexcept;

}  // namespace redlock::cli
