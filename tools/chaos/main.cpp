// redlock-chaos: runs chaos scenarios against real nodes, checks the
// histories, writes reports (docs/chaos.md).
//
//   redlock-chaos run SCENARIO.toml... [options]
//   redlock-chaos catalog [DIR] [options]
//   redlock-chaos check HISTORY.jsonl... [--scenario FILE] [--variant V] [--report FILE]
//
// Exit status: 0 when every run met its expectations, 1 when one did not,
// 2 on a usage or scenario-file error.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report.hpp"
#include "runner.hpp"
#include "scenario.hpp"
#include "worker.hpp"

#ifndef REDLOCK_CHAOS_SOURCE_CATALOG
#define REDLOCK_CHAOS_SOURCE_CATALOG ""
#endif
#ifndef REDLOCK_CHAOS_VERSION
#define REDLOCK_CHAOS_VERSION "unknown"
#endif

namespace redlock::chaos {
namespace {

constexpr const char* kUsage = R"(usage:
  redlock-chaos run SCENARIO.toml... [options]   run scenario files
  redlock-chaos catalog [DIR] [options]          run every scenario in DIR
                                                 (default: the catalog)
  redlock-chaos check HISTORY.jsonl... [--scenario FILE] [--variant fenced|unfenced]
                      [--report FILE]            re-check a recorded history

options:
  --seed N              seed of the first run (default 1)
  --seeds K             run each scenario with seeds N..N+K-1 (default 1)
  --duration D          workload length per run, e.g. 30s, 2m, 1500ms (default:
                        the scenario's); the nemesis schedule repeats
  --out DIR             where reports and histories go (default ./chaos-out)
  --variant V           only this variant: fenced or unfenced
  --filter TEXT         catalog: only scenarios whose name contains TEXT
  --clock C             how node clock faults act: emulated (default; on the
                        lock keys) or faketime (the nodes' wall clocks, under
                        libfaketime)
  --tls                 the clients reach the nodes over TLS, whatever the
                        scenario's [nodes] tls says (scenarios with cluster
                        members are skipped)
  --mode M              both (default): fail on an unexpected violation and on
                        an expected one that did not appear; regression: only
                        the first; demonstration: only the second
  -h, --help            this text
  --version             the version

exit status: 0 all runs met their expectations, 1 some did not, 2 usage error
)";

enum class Mode { both, regression, demonstration };

struct Options {
  std::string command;
  std::vector<std::string> positional;
  std::uint64_t seed = 1;
  int seeds = 1;
  std::optional<Milliseconds> duration;
  std::filesystem::path out = "chaos-out";
  std::optional<Variant> variant;
  std::string filter;
  Mode mode = Mode::both;
  ClockMode clock = ClockMode::emulated;
  std::filesystem::path scenario_file;
  std::filesystem::path report;
  bool tls = false;
};

std::optional<Milliseconds> parse_duration(std::string_view text) {
  long long number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || number <= 0) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (unit.empty() || unit == "ms") return Milliseconds(number);
  if (unit == "s") return Milliseconds(number * 1000);
  if (unit == "m") return Milliseconds(number * 60'000);
  return std::nullopt;
}

bool usage_error(const std::string& message) {
  std::fprintf(stderr, "redlock-chaos: %s\n%s", message.c_str(), kUsage);
  return false;
}

bool parse_options(int argc, char** argv, Options& options) {
  if (argc < 2) return usage_error("missing command");
  options.command = argv[1];
  // Before any command as well, so `redlock-chaos --help` and `--version`
  // answer as other tools do (help2man reads both for the manual page).
  if (options.command == "-h" || options.command == "--help") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  if (options.command == "--version") {
    std::puts("redlock-chaos " REDLOCK_CHAOS_VERSION);
    std::exit(0);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string_view text;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--seed" || arg == "--seeds") {
      long long number = 0;
      if (!value(text) ||
          std::from_chars(text.data(), text.data() + text.size(), number).ec != std::errc() ||
          number < (arg == "--seeds" ? 1 : 0)) {
        return usage_error(std::string(arg) + " needs a non-negative integer");
      }
      if (arg == "--seed") {
        options.seed = static_cast<std::uint64_t>(number);
      } else {
        options.seeds = static_cast<int>(std::min<long long>(number, 1000));
      }
    } else if (arg == "--duration") {
      if (!value(text) || !(options.duration = parse_duration(text))) {
        return usage_error("--duration needs a length such as 30s, 2m or 1500ms");
      }
    } else if (arg == "--out") {
      if (!value(text)) return usage_error("--out needs a directory");
      options.out = text;
    } else if (arg == "--variant") {
      if (!value(text) || (text != "fenced" && text != "unfenced")) {
        return usage_error("--variant needs fenced or unfenced");
      }
      options.variant = text == "fenced" ? Variant::fenced : Variant::unfenced;
    } else if (arg == "--filter") {
      if (!value(text)) return usage_error("--filter needs a text");
      options.filter = text;
    } else if (arg == "--mode") {
      if (!value(text)) return usage_error("--mode needs both, regression or demonstration");
      if (text == "both") {
        options.mode = Mode::both;
      } else if (text == "regression") {
        options.mode = Mode::regression;
      } else if (text == "demonstration") {
        options.mode = Mode::demonstration;
      } else {
        return usage_error("--mode needs both, regression or demonstration");
      }
    } else if (arg == "--tls") {
      options.tls = true;
    } else if (arg == "--clock") {
      std::optional<ClockMode> mode;
      if (!value(text) || !(mode = clock_mode_from(text))) {
        return usage_error("--clock needs emulated or faketime");
      }
      options.clock = *mode;
    } else if (arg == "--scenario") {
      if (!value(text)) return usage_error("--scenario needs a file");
      options.scenario_file = text;
    } else if (arg == "--report") {
      if (!value(text)) return usage_error("--report needs a file");
      options.report = text;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option " + std::string(arg));
    } else {
      options.positional.emplace_back(arg);
    }
  }
  return true;
}

