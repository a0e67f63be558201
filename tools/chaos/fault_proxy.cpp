#include "fault_proxy.hpp"

#include <arpa/inet.h>
#include <uv.h>

#include <algorithm>
#include <cassert>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

namespace redlock::chaos {

const char* to_string(LinkMode mode) noexcept {
  switch (mode) {
    case LinkMode::pass:
      return "pass";
    case LinkMode::delay:
      return "delay";
    case LinkMode::blackhole:
      return "blackhole";
    case LinkMode::hold:
      return "hold";
    case LinkMode::reset:
      return "reset";
    case LinkMode::timeout:
      return "timeout";
  }
  return "unknown";
}

namespace {

constexpr std::size_t kReadBufferSize = std::size_t{64} << 10;
// A sink whose libuv write queue holds more than kPauseAbove bytes stops its
// source from being read until the queue drains below kResumeBelow: without
// that, a fast sender and a slow receiver would grow the queue without bound.
constexpr std::size_t kPauseAbove = std::size_t{1} << 20;
constexpr std::size_t kResumeBelow = std::size_t{256} << 10;
constexpr int kListenBacklog = 128;

std::error_code uv_error(int status) { return {-status, std::generic_category()}; }

template <typename Handle>
uv_handle_t* as_handle(Handle* handle) {
  return reinterpret_cast<uv_handle_t*>(handle);
}

uv_stream_t* as_stream(uv_tcp_t* tcp) { return reinterpret_cast<uv_stream_t*>(tcp); }

// Closes a handle that no object refers to and frees it from its close
// callback, the only point where libuv no longer touches it.
template <typename Handle>
void close_and_delete(Handle* handle) {
  uv_close(as_handle(handle),
           [](uv_handle_t* closed) noexcept { delete reinterpret_cast<Handle*>(closed); });
}

// Closes with RST; a socket that cannot take SO_LINGER (never connected)
// is closed normally instead.
void reset_and_close(uv_tcp_t* tcp, uv_close_cb on_closed) {
  if (uv_tcp_close_reset(tcp, on_closed) != 0) uv_close(as_handle(tcp), on_closed);
}

std::uint64_t to_nanoseconds(std::chrono::milliseconds delay) {
  return delay.count() <= 0 ? 0 : static_cast<std::uint64_t>(delay.count()) * 1'000'000u;
}

// Rounded up, so a timer never fires before the chunk is due.
std::uint64_t to_timer_milliseconds(std::uint64_t nanoseconds) {
  return (nanoseconds + 999'999u) / 1'000'000u;
}

struct DirectionMode {
  LinkMode mode = LinkMode::pass;
  std::chrono::milliseconds delay{0};
};

// The modes in which nothing gets through and nothing is lost while they
// last: a partition that TCP's retransmissions bridge once it heals.
bool keeps_back(LinkMode mode) { return mode == LinkMode::blackhole || mode == LinkMode::timeout; }

class Connection;

struct Link {
  FaultProxy::LinkId id = 0;
  std::string name;
  sockaddr_storage target{};
  std::size_t max_buffered_bytes = 0;
  uv_tcp_t* listener = nullptr;
  DirectionMode up;
  DirectionMode down;
  ProxyStats stats;
  // The connections that are open; a closing one has left the set.
  std::unordered_set<Connection*> connections;

  [[nodiscard]] bool resetting() const {
    return up.mode == LinkMode::reset || down.mode == LinkMode::reset;
  }
  [[nodiscard]] const DirectionMode& mode(Direction direction) const {
    return direction == Direction::up ? up : down;
  }
};

// Bytes read but not yet written: kept back, or waiting for their delay.
struct Chunk {
  std::uint64_t arrival_ns = 0;  // uv_hrtime when read, or when keeping them ended
  std::vector<char> bytes;
};

// One direction of a connection: bytes read from `source` go to `sink`.
struct Flow {
  Connection* connection = nullptr;
  Direction direction = Direction::up;
  uv_tcp_t* source = nullptr;
  uv_tcp_t* sink = nullptr;
  uv_timer_t* timer = nullptr;  // delay mode: fires when the front chunk is due
  std::deque<Chunk> pending;    // in arrival order
  std::size_t pending_bytes = 0;
  std::size_t writes_in_flight = 0;
  bool source_ended = false;  // EOF or read error on the source
  bool sink_busy = false;     // the sink's write queue is long: do not read
  bool reading = false;       // uv_read_start is in effect on the source
  std::vector<char> read_buffer;
};

struct WriteRequest {
  uv_write_t request{};
  Flow* flow = nullptr;
  std::vector<char> bytes;
};

enum class Closing { graceful, reset };

// One accepted client and its connection to the link's target. It owns
// itself: it is deleted once its four handles (two sockets, two timers)
// have closed. Callbacks that arrive while it is closing (cancelled writes,
// a cancelled connect) see `closing_` and do nothing.
//
// The callbacks are noexcept: the only thing that can throw in them is an
// allocation failure, and terminating is better than unwinding through C.
class Connection {
 public:
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts forwarding `client` (accepted) to the link's target.
  static void open(Link& link, uv_tcp_t* client) {
    auto* connection = new Connection(link, client);
    connection->connect();
  }

  // The link's mode for `direction` changed from `previous`; applies the new
  // mode to the bytes this direction holds.
  void on_mode_changed(Direction direction, LinkMode previous) {
    Flow& flow = direction == Direction::up ? up_ : down_;
    if (previous == LinkMode::hold || keeps_back(previous)) {
      // Kept bytes count as arriving now, so a delay runs from the change.
      const std::uint64_t now = uv_hrtime();
      for (Chunk& chunk : flow.pending) chunk.arrival_ns = now;
    }
    uv_timer_stop(flow.timer);
    switch (link_.mode(direction).mode) {
      case LinkMode::pass:
        while (!flow.pending.empty() && !closing_) send_front(flow);
        break;
      case LinkMode::delay:
        deliver_due(flow);
        break;
      case LinkMode::blackhole:
      case LinkMode::hold:
      case LinkMode::timeout:
      case LinkMode::reset:  // the link resets the connection itself
        break;
    }
    update_reading(flow);
    finish_if_drained(flow);
  }

  void close(Closing how) {
    if (closing_) return;
    closing_ = true;
    link_.connections.erase(this);
    for (Flow* flow : {&up_, &down_}) {
      flow->pending.clear();
      flow->pending_bytes = 0;
      uv_close(as_handle(flow->timer), on_timer_closed);
    }
    if (how == Closing::reset) {
      reset_and_close(up_.source, on_tcp_closed);
      if (connected_) {
        reset_and_close(down_.source, on_tcp_closed);
      } else {
        uv_close(as_handle(down_.source), on_tcp_closed);
      }
    } else {
      uv_close(as_handle(up_.source), on_tcp_closed);
      uv_close(as_handle(down_.source), on_tcp_closed);
    }
  }

  [[nodiscard]] std::size_t buffered_bytes() const {
    return up_.pending_bytes + down_.pending_bytes;
  }

 private:
  static constexpr int kHandleCount = 4;

  Connection(Link& link, uv_tcp_t* client) : link_(link) {
    uv_loop_t* loop = client->loop;
    auto* node = new uv_tcp_t;
    uv_tcp_init(loop, node);
    init_flow(up_, Direction::up, client, node);
    init_flow(down_, Direction::down, node, client);
    connect_request_.data = this;
    link_.connections.insert(this);
  }
  ~Connection() = default;

  void init_flow(Flow& flow, Direction direction, uv_tcp_t* source, uv_tcp_t* sink) {
    flow.connection = this;
    flow.direction = direction;
    flow.source = source;
    flow.sink = sink;
    source->data = &flow;
    flow.timer = new uv_timer_t;
    uv_timer_init(source->loop, flow.timer);
    flow.timer->data = &flow;
  }

  void connect() {
    const int status =
        uv_tcp_connect(&connect_request_, down_.source,
                       reinterpret_cast<const sockaddr*>(&link_.target), on_connected);
    if (status < 0) close(Closing::reset);
  }

  static void on_connected(uv_connect_t* request, int status) noexcept {
    auto* self = static_cast<Connection*>(request->data);
    if (self->closing_) return;
    if (status < 0) {
      // The target is down: the client sees what it would see without the
      // proxy, a connection that fails.
      self->close(Closing::reset);
      return;
    }
    self->connected_ = true;
    uv_tcp_nodelay(self->up_.source, 1);
    uv_tcp_nodelay(self->down_.source, 1);
    self->update_reading(self->up_);
    self->update_reading(self->down_);
  }

  // While a direction keeps bytes back, the proxy reads no more than the
  // bound: the rest waits in the kernel's buffers and the sender's TCP
  // window closes, which is what a partition does to a live connection.
  [[nodiscard]] std::size_t room_to_keep(const Flow& flow) const {
    if (!keeps_back(link_.mode(flow.direction).mode)) return kReadBufferSize;
    const std::size_t bound = link_.max_buffered_bytes;
    return flow.pending_bytes >= bound ? 0 : std::min(kReadBufferSize, bound - flow.pending_bytes);
  }

  // Reads from the source exactly when its bytes have somewhere to go: the
  // connection is up, the sink keeps up, and a direction that keeps bytes
  // back has room for more.
  void update_reading(Flow& flow) {
    if (closing_) return;  // uv_close stops the reading itself
    const bool wanted =
        connected_ && !flow.source_ended && !flow.sink_busy && room_to_keep(flow) > 0;
    if (wanted == flow.reading) return;
    if (!wanted) {
      uv_read_stop(as_stream(flow.source));
      flow.reading = false;
      return;
    }
    if (uv_read_start(as_stream(flow.source), on_alloc, on_read) < 0) {
      close(Closing::graceful);
      return;
    }
    flow.reading = true;
  }

  static void on_alloc(uv_handle_t* handle, std::size_t /*suggested_size*/,
                       uv_buf_t* buffer) noexcept {
    auto* flow = static_cast<Flow*>(handle->data);
    const std::size_t size = flow->connection->room_to_keep(*flow);
    flow->read_buffer.resize(kReadBufferSize);
    *buffer = uv_buf_init(flow->read_buffer.data(), static_cast<unsigned>(size));
  }

  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buffer) noexcept {
    auto* flow = static_cast<Flow*>(stream->data);
    Connection* self = flow->connection;
    if (nread > 0) {
      self->on_bytes(*flow, buffer->base, static_cast<std::size_t>(nread));
    } else if (nread == UV_ENOBUFS) {
      // on_alloc had no room: the stream is not over, it just waits.
      self->update_reading(*flow);
    } else if (nread < 0) {
      flow->source_ended = true;
      self->update_reading(*flow);
      self->finish_if_drained(*flow);
    }
  }

  void on_bytes(Flow& flow, const char* data, std::size_t size) {
    std::vector<char> bytes(data, data + size);
    switch (link_.mode(flow.direction).mode) {
      case LinkMode::pass:
        if (flow.pending.empty()) {
          write(flow, std::move(bytes));
        } else if (enqueue(flow, std::move(bytes))) {
          while (!flow.pending.empty() && !closing_) send_front(flow);
        }
        break;
      case LinkMode::delay:
        if (enqueue(flow, std::move(bytes)) && uv_is_active(as_handle(flow.timer)) == 0) {
          deliver_due(flow);
        }
        break;
      case LinkMode::hold:
        enqueue(flow, std::move(bytes));
        break;
      case LinkMode::blackhole:
      case LinkMode::timeout:
        // on_alloc offered no more than the room left, so this stays
        // within the bound; reading stops once the room is gone.
        keep(flow, std::move(bytes));
        update_reading(flow);
        break;
      case LinkMode::reset:
        link_.stats.bytes_dropped += size;
        break;
    }
  }

  // Keeps `bytes` for later; false when that would exceed the bound, in
  // which case the connection has been reset.
  bool enqueue(Flow& flow, std::vector<char> bytes) {
    if (flow.pending_bytes + bytes.size() > link_.max_buffered_bytes) {
      ++link_.stats.overflows;
      ++link_.stats.connections_reset;
      close(Closing::reset);
      return false;
    }
    keep(flow, std::move(bytes));
    return true;
  }

  static void keep(Flow& flow, std::vector<char> bytes) {
    flow.pending_bytes += bytes.size();
    flow.pending.push_back(Chunk{uv_hrtime(), std::move(bytes)});
  }

  void send_front(Flow& flow) {
    std::vector<char> bytes = std::move(flow.pending.front().bytes);
    flow.pending.pop_front();
    flow.pending_bytes -= bytes.size();
    write(flow, std::move(bytes));
  }

  // Delay mode: writes every chunk that is due and arms the timer for the
  // next one. Chunks are due in queue order because arrival times only grow.
  void deliver_due(Flow& flow) {
    const std::uint64_t delay_ns = to_nanoseconds(link_.mode(flow.direction).delay);
    while (!flow.pending.empty() && !closing_) {
      const std::uint64_t due = flow.pending.front().arrival_ns + delay_ns;
      const std::uint64_t now = uv_hrtime();
      if (due > now) {
        // The loop's cached time may lag; without the update the timer
        // could fire early (deliver_due then re-arms for the remainder).
        uv_update_time(flow.timer->loop);
        uv_timer_start(flow.timer, on_timer, to_timer_milliseconds(due - now), 0);
        return;
      }
      send_front(flow);
    }
    finish_if_drained(flow);
  }

  static void on_timer(uv_timer_t* timer) noexcept {
    auto* flow = static_cast<Flow*>(timer->data);
    flow->connection->deliver_due(*flow);
  }

  void write(Flow& flow, std::vector<char> bytes) {
    auto* request = new WriteRequest{{}, &flow, std::move(bytes)};
    request->request.data = request;
    const uv_buf_t buffer =
        uv_buf_init(request->bytes.data(), static_cast<unsigned>(request->bytes.size()));
    if (uv_write(&request->request, as_stream(flow.sink), &buffer, 1, on_written) < 0) {
      delete request;
      close(Closing::graceful);
      return;
    }
    ++flow.writes_in_flight;
    if (!flow.sink_busy && uv_stream_get_write_queue_size(as_stream(flow.sink)) > kPauseAbove) {
      flow.sink_busy = true;
      update_reading(flow);
    }
  }

  static void on_written(uv_write_t* raw_request, int status) noexcept {
    auto* request = static_cast<WriteRequest*>(raw_request->data);
    Flow& flow = *request->flow;
    const std::size_t size = request->bytes.size();
    delete request;
    --flow.writes_in_flight;
    Connection* self = flow.connection;
    if (self->closing_) return;
    if (status < 0) {
      self->close(Closing::graceful);
      return;
    }
    self->link_.stats.bytes_forwarded += size;
    if (flow.sink_busy && uv_stream_get_write_queue_size(as_stream(flow.sink)) <= kResumeBelow) {
      flow.sink_busy = false;
      self->update_reading(flow);
    }
    self->finish_if_drained(flow);
  }

  // Once a source has ended and everything it sent is delivered, the other
  // side is closed too. Held bytes keep the connection open until the mode
  // changes; so does a blackhole even with nothing kept, because the end
  // of the stream cannot cross a partition any more than bytes can.
  void finish_if_drained(Flow& flow) {
    if (!closing_ && flow.source_ended && flow.pending.empty() && flow.writes_in_flight == 0 &&
        !keeps_back(link_.mode(flow.direction).mode)) {
      close(Closing::graceful);
    }
  }

  static void on_tcp_closed(uv_handle_t* handle) noexcept {
    Connection* self = static_cast<Flow*>(handle->data)->connection;
    delete reinterpret_cast<uv_tcp_t*>(handle);
    self->release_handle();
  }

  static void on_timer_closed(uv_handle_t* handle) noexcept {
    Connection* self = static_cast<Flow*>(handle->data)->connection;
    delete reinterpret_cast<uv_timer_t*>(handle);
    self->release_handle();
  }

  void release_handle() {
    if (--open_handles_ == 0) delete this;
  }

  Link& link_;
  uv_connect_t connect_request_{};
  Flow up_;    // client -> node
  Flow down_;  // node -> client
  int open_handles_ = kHandleCount;
  bool connected_ = false;
  bool closing_ = false;
};

std::error_code parse_target(const std::string& host, std::uint16_t port, sockaddr_storage& out) {
  const std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  if (numeric.find(':') != std::string::npos) {
    auto* address = reinterpret_cast<sockaddr_in6*>(&out);
    if (uv_ip6_addr(numeric.c_str(), port, address) != 0) {
      return std::make_error_code(std::errc::invalid_argument);
    }
    return {};
  }
  auto* address = reinterpret_cast<sockaddr_in*>(&out);
  if (uv_ip4_addr(numeric.c_str(), port, address) != 0) {
    return std::make_error_code(std::errc::invalid_argument);
  }
  return {};
}

}  // namespace

class FaultProxy::Impl {
 public:
  explicit Impl(std::size_t max_buffered_bytes) : max_buffered_bytes_(max_buffered_bytes) {
    int status = uv_loop_init(&loop_);
    if (status < 0) throw std::system_error(uv_error(status), "uv_loop_init");
    wake_ = new uv_async_t;
    status = uv_async_init(&loop_, wake_, on_wake);
    if (status < 0) {
      delete wake_;  // never initialised, so never closed
      uv_loop_close(&loop_);
      throw std::system_error(uv_error(status), "uv_async_init");
    }
    wake_->data = this;
    try {
      thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
    } catch (...) {
      close_and_delete(wake_);
      uv_run(&loop_, UV_RUN_DEFAULT);
      uv_loop_close(&loop_);
      throw;
    }
  }

