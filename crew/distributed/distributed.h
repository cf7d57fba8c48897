#pragma once
// crew/distributed, everything a program uses: the parallel environment, groups, collectives,
// object collectives, process groups, DataParallel and spawn. Only includes.
#include "crew/core/parallel_env.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/collective/object_collectives.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/spawn/spawn.h"
