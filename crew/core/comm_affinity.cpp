#include "crew/core/comm_affinity.h"

#include <sched.h>

#include <sstream>
#include <string>

#include "crew/core/env.h"

namespace crew {
namespace {

bool set_thread_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return ::sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace

std::vector<int> this_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::vector<int> comm_cpus_from_env() {
  const std::string text = env::get_string("CREW_COMM_CPUS", "");
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 4) return {};
    const int c = std::stoi(item);
    if (c >= CPU_SETSIZE) return {};
    cpus.push_back(c);
  }
  return cpus;
}

CommAffinityScope::CommAffinityScope() {
  const std::vector<int> wide = comm_cpus_from_env();
  if (wide.empty()) return;
  std::vector<int> previous = this_thread_cpus();
  if (previous.empty() || previous == wide) return;
  if (set_thread_cpus(wide)) saved_ = std::move(previous);  // EINVAL: none of them usable here
}

CommAffinityScope::~CommAffinityScope() {
  if (!saved_.empty()) set_thread_cpus(saved_);
}

}  // namespace crew