// $REDLOCK_CHAOS_CATALOG, ./tests/chaos/scenarios (a source tree), the
// source tree this binary was built from, or the installed copy next to the
// binary (<prefix>/share/redlock/chaos-scenarios for <prefix>/bin).
std::filesystem::path default_catalog(const std::filesystem::path& self) {
  if (const char* env = std::getenv("REDLOCK_CHAOS_CATALOG"); env != nullptr && *env != 0) {
    return env;
  }
  const std::filesystem::path installed =
      self.parent_path().parent_path() / "share" / "redlock" / "chaos-scenarios";
  for (const std::filesystem::path& candidate :
       {std::filesystem::path("tests/chaos/scenarios"),
        std::filesystem::path(REDLOCK_CHAOS_SOURCE_CATALOG), installed}) {
    std::error_code error;
    if (!candidate.empty() && std::filesystem::is_directory(candidate, error)) return candidate;
  }
  return installed;
}

bool passed(const VariantOutcome& outcome, Mode mode) {
  if (!outcome.error.empty()) return false;
  const bool regression = outcome.verdicts.regression_ok;
  const bool demonstration = outcome.verdicts.demonstration_ok;
  switch (mode) {
    case Mode::regression:
      return regression;
    case Mode::demonstration:
      return demonstration;
    case Mode::both:
      return regression && demonstration;
  }
  return false;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out.empty() ? "-" : out;
}

std::string violated_list(const CheckResult& check) {
  std::vector<std::string> ids;
  for (int i = 0; i < kInvariantCount; ++i) {
    if (check.violated(i)) ids.emplace_back(invariant_id(i));
  }
  return join(ids);
}

