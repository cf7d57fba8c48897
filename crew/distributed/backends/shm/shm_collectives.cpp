// The collective algorithms of the shm backend, all built from ShmComm rounds (see shm_comm.h).
#include <algorithm>
#include <cstring>

#include "crew/core/check.h"
#include "crew/distributed/backends/shm/shm_comm.h"
#include "crew/distributed/backends/shm/shm_reduce.h"

namespace crew::dist::detail {
namespace {

uint8_t* at(void* p, size_t off) { return static_cast<uint8_t*>(p) + off; }
const uint8_t* at(const void* p, size_t off) { return static_cast<const uint8_t*>(p) + off; }

// [lo, hi): rank r's share of n elements, in whole 64-byte lines so ranks never write to the
// same cache line.
void slice_of(int64_t n, int world, int r, size_t elem_size, int64_t* lo, int64_t* hi) {
  const int64_t line = static_cast<int64_t>(64 / elem_size);
  int64_t per = (n + world - 1) / world;
  per = (per + line - 1) / line * line;
  *lo = std::min<int64_t>(n, per * r);
  *hi = std::min<int64_t>(n, *lo + per);
}

// Bytes of one rank's part when a buffer is split into `world` parts (64-byte multiple).
size_t part_bytes(size_t buffer_bytes, int world) { return buffer_bytes / size_t(world) / 64 * 64; }

// The piece of its slice a rank reduces and copies out at a time in a shared-buffer all_reduce:
// small enough to stay in the core's L2 between the two.
constexpr size_t kSharedPieceBytes = size_t{64} << 10;

// How many chunks of `chunk` units cover `total` (at least one: every op runs a round).
int64_t chunk_count(int64_t total, int64_t chunk) {
  return std::max<int64_t>(1, (total + chunk - 1) / chunk);
}

}  // namespace

template <typename Body>
void ShmComm::for_each_chunk(ShmOp& op, int64_t total, int64_t chunk, const Body& body) {
  const int64_t chunks = chunk_count(total, chunk);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t off = c * chunk;
    const int b = acquire_buffer(op);
    body(off, std::min(chunk, total - off), b);
    release_buffer(b);
  }
}

void ShmComm::barrier(ShmOp& op) { round(op); }

void ShmComm::all_reduce(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop) {
  const size_t esize = dtype_size(dtype);
  const size_t bytes = size_t(count) * esize;
  if (bytes > small_bytes_ && !op.checked) {
    if (const ShmSharedBuffer* shared = find_shared(op, data, bytes)) {
      all_reduce_shared(op, *shared, count, dtype, rop);
      return;
    }
  }
  if (bytes <= small_bytes_ && bytes <= buffer_bytes()) {
    // One round: every rank reduces the whole (small) message itself, in rank order.
    const int b = acquire_buffer(op);
    std::memcpy(buffer(rank_, b), data, bytes);
    round(op);
    if (world_ > 1) {
      reduce_pair(data, buffer(0, b), buffer(1, b), count, dtype, rop);
      for (int r = 2; r < world_; ++r) reduce_into(data, buffer(r, b), count, dtype, rop);
    }
    release_buffer(b);
    if (rop == ReduceOp::AVG) finish_avg(data, count, dtype, world_);
    return;
  }
  reduce_chunks(op, data, count, dtype, rop, -1);
}

void ShmComm::all_reduce_shared(ShmOp& op, const ShmSharedBuffer& buffer, int64_t count, DType dtype,
                                ReduceOp rop) {
  // Every rank's input is in its region when the op is issued, so one round starts it. Rank r
  // alone reads and writes slice r, in every region: it reduces the slice from all regions into
  // its own and copies the result into the others', a piece at a time so that the copy reads
  // what the reduction just wrote from the cache. Per rank that moves 2x the message (read two
  // halves, write two) with two rounds in all; a last round ends it (every slice everywhere).
  const size_t esize = dtype_size(dtype);
  auto at_rank = [&](int r, int64_t element) {
    return buffer.region(r) + op.desc.shared_offset + size_t(element) * esize;
  };
  int64_t lo, hi;
  slice_of(count, world_, rank_, esize, &lo, &hi);
  round(op);
  const int64_t piece = static_cast<int64_t>(kSharedPieceBytes / esize);
  for (int64_t off = lo; off < hi; off += piece) {
    const int64_t n = std::min(piece, hi - off);
    uint8_t* mine = at_rank(rank_, off);
    for (int r = 0; r < world_; ++r) {
      if (r != rank_) reduce_into(mine, at_rank(r, off), n, dtype, rop);
    }
    if (rop == ReduceOp::AVG) finish_avg(mine, n, dtype, world_);
    for (int r = 0; r < world_; ++r) {
      if (r != rank_) std::memcpy(at_rank(r, off), mine, size_t(n) * esize);
    }
  }
  round(op);
}

void ShmComm::reduce(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop, int root) {
  reduce_chunks(op, data, count, dtype, rop, root);
}

