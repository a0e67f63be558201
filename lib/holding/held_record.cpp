#include "holding/held_record.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

PackedLock::PackedLock(Lock lock)
    : names_(lock.resource.str() + lock.value.str()),
      resource_size_(static_cast<std::uint32_t>(lock.resource.str().size())),
      ttl_(lock.ttl),
      started_(lock.started),
      valid_until_(lock.valid_until),
      fence_(lock.fence) {
  const bool rare = !lock.resources.empty() || !lock.fences.empty() || lock.permit.has_value() ||
                    lock.permits != 0 || lock.shared || !lock.queue_id.empty() ||
                    lock.kind != LockKind::mutex;
  if (rare) {
    rare_ = std::make_unique<const Rare>(Rare{std::move(lock.resources), std::move(lock.fences),
                                              lock.permit, lock.permits, lock.shared,
                                              std::move(lock.queue_id), lock.kind});
  }
}

Lock PackedLock::unpack() const {
  Lock lock{Resource(names_.substr(0, resource_size_)),
            LockValue(names_.substr(resource_size_)),
            ttl_,
            started_,
            valid_until_,
            fence_};
  if (rare_) {
    lock.resources = rare_->resources;
    lock.fences = rare_->fences;
    lock.permit = rare_->permit;
    lock.permits = rare_->permits;
    lock.shared = rare_->shared;
    lock.queue_id = rare_->queue_id;
    lock.kind = rare_->kind;
  }
  return lock;
}

namespace {

// The status byte: the NodeStatus in the low bits, and which optional parts
// follow the latency.
constexpr std::uint8_t kStatusMask = 0x0f;
constexpr std::uint8_t kHasNumbers = 0x10;  // a byte of kNumber* bits, then those numbers
constexpr std::uint8_t kHasDetail = 0x20;
constexpr std::uint8_t kHasName = 0x40;   // a name other than the configured one
constexpr std::uint8_t kHasIndex = 0x80;  // a node index other than the position
constexpr std::uint8_t kNumberHolderTtl = 0x01;
constexpr std::uint8_t kNumberPermit = 0x02;
constexpr std::uint8_t kNumberFence = 0x04;
static_assert(static_cast<int>(NodeStatus::not_asked) <= kStatusMask);

std::uint64_t zigzag(std::int64_t value) noexcept {
  return (static_cast<std::uint64_t>(value) << 1U) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) noexcept {
  return static_cast<std::int64_t>(value >> 1U) ^ -static_cast<std::int64_t>(value & 1U);
}

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(value | 0x80));
    value >>= 7U;
  }
  out.push_back(static_cast<std::uint8_t>(value));
}

void put_text(std::vector<std::uint8_t>& out, const std::string& text) {
  put_varint(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

// Reads what put_varint and put_text wrote; the bytes are our own, so they
// are well formed.
class Reader {
 public:
  explicit Reader(const std::uint8_t* bytes) noexcept : at_(bytes) {}
  std::uint8_t byte() noexcept { return *at_++; }
  std::uint64_t varint() noexcept {
    std::uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t next = *at_++;
      value |= static_cast<std::uint64_t>(next & 0x7fU) << shift;
      if ((next & 0x80U) == 0) return value;
    }
  }
  std::string text() {
    const auto size = static_cast<std::size_t>(varint());
    std::string text(reinterpret_cast<const char*>(at_), size);
    at_ += size;
    return text;
  }

 private:
  const std::uint8_t* at_;
};

}  // namespace

AcquireRecord::AcquireRecord(const AcquireResult& result, std::shared_ptr<const NodeNames> names)
    : names_(std::move(names)) {
  std::vector<std::uint8_t> out;
  out.reserve(8 + 4 * result.nodes.size());
  put_varint(out, zigzag(result.validity.count()));
  put_varint(out, zigzag(result.attempts));
  out.push_back(result.ticket ? 1 : 0);
  if (result.ticket) {
    put_varint(out, result.ticket->number);
    put_varint(out, zigzag(result.ticket->drawn_at.time_since_epoch().count()));
    put_varint(out, zigzag(result.ticket->recorded_at.time_since_epoch().count()));
  }
  put_varint(out, result.nodes.size());
  for (std::size_t i = 0; i < result.nodes.size(); ++i) {
    const NodeOutcome& node = result.nodes[i];
    const bool configured_name =
        names_ && node.node < names_->size() && (*names_)[node.node] == node.name;
    std::uint8_t numbers = 0;
    if (node.holder_ttl_ms != -1) numbers |= kNumberHolderTtl;
    if (node.permit != -1) numbers |= kNumberPermit;
    if (node.fence_counter != 0) numbers |= kNumberFence;
    auto head = static_cast<std::uint8_t>(node.status);
    if (numbers != 0) head |= kHasNumbers;
    if (!node.detail.empty()) head |= kHasDetail;
    if (!configured_name) head |= kHasName;
    if (node.node != i) head |= kHasIndex;
    out.push_back(head);
    put_varint(out, zigzag(node.latency.count()));
    if (numbers != 0) {
      out.push_back(numbers);
      if ((numbers & kNumberHolderTtl) != 0) put_varint(out, zigzag(node.holder_ttl_ms));
      if ((numbers & kNumberPermit) != 0) put_varint(out, zigzag(node.permit));
      if ((numbers & kNumberFence) != 0) put_varint(out, zigzag(node.fence_counter));
    }
    if (!node.detail.empty()) put_text(out, node.detail);
    if (!configured_name) put_text(out, node.name);
    if (node.node != i) put_varint(out, node.node);
  }
  packed_ = std::make_unique_for_overwrite<std::uint8_t[]>(out.size());
  std::copy(out.begin(), out.end(), packed_.get());
}

AcquireResult AcquireRecord::unpack(Lock lock) const {
  AcquireResult result;
  result.lock = std::move(lock);
  if (!packed_) return result;
  Reader in(packed_.get());
  result.validity = Milliseconds(unzigzag(in.varint()));
  result.attempts = static_cast<int>(unzigzag(in.varint()));
  if (in.byte() != 0) {
    AcquireResult::Ticket ticket;
    ticket.number = in.varint();
    ticket.drawn_at = TimePoint(SteadyClock::duration(unzigzag(in.varint())));
    ticket.recorded_at = TimePoint(SteadyClock::duration(unzigzag(in.varint())));
    result.ticket = ticket;
  }
  const auto count = static_cast<std::size_t>(in.varint());
  result.nodes.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    NodeOutcome& node = result.nodes[i];
    const std::uint8_t head = in.byte();
    node.node = i;
    node.status = static_cast<NodeStatus>(head & kStatusMask);
    node.latency = Microseconds(unzigzag(in.varint()));
    if ((head & kHasNumbers) != 0) {
      const std::uint8_t numbers = in.byte();
      if ((numbers & kNumberHolderTtl) != 0) node.holder_ttl_ms = unzigzag(in.varint());
      if ((numbers & kNumberPermit) != 0) node.permit = unzigzag(in.varint());
      if ((numbers & kNumberFence) != 0) node.fence_counter = unzigzag(in.varint());
    }
    if ((head & kHasDetail) != 0) node.detail = in.text();
    if ((head & kHasName) != 0) node.name = in.text();
    if ((head & kHasIndex) != 0) node.node = static_cast<std::size_t>(in.varint());
    if ((head & kHasName) == 0) node.name = (*names_)[node.node];
  }
  return result;
}

}  // namespace redlock::detail
