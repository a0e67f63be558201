#include "redlock/async_client.hpp"

#include "operations/acquire_operation.hpp"
#include "operations/client_core.hpp"
#include "operations/extend_operation.hpp"
#include "operations/inspect_operation.hpp"
#include "operations/launch.hpp"
#include "operations/observe_operation.hpp"
#include "operations/release_operation.hpp"
#include "operations/set_turn_operation.hpp"
#include "protocol/same_server.hpp"

namespace redlock {

void OperationHandle::cancel() const {
  if (auto op = op_.lock()) op->cancel();
}

AsyncClient::AsyncClient(uv_loop_t* loop, QuorumConfig config, ClientOptions options)
    : core_(detail::ClientCore::create(loop, std::move(config), options)) {}

AsyncClient::~AsyncClient() { close(); }

OperationHandle AsyncClient::acquire(const Resource& resource, const AcquireOptions& options,
                                     AcquireCallback callback) {
  return OperationHandle(
      detail::launch<detail::AcquireOperation>(*core_, resource, options, std::move(callback)));
}

OperationHandle AsyncClient::acquire(const std::vector<Resource>& resources,
                                     const AcquireOptions& options, AcquireCallback callback) {
  return OperationHandle(
      detail::SetTurnOperation::applies(*core_, resources, options)
          ? std::static_pointer_cast<detail::Operation>(detail::launch<detail::SetTurnOperation>(
                *core_, resources, options, std::move(callback)))
          : std::static_pointer_cast<detail::Operation>(detail::launch<detail::AcquireOperation>(
                *core_, resources, options, std::move(callback))));
}

OperationHandle AsyncClient::acquire(const Semaphore& semaphore, const AcquireOptions& options,
                                     AcquireCallback callback) {
  return OperationHandle(
      detail::launch<detail::AcquireOperation>(*core_, semaphore, options, std::move(callback)));
}

OperationHandle AsyncClient::extend(const Lock& lock, const ExtendOptions& options,
                                    ExtendCallback callback) {
  return OperationHandle(
      detail::launch<detail::ExtendOperation>(*core_, lock, options, std::move(callback)));
}

OperationHandle AsyncClient::release(const Lock& lock, ReleaseCallback callback) {
  return OperationHandle(
      detail::launch<detail::ReleaseOperation>(*core_, lock, std::move(callback)));
}

OperationHandle AsyncClient::inspect(const Resource& resource, InspectCallback callback) {
  return OperationHandle(
      detail::launch<detail::InspectOperation>(*core_, resource, std::move(callback)));
}

OperationHandle AsyncClient::inspect(const Semaphore& semaphore, InspectCallback callback) {
  return OperationHandle(
      detail::launch<detail::InspectOperation>(*core_, semaphore, std::move(callback)));
}

OperationHandle AsyncClient::leader(const Election& election, LeaderCallback callback) {
  if (election.name().empty()) {
    return observe(election, {}, std::move(callback));  // reports invalid_argument once
  }
  return inspect(election.resource(), [callback = std::move(callback)](Inspection inspection) {
    if (callback) callback(leader_of(std::move(inspection)));
  });
}

OperationHandle AsyncClient::observe(const Election& election, const ObserveOptions& options,
                                     LeaderCallback callback) {
  return OperationHandle(
      detail::launch<detail::ObserveOperation>(*core_, election, options, std::move(callback)));
}

void AsyncClient::close(std::function<void()> on_closed) {
  if (core_) core_->close(std::move(on_closed));
}

const QuorumConfig& AsyncClient::config() const noexcept { return core_->config(); }

std::size_t AsyncClient::quorum() const noexcept { return core_->quorum(); }

std::vector<NodeHealth> AsyncClient::node_health() const {
  std::vector<NodeHealth> health;
  for (const auto& node : core_->nodes()) health.push_back(node->health());
  std::vector<std::string_view> run_ids;
  run_ids.reserve(health.size());
  for (const NodeHealth& node : health) run_ids.emplace_back(node.run_id);
  const std::vector<std::optional<std::size_t>> same = detail::earlier_same_server(run_ids);
  for (std::size_t i = 0; i < health.size(); ++i) {
    if (same[i]) health[i].same_server_as = health[*same[i]].name;
  }
  // A member that is a Redis Cluster and another member that are one
  // cluster, or share a server: their votes fail (and grant) together.
  for (const detail::SharedMembers& pair : core_->members_sharing()) {
    health[pair.first].warnings.push_back(
        detail::not_independent_text(pair, health[pair.second].name));
    health[pair.second].warnings.push_back(
        detail::not_independent_text(pair, health[pair.first].name));
  }
  return health;
}

std::shared_ptr<Metrics> AsyncClient::metrics() const noexcept { return core_->metrics_handle(); }

}  // namespace redlock
