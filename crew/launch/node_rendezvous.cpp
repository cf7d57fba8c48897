#include "crew/launch/node_rendezvous.h"

#include <unistd.h>

#include <charconv>
#include <random>
#include <string_view>
#include <thread>
#include <type_traits>

#include "crew/core/check.h"
#include "crew/core/timer.h"

namespace crew::launch {
namespace {

// `text` as a whole decimal number >= 0 of type T.
template <typename T>
std::optional<T> whole_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if constexpr (std::is_signed_v<T>) {
    if (value < 0) return std::nullopt;
  }
  return value;
}

// The words of `text` between single spaces (an empty word where two spaces meet), at most
// max_words: the last keeps the rest of the text, spaces and all.
std::vector<std::string_view> words(std::string_view text, size_t max_words) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < max_words) {
    const size_t space = text.find(' ');
    if (space == std::string_view::npos) break;
    out.push_back(text.substr(0, space));
    text.remove_prefix(space + 1);
  }
  out.push_back(text);
  return out;
}

}  // namespace

std::string NodeClaim::encode() const { return str_cat(nproc, " ", host, " pid ", pid, " #", nonce); }

std::optional<NodeClaim> NodeClaim::decode(const std::string& text) {
  const auto w = words(text, 5);
  if (w.size() != 5 || w[1].empty() || w[2] != "pid" || w[4].substr(0, 1) != "#") return std::nullopt;
  const auto nproc = whole_number<int>(w[0]);
  const auto pid = whole_number<int>(w[3]);
  const auto nonce = whole_number<uint32_t>(w[4].substr(1));
  if (!nproc || *nproc < 1 || !pid || !nonce) return std::nullopt;
  return NodeClaim{*nproc, std::string(w[1]), *pid, *nonce};
}

std::string NodeFailure::encode() const { return str_cat(node, " ", exit_code, " ", message); }

std::optional<NodeFailure> NodeFailure::decode(const std::string& text) {
  const auto w = words(text, 3);
  if (w.size() != 3) return std::nullopt;
  const auto node = whole_number<int>(w[0]);
  const auto code = whole_number<int>(w[1]);
  if (!node || !code) return std::nullopt;
  return NodeFailure{*node, *code, std::string(w[2])};
}

NodeRendezvous::NodeRendezvous(dist::Store& store, std::string job_id, int generation, int nnodes,
                               int node_rank)
    : store_(store),
      prefix_("crew.launch/" + job_id + "/" + std::to_string(generation) + "/"),
      nnodes_(nnodes),
      node_rank_(node_rank),
      last_beat_(static_cast<size_t>(nnodes), -1),
      last_change_(static_cast<size_t>(nnodes), std::chrono::steady_clock::now()) {}

std::string NodeRendezvous::key(const std::string& name) const { return prefix_ + name; }

Membership NodeRendezvous::join(const std::string& host, int nproc, std::chrono::milliseconds timeout,
                                const std::function<bool()>& interrupted) {
  claim(host, nproc);
  wait_for_nodes(timeout, interrupted);
  return read_membership();
}

void NodeRendezvous::claim(const std::string& host, int nproc) {
  // Claimed, not set: a second launcher started with the same --rank fails naming both, and
  // tells the others through `failed` so that nobody waits for the timeout.
  std::random_device rd;
  const NodeClaim mine{nproc, host, static_cast<int>(::getpid()), rd()};
  const std::string entry = mine.encode();
  auto held = store_.compare_set(key("node/" + std::to_string(node_rank_)), {},
                                 std::vector<uint8_t>(entry.begin(), entry.end()));
  if (std::string(held.begin(), held.end()) == entry) return;
  const NodeClaim theirs = NodeClaim::decode(std::string(held.begin(), held.end())).value_or(NodeClaim{});
  const std::string message = str_cat(
      "launch (node ", node_rank_, "): node rank ", node_rank_, " is claimed twice: by the launcher on ",
      theirs.host, " (pid ", theirs.pid, ", ", theirs.nproc, " workers) and by this one on ", host, " (pid ",
      mine.pid, ", ", nproc, " workers); give each node its own --rank");
  mark_failed(1, message);
  CREW_THROW(ValueError, message);
}

