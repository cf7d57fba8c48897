// The device seam under DataParallel: two ranks train the seed's CNN on the fake device (host
// memory that host code may not touch, every kernel through its slot's fake entry, the
// collectives staged through host memory by StagedProcessGroup) and end with the parameters
// two ranks on the CPU end with, bit for bit.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>

#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/process_group/staged_process_group.h"
#include "crew/distributed/store/tcp_store_server.h"
#include "crew/nn/functional.h"
#include "crew/nn/models/my_net.h"
#include "crew/optim/adam.h"
#include "crew/tensor/random.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

using namespace std::chrono_literals;
namespace F = nn::functional;

testing::RunRanksOptions dist_options(const dist::TCPStoreServer& server) {
  testing::RunRanksOptions o;
  o.timeout = 90s;
  o.set_rank_env = true;
  o.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
           {"CREW_STORE_HOSTED", "1"},
           {"CREW_NUM_THREADS", "1"},
           {"CREW_TIMEOUT", "30s"},
           {"CREW_BACKEND", "auto"}};
  return o;
}

// `steps` Adam steps of DataParallel(MyNet) on `place`, 8 samples per rank and step; writes
// the rank's final parameters (float32 bytes, in order) to `path`.
void train_on(const Place& place, int rank, int steps, const std::string& path) {
  std::optional<testing::FakeDevice> fake;
  std::optional<testing::FakeKernels> fake_kernels;
  if (place.type == DeviceType::FAKE) {
    fake.emplace();
    fake_kernels.emplace();
  }
  dist::init_parallel_env();
  dist::ProcessGroup* pg = dist::default_group()->process_group();
  if (auto* debug = dynamic_cast<dist::DebugProcessGroup*>(pg)) pg = &debug->inner();
  const bool staged = dynamic_cast<dist::StagedProcessGroup*>(pg) != nullptr;
  CREW_CHECK(staged == (place.type == DeviceType::FAKE), "rank ", rank, ": staged group ", staged, " on ",
             place.to_string());
  seed(1);
  auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
  net->to(place);
  auto dp = std::make_shared<DataParallel>(net);
  optim::Adam opt(net->parameters());
  Generator data(100 + static_cast<uint64_t>(rank));
  for (int step = 0; step < steps; ++step) {
    const Tensor x = uniform({8, 1, 28, 28}, 0.0, 1.0, DType::FLOAT32, &data);
    std::vector<int64_t> labels;
    for (int i = 0; i < 8; ++i) labels.push_back(static_cast<int64_t>(data.next_u64() % 10));
    Tensor loss = F::cross_entropy((*dp)(x.to(place)), Tensor::from_vector(labels).to(place));
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  std::ofstream out(path, std::ios::binary);
  for (const Tensor& p : net->parameters()) {
    CREW_CHECK(p.place() == place, "parameter on ", p.place().to_string());
    const std::vector<float> v = p.cpu().to_vector<float>();
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DataParallelFakeDevice, TwoRanksTrainAsOnTheCpuBitForBit) {
  constexpr int kSteps = 3;
  testing::TempDir dir;
  auto run = [&](const Place& place, const std::string& tag) {
    dist::TCPStoreServer server({.insecure = true});
    testing::expect_all_ok(testing::run_ranks(
        2, [&](int r, int) { train_on(place, r, kSteps, dir.file(tag + std::to_string(r))); }, dist_options(server)));
  };
  run(CPUPlace(), "cpu");
  run(Place{DeviceType::FAKE, 0}, "fake");
  for (int r = 0; r < 2; ++r) {
    const std::string cpu = read_file(dir.file("cpu" + std::to_string(r)));
    ASSERT_GT(cpu.size(), 0u);
    EXPECT_TRUE(cpu == read_file(dir.file("fake" + std::to_string(r)))) << "rank " << r;
  }
  EXPECT_TRUE(read_file(dir.file("cpu0")) == read_file(dir.file("cpu1")));  // DataParallel kept them in step
}

}  // namespace
}  // namespace crew
