#include "cli_args.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <csignal>
#include <cstring>  // sigabbrev_np
#include <initializer_list>

#include "redlock/election.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

enum class Flag {
  config,
  node,
  resource,
  semaphore,
  permits,
  permit,
  value,
  ttl,
  wait,
  grace,
  at_risk_signal,
  fenced,
  shared,
  fair,
  name,
  payload,
  json,
  help
};

struct FlagSpec {
  std::string_view name;
  Flag flag;
  bool takes_value;
};

constexpr std::array<FlagSpec, 18> kFlags{{
    {"--config", Flag::config, true},
    {"--node", Flag::node, true},
    {"--resource", Flag::resource, true},
    {"--semaphore", Flag::semaphore, true},
    {"--permits", Flag::permits, true},
    {"--permit", Flag::permit, true},
    {"--value", Flag::value, true},
    {"--ttl", Flag::ttl, true},
    {"--wait", Flag::wait, true},
    {"--grace", Flag::grace, true},
    {"--at-risk-signal", Flag::at_risk_signal, true},
    {"--fenced", Flag::fenced, false},
    {"--shared", Flag::shared, false},
    {"--fair", Flag::fair, false},
    {"--name", Flag::name, true},
    {"--payload", Flag::payload, true},
    {"--json", Flag::json, false},
    {"--help", Flag::help, false},
}};

struct SubcommandSpec {
  std::string_view name;
  Subcommand subcommand;
  std::initializer_list<Flag> flags;
};

// Which flags each subcommand accepts (--help is accepted by all).
const std::array<SubcommandSpec, 10>& subcommand_specs() {
  static const std::array<SubcommandSpec, 10> specs{{
      {"run",
       Subcommand::run,
       {Flag::config, Flag::node, Flag::resource, Flag::semaphore, Flag::permits, Flag::ttl,
        Flag::wait, Flag::fenced, Flag::shared, Flag::fair, Flag::grace, Flag::at_risk_signal}},
      {"acquire",
       Subcommand::acquire,
       {Flag::config, Flag::node, Flag::resource, Flag::semaphore, Flag::permits, Flag::ttl,
        Flag::wait, Flag::fenced, Flag::shared, Flag::fair}},
      {"extend",
       Subcommand::extend,
       {Flag::config, Flag::node, Flag::resource, Flag::semaphore, Flag::permits, Flag::permit,
        Flag::value, Flag::ttl, Flag::shared}},
      {"release",
       Subcommand::release,
       {Flag::config, Flag::node, Flag::resource, Flag::semaphore, Flag::permits, Flag::permit,
        Flag::value, Flag::shared}},
      {"status", Subcommand::status, {Flag::config, Flag::node, Flag::resource, Flag::json}},
      {"inspect",
       Subcommand::inspect,
       {Flag::config, Flag::node, Flag::resource, Flag::semaphore, Flag::permits}},
      {"campaign",
       Subcommand::campaign,
       {Flag::config, Flag::node, Flag::name, Flag::payload, Flag::ttl, Flag::wait, Flag::grace,
        Flag::at_risk_signal}},
      {"leader", Subcommand::leader, {Flag::config, Flag::node, Flag::name}},
      {"check-config", Subcommand::check_config, {}},
      {"init", Subcommand::init, {Flag::config, Flag::node}},
  }};
  return specs;
}

