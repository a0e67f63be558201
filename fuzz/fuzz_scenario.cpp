// The chaos scenario reader (tools/chaos/scenario.hpp, docs/chaos.md): the
// fuzz bytes are the text of a scenario file. A scenario that reads must
// hold what the runner relies on (counts in range, steps in time order,
// every target naming a node, client or link that exists); an error must
// name the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "scenario.hpp"

namespace {

namespace chaos = redlock::chaos;

constexpr std::string_view kSource = "fuzz.toml";

void check_step(const chaos::NemesisStep& step, int nodes, int clients) {
  REDLOCK_FUZZ_CHECK(!chaos::to_string(step.action).empty());
  switch (step.action) {
    case chaos::NemesisAction::kill:
    case chaos::NemesisAction::power_loss:
    case chaos::NemesisAction::restart:
    case chaos::NemesisAction::clock_jump:
    case chaos::NemesisAction::clock_rate:
      REDLOCK_FUZZ_CHECK(chaos::parse_node_target(step.target, nodes).has_value());
      break;
    case chaos::NemesisAction::pause:
    case chaos::NemesisAction::resume:
      REDLOCK_FUZZ_CHECK(chaos::parse_node_target(step.target, nodes) ||
                         chaos::parse_client_target(step.target, clients));
      break;
    case chaos::NemesisAction::link: {
      const auto link = chaos::parse_link_target(step.target, clients, nodes);
      REDLOCK_FUZZ_CHECK(link.has_value());
      for (const int client : link->clients) REDLOCK_FUZZ_CHECK(client >= 0 && client < clients);
      for (const int node : link->nodes) REDLOCK_FUZZ_CHECK(node >= 0 && node < nodes);
      break;
    }
    case chaos::NemesisAction::heal:
      break;
  }
  REDLOCK_FUZZ_CHECK(step.when_holding >= -1 && step.when_holding < clients);
}

void check_scenario(const chaos::Scenario& scenario) {
  const int nodes = scenario.nodes.count;
  const int clients = scenario.clients.count;
  REDLOCK_FUZZ_CHECK(nodes >= 1);
  REDLOCK_FUZZ_CHECK(clients >= 1);
  for (const auto& [index, spec] : scenario.clients.overrides) {
    REDLOCK_FUZZ_CHECK(index >= 0 && index < clients);
    (void)spec;
  }
  REDLOCK_FUZZ_CHECK(std::is_sorted(
      scenario.nemesis.begin(), scenario.nemesis.end(),
      [](const chaos::NemesisStep& a, const chaos::NemesisStep& b) { return a.at < b.at; }));
  for (const chaos::NemesisStep& step : scenario.nemesis) check_step(step, nodes, clients);
  for (const chaos::Variant variant : scenario.variants) {
    REDLOCK_FUZZ_CHECK(scenario.expectations.contains(variant));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > redlock::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = redlock::fuzz::as_text(data, size);
  // The link and index target parsers take any text as well.
  if (size <= 64) {
    (void)chaos::parse_link_target(text, 3, 5);
    (void)chaos::parse_node_target(text, 5);
  }
  const chaos::ScenarioParseResult result = chaos::parse_scenario(text, kSource);
  if (redlock::fuzz::showing()) {
    std::fprintf(stderr, "%s\n",
                 result.scenario ? ("ok: " + result.scenario->name).c_str() : result.error.c_str());
  }
  if (result.scenario) {
    check_scenario(*result.scenario);
  } else {
    REDLOCK_FUZZ_CHECK(std::string_view(result.error).starts_with(kSource));
  }
  return 0;
}
