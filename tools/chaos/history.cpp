#include "history.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <utility>

namespace redlock::chaos {
namespace {

constexpr std::array<std::pair<EventKind, std::string_view>, 13> kEventKindNames{{
    {EventKind::run, "run"},
    {EventKind::acquire, "acquire"},
    {EventKind::extend, "extend"},
    {EventKind::release, "release"},
    {EventKind::read, "read"},
    {EventKind::write, "write"},
    {EventKind::append, "append"},
    {EventKind::nemesis, "nemesis"},
    {EventKind::snapshot, "snapshot"},
    {EventKind::heal, "heal"},
    {EventKind::nest, "nest"},
    {EventKind::unnest, "unnest"},
    {EventKind::lost, "lost"},
}};

constexpr std::array<std::pair<Phase, std::string_view>, 4> kPhaseNames{{
    {Phase::invoke, "invoke"},
    {Phase::ok, "ok"},
    {Phase::fail, "fail"},
    {Phase::info, "info"},
}};

template <typename Member>
struct Field {
  std::string_view name;
  Member Event::*member;
};

// The optional keys of history.hpp's table, by type; each is written only
// when it differs from its default.
constexpr std::array<Field<std::int64_t>, 16> kIntFields{{
    {"op", &Event::op},
    {"ttl_ms", &Event::ttl_ms},
    {"validity_ms", &Event::validity_ms},
    {"drift_ms", &Event::drift_ms},
    {"start_t", &Event::start_t},
    {"deadline_t", &Event::deadline_t},
    {"max_renewals", &Event::max_renewals},
    {"pttl_ms", &Event::pttl_ms},
    {"count", &Event::count},
    {"budget_ms", &Event::budget_ms},
    {"permits", &Event::permits},
    {"nested", &Event::nested},
    {"attempts", &Event::attempts},
    {"renewals", &Event::renewals},
    {"ticket_drawn_t", &Event::ticket_drawn_t},
    {"ticket_recorded_t", &Event::ticket_recorded_t},
}};

constexpr std::array<Field<std::optional<std::int64_t>>, 5> kOptionalIntFields{{
    {"token", &Event::token},
    {"ticket", &Event::ticket},
    {"permit", &Event::permit},
    {"read", &Event::read},
    {"wrote", &Event::wrote},
}};

constexpr std::array<Field<std::string>, 8> kStringFields{{
    {"value", &Event::value},
    {"error", &Event::error},
    {"key", &Event::key},
    {"entry", &Event::entry},
    {"fault", &Event::fault},
    {"target", &Event::target},
    {"detail", &Event::detail},
    {"log_key", &Event::log_key},
}};

// The ranges history.hpp gives times, durations and node indices, within
// which the checker's arithmetic on them cannot overflow; a line outside
// them is refused.
constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 61;      // 73 years
constexpr std::int64_t kMaxDurationMs = std::int64_t{1} << 40;  // 34 years
constexpr std::int64_t kMaxNodeIndex = (std::int64_t{1} << 16) - 1;
constexpr std::int64_t kMaxPermit = (std::int64_t{1} << 16) - 1;
constexpr std::int64_t kMaxCount = (std::int64_t{1} << 31) - 1;

struct Range {
  std::string_view name;
  std::int64_t Event::*member;
  std::int64_t minimum;
  std::int64_t maximum;
};

constexpr std::array<Range, 14> kRanges{{
    {"t", &Event::t, 0, kMaxTimeNs},
    {"ticket_drawn_t", &Event::ticket_drawn_t, 0, kMaxTimeNs},
    {"ticket_recorded_t", &Event::ticket_recorded_t, 0, kMaxTimeNs},
    {"start_t", &Event::start_t, 0, kMaxTimeNs},
    {"deadline_t", &Event::deadline_t, 0, kMaxTimeNs},
    {"ttl_ms", &Event::ttl_ms, -kMaxDurationMs, kMaxDurationMs},
    {"validity_ms", &Event::validity_ms, -kMaxDurationMs, kMaxDurationMs},
    {"drift_ms", &Event::drift_ms, -kMaxDurationMs, kMaxDurationMs},
    {"pttl_ms", &Event::pttl_ms, -kMaxDurationMs, kMaxDurationMs},
    {"budget_ms", &Event::budget_ms, -kMaxDurationMs, kMaxDurationMs},
    {"permits", &Event::permits, 0, kMaxPermit},
    {"nested", &Event::nested, 0, kMaxCount},
    {"attempts", &Event::attempts, 0, kMaxCount},
    {"renewals", &Event::renewals, 0, kMaxCount},
}};

std::string range_text(std::int64_t minimum, std::int64_t maximum) {
  return "an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
}

JsonValue node_reply_to_json(const NodeReply& reply) {
  JsonObject object;
  object.emplace("node", reply.node);
  if (!reply.status.empty()) object.emplace("status", reply.status);
  if (reply.fence_counter != 0) object.emplace("fence_counter", reply.fence_counter);
  return object;
}

JsonValue place_to_json(const Place& place) {
  JsonObject object;
  object.emplace("resource", place.resource);
  object.emplace("ticket", place.ticket);
  object.emplace("drawn_t", place.drawn_t);
  object.emplace("recorded_t", place.recorded_t);
  return object;
}

JsonObject event_to_object(const Event& event) {
  JsonObject object;
  object.emplace("t", event.t);
  object.emplace("proc", event.proc);
  object.emplace("kind", to_string(event.kind));
  if (event.phase != Phase::info) object.emplace("phase", to_string(event.phase));
  for (const auto& field : kIntFields) {
    if (event.*field.member != 0) object.emplace(field.name, event.*field.member);
  }
  for (const auto& field : kOptionalIntFields) {
    if (const auto& value = event.*field.member) object.emplace(field.name, *value);
  }
  for (const auto& field : kStringFields) {
    if (!(event.*field.member).empty()) object.emplace(field.name, event.*field.member);
  }
  if (event.fenced) object.emplace("fenced", true);
  if (event.shared) object.emplace("shared", true);
  if (event.leader) object.emplace("leader", true);
  if (!event.nodes.empty()) {
    JsonArray nodes;
    for (const NodeReply& reply : event.nodes) nodes.push_back(node_reply_to_json(reply));
    object.emplace("nodes", std::move(nodes));
  }
  if (!event.places.empty()) {
    JsonArray places;
    for (const Place& place : event.places) places.push_back(place_to_json(place));
    object.emplace("places", std::move(places));
  }
  if (!event.entries.empty()) {
    JsonArray entries(event.entries.begin(), event.entries.end());
    object.emplace("entries", std::move(entries));
  }
  if (!event.resources.empty()) {
    JsonArray resources(event.resources.begin(), event.resources.end());
    object.emplace("resources", std::move(resources));
  }
  if (!event.tokens.empty()) {
    JsonArray tokens(event.tokens.begin(), event.tokens.end());
    object.emplace("tokens", std::move(tokens));
  }
  return object;
}

// Reads the members of one line into an event; false with `error` set on
// the first key of the wrong type.
class EventReader {
 public:
  EventReader(const JsonValue& line, std::string& error) : line_(line), error_(error) {}

