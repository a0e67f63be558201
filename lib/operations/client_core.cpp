#include "operations/client_core.hpp"

#include "operations/launch.hpp"
#include "operations/recovery_operation.hpp"
#include "protocol/quorum.hpp"

namespace redlock::detail {

namespace {

std::string validate(const QuorumConfig& config) {
  if (config.nodes.empty()) return "no nodes configured";
  if (config.lock.ttl.count() <= 0) return "ttl must be positive";
  if (config.lock.connect_timeout.count() <= 0) return "connect timeout must be positive";
  for (const NodeConfig& node : config.nodes) {
    if (node.host.empty()) return "node " + node.name + " has no host";
  }
  return {};
}

}  // namespace

std::shared_ptr<ClientCore> ClientCore::create(uv_loop_t* loop, QuorumConfig config,
                                               ClientOptions options) {
  std::shared_ptr<ClientCore> core(new ClientCore(loop, std::move(config), options));
  core->self_ = core;
  if (core->config_problem_.empty()) {
    for (auto& node : core->nodes_) node->start();
  }
  return core;
}

ClientCore::ClientCore(uv_loop_t* loop, QuorumConfig config, ClientOptions options)
    : loop_(loop),
      config_(std::move(config)),
      clock_(options.clock != nullptr ? options.clock : &steady_clock_source()),
      metrics_(options.metrics ? options.metrics : std::make_shared<Metrics>()),
      config_problem_(validate(config_)) {
  timers_ = std::make_unique<TimerQueue>(loop_, [this] { handle_closed(); });
  handle_opened();
  turn_ = std::make_unique<LoopTurn>(loop_, [this] { handle_closed(); });
  handle_opened();
  wakeups_ = std::make_unique<WakeupHub>(*this);
  if (!config_problem_.empty()) return;
  nodes_.reserve(config_.nodes.size());
  for (std::size_t i = 0; i < config_.nodes.size(); ++i) {
    nodes_.push_back(std::make_unique<NodeConnection>(*this, i, config_.nodes[i], config_.lock));
  }
}

ClientCore::~ClientCore() = default;

Milliseconds ClientCore::drift_for(Milliseconds ttl) const noexcept {
  return drift_allowance(ttl, config_.lock.drift_factor, config_.lock.drift_ms);
}

void ClientCore::started(const std::shared_ptr<Operation>& op) { live_.emplace(op.get(), op); }

void ClientCore::finished(const Operation* op) noexcept { live_.erase(op); }

void ClientCore::close(std::function<void()> on_closed) {
  if (closing_) return;
  closing_ = true;
  on_closed_ = std::move(on_closed);
  // Abort live operations first: their callbacks may still queue releases,
  // which the connections then try to write once before closing.
  while (!live_.empty()) {
    std::shared_ptr<Operation> op = live_.begin()->second;
    live_.erase(live_.begin());
    op->abort(make_error_code(errc::shutting_down));
  }
  turn_->drain_and_close();
  wakeups_->close();
  for (auto& node : nodes_) node->close();
  timers_->close();
}

namespace {
// A round that could not act (too few nodes answered) is not repeated more
// often than this, however many acquires see an unmarked node.
constexpr Milliseconds kRecoveryPause{250};
}  // namespace

void ClientCore::request_recovery(std::function<void(bool progressed)> done) {
  if (closing_) {
    turn_->post([done = std::move(done)] { done(false); });
    return;
  }
  recovery_waiters_.push_back(std::move(done));
  if (recovery_running_) return;
  if (recovery_ended_ != TimePoint{} && !recovery_progressed_ &&
      clock_->now() - recovery_ended_ < kRecoveryPause) {
    auto waiters = std::move(recovery_waiters_);
    recovery_waiters_.clear();
    turn_->post([waiters = std::move(waiters)] {
      for (const auto& waiter : waiters) waiter(false);
    });
    return;
  }
  recovery_running_ = true;
  launch<RecoveryOperation>(*this);
}

void ClientCore::recovery_finished(bool progressed, const std::string& report) {
  recovery_running_ = false;
  recovery_ended_ = clock_->now();
  recovery_progressed_ = progressed;
  if (!report.empty()) recovery_report_ = report;
  auto waiters = std::move(recovery_waiters_);
  recovery_waiters_.clear();
  for (const auto& waiter : waiters) waiter(progressed);
}

void ClientCore::handle_closed() {
  if (--open_handles_ != 0 || !closing_) return;
  auto on_closed = std::move(on_closed_);
  if (on_closed) on_closed();
  // The last reference may be this one; nothing touches `this` after it.
  std::shared_ptr<ClientCore> keep = std::move(self_);
}

}  // namespace redlock::detail