  ~Impl() {
    {
      const std::lock_guard lock(mutex_);
      stop_requested_ = true;
    }
    uv_async_send(wake_);
    thread_.join();
    // Every handle was closed and freed on the loop, so nothing is left.
    [[maybe_unused]] const int status = uv_loop_close(&loop_);
    assert(status == 0);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  std::error_code add_link(std::string name, const std::string& target_host,
                           std::uint16_t target_port, LinkId& id, std::uint16_t& listen_port) {
    auto link = std::make_unique<Link>();
    link->name = std::move(name);
    link->max_buffered_bytes = max_buffered_bytes_;
    if (auto error = parse_target(target_host, target_port, link->target)) return error;
    return run_on_loop([&] { return listen(std::move(link), id, listen_port); });
  }

  void set_mode(LinkId id, Direction direction, LinkMode mode, std::chrono::milliseconds delay) {
    run_on_loop([&] { apply_mode(id, direction, DirectionMode{mode, delay}); });
  }

  ProxyStats stats(LinkId id) {
    return run_on_loop([&] {
      if (id >= links_.size()) return ProxyStats{};
      const Link& link = *links_[id];
      ProxyStats stats = link.stats;
      for (const Connection* connection : link.connections) {
        stats.bytes_buffered += connection->buffered_bytes();
      }
      return stats;
    });
  }

 private:
  // Runs `task` on the loop thread and returns its result; an exception it
  // throws is rethrown here, never through the loop.
  template <typename Task>
  std::invoke_result_t<Task&> run_on_loop(Task task) {
    std::packaged_task<std::invoke_result_t<Task&>()> packaged(std::move(task));
    auto result = packaged.get_future();
    {
      const std::lock_guard lock(mutex_);
      commands_.emplace_back([&packaged] { packaged(); });
    }
    uv_async_send(wake_);
    return result.get();
  }

  static void on_wake(uv_async_t* handle) noexcept {
    auto* self = static_cast<Impl*>(handle->data);
    std::vector<std::function<void()>> batch;
    bool stop = false;
    {
      const std::lock_guard lock(self->mutex_);
      batch.swap(self->commands_);
      stop = self->stop_requested_;
    }
    for (auto& command : batch) command();
    if (stop) self->shut_down();
  }

  std::error_code listen(std::unique_ptr<Link> link, LinkId& id, std::uint16_t& listen_port) {
    auto* listener = new uv_tcp_t;
    uv_tcp_init(&loop_, listener);
    listener->data = link.get();
    sockaddr_in loopback{};
    uv_ip4_addr("127.0.0.1", 0, &loopback);
    int status = uv_tcp_bind(listener, reinterpret_cast<const sockaddr*>(&loopback), 0);
    if (status == 0) status = uv_listen(as_stream(listener), kListenBacklog, on_connection);
    sockaddr_in bound{};
    int length = sizeof(bound);
    if (status == 0) {
      status = uv_tcp_getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length);
    }
    if (status < 0) {
      close_and_delete(listener);
      return uv_error(status);
    }
    listen_port = ntohs(bound.sin_port);
    link->listener = listener;
    link->id = links_.size();
    id = link->id;
    links_.push_back(std::move(link));
    return {};
  }

