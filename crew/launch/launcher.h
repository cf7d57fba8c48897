#pragma once
// The launcher: what `crew launch` runs once its command line is parsed.
//
//   LaunchOptions o;
//   o.program = "bin/all_gather_object";
//   o.devices = "0,1,2";
//   int code = run_launch(o);   // 0, the first failing worker's code, or 128 + signal
//
// It prints Paddle's configuration block, hosts the job's TCP store (node 0; bound before any
// worker starts, on --master's port or one the OS picks), agrees on the membership with the
// other nodes, starts the workers with the job's environment, streams local rank 0's output
// (or every rank's, prefixed), and on a failure prints the failing rank's log tail, stops the
// rest and restarts the job up to --max_restart times.
#include "crew/launch/options.h"

namespace crew::launch {

// Runs the job to its end; returns the process exit status for the launcher. Errors before
// any worker started (bad device, busy port, missing program) are logged and give 1
// (127 for a program that cannot be executed).
int run_launch(const LaunchOptions& options);

}  // namespace crew::launch
