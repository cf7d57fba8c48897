// A GPT-2 style byte-level transformer (crew::nn::models::GPT) trained with AdamW on a text
// file, data-parallel under `crew launch` (16 sequences of 128 bytes per rank) or alone.
//
//   bin/train_gpt --max-steps 500 --sample 200          # Debian's fortunes, then 200 bytes
//   crew launch --devices=0,1 bin/train_gpt --text book.txt --epochs 2 --profile
//   bin/train_gpt --n-layer 2 --n-embd 64 --block-size 32 --init w.safetensors --no-shuffle
//
// Data: the bytes of --text (default: the files of /usr/share/games/fortunes in name order,
// without .dat/.u8), sample k = bytes[kT, kT+T) -> bytes[kT+1, kT+T+1) (crew::io::TextBlocks).
// Loss: mean cross entropy over all B*T tokens. AdamW lr 6e-4, betas (0.9, 0.95), eps 1e-8,
// weight decay 0.1 on parameters with two or more dimensions only, gradients clipped by
// global norm 1.0 (Paddle's ClipGradByGlobalNorm) before each step. tokens/s in --metrics.
#include <CLI/CLI.hpp>
#include <iostream>
#include <set>

#include "crew/io/io.h"
#include "crew/nn/models/gpt.h"
#include "crew/optim/adamw.h"
#include "crew/optim/grad_clip.h"
#include "examples/trainer/train_loop.h"
#include "tools/cli_checks.h"

namespace {

struct GPTFlags {
  std::string text;
  crew::nn::models::GPTConfig model;
  double weight_decay = 0.1;
  double grad_clip = 1.0;
  int64_t sample = 0;
};

std::shared_ptr<crew::io::TextBlocks> text_data(const GPTFlags& g) {
  const std::string fortunes = "/usr/share/games/fortunes";
  std::vector<std::string> files =
      g.text.empty() ? crew::io::TextBlocks::text_files_in(fortunes) : std::vector<std::string>{g.text};
  return std::make_shared<crew::io::TextBlocks>(files, g.model.block_size);
}

std::shared_ptr<crew::optim::AdamW> make_optimizer(const GPTFlags& g, crew::nn::Layer& net,
                                                   crew::optim::LearningRate lr) {
  std::set<std::string> decayed;  // weights: two or more dimensions
  for (const auto& [name, p] : net.named_parameters()) {
    if (p.dim() >= 2) decayed.insert(name);
  }
  crew::optim::AdamWOptions o{
      .learning_rate = lr, .beta1 = 0.9, .beta2 = 0.95, .epsilon = 1e-8, .weight_decay = g.weight_decay};
  o.apply_decay_param_fun = [decayed](const std::string& name) { return decayed.count(name) > 0; };
  if (g.grad_clip > 0) o.grad_clip = std::make_shared<crew::optim::ClipGradByGlobalNorm>(g.grad_clip);
  return std::make_shared<crew::optim::AdamW>(net.named_parameters(), o);
}

void print_sample(crew::nn::models::GPT& gpt, const crew::io::TextBlocks& text, int64_t count) {
  std::vector<int64_t> prompt = {text.bytes().empty() ? int64_t{'\n'} : int64_t{text.bytes()[0]}};
  std::vector<int64_t> out = gpt.generate(prompt, count);
  std::string s(1, static_cast<char>(prompt[0]));
  for (int64_t b : out) s.push_back(static_cast<char>(b));
  std::cout << "sample (" << count << " bytes):\n" << s << std::endl;
}

int run(const trainer::TrainFlags& f, const GPTFlags& g) {
  trainer::Session session = trainer::start(f);
  auto text = text_data(g);
  auto net = std::make_shared<crew::nn::models::GPT>(g.model);
  auto schedule = trainer::make_schedule(f, trainer::planned_steps(f, *text));
  crew::optim::LearningRate lr =
      schedule ? crew::optim::LearningRate(schedule) : crew::optim::LearningRate(f.lr);
  auto opt = make_optimizer(g, *net, lr);
  trainer::TrainTask task{
      .program = "train_gpt", .net = net, .opt = opt, .schedule = schedule, .train = text};
  task.units_per_sample = g.model.block_size;
  task.unit = "tokens";
  task.signature = {{"model", crew::str_cat("gpt-", g.model.n_layer, "x", g.model.n_head, "x", g.model.n_embd,
                                            "-T", g.model.block_size)},
                    {"text", g.text.empty() ? "fortunes" : g.text}};
  const int rc = trainer::train(f, session, task);
  if (rc == 0 && g.sample > 0 && session.rank == 0) print_sample(*net, *text, g.sample);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  trainer::TrainFlags f;
  f.batch_size = 16;
  f.lr = 6e-4;
  GPTFlags g;
  CLI::App app{"Train a byte-level GPT with AdamW on a text file, data-parallel under crew launch"};
  trainer::add_train_flags(app, f);
  app.add_option("--text", g.text, "text file (default: Debian's fortunes, /usr/share/games/fortunes)");
  app.add_option("--n-layer", g.model.n_layer, "transformer blocks")
      ->check(crew::cli::above(g.model.n_layer, 0))
      ->capture_default_str();
  app.add_option("--n-head", g.model.n_head, "attention heads")
      ->check(crew::cli::above(g.model.n_head, 0))
      ->capture_default_str();
  app.add_option("--n-embd", g.model.n_embd, "embedding width")
      ->check(crew::cli::above(g.model.n_embd, 0))
      ->capture_default_str();
  app.add_option("--block-size", g.model.block_size, "sequence length T")
      ->check(crew::cli::above(g.model.block_size, 0))
      ->capture_default_str();
  app.add_option("--weight-decay", g.weight_decay, "AdamW decay of the 2+-dimensional parameters")
      ->capture_default_str()
      ->check(crew::cli::at_least(g.weight_decay, 0));
  app.add_option("--grad-clip", g.grad_clip, "global-norm clip (0: none)")
      ->capture_default_str()
      ->check(crew::cli::at_least(g.grad_clip, 0));
  app.add_option("--sample", g.sample, "print N generated bytes at the end")
      ->check(crew::cli::at_least(g.sample, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "train_gpt")) return *rc;  // --help: 0; a usage error: 2
  if (!trainer::check_output_paths(f, "train_gpt")) return 2;
  try {
    return run(f, g);
  } catch (const std::exception& e) {
    std::cerr << "train_gpt: error: " << e.what() << std::endl;
    return 1;
  }
}
