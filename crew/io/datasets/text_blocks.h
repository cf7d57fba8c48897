#pragma once
// TextBlocks: a byte-level language-modelling data set over one or more text files (their
// bytes concatenated in the given order). Sample k is {x, y}, both int64 [block_size]:
// x = bytes[k*T, k*T + T), y = bytes[k*T + 1, k*T + T + 1) (the next byte of each), so there
// are (n_bytes - 1) / T samples. Tokens are the byte values 0..255.
//
//   crew::io::TextBlocks text({"/usr/share/games/fortunes/fortunes"}, 128);
//   crew::io::Sample s = text.get(0);     // {x [128], y [128]}
#include <cstdint>
#include <string>
#include <vector>

#include "crew/io/dataset.h"

namespace crew::io {

class TextBlocks : public Dataset {
 public:
  // IOError naming the file when one cannot be read; ValueError when the text is shorter
  // than block_size + 1 bytes.
  TextBlocks(const std::vector<std::string>& files, int64_t block_size);
  int64_t size() const override { return size_; }
  Sample get(int64_t index) const override;
  int64_t block_size() const { return block_size_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // The files of a directory such as /usr/share/games/fortunes, in name order, without the
  // strfile indexes (.dat) and the .u8 variants; recursing into none. IOError when there is none.
  static std::vector<std::string> text_files_in(const std::string& dir);

 private:
  std::vector<uint8_t> bytes_;
  int64_t block_size_;
  int64_t size_;
};

}  // namespace crew::io
