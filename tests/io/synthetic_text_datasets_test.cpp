// FakeData (random images for speed runs) and TextBlocks (byte-level language modelling).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "crew/core/error.h"
#include "crew/io/datasets/fake_data.h"
#include "crew/io/datasets/text_blocks.h"
#include "crew/io/transforms/image_transforms.h"
#include "tests/io/io_test_util.h"

namespace crew::io {
namespace {

using testing::TempDir;

TEST(FakeData, SamplesAreDeterministicPerIndexAndSeed) {
  FakeData a({.size = 5, .seed = 3}), b({.size = 5, .seed = 3}), c({.size = 5, .seed = 4});
  Sample s = a.get(2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].shape(), (Shape{32, 32, 3}));
  EXPECT_EQ(s[0].dtype(), DType::UINT8);
  EXPECT_EQ(s[1].dtype(), DType::INT64);
  const Tensor again = b.get(2)[0];
  EXPECT_EQ(0, std::memcmp(s[0].data<uint8_t>(), again.data<uint8_t>(), 32 * 32 * 3));
  EXPECT_NE(0, std::memcmp(s[0].data<uint8_t>(), a.get(3)[0].data<uint8_t>(), 32 * 32 * 3));
  EXPECT_NE(0, std::memcmp(s[0].data<uint8_t>(), c.get(2)[0].data<uint8_t>(), 32 * 32 * 3));
  for (int64_t i = 0; i < 5; ++i) {
    const int64_t label = a.get(i)[1].data<int64_t>()[0];
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 10);
  }
  EXPECT_THROW(a.get(5), IndexError);
}

TEST(FakeData, TransformMakesChwFloat) {
  FakeData fake(
      {.size = 2, .channels = 3, .height = 8, .width = 6, .transform = std::make_shared<ToTensor>()});
  Tensor x = fake.get(0)[0];
  EXPECT_EQ(x.shape(), (Shape{3, 8, 6}));
  EXPECT_EQ(x.dtype(), DType::FLOAT32);
  for (int64_t k = 0; k < x.numel(); ++k) {
    EXPECT_GE(x.data<float>()[k], 0.0f);
    EXPECT_LE(x.data<float>()[k], 1.0f);
  }
  EXPECT_THROW(FakeData({.size = 2, .num_classes = 0}), ValueError);
}

std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(TextBlocks, SampleKIsTheNextBytePrediction) {
  TempDir dir;
  const std::string a = write_text(dir.path() + "/a", "abcdefg"), b = write_text(dir.path() + "/b", "hij");
  TextBlocks text({a, b}, 3);  // "abcdefghij": 10 bytes -> (10 - 1) / 3 = 3 samples
  ASSERT_EQ(text.size(), 3);
  Sample s = text.get(2);
  EXPECT_EQ(s[0].shape(), (Shape{3}));
  const int64_t* x = s[0].data<int64_t>();
  const int64_t* y = s[1].data<int64_t>();
  EXPECT_EQ(x[0], 'g');
  EXPECT_EQ(x[2], 'i');
  EXPECT_EQ(y[0], 'h');
  EXPECT_EQ(y[2], 'j');
  EXPECT_THROW(text.get(3), IndexError);
}

TEST(TextBlocks, ErrorsNameTheFileAndTheSizes) {
  TempDir dir;
  const std::string tiny = write_text(dir.path() + "/tiny", "abc");
  try {
    TextBlocks({tiny}, 3);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("3 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(tiny), std::string::npos) << e.what();
  }
  EXPECT_THROW(TextBlocks({dir.path() + "/missing"}, 4), IOError);
}

TEST(TextBlocks, TextFilesInSkipsIndexesInNameOrder) {
  TempDir dir;
  for (const char* name : {"zeta", "alpha", "alpha.dat", "alpha.u8", "mid"})
    write_text(dir.path() + "/" + name, "x");
  std::vector<std::string> files = TextBlocks::text_files_in(dir.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], dir.path() + "/alpha");
  EXPECT_EQ(files[1], dir.path() + "/mid");
  EXPECT_EQ(files[2], dir.path() + "/zeta");
  TempDir empty;
  EXPECT_THROW(TextBlocks::text_files_in(empty.path()), IOError);
}

}  // namespace
}  // namespace crew::io
