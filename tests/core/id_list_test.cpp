#include <gtest/gtest.h>

#include "crew/core/error.h"
#include "crew/core/id_list.h"

namespace crew {
namespace {

// The one parser of device lists (launch's --devices, spawn's gpus=, CUDA_VISIBLE_DEVICES).
TEST(IdList, ParsesAndNamesWhatIsWrong) {
  EXPECT_EQ(parse_id_list("0,1,2", "--devices"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_id_list("3", "--devices"), (std::vector<int>{3}));
  for (const char* bad : {"", "0,,1", "0,x", "-1", "1,", " 1", "99999999999"}) {
    EXPECT_THROW(parse_id_list(bad, "--devices"), ValueError) << bad;  // never std::out_of_range
  }
  try {
    parse_id_list("0,x", "spawn: devices");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "spawn: devices='0,x': 'x' is not a device id (expected comma-separated non-negative integers)");
  }
  try {
    parse_id_list("1,1", "--devices");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "--devices='1,1': device 1 is listed twice");
  }
}

}  // namespace
}  // namespace crew
