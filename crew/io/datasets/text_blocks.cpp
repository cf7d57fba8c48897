#include "crew/io/datasets/text_blocks.h"

#include <algorithm>
#include <filesystem>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/io/file_bytes.h"

namespace crew::io {

TextBlocks::TextBlocks(const std::vector<std::string>& files, int64_t block_size) : block_size_(block_size) {
  CREW_CHECK(block_size > 0, "TextBlocks: block_size must be positive, got ", block_size);
  CREW_CHECK(!files.empty(), "TextBlocks: no text files given");
  for (const std::string& f : files) {
    std::vector<uint8_t> b = read_file_bytes(f);
    bytes_.insert(bytes_.end(), b.begin(), b.end());
  }
  const int64_t n = static_cast<int64_t>(bytes_.size());
  if (n < block_size + 1) {
    throw ValueError(str_cat("TextBlocks: ", n, " bytes in ", files.size(), " file(s) (first ", files[0],
                             ") are fewer than block_size + 1 = ", block_size + 1));
  }
  size_ = (n - 1) / block_size;
}

Sample TextBlocks::get(int64_t index) const {
  check_sample_index("TextBlocks::get", index, size_);
  Tensor x = Tensor::uninitialized({block_size_}, DType::INT64);
  Tensor y = Tensor::uninitialized({block_size_}, DType::INT64);
  const uint8_t* src = bytes_.data() + index * block_size_;
  int64_t* xp = x.data<int64_t>();
  int64_t* yp = y.data<int64_t>();
  for (int64_t t = 0; t < block_size_; ++t) {
    xp[t] = src[t];
    yp[t] = src[t + 1];
  }
  return {x, y};
}

std::vector<std::string> TextBlocks::text_files_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && ext != ".dat" && ext != ".u8") files.push_back(entry.path().string());
  }
  if (ec) throw IOError(str_cat("TextBlocks: cannot list ", dir, ": ", ec.message()));
  if (files.empty()) throw IOError(str_cat("TextBlocks: no text files in ", dir));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace crew::io
