#pragma once
// crew/distributed, what a training program uses: the parallel environment (ParallelEnv,
// init_parallel_env, groups), collectives and object collectives (namespace crew::dist),
// ProcessGroup and Work, crew::DataParallel, crew::SyncBatchNorm and spawn. Stores, backends
// and the debug layer have their own headers. Only includes.
#include "crew/core/parallel_env.h"
#include "crew/distributed/collective/any_rank.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/collective/object_collectives.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/process_group/collective_options.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/spawn/spawn.h"
#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"
