#include "crew/core/job_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "crew/core/check.h"

namespace crew {

std::string generate_job_token() {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < 4; ++i) {
    const uint32_t v = rd();
    for (int j = 0; j < 8; ++j) hex += kHex[(v >> (4 * j)) & 0xf];
  }
  return hex;
}

std::string read_job_token_file(const std::string& path, const char* what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  CREW_CHECK(fd >= 0, what, " '", path, "': cannot open: ", std::strerror(errno));
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while (regular && text.size() < 65536 && (n = ::read(fd, buf, sizeof(buf))) > 0) text.append(buf, n);
  ::close(fd);
  CREW_CHECK(regular, what, " '", path, "': not a regular file");
  CREW_CHECK(st.st_uid == ::geteuid(), what, " '", path, "': owned by uid ", st.st_uid,
             ", not by this user (uid ", ::geteuid(), "); another user could have chosen the token");
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  CREW_CHECK((st.st_mode & 077) == 0, what, " '", path, "': mode ", mode,
             " lets group or others read the token; run chmod 600 '", path, "'");
  const size_t begin = text.find_first_not_of(" \t\r\n");
  CREW_CHECK(begin != std::string::npos, what, " '", path, "': the file is empty");
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end + 1 - begin);
}

}  // namespace crew
