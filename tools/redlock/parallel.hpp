// Runs one job per index on threads of its own and waits for all: how the
// tool asks every node (or every master of a cluster) at once, each on a
// fresh blocking connection.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

namespace redlock::cli {

template <class Job>
void for_each_in_parallel(std::size_t count, Job job) {
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (std::size_t i = 0; i < count; ++i) threads.emplace_back([&job, i] { job(i); });
  for (std::thread& thread : threads) thread.join();
}

}  // namespace redlock::cli
