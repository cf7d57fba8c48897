// GlooCall, the header every Gloo collective exchanges first: its wire form round-trips and
// its text names what differs (the multi-process checks are in hang_fault_test.cpp).
#include "crew/distributed/backends/gloo/gloo_agreement.h"

#include <gtest/gtest.h>

#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::detail {
namespace {

TEST(GlooAgreement, WireFormRoundTrips) {
  const std::vector<GlooCall> calls = {
      {"all_reduce", 8, DType::FLOAT32, -1, static_cast<int>(ReduceOp::MAX)},
      {"broadcast", 3, DType::INT64, 1},
      {"alltoall", 12, DType::UINT8},
      {"barrier"},
  };
  for (const GlooCall& c : calls) {
    int64_t wire[GlooCall::kWireElems];
    c.to_wire(wire);
    const GlooCall back = GlooCall::from_wire(wire);
    EXPECT_TRUE(back == c) << c.describe() << " came back as " << back.describe();
    EXPECT_EQ(back.describe(), c.describe());
  }
}

TEST(GlooAgreement, SizeDtypeRootAndReductionAllCount) {
  const GlooCall base{"all_reduce", 4, DType::FLOAT32, -1, static_cast<int>(ReduceOp::SUM)};
  GlooCall other = base;
  other.numel = 8;
  EXPECT_FALSE(other == base);
  other = base;
  other.dtype = DType::INT32;
  EXPECT_FALSE(other == base);
  other = base;
  other.reduce_op = static_cast<int>(ReduceOp::MAX);
  EXPECT_FALSE(other == base);
  other = base;
  other.op = "reduce_scatter";
  EXPECT_FALSE(other == base);
  EXPECT_EQ(base.describe(), "all_reduce (4 x float32, SUM)");
  EXPECT_EQ((GlooCall{"broadcast", 2, DType::FLOAT64, 0}).describe(), "broadcast (2 x float64, root 0)");
}

TEST(GlooAgreement, AnUnknownWireCodeReadsAsAnUnknownCollective) {
  int64_t wire[GlooCall::kWireElems] = {99, 4, 0, -1, -1};
  EXPECT_EQ(GlooCall::from_wire(wire).op, "unknown collective");
}

}  // namespace
}  // namespace crew::dist::detail
