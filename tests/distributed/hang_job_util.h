#pragma once
// Helpers of the hang and desync tests: a hosted job (tests/distributed/hosted_job.h) with short
// timeouts, and checks run inside the children.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "crew/core/check.h"
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

// In a child: throws (the runner reports it) when `text` lacks `needle`.
inline void expect_contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) == std::string::npos) {
    throw std::runtime_error(str_cat("expected the text to contain \"", needle, "\"; it is:\n", text));
  }
}

#define HANG_CHILD_EXPECT(cond, ...)                                                              \
  do {                                                                                            \
    if (!(cond)) throw std::runtime_error(str_cat(#cond " failed: " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

}  // namespace crew::dist::testing_hang