void NodeRendezvous::wait_for_nodes(std::chrono::milliseconds timeout,
                                    const std::function<bool()>& interrupted) {
  std::vector<std::string> keys;
  for (int r = 0; r < nnodes_; ++r) keys.push_back(key("node/" + std::to_string(r)));
  // Polled rather than one blocking wait, so a signal to the launcher is seen at once.
  Deadline deadline(timeout);
  while (!store_.check(keys)) {
    if (auto f = failure()) {
      CREW_THROW(StateError, "launch (node ", node_rank_,
                 "): the job failed before it started: ", f->message);
    }
    if (interrupted && interrupted()) {
      CREW_THROW(StateError, "launch (node ", node_rank_, "): interrupted while waiting for the other nodes");
    }
    if (deadline.expired()) {
      std::string missing;
      for (int r = 0; r < nnodes_; ++r) {
        if (!store_.check({keys[static_cast<size_t>(r)]}))
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      CREW_THROW(TimeoutError, "launch (node ", node_rank_, "): nodes [", missing, "] of ", nnodes_,
                 " never joined the job within ", timeout.count(), " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Membership NodeRendezvous::read_membership() {
  Membership m;
  for (int r = 0; r < nnodes_; ++r) {
    const auto claim = NodeClaim::decode(store_.get_string(key("node/" + std::to_string(r))));
    CREW_CHECK_T(StoreError, claim.has_value(), "launch: node ", r, " registered a malformed entry");
    if (r < node_rank_) m.rank_offset += claim->nproc;
    m.world_size += claim->nproc;
    m.nodes.push_back(NodeInfo{r, claim->nproc, claim->host});
  }
  return m;
}

void NodeRendezvous::mark_done() { store_.set(key("done/" + std::to_string(node_rank_)), "1"); }

bool NodeRendezvous::all_done() {
  std::vector<std::string> keys;
  for (int r = 0; r < nnodes_; ++r) keys.push_back(key("done/" + std::to_string(r)));
  return store_.check(keys);
}

void NodeRendezvous::mark_failed(int exit_code, const std::string& message) {
  const std::string record = NodeFailure{node_rank_, exit_code, message}.encode();
  store_.compare_set(key("failed"), {}, std::vector<uint8_t>(record.begin(), record.end()));
}

std::optional<NodeFailure> NodeRendezvous::failure() {
  if (!store_.check({key("failed")})) return std::nullopt;
  const std::string record = store_.get_string(key("failed"));
  return NodeFailure::decode(record).value_or(
      NodeFailure{-1, 1, "unreadable failure record '" + record + "'"});
}

void NodeRendezvous::heartbeat() { store_.add(key("alive/" + std::to_string(node_rank_)), 1); }

int64_t NodeRendezvous::heartbeats(int r) { return store_.add(key("alive/" + std::to_string(r)), 0); }

bool NodeRendezvous::claimed() { return store_.check({key("node/" + std::to_string(node_rank_))}); }

std::vector<int> NodeRendezvous::silent_nodes(std::chrono::milliseconds stale) {
  std::vector<int> out;
  const auto now = std::chrono::steady_clock::now();
  for (int r = 0; r < nnodes_; ++r) {
    if (r == node_rank_ || store_.check({key("done/" + std::to_string(r))})) continue;
    const int64_t beat = heartbeats(r);
    if (beat != last_beat_[static_cast<size_t>(r)]) {
      last_beat_[static_cast<size_t>(r)] = beat;
      last_change_[static_cast<size_t>(r)] = now;
    } else if (now - last_change_[static_cast<size_t>(r)] > stale) {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace crew::launch
