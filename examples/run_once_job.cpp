// A job that must run once across instances.
//
// Several instances (a cron entry on each of several machines) start the
// same nightly job at the same time. All of them ask for one lock named
// after the day; the one that gets it runs the job, the others see that it
// is taken and leave: for them "another instance is doing it" is success.
//
//   redlock_example_run_once_job [--config FILE | --node HOST:PORT ...]
//       [--date YYYY-MM-DD] [--slices N] [--slice-ms MS] [--done-dir DIR]
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "example_setup.hpp"

namespace {

using std::chrono::milliseconds;

// Today's date in UTC. The wall clock only names the day here; the library
// measures every duration on the monotonic clock.
std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[16] = {};
  std::strftime(text, sizeof text, "%Y-%m-%d", &parts);
  return text;
}

// One slice of the job (a batch of rows, one file). Slices are short next
// to the lock's TTL, so a lost lock is noticed within one slice; a slice
// also watches the stop token, so it can abandon its own work part-way.
// Returns whether the slice was finished with the lock still held.
bool run_slice(milliseconds length, const std::stop_token& lost) {
  const auto end = std::chrono::steady_clock::now() + length;
  while (!lost.stop_requested() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  return !lost.stop_requested();
}

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags =
      example::parse_flags(argc, argv, {"--date", "--slices", "--slice-ms", "--done-dir"});
  const auto slices = flags.number("--slices", 5, 1, 1000);
  const auto slice_ms = flags.number("--slice-ms", 200, 0, 60000);
  if (!flags.error.empty() || !slices || !slice_ms) {
    return example::usage(flags,
                          "run_once_job [--config FILE | --node HOST:PORT ...]"
                          " [--date YYYY-MM-DD] [--slices N] [--slice-ms MS] [--done-dir DIR]");
  }
  std::optional<redlock::QuorumConfig> quorum = example::load_quorum(flags);
  if (!quorum) return example::exit_code::config;

  const std::string me = "instance " + std::to_string(getpid());
  const redlock::Resource job("nightly-report:" + flags.value("--date", today_utc()));
  redlock::BlockingClient client(std::move(*quorum));

  redlock::GuardOptions options;
  // Not zero, though one attempt sounds natural: instances started in the
  // same instant can split the nodes' votes so that nobody wins. A short
  // wait lets the library's jittered retries settle that. An instance that
  // still finds the lock taken leaves; one that gets it after the job has
  // finished finds the done marker below.
  options.acquire.wait = milliseconds(1000);
  // Runs on the client's loop thread: only report here; the job loop below
  // notices the loss through the guard's stop token.
  options.on_lost = [](std::error_code why) {
    std::cerr << "lock lost: " << why.message() << '\n';
  };
  redlock::Guard guard = client.lock(job, options);
  if (!guard) {
    if (guard.error() == redlock::errc::not_acquired) {
      std::cout << me << ": another instance has " << job.str() << ", leaving it the job\n";
      return example::exit_code::ok;
    }
    std::cerr << me << ": cannot take " << job.str() << ": " << guard.error().message() << '\n';
    return example::exit_code_for(guard.error());
  }

  // Checked under the lock, never before it: an instance that starts after
  // the job ended (the lock already released) must see that it is done.
  // Across machines the marker belongs where the job's output goes (a
  // table row, an object next to the report); a directory keeps this short.
  const std::filesystem::path marker =
      std::filesystem::path(flags.value("--done-dir", ".")) / (job.str() + ".done");
  if (std::filesystem::exists(marker)) {
    std::cout << me << ": " << job.str() << " is already done, skipping\n";
    return example::exit_code::ok;  // the guard's destructor releases the lock
  }

  std::cout << me << ": took " << job.str() << ", running " << *slices << " slices\n";
  long long done = 0;
  while (done < *slices && run_slice(milliseconds(*slice_ms), guard.stop_token())) ++done;
  // valid() also turns false at the local validity deadline, so this holds
  // even if the loss signal is still on its way from the loop thread.
  if (done < *slices || !guard.valid()) {
    const std::error_code why = guard.error() ? guard.error() : redlock::errc::lost;
    std::cerr << me << ": lost the lock after " << done << " slices (" << why.message()
              << "); aborting, another instance may run the job\n";
    return example::exit_code::lost;
  }
  // A lease can still end between valid() and this write. Writing the same
  // marker twice is harmless; a write that a stale holder must never make
  // needs a fencing token (see fenced_document.cpp).
  std::ofstream record(marker);
  record << "done by " << me << '\n';
  if (!record.flush())
    std::cerr << me << ": cannot write " << marker << "; a later run will redo it\n";
  std::cout << me << ": ran the job " << job.str() << '\n';
  guard.release();  // the destructor would too; explicit, so the order is plain
  return example::exit_code::ok;
}
