// The floor: the least a hiredis-async program on libuv can do for one lock
// cycle, using hiredis's stock libuv adapter (redisAsyncConnect +
// redisLibuvAttach, one uv_poll_t per node).
//
// A cycle sends `SET key value NX PX 10000` to every node at once, waits for
// a majority of OK, then sends the compare-and-delete script (EVALSHA, loaded
// with SCRIPT LOAD when connecting) to every node and waits for a majority
// of 1. Nothing else: no timeouts, no retries, no validity arithmetic.
//
// A variant sends, through the same stock adapter, the commands the library
// sends (its acquire and release scripts from lib/scripts.cpp, with the keys
// and arguments of lib/acquire_operation.cpp and lib/release_operation.cpp
// as of commit ae646f0, amnesia defence on), so that the server's share of
// the work is the same as the library's and only the client side differs.
// Keep the argument lists in step with those files. With the defence on, a
// node answers an acquire only once it carries its identity marker, so this
// variant sets a marker (SET NX) on every node when connecting, as the
// library's recovery does for a brand-new quorum.
//
// Every cycle uses a key of its own (bench:raw:<n>), so the replies of the
// slower nodes, which still arrive after the cycle has been decided, cannot
// be mistaken for those of a later cycle; they are counted against the
// cycle that sent them, whose state lives until its last reply.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_nodes.hpp"
#include "cycle_harness.hpp"

struct redisAsyncContext;

namespace redlock::bench {

enum class RawCommands {
  // SET key value NX PX 10000; EVALSHA <compare-and-delete> 1 key value.
  minimal,
  // EVALSHA <acquire> 4 lock fence marker recovering value 10000 resource 1
  // and an empty place in line; EVALSHA <release> 1 lock value channel
  // waiting-line: what redlock::AsyncClient sends for an uncontended lock.
  library_scripts,
};

class RawFanoutDriver final : public CycleDriver {
 public:
  RawFanoutDriver(uv_loop_t* loop, std::vector<BenchNode> nodes, RawCommands commands);
  ~RawFanoutDriver() override;
  RawFanoutDriver(const RawFanoutDriver&) = delete;
  RawFanoutDriver& operator=(const RawFanoutDriver&) = delete;

  [[nodiscard]] std::string connect() override;
  void start_cycle(std::size_t worker) override;
  void shut_down() override;

  // The hiredis callbacks' view of the driver.
  struct Cycle;
  struct Link;
  void on_set_reply(Cycle& cycle, const void* reply) noexcept;
  void on_release_reply(Cycle& cycle, const void* reply) noexcept;
  void on_connected(Link& link, int status) noexcept;
  void on_disconnected(Link& link) noexcept;
  void on_script_loaded(std::size_t script, const void* reply) noexcept;
  void on_marker_set(const void* reply) noexcept;

 private:
  void send_release(Cycle& cycle);
  void finish(Cycle& cycle, bool ok, const char* why);
  void recycle_if_done(Cycle& cycle);
  [[nodiscard]] std::size_t quorum() const noexcept { return links_.size() / 2 + 1; }

  uv_loop_t* loop_;
  std::vector<BenchNode> nodes_;
  RawCommands commands_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<Cycle>> cycles_;
  std::vector<Cycle*> free_cycles_;
  // The scripts loaded on every node, and the digests the nodes returned.
  std::vector<std::string_view> scripts_;
  std::vector<std::string> shas_;
  // The library's per-node keys (library_scripts only).
  std::string fence_key_;
  std::string marker_key_;
  std::string recovering_key_;
  std::string script_error_;
  std::uint64_t next_key_ = 0;
  std::size_t connect_answers_ = 0;
  std::size_t script_answers_ = 0;
  std::size_t marker_answers_ = 0;
  std::size_t open_links_ = 0;
};

}  // namespace redlock::bench
