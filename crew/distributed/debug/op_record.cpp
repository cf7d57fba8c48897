#include "crew/distributed/debug/op_record.h"

#include <cstdio>
#include <sstream>

#include "crew/core/check.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::debug {

namespace {

const char* elem_noun(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32:
      return "float";
    case DType::FLOAT64:
      return "double";
    case DType::INT32:
      return "int32";
    case DType::INT64:
      return "int64";
    case DType::UINT8:
      return "byte";
    case DType::BFLOAT16:
      return "bfloat16";
    case DType::FLOAT16:
      return "float16";
    case DType::BOOL:
      return "bool";
  }
  return "element";
}

bool is_rooted(const std::string& op) {
  return op == "broadcast" || op == "reduce" || op == "gather" || op == "scatter";
}

std::string seconds_text(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

}  // namespace

std::string describe_elems(int64_t numel, DType dtype) {
  return str_cat(numel, " ", elem_noun(dtype), numel == 1 ? "" : "s");
}

std::string OpRecord::describe() const {
  std::string extra;
  if (p2p && root >= 0) extra = str_cat(", peer ", root);
  if (!p2p && root >= 0 && is_rooted(op)) extra = str_cat(", root ", root);
  if (reduce_op >= 0) extra += str_cat(", ", reduce_op_name(static_cast<ReduceOp>(reduce_op)));
  if (op == "barrier") return str_cat(op, " #", seq);
  return str_cat(op, " #", seq, " (", describe_elems(numel, dtype), extra, ")");
}

bool OpRecord::same_call(const OpRecord& o) const {
  return op == o.op && p2p == o.p2p && numel == o.numel && dtype == o.dtype && root == o.root &&
         reduce_op == o.reduce_op;
}

std::string OpRecord::encode() const {
  return str_cat(op, " ", seq, " ", p2p ? 1 : 0, " ", numel, " ", static_cast<int>(dtype), " ", root, " ",
                 reduce_op, " ", completed ? 1 : 0, " ", failed ? 1 : 0);
}

OpRecord OpRecord::decode(const std::string& line) {
  std::istringstream in(line);
  OpRecord r;
  int p2p = 0, dtype = 0, completed = 0, failed = 0;
  in >> r.op >> r.seq >> p2p >> r.numel >> dtype >> r.root >> r.reduce_op >> completed >> failed;
  CREW_CHECK(!in.fail() && dtype >= 0 && dtype <= static_cast<int>(DType::BOOL),
             "OpRecord::decode: malformed record '", line, "'");
  r.p2p = p2p != 0;
  r.dtype = static_cast<DType>(dtype);
  r.completed = completed != 0;
  r.failed = failed != 0;
  return r;
}

namespace {
constexpr const char* kOpNames[] = {"all_reduce", "broadcast",      "reduce",   "all_gather", "gather",
                                    "scatter",    "reduce_scatter", "alltoall", "barrier",    "send",
                                    "recv"};
constexpr int64_t kNumOps = sizeof(kOpNames) / sizeof(kOpNames[0]);
constexpr int64_t kFingerprintMagic = 0x637265776462;  // "crewdb": tells a fingerprint from other data
}  // namespace

void OpRecord::fingerprint(int64_t* out) const {
  int64_t code = -1;
  for (int64_t i = 0; i < kNumOps; ++i) {
    if (op == kOpNames[i]) code = i;
  }
  out[0] = kFingerprintMagic;
  out[1] = code;
  out[2] = static_cast<int64_t>(seq);
  out[3] = numel;
  out[4] = static_cast<int64_t>(dtype);
  out[5] = root;
  out[6] = reduce_op;
  out[7] = p2p ? 1 : 0;
}

OpRecord OpRecord::from_fingerprint(const int64_t* in) {
  OpRecord r;
  const bool valid = in[0] == kFingerprintMagic && in[1] >= 0 && in[1] < kNumOps && in[4] >= 0 &&
                     in[4] <= static_cast<int64_t>(DType::BOOL);
  r.op = valid ? kOpNames[in[1]] : "(not a collective fingerprint)";
  if (!valid) return r;
  r.seq = static_cast<uint64_t>(in[2]);
  r.numel = in[3];
  r.dtype = static_cast<DType>(in[4]);
  r.root = static_cast<int>(in[5]);
  r.reduce_op = static_cast<int>(in[6]);
  r.p2p = in[7] != 0;
  return r;
}

std::string RankState::describe() const {
  const std::string last_text = last ? str_cat(last->describe(), last->failed      ? ", failed"
                                                                 : last->completed ? ", done"
                                                                                   : ", pending")
                                     : "none";
  switch (where) {
    case Where::IN_COLLECTIVE:
      return str_cat("rank ", rank, " is in ", current ? current->describe() : "?",
                     waiting.count() > 0 ? str_cat(" (waiting ", seconds_text(waiting), ")") : "");
    case Where::IDLE:
      return str_cat("rank ", rank, " is not in a collective (its last: ", last_text, ")");
    case Where::LEFT:
      return str_cat("rank ", rank, " has left the group (its last: ", last_text, ")");
    case Where::FAILED:
      return str_cat("rank ", rank, " failed in ", current ? current->describe() : "?");
  }
  return str_cat("rank ", rank, " ?");
}

// Lines: "rank W waiting_ms issued", "current <record>"?, "last <record>"?.
std::string RankState::encode() const {
  std::string out =
      str_cat(rank, " ", static_cast<int>(where), " ", waiting.count(), " ", collectives_issued, "\n");
  if (current) out += "current " + current->encode() + "\n";
  if (last) out += "last " + last->encode() + "\n";
  return out;
}

RankState RankState::decode(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  RankState s;
  CREW_CHECK(static_cast<bool>(std::getline(in, line)), "RankState::decode: empty report");
  {
    std::istringstream head(line);
    int where = 0;
    long long waiting_ms = 0;
    head >> s.rank >> where >> waiting_ms >> s.collectives_issued;
    CREW_CHECK(!head.fail() && where >= 0 && where <= 3, "RankState::decode: malformed header '", line, "'");
    s.where = static_cast<Where>(where);
    s.waiting = std::chrono::milliseconds(waiting_ms);
  }
  while (std::getline(in, line)) {
    if (line.rfind("current ", 0) == 0)
      s.current = OpRecord::decode(line.substr(8));
    else if (line.rfind("last ", 0) == 0)
      s.last = OpRecord::decode(line.substr(5));
  }
  return s;
}

}  // namespace crew::dist::debug
