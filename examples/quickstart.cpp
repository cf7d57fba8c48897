// The README's usage example: the seed's CNN trained data-parallel for one epoch.
//   crew launch --devices=0,1 bin/quickstart [max_steps]
#include <cstdlib>
#include <iostream>

#include "crew/crew.h"
using namespace crew;

int main(int argc, char** argv) {
  const long max_steps = argc > 1 ? std::atol(argv[1]) : -1;
  if (ParallelEnv::from_env().world_size > 1) dist::init_parallel_env();  // env from `crew launch`
  auto train = std::make_shared<io::FashionMNIST>(
      io::MnistOptions{.mode = "train", .transform = std::make_shared<io::ToTensor>()});
  auto sampler = std::make_shared<io::DistributedBatchSampler>(
      *train, 32, io::DistributedBatchSamplerOptions{.shuffle = true, .drop_last = true});
  io::DataLoader loader(train, sampler, {.num_workers = 2});
  auto model = std::make_shared<DataParallel>(std::make_shared<nn::models::MyNet>(10));
  optim::Adam opt(model->parameters(), {.learning_rate = 0.001});
  long step = 0;
  for (auto& batch : loader) {
    Tensor loss = nn::functional::cross_entropy((*model)(batch[0]), batch[1]);
    loss.backward();  // gradients are averaged across ranks during backward
    opt.step();
    opt.clear_grad();
    if (step % 100 == 0 && dist::get_rank() == 0) std::cout << "step " << step << " loss " << loss.item() << "\n";
    if (++step == max_steps) break;
  }
  std::cout << "rank " << dist::get_rank() << " of " << dist::get_world_size() << ": " << step << " steps\n";
}
