#include "crew/distributed/spawn/spawn_frame.h"

#include <cstring>

#include "crew/core/check.h"

namespace crew::dist {
namespace {

void put_length(std::string& out, uint64_t n) {
  char bytes[kSpawnLengthBytes];
  std::memcpy(bytes, &n, sizeof(n));  // x86-64 and aarch64 are little-endian
  out.append(bytes, sizeof(bytes));
}

uint64_t get_length(std::string_view bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), sizeof(n));
  return n;
}

}  // namespace

std::string encode_args_frame(const std::string& args) {
  std::string out;
  out.reserve(kSpawnLengthBytes + args.size());
  put_length(out, args.size());
  return out + args;
}

uint64_t decode_args_length(std::string_view header) {
  CREW_CHECK_T(SpawnError, header.size() == kSpawnLengthBytes, "spawn: arguments frame header of ",
               header.size(), " bytes, expected ", kSpawnLengthBytes);
  return get_length(header);
}

std::string encode_report(const SpawnReport& report) {
  std::string out(1, static_cast<char>(report.kind));
  put_length(out, report.payload.size());
  return out + report.payload;
}

std::optional<SpawnReport> decode_report(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  const char kind = bytes[0];
  CREW_CHECK_T(SpawnError, kind == 'R' || kind == 'E', "spawn: report frame of unknown kind ",
               static_cast<int>(static_cast<unsigned char>(kind)), " (expected 'R' or 'E')");
  constexpr size_t kHeader = 1 + kSpawnLengthBytes;
  CREW_CHECK_T(SpawnError, bytes.size() >= kHeader, "spawn: report frame truncated: ", bytes.size(),
               " bytes, the header alone is ", kHeader);
  const uint64_t n = get_length(bytes.substr(1));
  const size_t have = bytes.size() - kHeader;
  CREW_CHECK_T(SpawnError, n <= have, "spawn: report frame truncated: payload of ", n, " bytes, got ", have);
  CREW_CHECK_T(SpawnError, n == have, "spawn: ", have - n, " bytes after the report frame");
  return SpawnReport{static_cast<SpawnReport::Kind>(kind), std::string(bytes.substr(kHeader, n))};
}

}  // namespace crew::dist
