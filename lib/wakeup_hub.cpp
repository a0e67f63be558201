#include "wakeup_hub.hpp"

#include <algorithm>

#include "client_core.hpp"

namespace redlock::detail {

WakeupHub::WakeupHub(ClientCore& core) : core_(core) {}

void WakeupHub::ensure_connections() {
  if (!subscribers_.empty() || closed_) return;
  const QuorumConfig& config = core_.config();
  for (std::size_t i = 0; i < config.nodes.size(); ++i) {
    auto connection = std::make_unique<NodeConnection>(core_, i, config.nodes[i], config.lock);
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

void WakeupHub::on_message(std::string_view channel, std::string_view released_value) {
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end()) return;
  if (entry->second.last_release == released_value) return;  // another node's copy
  entry->second.last_release = std::string(released_value);
  // Copy first: a woken waiter leaves, which edits the list (and may erase
  // the channel).
  std::vector<std::shared_ptr<Wakeable>> candidates;
  for (const auto& candidate : entry->second.waiters) {
    if (auto locked = candidate.lock()) candidates.push_back(std::move(locked));
  }
  for (const auto& waiter : candidates) {
    if (waiter->wake()) return;
  }
}

void WakeupHub::close() {
  if (closed_) return;
  closed_ = true;
  waiters_.clear();
  for (auto& connection : subscribers_) connection->close();
}

}  // namespace redlock::detail
