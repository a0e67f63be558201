// Everything public in one include.
#pragma once

#include "redlock/async_client.hpp"
#include "redlock/blocking_client.hpp"
#include "redlock/client_options.hpp"
#include "redlock/clock.hpp"
#include "redlock/config.hpp"
#include "redlock/election.hpp"
#include "redlock/error.hpp"
#include "redlock/fence_gate.hpp"
#include "redlock/guard.hpp"
#include "redlock/inspection.hpp"
#include "redlock/lockable.hpp"
#include "redlock/metrics.hpp"
#include "redlock/options.hpp"
#include "redlock/outcome.hpp"
#include "redlock/types.hpp"
