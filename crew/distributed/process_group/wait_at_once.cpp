#include "crew/distributed/process_group/wait_at_once.h"

namespace crew::dist {

namespace {
thread_local bool t_wait_at_once = false;
}

WaitAtOnceScope::WaitAtOnceScope(bool active) : previous_(t_wait_at_once) { t_wait_at_once = active; }

WaitAtOnceScope::~WaitAtOnceScope() { t_wait_at_once = previous_; }

bool WaitAtOnceScope::active() { return t_wait_at_once; }

}  // namespace crew::dist