// One line per run: the summary table.
void print_summary(const std::vector<VariantOutcome>& outcomes,
                   const std::vector<std::uint64_t>& seeds, Mode mode) {
  std::printf("\n%-34s %-9s %5s %-6s %-16s %-14s %-10s %6s %9s %6s %7s\n", "scenario", "variant",
              "seed", "result", "violated", "unexpected", "missing", "locks", "writes", "faults",
              "secs");
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const VariantOutcome& o = outcomes[i];
    const std::string writes =
        std::to_string(o.counts.writes_accepted) + "/" + std::to_string(o.counts.writes_refused);
    std::printf("%-34s %-9s %5llu %-6s %-16s %-14s %-10s %6d %9s %6d %7.1f\n", o.scenario.c_str(),
                std::string(to_string(o.variant)).c_str(),
                static_cast<unsigned long long>(seeds[i]), passed(o, mode) ? "PASS" : "FAIL",
                violated_list(o.check).c_str(), join(o.verdicts.unexpected).c_str(),
                join(o.verdicts.missing).c_str(), o.counts.acquired, writes.c_str(),
                o.counts.faults, o.seconds);
  }
  std::printf(
      "(writes: accepted/refused; unexpected: violations the scenario says must not "
      "happen; missing: expected violations that did not appear)\n");
  for (const VariantOutcome& o : outcomes) {
    if (!o.error.empty()) {
      std::printf("error: %s (%s): %s\n", o.scenario.c_str(),
                  std::string(to_string(o.variant)).c_str(), o.error.c_str());
    }
  }
  for (const VariantOutcome& o : outcomes) {
    if (!o.report.empty() && !passed(o, mode)) {
      std::printf("failed run's report: %s\n", o.report.c_str());
    }
  }
}

std::string html_escape(std::string_view text) {
  std::string out;
  append_html_escaped(out, text);
  return out;
}

// The description's first sentence (up to a ". " before a capital): the
// index's one line per scenario; the report shows it whole.
std::string first_sentence(const std::string& description) {
  for (std::size_t at = description.find(". "); at != std::string::npos;
       at = description.find(". ", at + 1)) {
    if (at + 2 < description.size() &&
        std::isupper(static_cast<unsigned char>(description[at + 2]))) {
      return description.substr(0, at + 1);
    }
  }
  return description;
}

// "C4,C8" of the invariants a scenario's variant expects `wanted` of.
std::string expected_list(const Scenario& scenario, Variant variant, Expectation wanted) {
  const auto found = scenario.expectations.find(variant);
  std::vector<std::string> ids;
  for (int i = 0; found != scenario.expectations.end() && i < kInvariantCount; ++i) {
    if (found->second.at(static_cast<std::size_t>(i)) == wanted) ids.emplace_back(invariant_id(i));
  }
  return join(ids);
}

// out/index.html: every run of this invocation with what its scenario
// shows, the violations it expects and those seen, its verdict (PASS: as
// expected) and a link to its report (relative, so the folder can be moved
// or archived).
std::filesystem::path write_index(const std::filesystem::path& out,
                                  const std::vector<VariantOutcome>& outcomes,
                                  const std::vector<const Scenario*>& scenarios,
                                  const std::vector<std::uint64_t>& seeds, Mode mode) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>redlock-chaos "
      "runs</title><style>body{font-family:sans-serif;margin:2em;color:#222}"
      "table{border-collapse:collapse;font-size:14px}td,th{padding:4px 7px;border-bottom:1px solid "
      "#ddd;"
      "text-align:left;vertical-align:top}.pass{color:#1a7f37;font-weight:bold}.fail{color:#b42318;"
      "font-weight:bold}td.description{min-width:12em;max-width:30em;color:#424a53}"
      ".id{white-space:nowrap}.runs{overflow-x:auto}"
      "</style></head><body><h1>redlock-chaos runs</h1><p class=\"legend\">Each scenario "
      "injects faults to show whether an invariant (C1-C" +
      std::to_string(kInvariantCount) +
      ", listed in each report) holds. "
      "<b>expected violated</b>: what the scenario sets out to show broken (a demonstration); "
      "<b>violated</b>: what the checker saw broken; <b>result</b>: PASS when the two agree, "
      "FAIL when an unexpected violation appeared or an expected one did not.</p>"
      // Wider than the window (long scenario names, another font), the
      // table scrolls in its box; the page keeps the window's width.
      "<div class=\"runs\"><table><tr>"
      "<th>scenario</th><th>what it shows</th><th>variant</th><th>seed</th><th>expected "
      "violated</th><th>may be violated</th><th>violated</th><th>result</th><th>unexpected</th>"
      "<th>missing</th><th>acquisitions</th><th>writes accepted/refused</th><th>report</th>"
      "</tr>\n";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const VariantOutcome& o = outcomes[i];
    const Scenario* scenario = i < scenarios.size() ? scenarios[i] : nullptr;
    const bool ok = passed(o, mode);
    std::string link = "-";
    if (!o.report.empty()) {
      std::error_code error;
      const auto relative = std::filesystem::relative(o.report, out, error);
      const std::string target = error ? o.report.string() : relative.string();
      link = "<a href=\"" + html_escape(target) + "\">report</a>";
    }
    page +=
        "<tr class=\"run\"><td class=\"scenario\">" + html_escape(o.scenario) +
        "</td><td class=\"description\" title=\"" +
        (scenario != nullptr ? html_escape(scenario->description) : std::string()) + "\">" +
        (scenario != nullptr ? html_escape(first_sentence(scenario->description)) : std::string()) +
        "</td><td>" + std::string(to_string(o.variant)) + "</td><td>" + std::to_string(seeds[i]) +
        "</td><td class=\"id expected\">" +
        (scenario != nullptr ? expected_list(*scenario, o.variant, Expectation::violated)
                             : std::string("-")) +
        "</td><td class=\"id may\">" +
        (scenario != nullptr ? expected_list(*scenario, o.variant, Expectation::may)
                             : std::string("-")) +
        "</td><td class=\"id violated\">" + violated_list(o.check) + "</td><td class=\"" +
        (ok ? "pass\" title=\"as expected\">PASS" : "fail\" title=\"not as expected\">FAIL") +
        "</td><td>" + join(o.verdicts.unexpected) + "</td><td>" + join(o.verdicts.missing) +
        "</td><td>" + std::to_string(o.counts.acquired) + "</td><td>" +
        std::to_string(o.counts.writes_accepted) + "/" + std::to_string(o.counts.writes_refused) +
        "</td><td>" + link + "</td></tr>\n";
    if (!o.error.empty()) {
      page += "<tr><td colspan=\"13\">error: " + html_escape(o.error) + "</td></tr>\n";
    }
  }
  page += "</table></div></body></html>\n";
  const std::filesystem::path index = out / "index.html";
  std::ofstream file(index, std::ios::binary | std::ios::trunc);
  file << page;
  return file ? index : std::filesystem::path();
}

