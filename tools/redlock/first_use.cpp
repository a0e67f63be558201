#include "first_use.hpp"

#include <hiredis/hiredis.h>

#include <string>
#include <string_view>

#include "report.hpp"
#include "scripts/scripts.hpp"
#include "text/escape.hpp"
#include "transport/blocking_session.hpp"

namespace redlock::cli {

void print_first_use_note(const QuorumConfig& config, const std::vector<NodeOutcome>& nodes) {
  for (const NodeOutcome& outcome : nodes) {
    // Within a recovery delay (an unmarked node reports no time left).
    if (outcome.status != NodeStatus::recovering || outcome.holder_ttl_ms < 0) continue;
    if (outcome.node >= config.nodes.size()) continue;
    detail::BlockingSession session(config.nodes[outcome.node]);
    session.set_deadline(SteadyClock::now() + config.lock.connect_timeout,
                         config.lock.connect_timeout);
    if (!session.open()) continue;
    const detail::BlockingReply reply =
        session.command({"GET", detail::recovering_key(config.lock.key_prefix)});
    if (!reply || reply->type != REDIS_REPLY_STRING) continue;
    const std::string_view story = detail::first_use_story({reply->str, reply->len});
    if (story.empty()) continue;
    print_error("note: " + detail::escape_text(story) +
                ". If this quorum is brand-new, `redlock init` declares it so; next step: "
                "docs/operations.md#first-use");
    return;
  }
}

}  // namespace redlock::cli
