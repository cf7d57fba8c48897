#include <gtest/gtest.h>

#include <cmath>

#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew {
namespace {

TEST(Tensor, FactoriesAndAlignment) {
  Tensor t = Tensor::ones({2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (float v : t.to_vector<float>()) EXPECT_EQ(v, 1.0f);
  EXPECT_THROW(t.data<int64_t>(), ValueError);
}

// empty/zeros zero-fill even memory that held data before; uninitialized skips that pass
// (and, in builds without NDEBUG, poisons the buffer so that a kernel reading what it never
// wrote shows up as NaN in tests).
TEST(Tensor, EmptyZeroFillsUninitializedDoesNot) {
  for (int round = 0; round < 3; ++round) {
    {
      Tensor used = Tensor::uninitialized({1000, 257});
      EXPECT_EQ(used.shape(), (Shape{1000, 257}));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(used.raw_data()) % 64, 0u);
#ifndef NDEBUG
      for (float v : used.view({-1}).slice(0, 100).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
#endif
      used.fill_(7.0);
    }
    for (float v : Tensor::empty({1000, 257}).to_vector<float>()) ASSERT_EQ(v, 0.0f);
    for (float v : Tensor::zeros({1000, 257}).to_vector<float>()) ASSERT_EQ(v, 0.0f);
  }
  EXPECT_EQ(Tensor::uninitialized({0, 3}).numel(), 0);
}

TEST(Tensor, StorageOverMemoryOwnedElsewhereKeepsItsOwnerAndNeverFreesIt) {
  alignas(64) static float memory[16] = {};
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owner;
  {
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::make_shared<Storage>(memory, sizeof memory, owner);
    impl->shape = {16};
    Tensor t(impl);
    owner.reset();
    EXPECT_FALSE(watch.expired());  // the storage holds it
    EXPECT_FALSE(t.impl()->storage->owns_memory());
    t.fill_(2.0);
    EXPECT_EQ(memory[15], 2.0f);
  }
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(memory[0], 2.0f);  // not freed (static memory: a free would crash)
  EXPECT_TRUE(Tensor::zeros({4}).impl()->storage->owns_memory());
  EXPECT_THROW(Storage(memory + 1, 4, std::make_shared<int>(0)), ValueError);  // not 64-byte aligned
}

// A layout that stores the elements in reverse order (and counts its conversions).
class ReversedLayout final : public OpaqueLayout {
 public:
  explicit ReversedLayout(int64_t n) : n_(n) {}
  size_t bytes() const override { return size_t(n_) * sizeof(float) + 64; }  // with padding
  size_t plain_bytes() const override { return size_t(n_) * sizeof(float); }
  void to_plain(const void* src, void* dst) const override {
    ++conversions;
    const float* s = static_cast<const float*>(src);
    float* d = static_cast<float*>(dst);
    for (int64_t i = 0; i < n_; ++i) d[i] = s[n_ - 1 - i];
  }
  std::string name() const override { return "reversed"; }
  mutable int conversions = 0;

 private:
  int64_t n_;
};

TEST(Tensor, DataInAnOpaqueLayoutIsConvertedOnceForEveryTensorSharingIt) {
  auto layout = std::make_shared<ReversedLayout>(6);
  Tensor t = Tensor::with_layout({2, 3}, DType::FLOAT32, layout);
  ASSERT_EQ(t.layout(), layout.get());
  auto* raw = static_cast<float*>(t.layout_data());
  for (int i = 0; i < 6; ++i) raw[i] = static_cast<float>(10 * i);  // reversed: 0..5 -> 50..0
  Tensor row = t.select(1);   // a view made before the conversion
  Tensor alias = t.view(t.shape());  // what detach() does
  EXPECT_EQ(alias.layout(), layout.get());  // the whole storage, same shape
  EXPECT_EQ(row.layout(), nullptr);         // a part of it is no layout reader
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{20, 10, 0}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{50, 40, 30, 20, 10, 0}));
  EXPECT_EQ(alias.to_vector<float>()[0], 50.0f);
  EXPECT_EQ(layout->conversions, 1);
  EXPECT_EQ(t.layout(), nullptr);
  EXPECT_EQ(alias.layout(), nullptr);
  EXPECT_THROW(Tensor::with_layout({7}, DType::FLOAT32, layout), ValueError);  // 6 elements, not 7
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::arange(12, DType::FLOAT32).view({3, 4});
  Tensor row = t.select(1);
  EXPECT_EQ(row.shape(), (Shape{4}));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  row.fill_(0);
  EXPECT_EQ(t.to_vector<float>()[5], 0.0f);
  Tensor s = t.slice(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_TRUE(s.shares_storage(t));
  EXPECT_EQ(t.view({-1}).shape(), (Shape{12}));
  EXPECT_THROW(t.view({5, -1}), ValueError);
  EXPECT_THROW(t.slice(2, 4), IndexError);
}

TEST(Tensor, ConvertsAndPrints) {
  Tensor t = Tensor::from_vector<float>({1.5f, 2.0f, -3.0f});
  EXPECT_EQ(t.to(DType::INT64).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, -3}));
  EXPECT_EQ(t.to_string(), "Tensor(shape=[3], dtype=float32, [1.5, 2, -3])");
  EXPECT_DOUBLE_EQ(Tensor::scalar(2.5).item(), 2.5);
}

TEST(Random, SeedIsReproducible) {
  seed(7);
  Tensor a = uniform({16}, 0, 1);
  seed(7);
  Tensor b = uniform({16}, 0, 1);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  Generator g(1);
  std::string st = g.state();
  double x = g.uniform();
  g.set_state(st);
  EXPECT_EQ(g.uniform(), x);
}

}  // namespace
}  // namespace crew
