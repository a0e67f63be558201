#include "config/lock_key_pattern.hpp"

#include <cstddef>

namespace redlock::detail {
namespace {

constexpr std::string_view kPrefixPlaceholder = "{prefix}";
constexpr std::string_view kResourcePlaceholder = "{resource}";

std::string times(int count) { return count == 2 ? "twice" : std::to_string(count) + " times"; }

// Calls each(text, is_resource) for each piece of a valid pattern, in
// order, with `{prefix}` already replaced: literal text and the prefix as
// text, `{resource}` as itself with is_resource set.
template <typename Each>
void for_each_piece(std::string_view pattern, std::string_view prefix, Each each) {
  while (!pattern.empty()) {
    if (pattern.starts_with(kPrefixPlaceholder)) {
      each(prefix, false);
      pattern.remove_prefix(kPrefixPlaceholder.size());
    } else if (pattern.starts_with(kResourcePlaceholder)) {
      each(kResourcePlaceholder, true);
      pattern.remove_prefix(kResourcePlaceholder.size());
    } else {
      // A valid pattern opens a brace only for a placeholder; the first
      // character is literal in any case, so this always moves on.
      const std::size_t brace = pattern.find('{', 1);
      const std::string_view literal = pattern.substr(0, brace);
      each(literal, false);
      pattern.remove_prefix(literal.size());
    }
  }
}

}  // namespace

std::string lock_key_pattern_problem(std::string_view pattern) {
  if (pattern.empty()) return "expected a pattern holding {resource}, got an empty string";
  int resources = 0;
  int prefixes = 0;
  std::size_t at = 0;
  while (at < pattern.size()) {
    const char c = pattern[at];
    if (c == '}') {
      return "expected '}' only to close {prefix} or {resource}, got one alone at character " +
             std::to_string(at + 1);
    }
    if (c != '{') {
      ++at;
      continue;
    }
    const std::size_t close = pattern.find('}', at);
    if (close == std::string_view::npos) {
      return "expected '{' only to open {prefix} or {resource}, got one never closed at "
             "character " +
             std::to_string(at + 1);
    }
    const std::string_view placeholder = pattern.substr(at, close + 1 - at);
    if (placeholder == kResourcePlaceholder) {
      ++resources;
    } else if (placeholder == kPrefixPlaceholder) {
      ++prefixes;
    } else {
      return "unknown placeholder " + std::string(placeholder) +
             "; expected {prefix} or {resource}";
    }
    at = close + 1;
  }
  if (resources == 0) {
    return "expected a pattern holding {resource}, got \"" + std::string(pattern) + "\"";
  }
  if (resources > 1) return "expected {resource} once, got it " + times(resources);
  if (prefixes > 1) return "expected {prefix} at most once, got it " + times(prefixes);
  return {};
}

std::string expand_lock_key(std::string_view pattern, std::string_view prefix,
                            std::string_view resource) {
  std::string key;
  key.reserve(pattern.size() + prefix.size() + resource.size());
  for_each_piece(pattern, prefix, [&](std::string_view text, bool is_resource) {
    key.append(is_resource ? resource : text);
  });
  return key;
}

std::string lock_key_glob(std::string_view pattern, std::string_view prefix) {
  std::string glob;
  for_each_piece(pattern, prefix, [&](std::string_view text, bool is_resource) {
    if (is_resource) {
      glob.push_back('*');
      return;
    }
    // Redis's glob: * ? [ ] and the backslash are special; a literal one
    // is matched by itself after a backslash.
    for (const char c : text) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') glob.push_back('\\');
      glob.push_back(c);
    }
  });
  return glob;
}

}  // namespace redlock::detail