  std::optional<Event> read() {
    Event event;
    if (!read_required(event)) return std::nullopt;
    for (const auto& field : kIntFields) {
      if (!read_int(field.name, event.*field.member)) return std::nullopt;
    }
    for (const auto& field : kOptionalIntFields) {
      if (!read_optional_int(field.name, event.*field.member)) return std::nullopt;
    }
    for (const auto& field : kStringFields) {
      if (!read_string(field.name, event.*field.member)) return std::nullopt;
    }
    if (!read_bool("fenced", event.fenced) || !read_bool("shared", event.shared) ||
        !read_bool("leader", event.leader) || !read_nodes(event.nodes) ||
        !read_strings("entries", event.entries) || !read_strings("resources", event.resources) ||
        !read_tokens(event.tokens) || !read_places(event.places) || !in_range(event)) {
      return std::nullopt;
    }
    return event;
  }

 private:
  bool wrong_type(std::string_view key, std::string_view expected) {
    error_ = "key \"" + std::string(key) + "\": expected " + std::string(expected);
    return false;
  }

  bool in_range(const Event& event) {
    for (const Range& range : kRanges) {
      const std::int64_t value = event.*range.member;
      if (value < range.minimum || value > range.maximum) {
        return wrong_type(range.name, range_text(range.minimum, range.maximum));
      }
    }
    if (event.permit && (*event.permit < 0 || *event.permit > kMaxPermit)) {
      return wrong_type("permit", range_text(0, kMaxPermit));
    }
    return true;
  }

  bool read_required(Event& event) {
    for (const std::string_view key : {"t", "proc", "kind"}) {
      if (!line_.contains(key)) {
        error_ = "missing key \"" + std::string(key) + "\"";
        return false;
      }
    }
    if (!read_int("t", event.t) || !read_string("proc", event.proc)) return false;
    std::string kind;
    if (!read_string("kind", kind)) return false;
    const std::optional<EventKind> parsed_kind = parse_event_kind(kind);
    if (!parsed_kind) return wrong_type("kind", "an event kind, not \"" + kind + "\"");
    event.kind = *parsed_kind;
    std::string phase = "info";
    if (!read_string("phase", phase)) return false;
    const std::optional<Phase> parsed_phase = parse_phase(phase);
    if (!parsed_phase) return wrong_type("phase", "a phase, not \"" + phase + "\"");
    event.phase = *parsed_phase;
    return true;
  }

