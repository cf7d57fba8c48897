#include <gtest/gtest.h>

#include <cstdlib>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/parallel_env.h"

namespace crew {
namespace {

TEST(Check, EqPrintsBothOperands) {
  try {
    CREW_CHECK_EQ(4096, 4095, "all_reduce (rank 1): element count");
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("4096"), std::string::npos) << msg;
    EXPECT_NE(msg.find("4095"), std::string::npos) << msg;
    EXPECT_NE(msg.find("all_reduce (rank 1)"), std::string::npos) << msg;
  }
}

TEST(Check, TypedCheckThrowsThatType) {
  EXPECT_THROW(CREW_CHECK_T(StateError, false, "wrong state"), StateError);
  EXPECT_NO_THROW(CREW_CHECK(true, "fine"));
}

TEST(Env, ParsesDurations) {
  EXPECT_EQ(env::parse_duration("30", "x").count(), 30000);
  EXPECT_EQ(env::parse_duration("500ms", "x").count(), 500);
  EXPECT_EQ(env::parse_duration("2m", "x").count(), 120000);
  EXPECT_THROW(env::parse_duration("abc", "x"), ValueError);
  EXPECT_THROW(env::parse_duration("5 parsecs", "x"), ValueError);
}

TEST(ParallelEnv, ReadsCrewThenPaddleVariables) {
  setenv("PADDLE_TRAINER_ID", "2", 1);
  setenv("PADDLE_TRAINERS_NUM", "4", 1);
  setenv("PADDLE_MASTER", "127.0.0.1:6170", 1);
  ParallelEnv p = ParallelEnv::from_env();
  EXPECT_EQ(p.source, "paddle");
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.master_addr, "127.0.0.1");
  EXPECT_EQ(p.master_port, 6170);
  setenv("CREW_RANK", "1", 1);
  setenv("CREW_WORLD_SIZE", "2", 1);
  ParallelEnv c = ParallelEnv::from_env();
  EXPECT_EQ(c.source, "crew");
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.world_size, 2);
  setenv("CREW_RANK", "5", 1);
  EXPECT_THROW(ParallelEnv::from_env(), ValueError);
  for (const char* n : {"PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_MASTER", "CREW_RANK", "CREW_WORLD_SIZE"}) {
    unsetenv(n);
  }
  EXPECT_EQ(ParallelEnv::from_env().world_size, 1);
}

TEST(ParallelEnv, ParsesEndpoints) {
  std::string host;
  int port = 0;
  parse_endpoint("[::1]:80", &host, &port, "x");
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 80);
  EXPECT_THROW(parse_endpoint("nohost", &host, &port, "x"), ValueError);
  EXPECT_THROW(parse_endpoint("h:99999", &host, &port, "x"), ValueError);
}

}  // namespace
}  // namespace crew
