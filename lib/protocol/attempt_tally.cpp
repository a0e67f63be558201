#include "protocol/attempt_tally.hpp"

#include "protocol/permit_tally.hpp"

namespace redlock::detail {
namespace {

class OneKeyTally final : public AttemptTally {
 public:
  void reset(std::size_t nodes) override { votes_ = QuorumTally(nodes); }
  void grant(std::int64_t /*permit*/) noexcept override { votes_.yes(); }
  void refuse() noexcept override { votes_.no(); }
  void conflict() noexcept override { votes_.no(); }
  [[nodiscard]] Decision decision() const noexcept override { return votes_.decision(); }
  [[nodiscard]] bool conflicted() const noexcept override { return false; }
  [[nodiscard]] bool split(std::size_t busy) const noexcept override {
    return votes_.yes_count() > 0 && busy > 0;
  }
  [[nodiscard]] std::size_t held_elsewhere(std::size_t busy) const noexcept override {
    return busy;
  }
  [[nodiscard]] std::uint32_t winner() const noexcept override { return 0; }

 private:
  QuorumTally votes_{0};
};

class PermitVotes final : public AttemptTally {
 public:
  explicit PermitVotes(std::uint32_t permits) : permits_(permits) {}

  void reset(std::size_t nodes) override {
    votes_.reset(nodes, permits_);
    conflicted_ = false;
  }
  void grant(std::int64_t permit) noexcept override {
    // A permit outside the count is no grant of any permit this attempt
    // could hold.
    if (permit < 0 || permit >= static_cast<std::int64_t>(permits_)) return votes_.refuse();
    votes_.grant(static_cast<std::uint32_t>(permit));
  }
  void refuse() noexcept override { votes_.refuse(); }
  void conflict() noexcept override {
    conflicted_ = true;
    votes_.refuse();
  }
  [[nodiscard]] Decision decision() const noexcept override {
    return conflicted_ ? Decision::lost : votes_.decision();
  }
  [[nodiscard]] bool conflicted() const noexcept override { return conflicted_; }
  [[nodiscard]] bool split(std::size_t /*busy*/) const noexcept override {
    return !conflicted_ && votes_.grants() > 0;
  }
  [[nodiscard]] std::size_t held_elsewhere(std::size_t busy) const noexcept override {
    return busy + (split(busy) ? votes_.grants() : 0);
  }
  [[nodiscard]] std::uint32_t winner() const noexcept override {
    return votes_.winner().value_or(0);
  }

 private:
  std::uint32_t permits_;
  PermitTally votes_;
  bool conflicted_ = false;
};

}  // namespace

std::unique_ptr<AttemptTally> one_key_tally() { return std::make_unique<OneKeyTally>(); }

std::unique_ptr<AttemptTally> permit_tally(std::uint32_t permits) {
  return std::make_unique<PermitVotes>(permits);
}

}  // namespace redlock::detail
