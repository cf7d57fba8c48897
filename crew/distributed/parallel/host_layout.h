#pragma once
// HostLayout: which ranks of a group share a host, from the host id every rank publishes.
//
//   auto ids = exchange_host_ids(store, rank, size, timeout);   // every rank calls it
//   HostLayout layout = HostLayout::from_ids(ids);
//   layout.num_hosts();  layout.host_of(rank);  layout.ranks_on(h);  // ranks in ascending order
//
// A host id is "<hostname>/<boot id>" (two containers that share a hostname but not a kernel
// differ), or CREW_HOST_ID when set: tests simulate several hosts on one machine with it.
// Hosts are numbered in the order of their lowest rank, so every rank computes the same layout.
#include <chrono>
#include <string>
#include <vector>

namespace crew::dist {

class Store;

// This process's host id: CREW_HOST_ID when set, else "<hostname>/<boot id>".
std::string host_id();

// Publishes host_id() under "host/<rank>" of `store` and waits (up to `timeout`) for every
// rank's; returns them indexed by rank.
std::vector<std::string> exchange_host_ids(Store& store, int rank, int size,
                                           std::chrono::milliseconds timeout);

class HostLayout {
 public:
  // `ids[r]` is rank r's host id.
  static HostLayout from_ids(const std::vector<std::string>& ids);

  int num_hosts() const { return static_cast<int>(hosts_.size()); }
  int size() const { return static_cast<int>(host_of_.size()); }
  int host_of(int rank) const { return host_of_.at(rank); }
  // The ranks on host h, ascending; the first is the host's leader.
  const std::vector<int>& ranks_on(int host) const { return hosts_.at(host); }
  int leader_of(int host) const { return hosts_.at(host).front(); }
  // rank's index among the ranks of its host.
  int local_rank(int rank) const;
  // The fewest ranks any host has.
  int min_ranks_per_host() const;

 private:
  std::vector<std::vector<int>> hosts_;
  std::vector<int> host_of_;
};

// The backend "auto" resolves to for this layout: "shm" on one host (when registered),
// "hier" on several hosts that all have more than one rank (when "hier" is registered),
// "gloo" otherwise.
std::string auto_backend_for(const HostLayout& layout);

}  // namespace crew::dist