int run_scenarios(const std::vector<std::filesystem::path>& files, const Options& options,
                  const char* self) {
  std::vector<Scenario> scenarios;
  for (const auto& file : files) {
    ScenarioParseResult parsed = load_scenario(file);
    if (!parsed.scenario) {
      std::fprintf(stderr, "redlock-chaos: %s\n", parsed.error.c_str());
      return 2;
    }
    if (!options.filter.empty() &&
        parsed.scenario->name.find(options.filter) == std::string::npos) {
      continue;
    }
    if (options.tls && !parsed.scenario->nodes.clusters.empty()) {
      std::fprintf(stderr, "redlock-chaos: %s skipped: cluster members run without TLS\n",
                   parsed.scenario->name.c_str());
      continue;
    }
    if (options.tls) parsed.scenario->nodes.tls = true;
    scenarios.push_back(std::move(*parsed.scenario));
  }
  if (scenarios.empty()) {
    std::fprintf(stderr, "redlock-chaos: no scenario to run\n");
    return 2;
  }
  std::optional<FaketimeLibraries> faketime;
  if (options.clock == ClockMode::faketime) {
    std::string error;
    faketime = find_faketime_libraries(self, error);
    if (!faketime) {
      std::fprintf(stderr, "redlock-chaos: %s\n", error.c_str());
      return 2;
    }
  }
  struct Job {
    const Scenario* scenario;
    Variant variant;
    std::uint64_t seed;
  };
  std::vector<Job> jobs;
  for (int k = 0; k < options.seeds; ++k) {
    for (const Scenario& scenario : scenarios) {
      for (Variant variant : scenario.variants) {
        if (options.variant && *options.variant != variant) continue;
        jobs.push_back(Job{&scenario, variant, options.seed + static_cast<std::uint64_t>(k)});
      }
    }
  }
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  std::vector<VariantOutcome> outcomes;
  std::vector<const Scenario*> scenario_of_run;
  std::vector<std::uint64_t> seeds;
  bool all_passed = true;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const Job& job = jobs[k];
    const std::string label = "[" + std::to_string(k + 1) + "/" + std::to_string(jobs.size()) +
                              "] " + job.scenario->name + " (" +
                              std::string(to_string(job.variant)) + ", seed " +
                              std::to_string(job.seed) + ")";
    RunOptions run;
    run.executable = self;
    run.out_dir =
        options.seeds > 1 ? options.out / ("seed-" + std::to_string(job.seed)) : options.out;
    run.seed = job.seed;
    run.duration = options.duration;
    run.faketime = faketime;
    if (tty) {
      run.on_phase = [&label](const std::string& phase) {
        std::fprintf(stderr, "\r\033[K%s: %s", label.c_str(), phase.c_str());
      };
    } else {
      std::fprintf(stderr, "%s\n", label.c_str());
    }
    VariantOutcome outcome = run_variant(*job.scenario, job.variant, run);
    const bool ok = passed(outcome, options.mode);
    all_passed = all_passed && ok;
    if (tty) {
      std::fprintf(stderr, "\r\033[K%s: %s in %.1f s\n", label.c_str(), ok ? "PASS" : "FAIL",
                   outcome.seconds);
    }
    outcomes.push_back(std::move(outcome));
    scenario_of_run.push_back(job.scenario);
    seeds.push_back(job.seed);
  }
  print_summary(outcomes, seeds, options.mode);
  const std::filesystem::path index =
      write_index(options.out, outcomes, scenario_of_run, seeds, options.mode);
  if (!index.empty()) std::printf("reports: %s\n", index.c_str());
  return all_passed ? 0 : 1;
}