  bool read_int(std::string_view key, std::int64_t& out) {
    if (!line_.contains(key)) return true;
    const JsonValue& value = line_[key];
    if (!value.is_integer()) return wrong_type(key, "an integer");
    out = value.as_int();
    return true;
  }

  bool read_optional_int(std::string_view key, std::optional<std::int64_t>& out) {
    if (!line_.contains(key)) return true;
    std::int64_t value = 0;
    if (!read_int(key, value)) return false;
    out = value;
    return true;
  }

  bool read_string(std::string_view key, std::string& out) {
    if (!line_.contains(key)) return true;
    const JsonValue& value = line_[key];
    if (!value.is_string()) return wrong_type(key, "a string");
    out = value.as_string();
    return true;
  }

  bool read_bool(std::string_view key, bool& out) {
    if (!line_.contains(key)) return true;
    const JsonValue& value = line_[key];
    if (!value.is_bool()) return wrong_type(key, "a boolean");
    out = value.as_bool();
    return true;
  }

  bool read_nodes(std::vector<NodeReply>& out) {
    if (!line_.contains("nodes")) return true;
    const JsonValue& nodes = line_["nodes"];
    if (!nodes.is_array()) return wrong_type("nodes", "an array");
    for (const JsonValue& item : nodes.as_array()) {
      const JsonValue& node = item["node"];
      const JsonValue& status = item["status"];
      const JsonValue& fence_counter = item["fence_counter"];
      const bool well_typed = item.is_object() && node.is_integer() &&
                              (status.is_null() || status.is_string()) &&
                              (fence_counter.is_null() || fence_counter.is_integer());
      if (!well_typed) {
        return wrong_type("nodes",
                          "objects {\"node\":int,\"status\":string,\"fence_counter\":int}");
      }
      if (node.as_int() < 0 || node.as_int() > kMaxNodeIndex) {
        return wrong_type("nodes", "node indices " + range_text(0, kMaxNodeIndex));
      }
      out.push_back(
          NodeReply{static_cast<int>(node.as_int()), status.as_string(), fence_counter.as_int()});
    }
    return true;
  }

  bool read_strings(std::string_view key, std::vector<std::string>& out) {
    if (!line_.contains(key)) return true;
    const JsonValue& list = line_[key];
    if (!list.is_array()) return wrong_type(key, "an array");
    for (const JsonValue& item : list.as_array()) {
      if (!item.is_string()) return wrong_type(key, "an array of strings");
      out.push_back(item.as_string());
    }
    return true;
  }

  bool read_tokens(std::vector<std::int64_t>& out) {
    if (!line_.contains("tokens")) return true;
    const JsonValue& list = line_["tokens"];
    if (!list.is_array()) return wrong_type("tokens", "an array");
    for (const JsonValue& item : list.as_array()) {
      if (!item.is_integer()) return wrong_type("tokens", "an array of integers");
      out.push_back(item.as_int());
    }
    return true;
  }

  // At most kMaxPlaces, each with a name and its ticket's times in the
  // range of every other time.
  bool read_places(std::vector<Place>& out) {
    if (!line_.contains("places")) return true;
    const JsonValue& list = line_["places"];
    if (!list.is_array()) return wrong_type("places", "an array");
    if (list.as_array().size() > kMaxPlaces) {
      return wrong_type("places", "at most " + std::to_string(kMaxPlaces) + " places");
    }
    for (const JsonValue& item : list.as_array()) {
      const JsonValue& resource = item["resource"];
      const JsonValue& ticket = item["ticket"];
      const JsonValue& drawn = item["drawn_t"];
      const JsonValue& recorded = item["recorded_t"];
      const bool well_typed = item.is_object() && resource.is_string() && ticket.is_integer() &&
                              drawn.is_integer() && recorded.is_integer();
      if (!well_typed) {
        return wrong_type("places",
                          "objects {\"resource\":string,\"ticket\":int,\"drawn_t\":int,"
                          "\"recorded_t\":int}");
      }
      Place place{resource.as_string(), ticket.as_int(), drawn.as_int(), recorded.as_int()};
      for (const std::int64_t t : {place.drawn_t, place.recorded_t}) {
        if (t < 0 || t > kMaxTimeNs) {
          return wrong_type("places", "times " + range_text(0, kMaxTimeNs));
        }
      }
      out.push_back(std::move(place));
    }
    return true;
  }

  const JsonValue& line_;
  std::string& error_;
};

std::string errno_text(int error_number) { return std::strerror(error_number); }

std::optional<std::string> read_file(const std::filesystem::path& file, std::string& error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    error = file.string() + ": cannot open: " + errno_text(errno);
    return std::nullopt;
  }
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = file.string() + ": cannot read";
    return std::nullopt;
  }
  return content;
}

