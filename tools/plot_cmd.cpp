// `crew plot metrics.jsonl [more.jsonl ...] -o curves.png`: draws training curves from crew's
// metrics files by running the Python module crew.tools.plot (matplotlib), which owns the
// options (`crew plot --help`). The interpreter is CREW_PYTHON (set by the pip-installed
// `crew` wrapper and by python -m crew.distributed.launch), else the one crew's Python package
// was built for, else python3 on PATH. From a build tree, the tree's python/ folder (beside
// bin/) goes first on PYTHONPATH so that its crew package is the one imported.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "crew/core/env.h"
#include "tools/subcommand.h"

namespace {

std::string plot_interpreter() {
  std::string python = crew::env::get_string("CREW_PYTHON", "");
  if (!python.empty()) return python;
#ifdef CREW_BUILT_PYTHON
  return CREW_BUILT_PYTHON;
#else
  return "python3";
#endif
}

void put_build_tree_package_first() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return;
  const std::filesystem::path python_dir = exe.parent_path().parent_path() / "python";
  if (!std::filesystem::exists(python_dir / "crew" / "tools" / "plot.py", ec)) return;
  std::string path = python_dir.string();
  const std::string old = crew::env::get_string("PYTHONPATH", "");
  if (!old.empty()) path += ":" + old;
  ::setenv("PYTHONPATH", path.c_str(), 1);
}

int run_plot(int argc, char** argv) {
  put_build_tree_package_first();
  std::string python = plot_interpreter();
  std::vector<std::string> words = {python, "-m", "crew.tools.plot"};
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  std::vector<char*> args;
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  ::execvp(python.c_str(), args.data());
  std::cerr << "crew plot: cannot run " << python << " -m crew.tools.plot: " << std::strerror(errno)
            << " (set CREW_PYTHON to an interpreter that has crew and matplotlib)" << std::endl;
  return 127;
}

}  // namespace

CREW_REGISTER_SUBCOMMAND(plot, "draw loss, accuracy and throughput curves from metrics.jsonl files",
                         run_plot);
