#pragma once
// Helpers of the DataParallel tests (data_parallel_test.cpp, data_parallel_amp_test.cpp): the
// children's environment for a store hosted by the test, the losses a run wrote, and a
// relative distance between parameter tensors.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "crew/distributed/store/tcp_store_server.h"
#include "crew/tensor/tensor.h"
#include "tests/testing/multiprocess.h"

namespace crew::testing {

// Children of one run: a store hosted here, rank env per child, one thread each.
inline RunRanksOptions dist_options(const dist::TCPStoreServer& server) {
  RunRanksOptions o;
  o.timeout = std::chrono::seconds(90);
  o.set_rank_env = true;
  o.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
           {"CREW_STORE_HOSTED", "1"},
           {"CREW_NUM_THREADS", "1"},
           {"CREW_TIMEOUT", "30s"},
           {"CREW_BACKEND", "auto"}};
  return o;
}

// The numbers of a file of one loss per line.
inline std::vector<double> read_losses(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> v;
  double x;
  while (in >> x) v.push_back(x);
  return v;
}

// ||a - b|| / ||b|| over all elements, in float64 (any floating dtypes).
inline double relative_difference(const Tensor& a, const Tensor& b) {
  auto va = a.to(DType::FLOAT64).to_vector<double>();
  auto vb = b.to(DType::FLOAT64).to_vector<double>();
  double diff = 0, norm = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    diff += (va[i] - vb[i]) * (va[i] - vb[i]);
    norm += vb[i] * vb[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
}

}  // namespace crew::testing