bool is_blank(std::string_view line) noexcept {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Appends the complete lines of one file's content. The text after the last
// newline is a line its writer never finished (one write(2) per line, so
// only a killed process leaves one) and is dropped.
bool append_events(const std::filesystem::path& file, std::string_view content,
                   std::vector<Event>& out, std::string& error) {
  std::size_t line_number = 0;
  std::size_t begin = 0;
  for (std::size_t end = content.find('\n'); end != std::string_view::npos;
       begin = end + 1, end = content.find('\n', begin)) {
    ++line_number;
    const std::string_view line = content.substr(begin, end - begin);
    if (is_blank(line)) continue;
    std::string line_error;
    std::optional<Event> event = parse_event_line(line, line_error);
    if (!event) {
      error = file.string() + ":" + std::to_string(line_number) + ": " + line_error;
      return false;
    }
    out.push_back(std::move(*event));
  }
  return true;
}

}  // namespace

std::string_view to_string(EventKind kind) noexcept {
  for (const auto& [candidate, name] : kEventKindNames) {
    if (candidate == kind) return name;
  }
  return "unknown";
}

std::string_view to_string(Phase phase) noexcept {
  for (const auto& [candidate, name] : kPhaseNames) {
    if (candidate == phase) return name;
  }
  return "unknown";
}

std::optional<EventKind> parse_event_kind(std::string_view text) noexcept {
  for (const auto& [kind, name] : kEventKindNames) {
    if (name == text) return kind;
  }
  return std::nullopt;
}

std::optional<Phase> parse_phase(std::string_view text) noexcept {
  for (const auto& [phase, name] : kPhaseNames) {
    if (name == text) return phase;
  }
  return std::nullopt;
}

std::int64_t reference_now_ns() noexcept {
  // The raw system call: a process's vDSO clock can be redirected (libfaketime,
  // or the harness's own client clock faults); the kernel's cannot.
  timespec ts{};
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string to_json_line(const Event& event) { return JsonValue(event_to_object(event)).dump(); }

std::optional<Event> parse_event_line(std::string_view line, std::string& error) {
  JsonParseResult parsed = parse_json(line);
  if (!parsed.value) {
    error = "offset " + std::to_string(parsed.error_offset) + ": " + parsed.error;
    return std::nullopt;
  }
  if (!parsed.value->is_object()) {
    error = "expected a JSON object";
    return std::nullopt;
  }
  return EventReader(*parsed.value, error).read();
}

HistoryLoadResult load_history(const std::vector<std::filesystem::path>& files) {
  HistoryLoadResult result;
  History history;
  for (const std::filesystem::path& file : files) {
    std::optional<std::string> content = read_file(file, result.error);
    if (!content || !append_events(file, *content, history.events, result.error)) return result;
  }
  // Stable: events of equal t keep file order, then line order.
  std::stable_sort(history.events.begin(), history.events.end(),
                   [](const Event& a, const Event& b) { return a.t < b.t; });
  result.history = std::move(history);
  return result;
}

bool save_history(const History& history, const std::filesystem::path& file, std::string& error) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = file.string() + ": cannot create: " + errno_text(errno);
    return false;
  }
  for (const Event& event : history.events) out << to_json_line(event) << '\n';
  out.flush();
  if (!out) {
    error = file.string() + ": write failed";
    return false;
  }
  return true;
}

HistoryWriter::HistoryWriter(const std::filesystem::path& file)
    : fd_(::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {}

HistoryWriter::~HistoryWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void HistoryWriter::write(const Event& event) noexcept {
  if (fd_ < 0) return;
  std::string line;
  try {
    line = to_json_line(event);
    line.push_back('\n');
  } catch (...) {
    return;  // out of memory: the event is lost, the process goes on
  }
  // One write(2) per line, so a reader sees whole lines only, except the
  // last of a process killed in the middle of it. The loop covers EINTR
  // and the short writes a full disk can cause.
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t written = ::write(fd_, rest.data(), rest.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
}

bool acquire_reply_grants(const Event& acquire, const NodeReply& reply) noexcept {
  return reply.status == "granted" || (reply.status == "extended" && acquire.resources.size() > 1);
}

std::vector<NodeReply> node_replies(const std::vector<NodeOutcome>& outcomes) {
  std::vector<NodeReply> replies;
  replies.reserve(outcomes.size());
  for (const NodeOutcome& outcome : outcomes) {
    replies.push_back(NodeReply{static_cast<int>(outcome.node),
                                std::string(to_string(outcome.status)), outcome.fence_counter});
  }
  return replies;
}

}  // namespace redlock::chaos
