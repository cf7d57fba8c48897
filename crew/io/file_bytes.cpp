#include "crew/io/file_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>

#include "crew/core/check.h"
#include "crew/core/unique_fd.h"

namespace crew::io {
namespace {

// Ends the inflate stream on scope exit.
struct Inflater {
  z_stream strm{};
  bool open = false;
  ~Inflater() {
    if (open) inflateEnd(&strm);
  }
};

}  // namespace

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  uint64_t size = 0;
  UniqueFd fd = open_regular_file(path, "read", &size);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) CREW_THROW(IOError, errno_message(str_cat("read ", path, ": read at offset ", done)));
    if (n == 0) CREW_THROW(IOError, "read ", path, ": file shrank while reading: got ", done, " of ", bytes.size(), " bytes");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

bool is_gzip(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

namespace {

// Inflates gzip data (one or more members) until its end or until `limit` bytes are out.
// Past the limit: the first `limit` bytes when stop_at_limit, else an IOError naming why
// the limit is what it is, so a small file that inflates to gigabytes (a "gzip bomb") costs
// at most limit + one chunk of memory.
std::vector<uint8_t> inflate_gzip(const std::vector<uint8_t>& compressed, const std::string& what,
                                  size_t limit, bool stop_at_limit, const std::string& limit_reason) {
  Inflater inf;
  // 16 + MAX_WBITS: expect a gzip header and trailer (CRC and length are checked by zlib).
  CREW_CHECK_T(IOError, inflateInit2(&inf.strm, 16 + MAX_WBITS) == Z_OK, "gunzip ", what, ": inflateInit2 failed");
  inf.open = true;
  std::vector<uint8_t> out;
  out.reserve(std::min(compressed.size() * 4, limit));
  std::vector<uint8_t> chunk(limit < (size_t{1} << 20) ? limit + 1 : size_t{1} << 20);
  size_t consumed = 0;  // input bytes before the current member
  while (true) {
    inf.strm.next_in = const_cast<Bytef*>(compressed.data() + consumed);
    inf.strm.avail_in = static_cast<uInt>(compressed.size() - consumed);
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      inf.strm.next_out = chunk.data();
      inf.strm.avail_out = static_cast<uInt>(chunk.size());
      rc = inflate(&inf.strm, Z_NO_FLUSH);
      size_t produced = chunk.size() - inf.strm.avail_out;
      out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(produced));
      size_t offset = consumed + (compressed.size() - consumed - inf.strm.avail_in);
      if (out.size() > limit) {
        if (stop_at_limit) {
          out.resize(limit);
          return out;
        }
        CREW_THROW(IOError, "gunzip ", what, ": decompresses to more than ", limit, " bytes (", limit_reason,
                   "); stopped at compressed byte offset ", offset, " of ", compressed.size());
      }
      if (rc == Z_BUF_ERROR ||
          (rc == Z_OK && inf.strm.avail_in == 0 && produced < chunk.size() && inf.strm.avail_out != 0)) {
        CREW_THROW(IOError, "gunzip ", what, ": truncated gzip data: stream ends at compressed byte offset ",
                   offset, " (", out.size(), " bytes decompressed so far)");
      }
      if (rc != Z_OK && rc != Z_STREAM_END) {
        CREW_THROW(IOError, "gunzip ", what, ": corrupt gzip data near compressed byte offset ", offset, ": ",
                   inf.strm.msg ? inf.strm.msg : "inflate error ", rc);
      }
    }
    consumed = compressed.size() - inf.strm.avail_in;
    // Another member follows (concatenated gzip files are valid gzip); trailing zeros are padding.
    bool more = false;
    for (size_t k = consumed; k < compressed.size(); ++k) {
      if (compressed[k] != 0) {
        more = true;
        break;
      }
    }
    if (!more) break;
    CREW_CHECK_T(IOError, inflateReset(&inf.strm) == Z_OK, "gunzip ", what, ": inflateReset failed");
  }
  return out;
}

}  // namespace

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& what, size_t max_bytes,
                            const std::string& limit_reason) {
  return inflate_gzip(compressed, what, max_bytes, false, limit_reason);
}

std::vector<uint8_t> gunzip_prefix(const std::vector<uint8_t>& compressed, const std::string& what,
                                   size_t n) {
  return inflate_gzip(compressed, what, n, true, "");
}

std::vector<uint8_t> read_maybe_gzip(const std::string& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  if (!is_gzip(bytes)) return bytes;
  return gunzip(bytes, path);
}

}  // namespace crew::io
