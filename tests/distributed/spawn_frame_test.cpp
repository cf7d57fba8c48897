// spawn's socket frames: what the child writes, the parent reads back; a truncated or garbled
// report is a SpawnError saying what is wrong, never a crash or a silent empty result.
#include "crew/distributed/spawn/spawn_frame.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "crew/core/error.h"

namespace crew::dist {
namespace {

using ::testing::HasSubstr;

std::string what_of(std::string_view bytes) {
  try {
    decode_report(bytes);
  } catch (const SpawnError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpawnFrame, ReportsRoundTrip) {
  const std::string binary("a\0b\xff\n", 5);
  for (const SpawnReport& r :
       {SpawnReport{SpawnReport::Kind::RESULT, ""}, SpawnReport{SpawnReport::Kind::RESULT, binary},
        SpawnReport{SpawnReport::Kind::ERROR, "rank one says no"},
        SpawnReport{SpawnReport::Kind::RESULT, std::string(100000, 'x')}}) {
    EXPECT_EQ(decode_report(encode_report(r)), r);
  }
  EXPECT_EQ(decode_report(""), std::nullopt) << "a child that sent nothing";
}

TEST(SpawnFrame, ArgumentsRoundTrip) {
  const std::string args("\x01\x00\x02", 3);
  const std::string frame = encode_args_frame(args);
  ASSERT_EQ(frame.size(), kSpawnLengthBytes + args.size());
  EXPECT_EQ(decode_args_length(std::string_view(frame).substr(0, kSpawnLengthBytes)), args.size());
  EXPECT_EQ(frame.substr(kSpawnLengthBytes), args);
  EXPECT_THROW(decode_args_length("abc"), SpawnError);
}

TEST(SpawnFrame, EveryTruncationIsAClearError) {
  const std::string frame = encode_report({SpawnReport::Kind::ERROR, "traceback"});
  for (size_t n = 1; n < frame.size(); ++n) {
    EXPECT_THAT(what_of(std::string_view(frame).substr(0, n)), HasSubstr("report frame truncated")) << n;
  }
}

TEST(SpawnFrame, GarbageIsAClearError) {
  EXPECT_THAT(what_of("X12345678"), HasSubstr("unknown kind 88"));
  EXPECT_THAT(what_of(encode_report({SpawnReport::Kind::RESULT, "ok"}) + "junk"), HasSubstr("4 bytes after"));
  std::string huge = encode_report({SpawnReport::Kind::RESULT, ""});
  const uint64_t n = std::numeric_limits<uint64_t>::max();
  huge.replace(1, sizeof(n), reinterpret_cast<const char*>(&n), sizeof(n));
  EXPECT_THAT(what_of(huge), HasSubstr("payload of 18446744073709551615 bytes, got 0"));
}

}  // namespace
}  // namespace crew::dist