  static void on_connection(uv_stream_t* server, int status) noexcept {
    if (status < 0) return;
    Link& link = *static_cast<Link*>(server->data);
    // NOLINTNEXTLINE(bugprone-unhandled-exception-at-new): terminates, see Connection
    auto* client = new uv_tcp_t;
    uv_tcp_init(server->loop, client);
    if (uv_accept(server, as_stream(client)) != 0) {
      close_and_delete(client);
      return;
    }
    ++link.stats.connections_accepted;
    if (link.resetting()) {
      ++link.stats.connections_reset;
      reset_and_close(
          client, [](uv_handle_t* closed) noexcept { delete reinterpret_cast<uv_tcp_t*>(closed); });
      return;
    }
    uv_tcp_nodelay(client, 1);
    Connection::open(link, client);
  }

  void apply_mode(LinkId id, Direction direction, DirectionMode mode) {
    if (id >= links_.size()) return;
    Link& link = *links_[id];
    const DirectionMode previous_up = link.up;
    const DirectionMode previous_down = link.down;
    const bool changes_up = direction != Direction::down;
    const bool changes_down = direction != Direction::up;
    if (changes_up) link.up = mode;
    if (changes_down) link.down = mode;
    // A connection closes itself out of the set: iterate over a copy. The
    // objects stay valid until their close callbacks, on a later turn.
    const std::vector<Connection*> connections(link.connections.begin(), link.connections.end());
    const auto timeout_ends = [&mode](bool changes, const DirectionMode& previous) {
      return changes && previous.mode == LinkMode::timeout && mode.mode != LinkMode::timeout;
    };
    // A timeout that ends has outlasted the connections it held: they are
    // reset, whatever mode comes next; later connections get that mode.
    if (link.resetting() || timeout_ends(changes_up, previous_up) ||
        timeout_ends(changes_down, previous_down)) {
      link.stats.connections_reset += connections.size();
      for (Connection* connection : connections) {
        link.stats.bytes_dropped += connection->buffered_bytes();
        connection->close(Closing::reset);
      }
      return;
    }
    for (Connection* connection : connections) {
      if (changes_up) connection->on_mode_changed(Direction::up, previous_up.mode);
      if (changes_down && link.connections.contains(connection)) {
        connection->on_mode_changed(Direction::down, previous_down.mode);
      }
    }
  }

