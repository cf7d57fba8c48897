// ToTensor, Normalize, RandomCrop, RandomHorizontalFlip, Compose.
#include <gtest/gtest.h>

#include "crew/io/transforms/image_transforms.h"
#include "crew/io/collate.h"
#include "crew/io/transforms/random_transforms.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"

namespace crew::io {
namespace {

Tensor hwc_image(int64_t h, int64_t w, int64_t c) {
  Tensor t = Tensor::empty({h, w, c}, DType::UINT8);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 3 % 256);
  return t;
}

TEST(Transforms, ToTensorTransposesAndScales) {
  Tensor img = hwc_image(2, 3, 3);
  Tensor x = ToTensor()(img);
  ASSERT_EQ(x.shape(), (Shape{3, 2, 3}));
  ASSERT_EQ(x.dtype(), DType::FLOAT32);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t xx = 0; xx < 3; ++xx)
        EXPECT_FLOAT_EQ(x.data<float>()[(c * 2 + y) * 3 + xx], img.data<uint8_t>()[(y * 3 + xx) * 3 + c] / 255.0f);
  std::vector<uint8_t> grey(20);
  for (size_t i = 0; i < grey.size(); ++i) grey[i] = static_cast<uint8_t>(13 * i);
  Tensor hw = Tensor::from_vector(grey, {4, 5});
  Tensor y = ToTensor()(hw);
  EXPECT_EQ(y.shape(), (Shape{1, 4, 5}));
  for (size_t i = 0; i < grey.size(); ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], grey[i] / 255.0f) << i;
  EXPECT_THROW(ToTensor()(Tensor::zeros({3})), ValueError);
}

TEST(Transforms, NormalizePerChannel) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 1, 2});
  Tensor y = Normalize({1.0f, 2.0f}, {2.0f, 0.5f})(x);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0.0f, 0.5f, 2.0f, 4.0f}));
  Tensor z = Normalize({0.5f}, {0.5f})(Tensor::from_vector<float>({0, 1}, {1, 1, 2}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{-1.0f, 1.0f}));
  EXPECT_THROW(Normalize({0.5f, 0.5f, 0.5f}, {1, 1, 1})(x), ValueError);
  EXPECT_THROW(Normalize({0.5f}, {0.0f}), ValueError);
}

