// DataLoader throughput alone (images/s): Fashion-MNIST train with ToTensor, for 0, 1, 2
// worker threads. Nothing is trained; every batch is touched once.
//
//   bin/loader_bench [--data-dir DIR] [--batch-size 32] [--max-batches 0]
#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "crew/io/io.h"
#include "tools/cli_checks.h"

namespace {

std::string g_data_dir;
int64_t g_batch_size = 32;
int64_t g_max_batches = 0;

std::shared_ptr<crew::io::FashionMNIST> train_set() {
  static auto ds = std::make_shared<crew::io::FashionMNIST>(crew::io::MnistOptions{
      .mode = "train", .data_dir = g_data_dir, .transform = std::make_shared<crew::io::ToTensor>()});
  return ds;
}

void BM_LoaderEpoch(benchmark::State& state) {
  auto ds = train_set();
  crew::io::DataLoader loader(ds, {.batch_size = g_batch_size, .shuffle = true,
                                   .num_workers = static_cast<int>(state.range(0))});
  int64_t images = 0;
  double checksum = 0;
  for (auto _ : state) {
    int64_t batches = 0;
    for (auto& batch : loader) {
      images += batch[0].size(0);
      checksum += batch[0].data<float>()[0];
      if (g_max_batches > 0 && ++batches >= g_max_batches) break;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.counters["images/s"] = benchmark::Counter(static_cast<double>(images), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LoaderEpoch)->ArgName("num_workers")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  CLI::App app{"crew DataLoader throughput on Fashion-MNIST"};
  app.add_option("--data-dir", g_data_dir, "Fashion-MNIST directory (default: the Debian package's)");
  app.add_option("--batch-size", g_batch_size, "batch size")->check(crew::cli::above(g_batch_size, 0));
  app.add_option("--max-batches", g_max_batches, "stop each pass after N batches (0: whole epoch)")
      ->check(crew::cli::at_least(g_max_batches, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "loader_bench")) return *rc;
  try {
    std::cout << "Fashion-MNIST train: " << train_set()->size() << " images from " << train_set()->dir() << "\n";
  } catch (const crew::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
