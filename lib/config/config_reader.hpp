// Typed reads of parsed TOML values, each failure pinned on the offending
// key or value as file:line:col. Knows nothing of the quorum file's keys:
// config.cpp, config_nodes.cpp and config_lock.cpp state the schema; this
// says what was wrong and where.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/types.hpp"

namespace redlock::detail {

// The inclusive range an integer key accepts, and how to say so.
struct IntegerRule {
  std::int64_t minimum;
  std::int64_t maximum;
  std::string_view expected;  // "a positive integer (milliseconds)"
};

// The half-open range [minimum, below) a number key accepts (integer or
// float), and how to say so.
struct NumberRule {
  double minimum;
  double below;
  std::string_view expected;  // "a number in [0, 0.5)"
};

// "table", "integer", "date-time", ...: what a message says was found.
[[nodiscard]] std::string_view toml_type_name(toml::node_type type) noexcept;

// "unknown key; did you mean ttl_ms?" or the list of the keys allowed here.
[[nodiscard]] std::string unknown_key_message(std::string_view key,
                                              std::span<const std::string_view> allowed);

// Where `key` is written in `table`, or the table itself when the key is
// absent (its default was used), or nowhere.
[[nodiscard]] toml::source_region where(const toml::table* table, std::string_view key);

// A table's entries sorted by where their keys appear, so that the first
// error reported is the first one in the file.
[[nodiscard]] std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table);

// Reads values of one source. Every read_* and fail* returns false once it
// has recorded the error; the caller then stops, so the first error wins.
// A read that fails leaves `out` untouched.
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view source) : source_(source) {}

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  // The recorded error; meaningful only after a read or fail returned false.
  [[nodiscard]] ConfigError take_error() { return std::move(error_); }

  // Records "path: message" at `where` ("message" alone for an empty path).
  bool fail(const toml::source_region& where, std::string_view path, std::string_view message);
  // Records an error tied to no position, e.g. a table the whole file lacks.
  bool fail_without_position(std::string message);

  bool read_integer(const toml::node& value, std::string_view path, const IntegerRule& rule,
                    std::int64_t& out);
  // `rule` must lie within the range of int.
  bool read_int(const toml::node& value, std::string_view path, const IntegerRule& rule, int& out);
  bool read_milliseconds(const toml::node& value, std::string_view path, const IntegerRule& rule,
                         Milliseconds& out);
  bool read_milliseconds(const toml::node& value, std::string_view path, const IntegerRule& rule,
                         std::optional<Milliseconds>& out);
  bool read_number(const toml::node& value, std::string_view path, const NumberRule& rule,
                   double& out);
  bool read_string(const toml::node& value, std::string_view path, bool allow_empty,
                   std::string& out);
  bool read_string(const toml::node& value, std::string_view path, bool allow_empty,
                   std::optional<std::string>& out);
  bool read_bool(const toml::node& value, std::string_view path, bool& out);
  // `expected` names the table in the message: "a table ([lock])".
  bool read_table(const toml::node& value, std::string_view path, std::string_view expected,
                  const toml::table*& out);

 private:
  std::string source_;
  ConfigError error_;
};

}  // namespace redlock::detail
