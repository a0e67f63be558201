// Whether a script call gives its script the keys and arguments its Lua
// reads (tests/unit/kinds_test.cpp, tests/unit/script_calls_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "scripts/scripts.hpp"

namespace redlock::detail {

// The highest literal index `table`[n] (KEYS or ARGV) the script's body
// reads, and whether it also reads a variable number (#KEYS, #ARGV, or
// ipairs over the table).
struct Reads {
  std::size_t highest = 0;
  bool variable = false;
};
inline Reads reads(std::string_view body, const std::string& table) {
  Reads found;
  const std::string text(body);
  const std::regex literal(table + R"(\[(\d+)\])");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), literal);
       it != std::sregex_iterator(); ++it) {
    found.highest = std::max<std::size_t>(found.highest, std::stoul((*it)[1].str()));
  }
  found.variable = text.find("#" + table) != std::string::npos ||
                   text.find("ipairs(" + table + ")") != std::string::npos;
  return found;
}

// A call gives its script exactly the keys and arguments the body reads by
// index; a script that also loops over the rest reads at least those. A
// batched script reads each request's slice of the call at computed
// places: a request of it carries the shared keys, its own key and the
// script's arguments per request.
inline void expect_call_fits_its_script(const ScriptCall& call, const std::string& what) {
  ASSERT_NE(call.script, nullptr) << what;
  if (call.script->batched) {
    EXPECT_EQ(call.keys.size(), call.script->shared_keys + 1) << what;
    EXPECT_EQ(call.args.size(), call.script->args_per_request) << what;
    return;
  }
  for (const auto& [table, size] :
       {std::pair<std::string, std::size_t>{"KEYS", call.keys.size()},
        std::pair<std::string, std::size_t>{"ARGV", call.args.size()}}) {
    const Reads found = reads(call.script->body, table);
    if (found.variable) {
      EXPECT_LE(found.highest, size) << what << ": " << table;
    } else {
      EXPECT_EQ(found.highest, size) << what << ": " << table;
    }
  }
}

}  // namespace redlock::detail