void ShmComm::reduce_chunks(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop, int root) {
  // Per chunk, rank r owns slice r. Each rank stages only the slices others own, reduces its
  // own slice from its private input and the others' staged copies (reduce-scatter), then
  // copies the others' reduced slices out (all-gather; with root >= 0 only root does).
  const size_t esize = dtype_size(dtype);
  const bool gathers = root < 0 || rank_ == root;
  for_each_chunk(op, count, static_cast<int64_t>(buffer_bytes() / esize), [&](int64_t off, int64_t n, int b) {
    uint8_t* chunk_data = at(data, off * esize);
    int64_t lo, hi;
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      slice_of(n, world_, r, esize, &lo, &hi);
      std::memcpy(buffer(rank_, b) + lo * esize, chunk_data + lo * esize, (hi - lo) * esize);
    }
    round(op);
    slice_of(n, world_, rank_, esize, &lo, &hi);
    uint8_t* mine = buffer(rank_, b) + lo * esize;
    uint8_t* mine_in = chunk_data + lo * esize;
    const int first_peer = rank_ == 0 ? 1 : 0;
    if (world_ == 1) {
      std::memcpy(mine, mine_in, (hi - lo) * esize);
    } else {
      reduce_pair(mine, mine_in, buffer(first_peer, b) + lo * esize, hi - lo, dtype, rop);
      for (int r = first_peer + 1; r < world_; ++r) {
        if (r != rank_) reduce_into(mine, buffer(r, b) + lo * esize, hi - lo, dtype, rop);
      }
    }
    if (rop == ReduceOp::AVG) finish_avg(mine, hi - lo, dtype, world_);
    if (gathers) std::memcpy(mine_in, mine, (hi - lo) * esize);
    round(op);
    if (gathers) {
      for (int r = 0; r < world_; ++r) {
        if (r == rank_) continue;
        slice_of(n, world_, r, esize, &lo, &hi);
        std::memcpy(chunk_data + lo * esize, buffer(r, b) + lo * esize, (hi - lo) * esize);
      }
    }
  });
}

void ShmComm::broadcast(ShmOp& op, void* data, size_t bytes, int root) {
  for_each_chunk(op, int64_t(bytes), int64_t(buffer_bytes()), [&](int64_t off, int64_t n, int b) {
    if (rank_ == root) std::memcpy(buffer(root, b), at(data, off), n);
    round(op);
    if (rank_ != root) std::memcpy(at(data, off), buffer(root, b), n);
  });
}

void ShmComm::all_gather(ShmOp& op, const std::vector<void*>& outputs, const void* input, size_t bytes,
                         bool root_only, int root) {
  const bool reads = !root_only || rank_ == root;
  for_each_chunk(op, int64_t(bytes), int64_t(buffer_bytes()), [&](int64_t off, int64_t n, int b) {
    std::memcpy(buffer(rank_, b), at(input, off), n);
    round(op);
    if (reads) {
      for (int r = 0; r < world_; ++r) std::memcpy(at(outputs[r], off), buffer(r, b), n);
    }
  });
}

void ShmComm::scatter(ShmOp& op, void* output, const std::vector<const void*>& inputs, size_t bytes,
                      int root) {
  const size_t part = part_bytes(buffer_bytes(), world_);
  for_each_chunk(op, int64_t(bytes), int64_t(part), [&](int64_t off, int64_t n, int b) {
    if (rank_ == root) {
      for (int r = 0; r < world_; ++r) std::memcpy(buffer(root, b) + r * part, at(inputs[r], off), n);
    }
    round(op);
    std::memcpy(at(output, off), buffer(root, b) + rank_ * part, n);
  });
}

void ShmComm::reduce_scatter(ShmOp& op, void* output, const std::vector<const void*>& inputs, int64_t count,
                             DType dtype, ReduceOp rop) {
  const size_t esize = dtype_size(dtype);
  const size_t part = part_bytes(buffer_bytes(), world_);
  for_each_chunk(op, count, static_cast<int64_t>(part / esize), [&](int64_t off, int64_t n, int b) {
    for (int r = 0; r < world_; ++r)
      std::memcpy(buffer(rank_, b) + r * part, at(inputs[r], off * esize), n * esize);
    round(op);
    uint8_t* out = at(output, off * esize);
    if (world_ == 1) {
      std::memcpy(out, buffer(0, b), n * esize);
    } else {
      reduce_pair(out, buffer(0, b) + rank_ * part, buffer(1, b) + rank_ * part, n, dtype, rop);
      for (int r = 2; r < world_; ++r) reduce_into(out, buffer(r, b) + rank_ * part, n, dtype, rop);
    }
    if (rop == ReduceOp::AVG) finish_avg(out, n, dtype, world_);
  });
}

void ShmComm::alltoall(ShmOp& op, const std::vector<void*>& outputs, const std::vector<const void*>& inputs,
                       size_t bytes) {
  const size_t part = part_bytes(buffer_bytes(), world_);
  for_each_chunk(op, int64_t(bytes), int64_t(part), [&](int64_t off, int64_t n, int b) {
    for (int r = 0; r < world_; ++r) std::memcpy(buffer(rank_, b) + r * part, at(inputs[r], off), n);
    round(op);
    for (int r = 0; r < world_; ++r) std::memcpy(at(outputs[r], off), buffer(r, b) + rank_ * part, n);
  });
}

}  // namespace crew::dist::detail