int check_command(const Options& options) {
  if (options.positional.empty()) {
    usage_error("check needs at least one history file");
    return 2;
  }
  std::optional<Scenario> scenario;
  if (!options.scenario_file.empty()) {
    ScenarioParseResult parsed = load_scenario(options.scenario_file);
    if (!parsed.scenario) {
      std::fprintf(stderr, "redlock-chaos: %s\n", parsed.error.c_str());
      return 2;
    }
    scenario = std::move(parsed.scenario);
  }
  std::vector<std::filesystem::path> files(options.positional.begin(), options.positional.end());
  const Variant variant = options.variant.value_or(Variant::unfenced);
  VariantOutcome outcome =
      check_recorded(files, scenario ? &*scenario : nullptr, variant, options.report);
  if (!outcome.error.empty()) {
    std::fprintf(stderr, "redlock-chaos: %s\n", outcome.error.c_str());
    return 2;
  }
  for (int i = 0; i < kInvariantCount; ++i) {
    std::printf(
        "%-4s %-15s %s\n", std::string(invariant_id(i)).c_str(),
        std::string(to_string(outcome.check.verdicts.at(static_cast<std::size_t>(i)))).c_str(),
        std::string(invariant_title(i)).c_str());
  }
  for (const Finding& finding : outcome.check.findings) {
    std::printf("%s %s: %s\n", std::string(invariant_id(finding.invariant)).c_str(),
                finding.proc.c_str(), finding.message.c_str());
  }
  if (!outcome.report.empty()) std::printf("report: %s\n", outcome.report.c_str());
  return passed(outcome, scenario ? options.mode : Mode::regression) ? 0 : 1;
}

// The path of this executable, to start the workers with.
std::string self_path(const char* argv0) {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(argv0) : path.string();
}

}  // namespace
}  // namespace redlock::chaos

int main(int argc, char** argv) {
  using namespace redlock::chaos;
  if (argc >= 2 && std::string_view(argv[1]) == "worker") return run_worker(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  Options options;
  if (!parse_options(argc, argv, options)) return 2;
  const std::string self = self_path(argv[0]);
  if (options.command == "run") {
    if (options.positional.empty()) {
      usage_error("run needs at least one scenario file");
      return 2;
    }
    std::vector<std::filesystem::path> files(options.positional.begin(), options.positional.end());
    return run_scenarios(files, options, self.c_str());
  }
  if (options.command == "catalog") {
    const std::filesystem::path dir = options.positional.empty()
                                          ? default_catalog(self)
                                          : std::filesystem::path(options.positional[0]);
    const auto files = catalog_files(dir);
    if (files.empty()) {
      std::fprintf(stderr, "redlock-chaos: no scenario files in %s\n", dir.c_str());
      return 2;
    }
    return run_scenarios(files, options, self.c_str());
  }
  if (options.command == "check") return check_command(options);
  usage_error("unknown command " + options.command);
  return 2;
}
