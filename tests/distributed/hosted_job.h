#pragma once
// A job of real processes on 127.0.0.1 that meet at a TCPStore hosted by the test process
// (OS-chosen port), as under `crew launch`: each child gets CREW_RANK / CREW_WORLD_SIZE,
// CREW_MASTER, CREW_JOB_TOKEN, CREW_STORE_HOSTED=1, CREW_BACKEND, CREW_TIMEOUT and the extra
// variables. Or, with host_store = false, rank 0 hosts the store (CREW_STORE_HOSTED=0) at a
// free port. Either store admits only the job's token, as every job's store does.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crew/core/job_token.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/net.h"

namespace crew::dist::testing_job {

struct HostedJobOptions {
  std::string backend = "gloo";
  std::string timeout = "30s";                           // CREW_TIMEOUT (per collective)
  std::vector<std::pair<std::string, std::string>> env;  // more variables
  std::chrono::seconds deadline{60};                     // run_ranks kills every rank then
  bool host_store = true;                                // false: rank 0 hosts the store
};

inline std::vector<testing::RankResult> run_hosted_job(int world, const std::function<void(int rank)>& fn,
                                                       const HostedJobOptions& opt = {}) {
  const std::string token = generate_job_token();
  std::unique_ptr<TCPStore> server;
  int port = 0;
  if (opt.host_store) {
    TCPStoreOptions so;
    so.is_server = true;
    so.job_token = token;
    so.port = 0;
    server = std::make_unique<TCPStore>("127.0.0.1", so);
    port = server->port();
  } else {
    port = testing::free_port();
  }
  testing::RunRanksOptions ro;
  ro.timeout = opt.deadline;
  ro.set_rank_env = true;
  ro.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(port)},
            {"CREW_JOB_TOKEN", token},
            {"CREW_STORE_HOSTED", opt.host_store ? "1" : "0"},
            {"CREW_BACKEND", opt.backend},
            {"CREW_TIMEOUT", opt.timeout}};
  for (const auto& kv : opt.env) ro.env.push_back(kv);
  return testing::run_ranks(
      world, [&](int rank, int) { fn(rank); }, ro);
}

}  // namespace crew::dist::testing_job
