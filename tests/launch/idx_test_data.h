#pragma once
// A tiny Fashion-MNIST-format data set (IDX files) for the tests that run examples/train_cnn:
// class k has a bright 6x6 block at a class-dependent place, plus noise. Header-only: the
// suite globs only *_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace crew::launch::testing {

constexpr int kSide = 28;

inline void write_be32(std::ofstream& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  out.write(b, 4);
}

// <dir>/<prefix>-images-idx3-ubyte and -labels-idx1-ubyte with `count` images.
inline void write_idx_set(const std::string& dir, const std::string& prefix, int count, uint32_t seed) {
  std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
  std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
  write_be32(images, 0x803);
  write_be32(images, static_cast<uint32_t>(count));
  write_be32(images, kSide);
  write_be32(images, kSide);
  write_be32(labels, 0x801);
  write_be32(labels, static_cast<uint32_t>(count));
  uint32_t state = seed;
  for (int i = 0; i < count; ++i) {
    const int label = static_cast<int>((static_cast<uint32_t>(i) * 7u + seed) % 10u);
    labels.put(static_cast<char>(label));
    const int row = 2 + (label / 5) * 12, col = 2 + (label % 5) * 5;
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        state = state * 1664525u + 1013904223u;
        int v = static_cast<int>(state >> 26);  // noise 0..63
        if (y >= row && y < row + 6 && x >= col && x < col + 6) v += 180;
        images.put(static_cast<char>(v));
      }
    }
  }
  ASSERT_TRUE(images.good() && labels.good()) << "writing the IDX files in " << dir;
}

}  // namespace crew::launch::testing
