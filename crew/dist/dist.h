#pragma once
// crew::dist, everything: the parallel environment, groups, collectives, object collectives,
// process groups and backends. Only includes.
#include "crew/core/parallel_env.h"
#include "crew/dist/collective.h"
#include "crew/dist/object_collectives.h"
#include "crew/dist/parallel.h"
#include "crew/dist/process_group.h"
#include "crew/dist/work.h"
