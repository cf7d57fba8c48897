#pragma once
// any_rank: a flag agreed by every rank of a group (a MAX all-reduce of one value), e.g. the
// loss scaler's found-inf flag, so that every rank skips the same optimizer steps:
//
//   crew::optim::GradScaler scaler({}, [](bool found) { return crew::dist::any_rank(found); });
#include "crew/distributed/parallel/parallel.h"

namespace crew::dist {

// True when `flag` is true on any rank of `group` (nullptr = the default group). Before
// init_parallel_env, or in a world of one process, the flag itself (no communication).
bool any_rank(bool flag, Group* group = nullptr);

}  // namespace crew::dist
