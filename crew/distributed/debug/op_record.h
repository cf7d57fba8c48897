#pragma once
// OpRecord: what one rank knows about one collective it issued (op, sequence number, size,
// dtype, root), in the words error reports use, and RankState, a rank's view of its group at
// one moment (the collective it waits in, its last ones), as published through the store.
//
//   OpRecord r{"all_reduce", 57, false, 4096, DType::FLOAT32, -1, static_cast<int>(ReduceOp::SUM)};
//   r.describe();   // "all_reduce #57 (4096 floats, SUM)"
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crew/tensor/dtype.h"

namespace crew::dist::debug {

struct OpRecord {
  std::string op;     // "all_reduce", "broadcast", ..., "send", "recv"
  uint64_t seq = 0;   // the group's collective number (#seq); p2p ops count apart
  bool p2p = false;   // send / recv: not a collective, left out of agreement checks
  int64_t numel = 0;  // elements per rank (all_gather: its input; scatter: its output)
  DType dtype = DType::FLOAT32;
  int root = -1;       // root of broadcast/reduce/gather/scatter, peer of send/recv; -1 none
  int reduce_op = -1;  // ReduceOp as int for reductions, -1 otherwise
  bool completed = false;
  bool failed = false;

  // "all_reduce #57 (4096 floats, SUM)", "broadcast #3 (10 int64s, root 0)", "send #0 (4 floats, peer 1)".
  std::string describe() const;
  // Same op, size, dtype, root and reduction (the sequence number aside).
  bool same_call(const OpRecord& other) const;
  // One line without spaces in fields: "all_reduce 57 0 4096 0 -1 0 1 0".
  std::string encode() const;
  // Inverse of encode(); ValueError on a malformed line.
  static OpRecord decode(const std::string& line);

  // kFingerprintElems int64s naming the call (op, seq, size, dtype, root, reduction), as the
  // CREW_DIST_DEBUG=DETAIL check all-gathers them; from_fingerprint() inverts it.
  static constexpr int kFingerprintElems = 8;
  void fingerprint(int64_t* out) const;
  static OpRecord from_fingerprint(const int64_t* in);
};

// "4096 floats", "1 float", "10 int64s", "3 bytes" (uint8).
std::string describe_elems(int64_t numel, DType dtype);

// One rank's state as its report publishes it.
struct RankState {
  enum class Where { IN_COLLECTIVE, IDLE, LEFT, FAILED };
  int rank = 0;
  Where where = Where::IDLE;
  std::optional<OpRecord> current;  // IN_COLLECTIVE: the oldest op it waits for; FAILED: the op that failed
  std::chrono::milliseconds waiting{0};  // how long `current` has been pending
  std::optional<OpRecord> last;          // the newest op it issued (IDLE/LEFT: its last one)
  uint64_t collectives_issued = 0;       // collectives issued so far (= next seq)

  // "rank 1 is in all_reduce #57 (4096 floats, SUM) for 2.0 s", "rank 0 is not in a
  // collective (its last: all_reduce #99 (...), done)", "rank 0 has left the group (its last: ...)",
  // "rank 0 failed in broadcast #57 (...)".
  std::string describe() const;
  std::string encode() const;
  static RankState decode(const std::string& text);
};

}  // namespace crew::dist::debug
