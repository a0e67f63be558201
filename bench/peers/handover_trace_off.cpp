// The plain peer driver's trace: nothing is wrapped, nothing counted.
#include "handover_trace.hpp"

namespace redlock::bench::peers::trace {

bool enabled() noexcept { return false; }
void reset() {}
Counters counters() { return {}; }
std::vector<Event> events() { return {}; }

}  // namespace redlock::bench::peers::trace
