// `redlock-chaos worker`: one client process of a chaos run.
//
// It takes locks through the library (AsyncClient on its own loop) on the
// quorum file the harness wrote (every node reached through the fault
// proxy), does a read-modify-write of the protected resource inside each
// holding, and records every step in its history file. With --reentrant it
// holds through reentrant guards instead (worker_guard.hpp).
//
// Protocol with the harness (one line each):
//   worker -> harness (stdout): "ready", "holding <value>", "released",
//                               "pausing <point>", "done"
//   harness -> worker (stdin):  "go" (the common barrier), "pause <point>"
//                               (arm a self-pause at that point), "stop"
// A pause at a point is a real SIGSTOP the worker raises on itself there;
// the harness resumes it with SIGCONT the step's duration_ms after the worker said it stopped.
#pragma once

namespace redlock::chaos {

int run_worker(int argc, char** argv);

}  // namespace redlock::chaos
