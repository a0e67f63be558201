#include "transport/loop_turn.hpp"

#include <algorithm>

namespace redlock::detail {

namespace {
struct PrepareHandle {
  uv_prepare_t prepare;
  LoopTurn* owner;
  std::function<void()> on_closed;
};
// Tasks that keep posting tasks while the client closes could spin forever;
// past this many rounds the rest are dropped.
constexpr int kMaxDrainRounds = 1000;
}  // namespace

LoopTurn::LoopTurn(uv_loop_t* loop, std::function<void()> on_handle_closed)
    : on_handle_closed_(std::move(on_handle_closed)) {
  auto* holder = new PrepareHandle{};
  holder->owner = this;
  uv_prepare_init(loop, &holder->prepare);
  holder->prepare.data = holder;
  handle_ = &holder->prepare;
}

LoopTurn::~LoopTurn() { drain_and_close(); }

void LoopTurn::post(std::function<void()> task) {
  tasks_.push_back(std::move(task));
  activate();
}

void LoopTurn::want_flush(Flushable* target) {
  if (std::find(dirty_.begin(), dirty_.end(), target) == dirty_.end()) dirty_.push_back(target);
  activate();
}

void LoopTurn::forget(Flushable* target) noexcept {
  dirty_.erase(std::remove(dirty_.begin(), dirty_.end(), target), dirty_.end());
}

void LoopTurn::activate() {
  if (active_ || closed_) return;
  active_ = true;
  uv_prepare_start(handle_, &LoopTurn::on_prepare);
}

void LoopTurn::on_prepare(uv_prepare_t* handle) {
  auto* holder = static_cast<PrepareHandle*>(handle->data);
  if (holder->owner != nullptr) holder->owner->run();
}

void LoopTurn::run() {
  while (!closed_ && (!tasks_.empty() || !dirty_.empty())) {
    while (!closed_ && !tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      task();
    }
    // Swap with a kept scratch vector: both keep their capacity, so a turn
    // allocates nothing here.
    flushing_.clear();
    flushing_.swap(dirty_);
    for (Flushable* target : flushing_) target->flush();
  }
  if (!closed_) {
    active_ = false;
    uv_prepare_stop(handle_);
  }
}

void LoopTurn::drain_and_close() {
  if (closed_) return;
  for (int round = 0; round < kMaxDrainRounds && !tasks_.empty(); ++round) {
    std::deque<std::function<void()>> batch;
    batch.swap(tasks_);
    for (auto& task : batch) task();
  }
  closed_ = true;
  tasks_.clear();
  dirty_.clear();
  auto* holder = static_cast<PrepareHandle*>(handle_->data);
  holder->owner = nullptr;
  holder->on_closed = std::move(on_handle_closed_);
  uv_prepare_stop(handle_);
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) {
    auto* closing = static_cast<PrepareHandle*>(h->data);
    auto done = std::move(closing->on_closed);
    delete closing;
    if (done) done();
  });
}

}  // namespace redlock::detail
