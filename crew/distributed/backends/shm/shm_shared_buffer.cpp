// Buffers in shared memory (ProcessGroup::allocate_buffer on the shm backend): created by
// rank 0, mapped by every rank, and all_reduced in place without staging copies.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/logging.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/shm/shm_comm.h"

namespace crew::dist::detail {
namespace {

constexpr size_t kNameChars = 256;
enum Vote : int64_t { OK = 0, NO_SPACE = 1, FAILED = 2 };

// One int64 that all_reduce MAX turns into the worst vote and, among the ranks that cast it,
// the lowest rank.
int64_t encode_vote(Vote vote, int rank) { return (int64_t(vote) << 32) | (0xFFFFFFFFLL - rank); }
Vote vote_of(int64_t v) { return static_cast<Vote>(v >> 32); }
int rank_of(int64_t v) { return static_cast<int>(0xFFFFFFFFLL - (v & 0xFFFFFFFFLL)); }

}  // namespace

size_t ShmComm::shared_limit(size_t wanted) const {
  if (max_bytes_ == 0) return 0;  // no limit
  size_t used = geometry_.total_bytes();
  for (const auto& b : shared_) used += b->stride * size_t(world_);
  if (used + wanted > max_bytes_) {
    CREW_THROW(dist::BackendUnavailableError, "shm (rank ", rank_, ", group ", group_,
               "): a shared buffer of ", wanted, " bytes does not fit: this rank has mapped ", used,
               " bytes already and may map at most ", max_bytes_, " (CREW_SHM_MAX_BYTES)");
  }
  return max_bytes_ - used;
}

void* ShmComm::allocate_shared(ShmOp& op, size_t bytes, std::shared_ptr<const void>* owner) {
  auto buffer = std::make_shared<ShmSharedBuffer>();
  buffer->region_bytes = bytes;
  buffer->stride = round_up(std::max<size_t>(bytes, 1), 4096);
  const size_t total = buffer->stride * size_t(world_);
  char name[kNameChars] = {};
  Vote vote = OK;
  std::string why;
  try {
    if (rank_ == 0) {
      const std::string n = new_segment_name();
      CREW_INTERNAL_ASSERT(n.size() < kNameChars);
      buffer->segment = ShmSegment::create(n, total, shm_dir_, shared_limit(total));
      std::snprintf(name, sizeof name, "%s", n.c_str());
    }
  } catch (const BackendUnavailableError& e) {
    vote = NO_SPACE, why = e.what();
  } catch (const CommError& e) {
    vote = FAILED, why = e.what();
  }
  broadcast(op, name, sizeof name, 0);
  if (rank_ != 0 && name[0] != '\0') {
    try {
      buffer->segment = ShmSegment::open(name, total, shared_limit(total), segment_prefix());
    } catch (const BackendUnavailableError& e) {
      vote = NO_SPACE, why = e.what();
    } catch (const CommError& e) {
      vote = FAILED, why = e.what();
    }
  }
  int64_t votes = encode_vote(vote, rank_);
  all_reduce(op, &votes, 1, DType::INT64, ReduceOp::MAX);
  if (rank_ == 0) buffer->segment.unlink();  // every rank has mapped it, or gives up now
  const int who = rank_of(votes);
  if (vote_of(votes) == FAILED) {
    CREW_THROW(CommError, where(op), ": rank ", who, " could not ", who == 0 ? "create" : "map",
               " a shared buffer of ", total, " bytes", who == rank_ ? ": " + why : " (its error says why)");
  }
  if (vote_of(votes) == NO_SPACE) {
    if (who == rank_) {
      CREW_LOG(WARNING) << where(op) << ": no room for a shared buffer of " << total
                        << " bytes, using ordinary memory (all_reduce copies through the staging buffers): "
                        << why;
    }
    return nullptr;
  }
  shared_.push_back(buffer);
  *owner = buffer;
  return buffer->region(rank_);
}

const ShmSharedBuffer* ShmComm::find_shared(ShmOp& op, const void* data, size_t bytes) const {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t id = 0; id < shared_.size(); ++id) {
    const uint8_t* mine = shared_[id]->region(rank_);
    if (p >= mine && p + bytes <= mine + shared_[id]->region_bytes) {
      op.desc.shared = static_cast<int32_t>(id);
      op.desc.shared_offset = p - mine;
      return shared_[id].get();
    }
  }
  return nullptr;
}

}  // namespace crew::dist::detail
