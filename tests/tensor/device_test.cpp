// The device seam on the CPU: places, set_device, the host-pointer guard, copies between
// places and kernel dispatch, proved with the fake device (tests/testing/fake_device.h).
#include <gtest/gtest.h>

#include "crew/tensor/device/device.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/fill_cast.h"
#include "crew/tensor/safetensors.h"
#include "crew/tensor/tensor.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

using testing::FakeDevice;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Place, PrintsAndParsesPaddlesNames) {
  EXPECT_EQ(CPUPlace().to_string(), "cpu");
  EXPECT_EQ(CUDAPlace(3).to_string(), "gpu:3");
  EXPECT_EQ(CUDAPinnedPlace().to_string(), "gpu_pinned");
  EXPECT_EQ(parse_place("cpu", 0), CPUPlace());
  EXPECT_EQ(parse_place("gpu", 2), CUDAPlace(2));
  EXPECT_EQ(parse_place("GPU:1", 0), CUDAPlace(1));
  EXPECT_EQ(parse_place("gpu_pinned", 0), CUDAPinnedPlace());
  EXPECT_EQ(parse_place("fake:1", 0), FakeDevice::place(1));
  EXPECT_TRUE(CPUPlace().host_accessible());
  EXPECT_TRUE(CUDAPinnedPlace().host_accessible());
  EXPECT_FALSE(CUDAPlace(0).host_accessible());
  EXPECT_FALSE(FakeDevice::place().host_accessible());
  for (const char* bad : {"tpu", "gpu:", "gpu:-1", "gpu:x", "cpu:0", ""}) {
    EXPECT_NE(error_of([&] { parse_place(bad, 0); }).find("The device must be a string which is like 'cpu', 'gpu'"),
              std::string::npos)
        << bad;
  }
}

TEST(Device, SetDeviceIsHonestOnACpuOnlyBuild) {
  ASSERT_FALSE(is_compiled_with_cuda()) << "this test describes a build without CUDA";
  EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_EQ(get_device(), "cpu");
  EXPECT_EQ(error_of([] { set_device("gpu"); }),
            "The device should not be 'gpu', since crew is not compiled with CUDA");
  EXPECT_EQ(error_of([] { set_device("gpu:1"); }),
            "The device should not be 'gpu:1', since crew is not compiled with CUDA");
  EXPECT_NE(error_of([] { set_device("fake:0"); }).find("registered by crew's tests only"), std::string::npos);
  EXPECT_THROW(Tensor::zeros({2}, DType::FLOAT32, CUDAPlace(0)), DeviceError);
  EXPECT_EQ(get_device(), "cpu");
}

TEST(Device, SetDeviceChoosesAPresentDevice) {
  FakeDevice fake;
  EXPECT_EQ(set_device("fake:1"), FakeDevice::place(1));
  EXPECT_EQ(get_device(), "fake:1");
  EXPECT_EQ(current_place(), FakeDevice::place(1));
  EXPECT_NE(error_of([] { set_device("fake:2"); }).find("'fake:2' does not exist: 2 fake device(s) present"),
            std::string::npos);
  set_device("cpu");
  EXPECT_EQ(get_device(), "cpu");
}

TEST(Device, PeakMemoryIsZeroWhereNothingCountsIt) {
  FakeDevice fake;  // its backend keeps the default: it does not count
  Tensor x = Tensor::ones({64}, DType::FLOAT32, fake.place());
  EXPECT_EQ(device_peak_memory(fake.place()), 0u);
  EXPECT_EQ(device_peak_memory(CPUPlace()), 0u);
  EXPECT_EQ(device_peak_memory(CUDAPinnedPlace()), 0u);
}

TEST(Device, HostCodeCannotReadDeviceMemory) {
  FakeDevice fake;
  Tensor x = Tensor::ones({2, 3}, DType::FLOAT32, fake.place());
  EXPECT_EQ(x.place(), fake.place());
  EXPECT_THROW(x.data<float>(), DeviceError);
  const std::string e = error_of([&] { x.raw_data("conv2d"); });
  EXPECT_NE(e.find("conv2d: the tensor (shape [2, 3]) is on fake:0, not in host memory"), std::string::npos) << e;
  // Views share the place and the guard.
  EXPECT_THROW(x.select(1).data<float>(), DeviceError);
  EXPECT_EQ(x.view({6}).place(), fake.place());
}

TEST(Device, CopiesBetweenPlaces) {
  FakeDevice fake;
  Tensor host = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor dev = host.to(fake.place());
  EXPECT_EQ(dev.place(), fake.place());
  EXPECT_FALSE(dev.shares_storage(host));
  EXPECT_TRUE(host.to(CPUPlace()).is_same(host));  // already there: no copy
  EXPECT_TRUE(dev.to(fake.place()).is_same(dev));
  Tensor other = dev.to(FakeDevice::place(1));  // device to device
  EXPECT_EQ(other.place(), FakeDevice::place(1));
  Tensor back = other.cpu();
  EXPECT_EQ(back.place(), CPUPlace());
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(dev.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));  // through the host
  EXPECT_NE(dev.to_string().find("[1, 2, 3, 4]"), std::string::npos);
}

