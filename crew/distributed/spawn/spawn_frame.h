#pragma once
// The two frames of crew::dist::spawn's socket between parent and child, encoded and decoded
// here only: the parent writes the arguments frame, the child its report frame.
//
//   arguments: u64 length (little-endian), the encoded arguments (spawn_codec.h)
//   report:    one kind byte ('R' result, 'E' error), u64 length, the payload (the encoded
//              result, or the exception's what())
//
//   std::string bytes = encode_report({SpawnReport::Kind::RESULT, result});
//   std::optional<SpawnReport> r = decode_report(bytes);   // nullopt: the child sent nothing
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crew::dist {

inline constexpr size_t kSpawnLengthBytes = sizeof(uint64_t);

struct SpawnReport {
  enum class Kind : char { RESULT = 'R', ERROR = 'E' };
  Kind kind = Kind::RESULT;
  std::string payload;

  bool operator==(const SpawnReport&) const = default;
};

std::string encode_args_frame(const std::string& args);
// The payload length in an arguments frame's first kSpawnLengthBytes bytes.
uint64_t decode_args_length(std::string_view header);

std::string encode_report(const SpawnReport& report);
// The report in everything a child sent before closing its socket: nullopt when it sent
// nothing; SpawnError naming what is wrong for a truncated frame, an unknown kind or bytes
// after the frame.
std::optional<SpawnReport> decode_report(std::string_view bytes);

}  // namespace crew::dist
