#pragma once
// Helpers of the hang and desync tests: a job of real processes on 127.0.0.1 that meet at a
// TCPStore hosted by the test process (OS-chosen port), with short timeouts.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "crew/core/check.h"
#include "crew/dist/store/tcp_store.h"
#include "tests/testing/multiprocess.h"

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
  TCPStoreOptions so;
  so.is_server = true;
  so.port = 0;
  TCPStore server("127.0.0.1", so);
  testing::RunRanksOptions ro;
  ro.timeout = opt.deadline;
  ro.set_rank_env = true;
  ro.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
            {"CREW_STORE_HOSTED", "1"},
            {"CREW_BACKEND", opt.backend},
            {"CREW_TIMEOUT", opt.timeout},
            {"CREW_HANG_REPORT_TIMEOUT", opt.report_timeout}};
  for (const auto& kv : opt.env) ro.env.push_back(kv);
  return testing::run_ranks(
      world, [&](int rank, int) { fn(rank); }, ro);
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