TEST(Device, InPlaceOpsAndClonesStayOnTheDevice) {
  FakeDevice fake;
  Tensor dev = Tensor::zeros({3}, DType::FLOAT64, fake.place());
  dev.copy_(Tensor::from_vector<double>({5, 6, 7}));  // host -> device
  Tensor twin = dev.clone();
  EXPECT_EQ(twin.place(), fake.place());
  dev.zero_();
  EXPECT_EQ(dev.to_vector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(twin.to_vector<double>(), (std::vector<double>{5, 6, 7}));
  Tensor host = Tensor::zeros({3}, DType::FLOAT64);
  host.copy_(twin);  // device -> host
  EXPECT_EQ(host.to_vector<double>(), (std::vector<double>{5, 6, 7}));
  const uint64_t version = dev.impl()->storage->version();
  dev.copy_(twin);
  EXPECT_EQ(dev.impl()->storage->version(), version + 1);
}

TEST(Device, KernelsRunTheDevicesEntries) {
  FakeDevice fake;
  Tensor t = Tensor::full({4}, 2.5, DType::FLOAT32, fake.place());  // fill on the device
  EXPECT_EQ(FakeDevice::calls(), 1);
  Tensor i = t.to(DType::INT64);  // cast on the device
  EXPECT_EQ(FakeDevice::calls(), 2);
  EXPECT_EQ(i.place(), fake.place());
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 2, 2}));
  Tensor::full({4}, 1.0).to(DType::INT32);  // the CPU's entries on host tensors
  EXPECT_EQ(FakeDevice::calls(), 2);
}

TEST(Device, AMissingKernelIsNamed) {
  FakeDevice fake;
  Tensor t = Tensor::zeros({2}, DType::FLOAT32, fake.place());
  kernels::cast_kernel.set(DeviceType::FAKE, nullptr);
  EXPECT_EQ(error_of([&] { t.to(DType::FLOAT64); }), "cast has no kernel for fake");
  Tensor x = Tensor::zeros({1, 1, 4, 4}, DType::FLOAT32, fake.place());
  Tensor w = Tensor::zeros({2, 1, 3, 3}, DType::FLOAT32, fake.place());
  EXPECT_EQ(error_of([&] { kernels::conv2d_forward(x, w, Tensor(), {}); }), "conv2d_forward has no kernel for fake");
}

TEST(Device, OperandsOnDifferentPlacesAreRefusedNamingEach) {
  FakeDevice fake;
  Tensor x = Tensor::zeros({1, 1, 4, 4}, DType::FLOAT32, fake.place());
  Tensor w = Tensor::zeros({2, 1, 3, 3});
  Tensor b = Tensor::zeros({2});
  const std::string e = error_of([&] { kernels::conv2d_forward(x, w, b, {}); });
  EXPECT_EQ(e.rfind("conv2d: x on fake:0, weight on cpu, bias on cpu; all operands must be on one place", 0), 0u)
      << e;
  EXPECT_THROW(kernels::conv2d_forward(x.cpu(), w.to(fake.place()), Tensor(), {}), DeviceError);
  // All on the CPU: the CPU entry runs.
  EXPECT_EQ(kernels::conv2d_forward(x.cpu(), w, b, {}).shape(), (Shape{1, 2, 2, 2}));
}

TEST(Device, CpuMadeFakeEntriesComputeWhatTheCpuDoesOnFakeMemory) {
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  Tensor w = Tensor::full({2, 1, 3, 3}, 0.5);
  Tensor b = Tensor::from_vector<float>({1, -1});
  const Tensor want = kernels::conv2d_forward(x, w, b, {});
  const int before = testing::fake_entry_calls();
  const Tensor got = kernels::conv2d_forward(x.to(fake.place(1)), w.to(fake.place(1)), b.to(fake.place(1)), {});
  EXPECT_EQ(testing::fake_entry_calls(), before + 1);
  EXPECT_EQ(got.place(), fake.place(1));  // the result is on the operands' place
  EXPECT_THROW(got.data<float>(), DeviceError);
  EXPECT_EQ(got.cpu().to_vector<float>(), want.to_vector<float>());
}

// A model trained on a device saves as one trained on the CPU: save() writes device tensors
// from host copies (it read their bytes through the pointer guard before: a DeviceError).
TEST(Device, SaveWritesDeviceTensorsFromHostCopies) {
  testing::FakeDevice fake;
  testing::TempDir tmp;
  StateDict sd;
  sd.insert("w", Tensor::from_vector<float>({1.5f, -2.0f, 3.0f}).to(fake.place()));
  sd.insert("b", Tensor::from_vector<float>({0.25f}));
  save(sd, tmp.file("m.safetensors"));
  const StateDict back = load(tmp.file("m.safetensors"));
  EXPECT_EQ(back.at("w").place(), CPUPlace());
  EXPECT_EQ(back.at("w").to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.0f}));
  EXPECT_EQ(back.at("b").to_vector<float>(), (std::vector<float>{0.25f}));
}

}  // namespace
}  // namespace crew
