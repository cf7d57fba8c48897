#pragma once
// Helpers of the hang and desync tests: a hosted job (tests/distributed/hosted_job.h) with short
// timeouts, and the printing of a report inside a child (checks: tests/testing/child_expect.h).
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/distributed/hosted_job.h"

namespace crew::dist::testing_hang {

struct HangJobOptions {
  std::string backend = "gloo";
  std::string timeout = "3s";                            // CREW_TIMEOUT (per collective)
  std::string report_timeout = "2s";                     // CREW_HANG_REPORT_TIMEOUT
  std::vector<std::pair<std::string, std::string>> env;  // more variables
  std::chrono::seconds deadline{40};                     // run_ranks kills every rank then
};

inline std::vector<testing::RankResult> run_hang_job(int world, const std::function<void(int rank)>& fn,
                                                     const HangJobOptions& opt = {}) {
  testing_job::HostedJobOptions job;
  job.backend = opt.backend;
  job.timeout = opt.timeout;
  job.env = {{"CREW_HANG_REPORT_TIMEOUT", opt.report_timeout}};
  job.env.insert(job.env.end(), opt.env.begin(), opt.env.end());
  job.deadline = opt.deadline;
  return testing_job::run_hosted_job(world, fn, job);
}

// In a child: prints a report the test checks (so a test log shows what users would see).
inline void show(int rank, const std::string& text) {
  std::fprintf(stderr, "[rank %d] %s\n", rank, text.c_str());
}

}  // namespace crew::dist::testing_hang
