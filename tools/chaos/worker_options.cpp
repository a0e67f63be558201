#include "worker_options.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace redlock::chaos {
namespace {

bool parse_long(std::string_view text, long long& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<WorkerOptions> parse_worker_options(int argc, char** argv) {
  WorkerOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--fenced") {
      options.fenced = true;
      continue;
    }
    if (flag == "--renew") {
      options.renew = true;
      continue;
    }
    if (flag == "--reentrant") {
      options.reentrant = true;
      continue;
    }
    if (flag == "--shared") {
      options.target.shared = true;
      continue;
    }
    if (flag == "--fair") {
      options.target.fair = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "worker: %s needs a value\n", argv[i]);
      return std::nullopt;
    }
    const std::string_view value = argv[++i];
    long long number = 0;
    const bool numeric = parse_long(value, number);
    if (flag == "--kind") {
      if (value == "semaphore") {
        options.target.kind = LockKind::semaphore;
      } else if (value == "election") {
        options.target.kind = LockKind::election;
        options.target.resources = {election_resource()};
      } else if (value == "multi") {
        options.target.kind = LockKind::multi;
        options.target.resources.clear();  // the --resource flags name the set
      } else if (value != "mutex") {
        std::fprintf(stderr, "worker: bad --kind %s\n", argv[i]);
        return std::nullopt;
      }
    } else if (flag == "--permits" && numeric && number > 0) {
      options.target.permits = static_cast<std::uint32_t>(number);
    } else if (flag == "--resource" && !value.empty()) {
      options.target.resources.emplace_back(value);
    } else if (flag == "--config") {
      options.config_path = value;
    } else if (flag == "--history") {
      options.history_path = value;
    } else if (flag == "--resource-port" && numeric) {
      options.resource_port = static_cast<int>(number);
    } else if (flag == "--index" && numeric) {
      options.index = static_cast<int>(number);
    } else if (flag == "--ttl-ms" && numeric) {
      options.ttl = Milliseconds(number);
    } else if (flag == "--retry-delay-ms" && numeric) {
      options.retry_delay = Milliseconds(number);
    } else if (flag == "--wait-ms" && numeric) {
      options.wait = Milliseconds(number);
    } else if (flag == "--cs-ms" && numeric) {
      options.critical_section = Milliseconds(number);
    } else if (flag == "--think-ms" && numeric) {
      options.think = Milliseconds(number);
    } else if (flag == "--duration-ms" && numeric) {
      options.duration = Milliseconds(number);
    } else if (flag == "--start-delay-ms" && numeric) {
      options.start_delay = Milliseconds(number);
    } else if (flag == "--max-renewals" && numeric) {
      options.max_renewals = static_cast<int>(number);
    } else if (flag == "--clock-rate") {
      options.clock_rate = std::strtod(std::string(value).c_str(), nullptr);
    } else {
      std::fprintf(stderr, "worker: bad option %s %s\n", argv[i - 1], argv[i]);
      return std::nullopt;
    }
  }
  if (options.config_path.empty() || options.history_path.empty() || options.resource_port <= 0 ||
      options.clock_rate <= 0) {
    std::fprintf(stderr, "worker: --config, --history, --resource-port are required\n");
    return std::nullopt;
  }
  if (options.target.kind == LockKind::election) {
    options.target.payload = "c" + std::to_string(options.index);
  }
  if (options.target.resources.empty() ||
      (options.target.kind == LockKind::semaphore && options.target.permits == 0)) {
    std::fprintf(stderr, "worker: --kind multi needs --resource, semaphore --permits\n");
    return std::nullopt;
  }
  return options;
}

}  // namespace redlock::chaos
