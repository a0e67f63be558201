#include "operations/wakeup_hub.hpp"

#include <algorithm>

namespace redlock::detail {

namespace {
// Releases remembered per channel (a value, and the named copies of it
// acted on). A release's copies arrive within about one round trip of each
// other, during which only a few other releases of the same resource can
// happen.
constexpr std::size_t kReleasesRemembered = 16;
}  // namespace

WakeupHub::WakeupHub(LoopContext& loop, const QuorumConfig& config, Metrics& metrics)
    : loop_(loop), config_(config), metrics_(metrics) {}

void WakeupHub::ensure_connections() {
  if (!subscribers_.empty() || closed_) return;
  for (std::size_t i = 0; i < config_.nodes.size(); ++i) {
    auto connection =
        std::make_unique<NodeConnection>(loop_, metrics_.node(config_.nodes[i].name), i,
                                         config_.nodes[i], config_.lock, SessionSetup{});
    connection->set_push_handler(
        [this](std::string_view channel, std::string_view value) { on_message(channel, value); });
    NodeConnection* raw = connection.get();
    // After every (re)connect the node has forgotten our subscriptions.
    connection->set_ready_handler([this, raw] {
      for (const auto& entry : waiters_) raw->send_command({"SUBSCRIBE", entry.first});
    });
    connection->start();
    subscribers_.push_back(std::move(connection));
  }
}

void WakeupHub::wait(const std::string& channel, const std::shared_ptr<Wakeable>& waiter) {
  if (closed_) return;
  ensure_connections();
  auto [entry, inserted] = waiters_.try_emplace(channel);
  entry->second.waiters.push_back(waiter);
  if (inserted) subscribe_everywhere(channel, true);
}

void WakeupHub::leave(const std::string& channel, const Wakeable* waiter) {
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end()) return;
  auto& list = entry->second.waiters;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [waiter](const std::weak_ptr<Wakeable>& candidate) {
                              auto locked = candidate.lock();
                              return !locked || locked.get() == waiter;
                            }),
             list.end());
  if (list.empty()) {
    waiters_.erase(entry);
    if (!closed_) subscribe_everywhere(channel, false);
  }
}

void WakeupHub::subscribe_everywhere(const std::string& channel, bool subscribe) {
  for (auto& connection : subscribers_) {
    connection->send_command({subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE", channel});
  }
}

void WakeupHub::on_message(std::string_view channel, std::string_view message) {
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end()) return;
  // "@id value" names the waiter whose turn it is; a bare value names no
  // one (lock values never start with '@').
  std::string_view named;
  std::string_view released_value = message;
  if (message.starts_with('@')) {
    const std::size_t space = message.find(' ');
    if (space == std::string_view::npos) return;  // not a message this library sends
    named = message.substr(1, space - 1);
    released_value = message.substr(space + 1);
  }
  const bool first_copy = !seen_before(entry->second, released_value);
  if (!named.empty() && seen_before(entry->second, message)) return;
  if (named.empty() && !first_copy) return;  // another node's copy
  // Copy first: waking may end a waiter's acquire, and it then leaves, which
  // edits the list (and may erase the channel).
  std::vector<std::shared_ptr<Wakeable>> candidates;
  for (const auto& candidate : entry->second.waiters) {
    if (auto locked = candidate.lock()) candidates.push_back(std::move(locked));
  }
  if (!named.empty()) {
    for (const auto& waiter : candidates) {
      if (waiter->waiter_id() == named) {
        (void)waiter->wake();
        break;
      }
    }
  }
  if (!first_copy) return;
  // The release's first copy: one of the waiters outside the line (none
  // when it named someone and every waiter here is in line).
  for (const auto& waiter : candidates) {
    if (!named.empty() && !waiter->waiter_id().empty()) continue;
    if (waiter->wake()) return;
  }
}

bool WakeupHub::seen_before(Channel& channel, std::string_view seen) {
  auto& recent = channel.recent_releases;
  if (std::find(recent.begin(), recent.end(), seen) != recent.end()) return true;
  recent.emplace_back(seen);
  if (recent.size() > kReleasesRemembered) recent.pop_front();
  return false;
}

void WakeupHub::close() {
  if (closed_) return;
  closed_ = true;
  waiters_.clear();
  for (auto& connection : subscribers_) connection->close();
}

}  // namespace redlock::detail
