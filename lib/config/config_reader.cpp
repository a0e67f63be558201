#include "config/config_reader.hpp"

#include <algorithm>
#include <cstdio>

#include "text/escape.hpp"

namespace redlock::detail {
namespace {

std::string join(std::span<const std::string_view> items) {
  std::string out;
  for (const std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::string format_number(double number) {
  char buffer[64] = {};
  std::snprintf(buffer, sizeof buffer, "%g", number);
  return buffer;
}

std::string got_type(const toml::node& value) {
  return ", got " + std::string(toml_type_name(value.type()));
}

}  // namespace

std::string_view toml_type_name(toml::node_type type) noexcept {
  switch (type) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string unknown_key_message(std::string_view key, std::span<const std::string_view> allowed) {
  for (const std::string_view candidate : allowed) {
    // A key written without its unit ("ttl" for "ttl_ms") is three edits
    // away, beyond the distance below, yet it is the likeliest slip.
    const bool missing_unit = candidate.size() == key.size() + 3 &&
                              candidate.substr(0, key.size()) == key &&
                              candidate.substr(key.size()) == "_ms";
    if (missing_unit || edit_distance(key, candidate) <= 2) {
      return "unknown key; did you mean " + std::string(candidate) + "?";
    }
  }
  return "unknown key; expected one of " + join(allowed);
}

toml::source_region where(const toml::table* table, std::string_view key) {
  if (table == nullptr) return {};
  if (const toml::node* value = table->get(key)) return value->source();
  return table->source();
}

std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [key, value] : table) entries.emplace_back(&key, &value);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_position& left = a.first->source().begin;
    const toml::source_position& right = b.first->source().begin;
    return left.line != right.line ? left.line < right.line : left.column < right.column;
  });
  return entries;
}

bool ConfigReader::fail(const toml::source_region& where, std::string_view path,
                        std::string_view message) {
  std::string text(path);
  if (!text.empty()) text += ": ";
  text += message;
  // Paths hold key names and messages node names, both from the file.
  error_ = ConfigError{source_, where.begin.line, where.begin.column, escape_text(text)};
  return false;
}

bool ConfigReader::fail_without_position(std::string message) {
  error_ = ConfigError{source_, 0, 0, std::move(message)};
  return false;
}

bool ConfigReader::read_integer(const toml::node& value, std::string_view path,
                                const IntegerRule& rule, std::int64_t& out) {
  const std::string expected = "expected " + std::string(rule.expected);
  const toml::value<std::int64_t>* integer = value.as_integer();
  if (integer == nullptr) return fail(value.source(), path, expected + got_type(value));
  const std::int64_t number = integer->get();
  // The rule's wording already states the minimum ("positive", ">= -1")
  // but not the maximum, so only the maximum is spelled out.
  if (number > rule.maximum) {
    return fail(value.source(), path,
                expected + " no larger than " + std::to_string(rule.maximum) + ", got " +
                    std::to_string(number));
  }
  if (number < rule.minimum) {
    return fail(value.source(), path, expected + ", got " + std::to_string(number));
  }
  out = number;
  return true;
}

bool ConfigReader::read_int(const toml::node& value, std::string_view path, const IntegerRule& rule,
                            int& out) {
  std::int64_t number = 0;
  if (!read_integer(value, path, rule, number)) return false;
  out = static_cast<int>(number);  // The rule's range fits in int.
  return true;
}

bool ConfigReader::read_milliseconds(const toml::node& value, std::string_view path,
                                     const IntegerRule& rule, Milliseconds& out) {
  std::int64_t number = 0;
  if (!read_integer(value, path, rule, number)) return false;
  out = Milliseconds{number};
  return true;
}

bool ConfigReader::read_milliseconds(const toml::node& value, std::string_view path,
                                     const IntegerRule& rule, std::optional<Milliseconds>& out) {
  Milliseconds duration{};
  if (!read_milliseconds(value, path, rule, duration)) return false;
  out = duration;
  return true;
}

bool ConfigReader::read_number(const toml::node& value, std::string_view path,
                               const NumberRule& rule, double& out) {
  const std::string expected = "expected " + std::string(rule.expected);
  double number = 0.0;
  if (const toml::value<double>* real = value.as_floating_point()) {
    number = real->get();
  } else if (const toml::value<std::int64_t>* integer = value.as_integer()) {
    number = static_cast<double>(integer->get());  // "key = 0" is a number too.
  } else {
    return fail(value.source(), path, expected + got_type(value));
  }
  // Written so that NaN fails too.
  if (!(number >= rule.minimum && number < rule.below)) {
    return fail(value.source(), path, expected + ", got " + format_number(number));
  }
  out = number;
  return true;
}

bool ConfigReader::read_string(const toml::node& value, std::string_view path, bool allow_empty,
                               std::string& out) {
  const toml::value<std::string>* text = value.as_string();
  if (text == nullptr) {
    return fail(value.source(), path,
                std::string(allow_empty ? "expected a string" : "expected a non-empty string") +
                    got_type(value));
  }
  if (!allow_empty && text->get().empty()) {
    return fail(value.source(), path, "expected a non-empty string, got an empty string");
  }
  out = text->get();
  return true;
}

bool ConfigReader::read_string(const toml::node& value, std::string_view path, bool allow_empty,
                               std::optional<std::string>& out) {
  std::string text;
  if (!read_string(value, path, allow_empty, text)) return false;
  out = std::move(text);
  return true;
}

bool ConfigReader::read_bool(const toml::node& value, std::string_view path, bool& out) {
  const toml::value<bool>* flag = value.as_boolean();
  if (flag == nullptr) {
    return fail(value.source(), path, "expected true or false" + got_type(value));
  }
  out = flag->get();
  return true;
}

bool ConfigReader::read_table(const toml::node& value, std::string_view path,
                              std::string_view expected, const toml::table*& out) {
  const toml::table* table = value.as_table();
  if (table == nullptr) {
    return fail(value.source(), path, "expected " + std::string(expected) + got_type(value));
  }
  out = table;
  return true;
}

}  // namespace redlock::detail
