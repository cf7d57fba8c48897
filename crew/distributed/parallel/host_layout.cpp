#include "crew/distributed/parallel/host_layout.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/store/store.h"

namespace crew::dist {

std::string host_id() {
  if (auto forced = env::get("CREW_HOST_ID"); forced && !forced->empty()) return *forced;
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::string boot_id;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot_id);
  return str_cat(name, "/", boot_id);
}

std::vector<std::string> exchange_host_ids(Store& store, int rank, int size,
                                           std::chrono::milliseconds timeout) {
  CREW_CHECK(size >= 1 && rank >= 0 && rank < size, "exchange_host_ids: rank ", rank, " is not in [0, ", size,
             ")");
  store.set(str_cat("host/", rank), host_id());
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(str_cat("host/", r));
  store.wait(keys, timeout);
  std::vector<std::string> ids;
  for (const auto& key : keys) ids.push_back(store.get_string(key));
  return ids;
}

HostLayout HostLayout::from_ids(const std::vector<std::string>& ids) {
  CREW_CHECK(!ids.empty(), "HostLayout: no host ids");
  HostLayout layout;
  std::map<std::string, int> index;
  for (int r = 0; r < static_cast<int>(ids.size()); ++r) {
    auto [it, fresh] = index.emplace(ids[r], layout.num_hosts());
    if (fresh) layout.hosts_.emplace_back();
    layout.hosts_[it->second].push_back(r);
    layout.host_of_.push_back(it->second);
  }
  return layout;
}

int HostLayout::local_rank(int rank) const {
  const auto& ranks = ranks_on(host_of(rank));
  return static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
}

int HostLayout::min_ranks_per_host() const {
  size_t fewest = hosts_.front().size();
  for (const auto& h : hosts_) fewest = std::min(fewest, h.size());
  return static_cast<int>(fewest);
}

std::string auto_backend_for(const HostLayout& layout) {
  if (layout.num_hosts() == 1) return is_backend_registered("shm") ? "shm" : "gloo";
  // With one rank on some host the leaders' Gloo step moves as much as plain Gloo would, and
  // the shared-memory steps only add to it.
  if (layout.min_ranks_per_host() > 1 && is_backend_registered("hier")) return "hier";
  return "gloo";
}

}  // namespace crew::dist
