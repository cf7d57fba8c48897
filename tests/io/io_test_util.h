#pragma once
// Helpers for the io tests: writers for the real file formats (and TempDir, from
// tests/testing/temp_dir.h).
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testing/temp_dir.h"

namespace crew::io::testing {

using crew::testing::TempDir;

using Bytes = std::vector<uint8_t>;

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline Bytes gzip_bytes(const Bytes& raw) {
  z_stream s{};
  deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&s, raw.size()) + 64);
  s.next_in = const_cast<Bytef*>(raw.data());
  s.avail_in = static_cast<uInt>(raw.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

inline void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

// IDX uint8 file bytes: magic 00 00 08 <ndims>, big-endian dims, then data.
inline Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes b = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) put_be32(b, d);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// A tiny MNIST split: n images of h x w with pixel (i, y, x) = (i * 7 + y * w + x) % 256,
// labels i % 10.
inline Bytes mnist_pixels(uint32_t n, uint32_t h, uint32_t w) {
  Bytes px;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = 0; k < h * w; ++k) px.push_back(static_cast<uint8_t>((i * 7 + k) % 256));
  return px;
}
inline Bytes mnist_labels(uint32_t n) {
  Bytes l;
  for (uint32_t i = 0; i < n; ++i) l.push_back(static_cast<uint8_t>(i % 10));
  return l;
}

// Writes {prefix}-images-idx3-ubyte and -labels-idx1-ubyte (gzipped when gz) into dir.
inline void write_mnist(const std::string& dir, const std::string& prefix, uint32_t n, bool gz,
                        uint32_t h = 28, uint32_t w = 28) {
  Bytes images = idx_bytes({n, h, w}, mnist_pixels(n, h, w));
  Bytes labels = idx_bytes({n}, mnist_labels(n));
  std::string suffix = gz ? ".gz" : "";
  write_bytes(dir + "/" + prefix + "-images-idx3-ubyte" + suffix, gz ? gzip_bytes(images) : images);
  write_bytes(dir + "/" + prefix + "-labels-idx1-ubyte" + suffix, gz ? gzip_bytes(labels) : labels);
}

// CIFAR-10 binary records: label r % 10, channel c pixel p = (r + c * 50 + p) % 256.
inline Bytes cifar_records(uint32_t first, uint32_t count) {
  Bytes b;
  for (uint32_t r = first; r < first + count; ++r) {
    b.push_back(static_cast<uint8_t>(r % 10));
    for (uint32_t c = 0; c < 3; ++c)
      for (uint32_t p = 0; p < 1024; ++p) b.push_back(static_cast<uint8_t>((r + c * 50 + p) % 256));
  }
  return b;
}

// A ustar archive of the given (name, contents) members.
inline Bytes tar_bytes(const std::vector<std::pair<std::string, Bytes>>& members) {
  Bytes out;
  for (const auto& [name, data] : members) {
    Bytes h(512, 0);
    std::copy(name.begin(), name.end(), h.begin());
    std::snprintf(reinterpret_cast<char*>(h.data() + 100), 8, "%07o", 0644);
    std::snprintf(reinterpret_cast<char*>(h.data() + 108), 8, "%07o", 0);
    std::snprintf(reinterpret_cast<char*>(h.data() + 116), 8, "%07o", 0);
    std::snprintf(reinterpret_cast<char*>(h.data() + 124), 12, "%011o", static_cast<unsigned>(data.size()));
    std::snprintf(reinterpret_cast<char*>(h.data() + 136), 12, "%011o", 0);
    h[156] = '0';
    std::copy_n("ustar", 5, h.begin() + 257);
    h[263] = '0';
    h[264] = '0';
    unsigned sum = 0;
    for (int k = 0; k < 512; ++k) sum += (k >= 148 && k < 156) ? ' ' : h[k];
    std::snprintf(reinterpret_cast<char*>(h.data() + 148), 8, "%06o", sum);
    h[155] = ' ';
    out.insert(out.end(), h.begin(), h.end());
    out.insert(out.end(), data.begin(), data.end());
    out.resize((out.size() + 511) / 512 * 512, 0);
  }
  out.resize(out.size() + 1024, 0);
  return out;
}

}  // namespace crew::io::testing
