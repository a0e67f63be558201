// A client stopping itself at a named point of its work (the scenario's
// `pause` of a client at a `point`): the pause is recorded before the
// SIGSTOP and its end once the harness continues the process, so the
// history shows the fault where it happened. Shared by both workers.
#pragma once

#include <signal.h>

#include <string>

#include "history.hpp"

namespace redlock::chaos {

// `started` and `ended`: the worker's nemesis events (invoke, ok) with its
// process, time and operation filled in; `history`: anything with
// write(const Event&); `announce` tells the harness, once the start is
// recorded, that the process is about to stop.
template <typename History, typename Announce>
void pause_self(History& history, Event started, Event ended, const std::string& proc,
                const std::string& point, Announce announce) {
  started.fault = "pause-client";
  started.target = proc;
  started.detail = "self-pause at " + point;
  // Both stamped here: the caller built them in one call, whose argument
  // order is unspecified, and the pause ends only when SIGSTOP returns.
  started.t = reference_now_ns();
  history.write(started);
  announce();
  ::raise(SIGSTOP);
  ended.fault = "pause-client";
  ended.target = proc;
  ended.detail = "resumed";
  ended.t = reference_now_ns();
  history.write(ended);
}

}  // namespace redlock::chaos
