// One JSON object on one line, built field by field: what both peer
// drivers print per run. Only the value kinds they print; string values
// are the drivers' own texts (escaped for quotes and backslashes anyway).
#pragma once

#include <concepts>
#include <cstdio>
#include <string>
#include <string_view>

namespace redlock::bench::peers {

class JsonLine {
 public:
  void add(std::string_view name, std::string_view text) {
    key(name);
    text_ += '"';
    for (const char c : text) {
      if (c == '"' || c == '\\') text_ += '\\';
      text_ += c;
    }
    text_ += '"';
  }
  void add(std::string_view name, const char* text) { add(name, std::string_view(text)); }
  void add(std::string_view name, double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", value);
    key(name);
    text_ += buffer;
  }
  template <std::integral Integer>
  void add(std::string_view name, Integer value) {
    key(name);
    text_ += std::to_string(value);
  }
  [[nodiscard]] std::string str() const { return "{" + text_ + "}"; }

 private:
  void key(std::string_view name) {
    if (!text_.empty()) text_ += ',';
    text_ += '"';
    text_ += name;
    text_ += "\":";
  }

  std::string text_;
};

}  // namespace redlock::bench::peers
