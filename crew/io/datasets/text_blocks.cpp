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
  // Bytes [index * block_size, + block_size] as int64 token ids: x the first block_size, y
  // the same shifted by one.
  const Tensor ids = Tensor::from_bytes(bytes_.data() + index * block_size_, {block_size_ + 1}, DType::UINT8)
                         .to(DType::INT64);
  return {ids.slice(0, block_size_).clone(), ids.slice(1, block_size_ + 1).clone()};
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