const SubcommandSpec* find_subcommand(std::string_view name) {
  for (const SubcommandSpec& spec : subcommand_specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const FlagSpec* find_flag(std::string_view name) {
  for (const FlagSpec& spec : kFlags) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool accepts(const SubcommandSpec& spec, Flag flag) {
  return flag == Flag::help ||
         std::find(spec.flags.begin(), spec.flags.end(), flag) != spec.flags.end();
}

// The subcommands that take --resource more than once: one lock over all
// the names at once.
bool takes_several_resources(Subcommand subcommand) {
  return subcommand == Subcommand::run || subcommand == Subcommand::acquire ||
         subcommand == Subcommand::extend || subcommand == Subcommand::release;
}

// "--x is not an option of `redlock s`", with a hint where the mistake is
// a likely one.
std::string not_an_option(const FlagSpec& flag, const SubcommandSpec& spec) {
  std::string message =
      std::string(flag.name) + " is not an option of `redlock " + std::string(spec.name) + "`";
  if (flag.flag == Flag::permit &&
      (spec.subcommand == Subcommand::run || spec.subcommand == Subcommand::acquire)) {
    message += ": the nodes choose which permit is free (--permits K gives the count)";
  }
  if (flag.flag == Flag::permit && spec.subcommand == Subcommand::inspect) {
    message += ": inspect shows every permit of the semaphore";
  }
  return message;
}

// A duration in whole milliseconds: decimal digits only (no sign, no unit).
std::optional<Milliseconds> parse_milliseconds(std::string_view text, long long minimum) {
  long long number = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const auto [stop, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || stop != end || number < minimum || number > kMaxMilliseconds) {
    return std::nullopt;
  }
  return Milliseconds(number);
}

// A whole number from `minimum` to `maximum`: decimal digits only.
std::optional<std::uint32_t> parse_count(std::string_view text, std::uint32_t minimum,
                                         std::uint32_t maximum) {
  std::uint32_t number = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const auto [stop, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || stop != end || number < minimum || number > maximum) {
    return std::nullopt;
  }
  return number;
}

// run and campaign take a command after their options.
bool runs_a_command(Subcommand subcommand) {
  return subcommand == Subcommand::run || subcommand == Subcommand::campaign;
}

// Collects one subcommand's options; the first error wins.
class InvocationBuilder {
 public:
  explicit InvocationBuilder(const SubcommandSpec& spec) : spec_(spec) {
    invocation_.subcommand = spec.subcommand;
  }

  [[nodiscard]] bool failed() const { return error_.has_value(); }
  [[nodiscard]] std::string error() const { return error_.value_or(""); }

  void fail(std::string message) {
    if (!error_) error_ = std::move(message);
  }

  void apply(const FlagSpec& flag, std::string_view value) {
    switch (flag.flag) {
      case Flag::config:
        set_once(invocation_.config_path, flag, non_empty(flag, value));
        break;
      case Flag::node:
        invocation_.node_addresses.push_back(non_empty(flag, value));
        break;
      case Flag::resource:
        add_resource(flag, non_empty(flag, value));
        break;
      case Flag::semaphore:
        set_once(invocation_.semaphore, flag, non_empty(flag, value));
        break;
      case Flag::permits:
        set_once(invocation_.permits, flag, count(flag, value, 1, Semaphore::kMaxPermits));
        break;
      case Flag::permit:
        set_once(invocation_.permit, flag, count(flag, value, 0, Semaphore::kMaxPermits - 1));
        break;
      case Flag::value:
        set_once(invocation_.value, flag, non_empty(flag, value));
        break;
      case Flag::ttl:
        set_once(invocation_.ttl, flag, duration(flag, value, 1));
        break;
      case Flag::wait:
        set_once(invocation_.wait, flag, duration(flag, value, 0));
        break;
      case Flag::grace:
        set_once(invocation_.grace, flag, duration(flag, value, 0));
        break;
      case Flag::at_risk_signal:
        set_once(invocation_.at_risk_signal, flag, signal_number(flag, value));
        break;
      case Flag::fenced:
        invocation_.fenced = true;
        break;
      case Flag::shared:
        invocation_.shared = true;
        break;
      case Flag::fair:
        invocation_.fair = true;
        break;
      case Flag::name:
        set_once(invocation_.name, flag, non_empty(flag, value));
        break;
      case Flag::payload:
        if (value.size() > Election::kMaxPayloadBytes) {
          fail("--payload: at most " + std::to_string(Election::kMaxPayloadBytes) + " bytes");
          break;
        }
        set_once(invocation_.payload, flag, std::string(value));
        break;
      case Flag::json:
        invocation_.json = true;
        break;
      case Flag::help:
        break;  // handled before parsing
    }
  }

  void positional(std::string_view argument) {
    if (spec_.subcommand == Subcommand::check_config && invocation_.config_file.empty()) {
      if (argument.empty()) {
        fail("expected a file name, got an empty argument");
      } else {
        invocation_.config_file = std::string(argument);
      }
      return;
    }
    fail("unexpected argument " + printable(argument));
  }

  void add_command_word(std::string_view word) { invocation_.command.emplace_back(word); }

  // The rules between options, checked once every argument was read.
  Invocation finish() {
    switch (spec_.subcommand) {
      case Subcommand::run:
      case Subcommand::acquire:
        check_lock_kind();
        break;
      case Subcommand::extend:
      case Subcommand::release:
        check_lock_kind();
        require(invocation_.value.has_value(),
                "--value V is required (the value printed by `redlock acquire`)");
        break;
      case Subcommand::status:
      case Subcommand::init:
        break;
      case Subcommand::inspect:
        check_inspected();
        break;
      case Subcommand::campaign:
      case Subcommand::leader:
        require(invocation_.name.has_value(), "--name N is required (the election)");
        break;
      case Subcommand::check_config:
        require(!invocation_.config_file.empty(), "expected the file to check: check-config FILE");
        break;
    }
    if (runs_a_command(spec_.subcommand)) {
      require(!invocation_.command.empty(), "expected a command to run: -- CMD [ARGS...]");
    }
    require(!(invocation_.config_path && !invocation_.node_addresses.empty()),
            "--config and --node exclude each other: name the nodes in one place");
    return std::move(invocation_);
  }

 private:
  void require(bool condition, std::string_view message) {
    if (!condition) fail(std::string(message));
  }

  // --resource (once, or several times where one lock takes several).
  void add_resource(const FlagSpec& flag, std::string name) {
    if (!takes_several_resources(spec_.subcommand)) {
      set_once(invocation_.resource, flag, std::move(name));
      if (invocation_.resource) invocation_.resources = {*invocation_.resource};
      return;
    }
    if (std::find(invocation_.resources.begin(), invocation_.resources.end(), name) !=
        invocation_.resources.end()) {
      fail("--resource " + printable(name) + " given twice: each resource is locked once");
      return;
    }
    if (invocation_.resources.size() == kMaxResources) {
      fail("--resource given more than " + std::to_string(kMaxResources) +
           " times: one lock holds at most " + std::to_string(kMaxResources) + " resources");
      return;
    }
    if (!invocation_.resource) invocation_.resource = name;
    invocation_.resources.push_back(std::move(name));
  }

  // Which lock run, acquire, extend and release name: resources, or one
  // permit of a semaphore, with the options each needs.
  void check_lock_kind() {
    const bool semaphore = invocation_.semaphore.has_value();
    const bool is_run = spec_.subcommand == Subcommand::run;
    const bool names_a_held_lock =
        spec_.subcommand == Subcommand::extend || spec_.subcommand == Subcommand::release;
    require(!(semaphore && invocation_.resource),
            "--semaphore and --resource exclude each other: a lock is either one permit of a "
            "semaphore or a lock on resources");
    require(semaphore || !invocation_.permits,
            "--permits K is the count of a semaphore: it needs --semaphore S");
    require(semaphore || !invocation_.permit,
            "--permit I names a permit of a semaphore: it needs --semaphore S");
    require(semaphore || invocation_.resource,
            is_run || spec_.subcommand == Subcommand::acquire
                ? "--resource R is required (or --semaphore S --permits K)"
                : "--resource R is required (or --semaphore S --permit I)");
    require(!(invocation_.shared && semaphore),
            "--shared takes the read side of a resource's read-write lock: it needs --resource R, "
            "not --semaphore");
    require(!invocation_.shared || invocation_.resources.size() <= 1,
            "--shared takes the read side of one resource: give --resource once");
    require(!invocation_.fair || (!semaphore && invocation_.resources.size() <= 1),
            "--fair waits in line for one resource: give --resource once, without --semaphore");
    require(!(invocation_.fair && invocation_.shared),
            "--fair and --shared exclude each other: a fair lock is exclusive");
    if (!semaphore) return;
    if (names_a_held_lock) {
      require(invocation_.permit.has_value(),
              "--semaphore S needs --permit I (the permit printed by `redlock acquire`)");
    }
    if (spec_.subcommand != Subcommand::release) {
      require(invocation_.permits.has_value(),
              spec_.subcommand == Subcommand::extend
                  ? "--semaphore S needs --permits K to extend: the nodes keep the count "
                    "recorded for S, and extend records it where it is missing"
                  : "--semaphore S needs --permits K (the count every client of S names)");
    }
    if (invocation_.permit && invocation_.permits && *invocation_.permit >= *invocation_.permits) {
      fail("--permit " + std::to_string(*invocation_.permit) + " is not a permit of a " +
           std::to_string(*invocation_.permits) + "-permit semaphore (its permits are 0 to " +
           std::to_string(*invocation_.permits - 1) + ")");
    }
  }

  // inspect looks at one lock: a resource, or a semaphore's permits.
  void check_inspected() {
    const bool semaphore = invocation_.semaphore.has_value();
    require(!(semaphore && invocation_.resource),
            "--semaphore and --resource exclude each other: inspect one resource or one "
            "semaphore");
    require(semaphore || !invocation_.permits,
            "--permits K is the count of a semaphore: it needs --semaphore S");
    require(semaphore || invocation_.resource, "--resource R or --semaphore S is required");
  }

  std::uint32_t count(const FlagSpec& flag, std::string_view value, std::uint32_t minimum,
                      std::uint32_t maximum) {
    const std::optional<std::uint32_t> parsed = parse_count(value, minimum, maximum);
    if (!parsed) {
      fail(std::string(flag.name) + ": expected a whole number from " + std::to_string(minimum) +
           " to " + std::to_string(maximum) + ", got " + printable(value));
      return 0;
    }
    return *parsed;
  }

  std::string non_empty(const FlagSpec& flag, std::string_view value) {
    if (value.empty()) fail(std::string(flag.name) + ": expected a non-empty value");
    return std::string(value);
  }

  // A signal by name (USR1, SIGUSR1, RTMIN+1 as sigabbrev_np spells it)
  // or number.
  int signal_number(const FlagSpec& flag, std::string_view value) {
    std::string_view name = value;
    if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
    int number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error == std::errc{} && end == value.data() + value.size() && number > 0 &&
        number <= SIGRTMAX) {
      return number;
    }
    for (int candidate = 1; candidate <= SIGRTMAX; ++candidate) {
      const char* abbreviation = sigabbrev_np(candidate);
      if (abbreviation != nullptr && name == abbreviation) return candidate;
    }
    fail(std::string(flag.name) +
         ": expected a signal name (USR1, SIGUSR1, TERM ...) or number, not " + printable(value));
    return 0;
  }

  Milliseconds duration(const FlagSpec& flag, std::string_view value, long long minimum) {
    const std::optional<Milliseconds> parsed = parse_milliseconds(value, minimum);
    if (!parsed) {
      fail(std::string(flag.name) + ": expected " +
           (minimum > 0 ? "a positive" : "a non-negative") +
           " whole number of milliseconds (at most " + std::to_string(kMaxMilliseconds) +
           "), got " + printable(value));
      return Milliseconds(0);
    }
    return *parsed;
  }

  template <typename T, typename V>
  void set_once(std::optional<T>& field, const FlagSpec& flag, V value) {
    if (field) {
      fail(std::string(flag.name) + " given more than once");
      return;
    }
    field = std::move(value);
  }

  const SubcommandSpec& spec_;
  Invocation invocation_;
  std::optional<std::string> error_;
};

bool is_help(std::string_view argument) { return argument == "--help" || argument == "-h"; }

// The arguments are read in order and the first mistake is the one
// reported. CLI11 (2.1) does not keep this contract: it collects every
// option before anything is checked, so which of an unknown option and a
// bad value came first is lost; it reads `--ttl= --resource r` as a TTL of
// "--resource"; it accepts `--fenced=true` on a flag; and its errors
// name the option only inside English text.
ParseResult parse_subcommand(const SubcommandSpec& spec,
                             std::span<const std::string_view> arguments) {
  const bool is_run = runs_a_command(spec.subcommand);
  // --help wins over every other mistake; for run only before the command.
  for (std::string_view argument : arguments) {
    if (is_run && argument == "--") break;
    if (is_help(argument)) return HelpRequest{spec.subcommand};
  }

  InvocationBuilder builder(spec);
  std::size_t index = 0;
  while (index < arguments.size() && !builder.failed()) {
    const std::string_view argument = arguments[index++];
    if (is_run && argument == "--") {
      for (; index < arguments.size(); ++index) builder.add_command_word(arguments[index]);
      break;
    }
    if (argument.size() < 2 || argument.front() != '-') {
      if (is_run) {
        builder.add_command_word(argument);
        for (; index < arguments.size(); ++index) builder.add_command_word(arguments[index]);
        break;
      }
      builder.positional(argument);
      continue;
    }
    const std::size_t equals = argument.find('=');
    const std::string_view name = argument.substr(0, equals);
    const FlagSpec* flag = find_flag(name);
    if (flag == nullptr) {
      builder.fail("unknown option " + printable(name));
      break;
    }
    if (!accepts(spec, flag->flag)) {
      builder.fail(not_an_option(*flag, spec));
      break;
    }
    if (!flag->takes_value) {
      if (equals != std::string_view::npos) {
        builder.fail(std::string(flag->name) + " takes no value");
        break;
      }
      builder.apply(*flag, {});
      continue;
    }
    if (equals != std::string_view::npos) {
      builder.apply(*flag, argument.substr(equals + 1));
    } else if (index < arguments.size()) {
      builder.apply(*flag, arguments[index++]);
    } else {
      builder.fail(std::string(flag->name) + ": expected a value after it");
    }
  }
  if (builder.failed()) return UsageError{spec.subcommand, builder.error()};
  Invocation invocation = builder.finish();
  if (builder.failed()) return UsageError{spec.subcommand, builder.error()};
  return invocation;
}

}  // namespace

std::string_view name_of(Subcommand subcommand) noexcept {
  for (const SubcommandSpec& spec : subcommand_specs()) {
    if (spec.subcommand == subcommand) return spec.name;
  }
  return "?";
}

ParseResult parse_arguments(std::span<const std::string_view> arguments) {
  if (arguments.empty()) {
    return UsageError{std::nullopt,
                      "expected a subcommand: run, acquire, extend, release, "
                      "status, inspect, campaign, leader, check-config or init"};
  }
  const std::string_view first = arguments.front();
  if (is_help(first)) return HelpRequest{};
  if (first == "--version") return VersionRequest{};
  if (first == "help") {
    if (arguments.size() == 1) return HelpRequest{};
    if (const SubcommandSpec* spec = find_subcommand(arguments[1])) {
      return HelpRequest{spec->subcommand};
    }
    return UsageError{std::nullopt, "help: unknown subcommand " + printable(arguments[1])};
  }
  const SubcommandSpec* spec = find_subcommand(first);
  if (spec == nullptr) {
    return UsageError{
        std::nullopt,
        (first.starts_with("-") ? "unknown option " : "unknown subcommand ") + printable(first)};
  }
  return parse_subcommand(*spec, arguments.subspan(1));
}

std::string printable(std::string_view text) {
  return detail::escape_text(text, detail::Quoting::double_quotes);
}

}  // namespace redlock::cli
