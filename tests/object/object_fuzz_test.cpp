// Randomised checks of the Object encoding: random trees round-trip exactly, and every
// mutation of a valid encoding (flipped bytes, cut or spliced input) either decodes or throws
// ValueError, never anything else. A fixed seed keeps the inputs the same on every run.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <random>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/object/object.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

class RandomObjects {
 public:
  explicit RandomObjects(uint32_t seed) : rng_(seed) {}

  Object make(int depth) {
    const int kind = pick(depth >= 4 ? 6 : 8);
    switch (kind) {
      case 0:
        return Object();
      case 1:
        return Object(pick(2) == 1);
      case 2:
        return Object(static_cast<long long>(rng_()) - (1ll << 31));
      case 3:
        return Object(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_));
      case 4:
        return Object(text());
      case 5:
        return Object::bytes(text());
      case 6: {
        Object::Items items;
        for (int i = pick(5); i > 0; --i) items.push_back(make(depth + 1));
        return Object::list(std::move(items));
      }
      default: {
        Object d = Object::dict({});
        for (int i = pick(5); i > 0; --i) {
          Object key = pick(2) ? Object(text()) : Object(static_cast<long long>(pick(100)));
          d.set(std::move(key), make(depth + 1));
        }
        return d;
      }
    }
  }
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::mt19937& rng() { return rng_; }

 private:
  std::string text() {
    std::string s;
    for (int i = pick(12); i > 0; --i) s.push_back(static_cast<char>(rng_() & 0xff));
    return s;
  }
  std::mt19937 rng_;
};

TEST(ObjectFuzz, RandomTreesRoundTrip) {
  RandomObjects gen(20261202);
  for (int i = 0; i < 500; ++i) {
    Object o = gen.make(0);
    auto wire = o.encode();
    Object back = Object::decode(wire);
    ASSERT_TRUE(back == o) << "tree " << i << ": " << o.repr() << " came back as " << back.repr();
    EXPECT_EQ(back.repr(), o.repr());
    EXPECT_EQ(back.encode(), wire);
  }
}

// Decodes, or throws ValueError; any other outcome fails the test.
void expect_decodes_or_value_error(const std::vector<uint8_t>& bytes, const std::string& what) {
  try {
    Object o = Object::decode(bytes);
    (void)o.repr();
  } catch (const ValueError&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << typeid(e).name() << ": " << e.what();
  }
}

TEST(ObjectFuzz, MutatedEncodingsDecodeOrThrowValueError) {
  RandomObjects gen(7);
  int rejected = 0, total = 0;
  for (int i = 0; i < 300; ++i) {
    auto wire = gen.make(0).encode();
    for (int m = 0; m < 20; ++m) {
      auto bad = wire;
      switch (gen.pick(3)) {
        case 0:  // flip a byte
          bad[static_cast<size_t>(gen.pick(static_cast<int>(bad.size())))] ^=
              static_cast<uint8_t>(1 + gen.pick(255));
          break;
        case 1:  // cut
          bad.resize(static_cast<size_t>(gen.pick(static_cast<int>(bad.size()))));
          break;
        default:  // splice random bytes in
          bad.insert(bad.begin() + gen.pick(static_cast<int>(bad.size())),
                     static_cast<uint8_t>(gen.pick(256)));
      }
      ++total;
      try {
        Object::decode(bad);
      } catch (const ValueError&) {
        ++rejected;
      }
      expect_decodes_or_value_error(bad, "tree " + std::to_string(i) + " mutation " + std::to_string(m));
    }
  }
  EXPECT_GT(rejected, total / 2) << "most mutations of a tight encoding must be caught";
}

TEST(ObjectFuzz, ClaimedCountsBeyondTheLimitsAreRejectedBeforeAllocating) {
  // A list header claiming as many elements as there are bytes left: within the input size,
  // over max_elems. The decoder must refuse it with ValueError naming the limit.
  DecodeLimits limits;
  limits.max_elems = 1000;
  std::vector<uint8_t> wire = {'C', 'R', 'O', 1, 7};
  const uint32_t n = 1u << 20;
  for (int i = 0; i < 4; ++i) wire.push_back(static_cast<uint8_t>(n >> (8 * i)));
  wire.resize(wire.size() + n, 0);  // n Nones
  try {
    Object::decode(wire, limits);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
  DecodeLimits roomy;
  EXPECT_EQ(Object::decode(wire, roomy).size(), n);
  // Under an address-space limit, in a child: a list claiming 16 Mi elements (within a 16 MiB
  // input) must not reserve 16 Mi Objects (~1.4 GiB) before the element limit stops it.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  auto results = testing::run_ranks(
      1,
      [](int, int) {
        std::vector<uint8_t> big = {'C', 'R', 'O', 1, 7};
        const uint32_t count = 16u << 20;
        for (int i = 0; i < 4; ++i) big.push_back(static_cast<uint8_t>(count >> (8 * i)));
        big.resize(big.size() + count, 0);
        long pages = 0;
        std::ifstream("/proc/self/statm") >> pages;
        rlimit lim{};
        lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(pages) * 4096 + (512u << 20);
        CREW_CHECK(::setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
        DecodeLimits few;
        few.max_elems = 1000;
        try {
          Object::decode(big, few);
          CREW_THROW(InternalError, "decode accepted ", count, " values over max_elems 1000");
        } catch (const ValueError&) {
        }
      },
      {.timeout = std::chrono::seconds(30)});
  testing::expect_all_ok(results);
#endif
  // Input over max_bytes is refused up front.
  DecodeLimits small;
  small.max_bytes = 16;
  EXPECT_THROW(Object::decode(wire, small), ValueError);
}

}  // namespace
}  // namespace crew::dist