TEST(Transforms, RandomCropWithPaddingIsAWindowOfThePaddedImage) {
  Tensor x = Tensor::empty({1, 4, 4});
  for (int64_t i = 0; i < 16; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  RandomCrop crop(4, 4, /*padding=*/2, /*fill=*/0.0, /*seed=*/3);
  bool saw_shift = false;
  for (int trial = 0; trial < 50; ++trial) {
    Tensor y = crop(x);
    ASSERT_EQ(y.shape(), (Shape{1, 4, 4}));
    // Find the offset: every non-zero output value v sits at its source pixel shifted by (dy, dx).
    int dy = 99, dx = 99;
    for (int64_t i = 0; i < 16; ++i) {
      float v = y.data<float>()[i];
      if (v == 0) continue;
      int src = static_cast<int>(v) - 1;
      int ndy = static_cast<int>(i / 4) - src / 4, ndx = static_cast<int>(i % 4) - src % 4;
      if (dy == 99) {
        dy = ndy;
        dx = ndx;
      }
      ASSERT_EQ(ndy, dy);
      ASSERT_EQ(ndx, dx);
    }
    if (dy != 0 || dx != 0) saw_shift = true;
    if (dy != 99) {
      EXPECT_LE(std::abs(dy), 2);
      EXPECT_LE(std::abs(dx), 2);
    }
  }
  EXPECT_TRUE(saw_shift);
  // Same seed, same crops; uint8 HWC keeps its layout.
  RandomCrop a(2, 3, 1, 0.0, 9), b(2, 3, 1, 0.0, 9);
  Tensor img = hwc_image(3, 3, 2);
  Tensor ya = a(img);
  EXPECT_EQ(ya.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(ya.to_vector<int>(), b(img).to_vector<int>());
  EXPECT_THROW(RandomCrop(9, 9)(x), ValueError);
}

TEST(Transforms, RandomHorizontalFlip) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(RandomHorizontalFlip(1.0)(x).to_vector<float>(), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(RandomHorizontalFlip(0.0)(x).to_vector<float>(), x.to_vector<float>());
  RandomHorizontalFlip half(0.5, 11);
  int flipped = 0;
  for (int k = 0; k < 200; ++k) flipped += half(x).to_vector<float>()[0] == 3 ? 1 : 0;
  EXPECT_GT(flipped, 50);
  EXPECT_LT(flipped, 150);
}

TEST(Transforms, RandomVerticalFlip) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(RandomVerticalFlip(1.0)(x).to_vector<float>(), (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(RandomVerticalFlip(0.0)(x).to_vector<float>(), x.to_vector<float>());
  Tensor hwc = Tensor::from_vector<uint8_t>({1, 2, 3, 4, 5, 6}, {3, 1, 2});  // [H, W, C] bytes
  EXPECT_EQ(RandomVerticalFlip(1.0)(hwc).to_vector<uint8_t>(), (std::vector<uint8_t>{5, 6, 3, 4, 1, 2}));
  EXPECT_THROW(RandomVerticalFlip(1.5), ValueError);
  RandomVerticalFlip half(0.5, 11);
  int flipped = 0;
  for (int k = 0; k < 200; ++k) flipped += half(x).to_vector<float>()[0] == 4 ? 1 : 0;
  EXPECT_GT(flipped, 50);
  EXPECT_LT(flipped, 150);
}

TEST(Transforms, SampleSeedScopeMakesRandomTransformsReproducible) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3});
  auto tf = compose({std::make_shared<RandomCrop>(3, 3, 1), std::make_shared<RandomHorizontalFlip>(0.5)});
  std::vector<float> first;
  {
    SampleSeedScope seed(mix_seed(1, 2, 3));
    first = (*tf)(x).to_vector<float>();
  }
  for (int k = 0; k < 5; ++k) {
    SampleSeedScope seed(mix_seed(1, 2, 3));
    EXPECT_EQ((*tf)(x).to_vector<float>(), first);
  }
  EXPECT_EQ(current_sample_generator(), nullptr);
}

TEST(Transforms, SampleSeedScopeSeedsOnceAndNests) {
  Generator reference(mix_seed(4, 5, 6));
  const uint64_t first = reference.next_u64(), second = reference.next_u64();
  SampleSeedScope outer(mix_seed(4, 5, 6));
  EXPECT_EQ(current_sample_generator()->next_u64(), first);
  {
    SampleSeedScope inner(mix_seed(7, 8, 9));
    EXPECT_NE(current_sample_generator()->next_u64(), second);
  }
  // The outer stream goes on where it was (seeded once, not again on each use).
  EXPECT_EQ(current_sample_generator()->next_u64(), second);
}

// The transforms and collate run their loops in kernels: on the fake device (host memory that
// host code may not touch) they compute what they compute on the CPU, and the results stay there.
TEST(Transforms, RunOnTheFakeDeviceAsOnTheCpu) {
  testing::FakeDevice fake;
  testing::FakeKernels fake_kernels;
  const Tensor img = hwc_image(5, 6, 3);
  auto pipeline = [](const Tensor& image) {
    Tensor x = Normalize({0.5f, 0.4f, 0.3f}, {0.2f, 0.25f, 0.5f})(ToTensor()(image));
    x = RandomCrop(4, 4, /*padding=*/1, /*fill=*/0.5, /*seed=*/7)(x);
    return RandomHorizontalFlip(1.0, /*seed=*/3)(x);
  };
  const Tensor want = pipeline(img);
  const int before = testing::fake_entry_calls();
  const Tensor got = pipeline(img.to(fake.place()));
  EXPECT_EQ(testing::fake_entry_calls(), before + 4);
  EXPECT_EQ(got.place(), fake.place());
  EXPECT_EQ(got.cpu().to_vector<float>(), want.to_vector<float>());
  const Batch batch = default_collate({{got, Tensor::scalar(1, DType::INT64).to(fake.place())},
                                       {want.to(fake.place()), Tensor::scalar(2, DType::INT64).to(fake.place())}});
  EXPECT_EQ(batch[0].place(), fake.place());
  EXPECT_EQ(batch[0].shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(batch[0].select(1).cpu().to_vector<float>(), want.to_vector<float>());
  EXPECT_EQ(batch[1].cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace crew::io
