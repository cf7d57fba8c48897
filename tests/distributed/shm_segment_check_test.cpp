// A segment whose name came from the store is mapped only if it is this job's: the name has
// the job's prefix, this user owns it, and it is mode 0600. A segment another local user
// planted (and named in the store) would otherwise become this rank's collective buffer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "crew/core/error.h"
#include "crew/distributed/backends/shm/shm_segment.h"
#include "tests/testing/text.h"

namespace crew::dist::detail {
namespace {

using testing::has;

constexpr const char* kPrefix = "/crew-shm-segcheck-world-";

// A segment made as a peer (or an intruder) would, with `mode`; unlinked at scope exit.
struct PlantedSegment {
  std::string name;
  int fd = -1;
  PlantedSegment(const std::string& n, mode_t mode) : name(n) {
    ::shm_unlink(name.c_str());
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    EXPECT_GE(fd, 0) << name;
    EXPECT_EQ(::ftruncate(fd, 4096), 0);
    EXPECT_EQ(::fchmod(fd, mode), 0);
  }
  ~PlantedSegment() {
    ::close(fd);
    ::shm_unlink(name.c_str());
  }
};

std::string open_error(const std::string& name) {
  try {
    ShmSegment seg = ShmSegment::open(name, 4096, 0, kPrefix);
  } catch (const CommError& e) {
    return e.what();
  }
  return "(mapped)";
}

std::string unique(const char* tag) { return std::string(tag) + std::to_string(::getpid()); }

TEST(ShmSegmentCheck, TheJobsOwnPrivateSegmentIsMapped) {
  PlantedSegment seg(kPrefix + unique("ok-"), 0600);
  EXPECT_EQ(open_error(seg.name), "(mapped)");
}

TEST(ShmSegmentCheck, ANameWithoutTheJobsPrefixIsRefused) {
  PlantedSegment seg("/someone-elses-" + unique(""), 0600);
  const std::string err = open_error(seg.name);
  EXPECT_TRUE(has(err, "not a name of this job")) << err;
  EXPECT_TRUE(has(err, kPrefix)) << err;
  EXPECT_TRUE(has(open_error(std::string(kPrefix) + "../x"), "not a name of this job"));
}

TEST(ShmSegmentCheck, ASegmentOthersMayOpenIsRefused) {
  PlantedSegment seg(kPrefix + unique("open-"), 0666);
  const std::string err = open_error(seg.name);
  EXPECT_TRUE(has(err, "mode 0666")) << err;
}

TEST(ShmSegmentCheck, AnotherUsersSegmentIsRefused) {
  const std::string direct = [] {
    try {
      check_peer_segment_owner("/x", ::geteuid() + 1, 0600);
    } catch (const CommError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  }();
  EXPECT_TRUE(has(direct, "owned by uid")) << direct;
  if (::geteuid() != 0) GTEST_SKIP() << "giving a segment to another user needs root";
  PlantedSegment seg(kPrefix + unique("nobody-"), 0600);
  ASSERT_EQ(::fchown(seg.fd, 65534, 65534), 0);  // as `nobody` would have made it
  const std::string err = open_error(seg.name);
  EXPECT_TRUE(has(err, "owned by uid 65534")) << err;
}

}  // namespace
}  // namespace crew::dist::detail