  // On the loop: closes every connection, listener and the wakeup handle;
  // uv_run then returns because no handle is left.
  void shut_down() {
    for (auto& link : links_) {
      const std::vector<Connection*> connections(link->connections.begin(),
                                                 link->connections.end());
      for (Connection* connection : connections) connection->close(Closing::graceful);
      close_and_delete(link->listener);
      link->listener = nullptr;
    }
    close_and_delete(wake_);
  }

  std::size_t max_buffered_bytes_;
  uv_loop_t loop_{};
  uv_async_t* wake_ = nullptr;  // freed by its close callback on the loop
  std::mutex mutex_;            // guards commands_ and stop_requested_
  std::vector<std::function<void()>> commands_;
  bool stop_requested_ = false;
  std::vector<std::unique_ptr<Link>> links_;  // loop thread only
  std::thread thread_;
};

FaultProxy::FaultProxy(std::size_t max_buffered_bytes)
    : impl_(std::make_unique<Impl>(max_buffered_bytes)) {}

FaultProxy::~FaultProxy() = default;

// NOLINTNEXTLINE(performance-unnecessary-value-param): the header's signature
std::error_code FaultProxy::add_link(std::string name, std::string target_host,
                                     std::uint16_t target_port, LinkId& id,
                                     std::uint16_t& listen_port) {
  return impl_->add_link(std::move(name), target_host, target_port, id, listen_port);
}

void FaultProxy::set_mode(LinkId id, Direction direction, LinkMode mode,
                          std::chrono::milliseconds delay) {
  impl_->set_mode(id, direction, mode, delay);
}

ProxyStats FaultProxy::stats(LinkId id) const { return impl_->stats(id); }

}  // namespace redlock::chaos
