#include "crew/distributed/object/object.h"

#include <gtest/gtest.h>

#include <cmath>

#include "crew/core/error.h"

namespace crew::dist {
namespace {

TEST(Object, PrintsAsPython) {
  Object foo = Object::dict({{"foo", Object::list({1, 2, 3})}});
  Object bar = Object::dict({{"bar", Object::list({4, 5, 6})}});
  EXPECT_EQ(repr(std::vector<Object>{foo, bar, bar}),
            "[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]");
  EXPECT_EQ(Object().repr(), "None");
  EXPECT_EQ(Object(true).repr(), "True");
  EXPECT_EQ(Object(false).repr(), "False");
  EXPECT_EQ(Object(-7).repr(), "-7");
  EXPECT_EQ(Object(1.0).repr(), "1.0");
  EXPECT_EQ(Object(0.5).repr(), "0.5");
  EXPECT_EQ(Object(0.1).repr(), "0.1");
  EXPECT_EQ(Object(2.4006782).repr(), "2.4006782");
  EXPECT_EQ(Object(1e16).repr(), "1e+16");
  EXPECT_EQ(Object(123456789012345.0).repr(), "123456789012345.0");
  EXPECT_EQ(Object(1e-05).repr(), "1e-05");
  EXPECT_EQ(Object(0.0001).repr(), "0.0001");
  EXPECT_EQ(Object(-2.5e-10).repr(), "-2.5e-10");
  EXPECT_EQ(Object(std::nan("")).repr(), "nan");
  EXPECT_EQ(Object("it's").repr(), "\"it's\"");
  EXPECT_EQ(Object("a\nb\\").repr(), "'a\\nb\\\\'");
  EXPECT_EQ(Object::bytes(std::string("\x00\xffz", 3)).repr(), "b'\\x00\\xffz'");
  EXPECT_EQ(Object::dict_of({{Object(1), Object("x")}, {Object(2), Object()}}).repr(), "{1: 'x', 2: None}");
}

TEST(Object, RoundTripsEveryKind) {
  Object o = Object::dict({{"none", Object()},
                           {"b", Object(true)},
                           {"i", Object(-1234567890123LL)},
                           {"f", Object(3.25)},
                           {"s", Object("héllo")},
                           {"raw", Object::bytes(std::string("\x01\x02\x00", 3))},
                           {"list", Object::list({Object::list({}), Object::dict({})})}});
  auto wire = o.encode();
  Object back = Object::decode(wire);
  EXPECT_EQ(back, o);
  EXPECT_EQ(back.repr(), o.repr());
  EXPECT_EQ(back.at("i").as_int(), -1234567890123LL);
  EXPECT_THROW(back.at("missing"), IndexError);
  EXPECT_THROW(back.at("s").as_int(), ValueError);
}

TEST(Object, DictKeepsInsertionOrderAndReplacesKeys) {
  Object d = Object::dict({{"z", 1}, {"a", 2}});
  d.set("z", 3);
  EXPECT_EQ(d.repr(), "{'z': 3, 'a': 2}");
  EXPECT_THROW(d.set(Object::list({}), 1), ValueError);
}

TEST(Object, RejectsHostileEncodings) {
  auto wire = Object::dict({{"k", Object::list({1, 2})}}).encode();
  // Every truncation fails cleanly.
  for (size_t n = 0; n < wire.size(); ++n) {
    EXPECT_THROW(Object::decode(wire.data(), n), ValueError) << "prefix of " << n << " bytes";
  }
  // Trailing bytes.
  auto extra = wire;
  extra.push_back(0);
  EXPECT_THROW(Object::decode(extra), ValueError);
  // Unknown tag.
  std::vector<uint8_t> bad_tag = {'C', 'R', 'O', 1, 99};
  EXPECT_THROW(Object::decode(bad_tag), ValueError);
  // A list claiming 2^32-1 elements must not allocate them.
  std::vector<uint8_t> huge = {'C', 'R', 'O', 1, 7, 0xff, 0xff, 0xff, 0xff};
  try {
    Object::decode(huge);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  }
  // A string length beyond the input.
  std::vector<uint8_t> long_str = {'C', 'R', 'O', 1, 5, 0x10, 0, 0, 0, 'a'};
  EXPECT_THROW(Object::decode(long_str), ValueError);
  // Too deep.
  std::vector<uint8_t> deep = {'C', 'R', 'O', 1};
  for (int i = 0; i < 100; ++i) {
    deep.insert(deep.end(), {7, 1, 0, 0, 0});
  }
  deep.push_back(0);
  EXPECT_THROW(Object::decode(deep), ValueError);
  DecodeLimits generous;
  generous.max_depth = 200;
  EXPECT_NO_THROW(Object::decode(deep, generous));
  // Wrong magic.
  std::vector<uint8_t> pickle = {0x80, 0x04, 0x95, 0, 0};
  EXPECT_THROW(Object::decode(pickle), ValueError);
  // A list as a dict key.
  std::vector<uint8_t> unhashable = {'C', 'R', 'O', 1, 8, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0};
  EXPECT_THROW(Object::decode(unhashable), ValueError);
}

}  // namespace
}  // namespace crew::dist
