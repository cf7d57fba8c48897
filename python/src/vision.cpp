// crew._C.vision: the built-in data sets (C++: they decode without the GIL) and the image
// transforms. python/crew/vision/ gives them Paddle's signatures; a transform may also be
// any Python callable (py_data.h wraps it).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "crew/core/check.h"
#include "crew/io/io.h"
#include "py_data.h"

namespace crew::python {

namespace {

using io::Transform;
using TransformHolder = std::shared_ptr<Transform>;

// A float or a list of floats (Normalize's mean/std).
std::vector<float> floats(py::handle v) {
  if (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr())) return {v.cast<float>()};
  return cast_arg<std::vector<float>>(v, "Normalize", "mean/std", "a float or a list of floats");
}

void check_chw(const std::string& data_format, const char* what) {
  CREW_CHECK(data_format == "CHW", what, ": data_format='", data_format, "' is not supported; crew's images are CHW");
}

void bind_transforms(py::module_& v) {
  py::class_<Transform, TransformHolder>(v, "Transform")
      .def("__call__", [](const Transform& t, py::handle image) {
        Tensor in = field_from_py(image, "transform");
        py::gil_scoped_release nogil;
        return t(in);
      }, py::arg("img"));
  py::class_<io::ToTensor, Transform, std::shared_ptr<io::ToTensor>>(v, "ToTensor")
      .def(py::init([](const std::string& data_format) {
             check_chw(data_format, "ToTensor");
             return std::make_shared<io::ToTensor>();
           }), py::arg("data_format") = "CHW");
  py::class_<io::Normalize, Transform, std::shared_ptr<io::Normalize>>(v, "Normalize")
      .def(py::init([](py::handle mean, py::handle std, const std::string& data_format) {
             check_chw(data_format, "Normalize");
             return std::make_shared<io::Normalize>(floats(mean), floats(std));
           }), py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("data_format") = "CHW");
  py::class_<io::Compose, Transform, std::shared_ptr<io::Compose>>(v, "Compose")
      .def(py::init([](const py::list& transforms) {
             std::vector<io::TransformPtr> parts;
             for (py::handle t : transforms) parts.push_back(transform_from_py(t));
             return std::make_shared<io::Compose>(std::move(parts));
           }), py::arg("transforms"));
  py::class_<io::RandomCrop, Transform, std::shared_ptr<io::RandomCrop>>(v, "RandomCrop")
      .def(py::init([](py::handle size, int64_t padding, double fill) {
             if (PyLong_Check(size.ptr())) {
               const auto s = cast_arg<int64_t>(size, "RandomCrop", "size", "an int or (height, width)");
               return std::make_shared<io::RandomCrop>(s, s, padding, fill);
             }
             auto hw = cast_arg<std::vector<int64_t>>(size, "RandomCrop", "size", "an int or (height, width)");
             CREW_CHECK(hw.size() == 2, "RandomCrop: size must be an int or (height, width), got ", hw.size(), " values");
             return std::make_shared<io::RandomCrop>(hw[0], hw[1], padding, fill);
           }), py::arg("size"), py::arg("padding") = 0, py::arg("fill") = 0.0);
  py::class_<io::RandomHorizontalFlip, Transform, std::shared_ptr<io::RandomHorizontalFlip>>(v, "RandomHorizontalFlip")
      .def(py::init([](double prob) { return std::make_shared<io::RandomHorizontalFlip>(prob); }), py::arg("prob") = 0.5);
  py::class_<io::RandomVerticalFlip, Transform, std::shared_ptr<io::RandomVerticalFlip>>(v, "RandomVerticalFlip")
      .def(py::init([](double prob) { return std::make_shared<io::RandomVerticalFlip>(prob); }), py::arg("prob") = 0.5);
}

void bind_datasets(py::module_& v) {
  py::class_<io::MNIST, io::Dataset, std::shared_ptr<io::MNIST>>(v, "MNIST")
      .def(py::init([](const std::string& mode, const std::string& data_dir, py::handle transform) {
             return std::make_shared<io::MNIST>(io::MnistOptions{mode, data_dir, transform_from_py(transform)});
           }), py::arg("mode") = "train", py::arg("data_dir") = "", py::arg("transform") = py::none())
      .def_property_readonly("data_dir", &io::MNIST::dir);
  py::class_<io::FashionMNIST, io::MNIST, std::shared_ptr<io::FashionMNIST>>(v, "FashionMNIST")
      .def(py::init([](const std::string& mode, const std::string& data_dir, py::handle transform) {
             return std::make_shared<io::FashionMNIST>(io::MnistOptions{mode, data_dir, transform_from_py(transform)});
           }), py::arg("mode") = "train", py::arg("data_dir") = "", py::arg("transform") = py::none());
  py::class_<io::Cifar10, io::Dataset, std::shared_ptr<io::Cifar10>>(v, "Cifar10")
      .def(py::init([](const std::string& mode, const std::string& data_dir, py::handle transform) {
             return std::make_shared<io::Cifar10>(io::Cifar10Options{mode, data_dir, transform_from_py(transform)});
           }), py::arg("mode") = "train", py::arg("data_dir") = "", py::arg("transform") = py::none())
      // The Python-version archive's arrays (python/crew/vision/datasets.py unpickles them):
      // images uint8 [N, 3072] (R, G, B planes), labels [N].
      .def(py::init([](py::array_t<uint8_t, py::array::c_style | py::array::forcecast> images,
                                    const std::vector<int64_t>& labels, const std::string& what,
                                    const std::string& mode, py::handle transform, int64_t num_classes) {
             CREW_CHECK(images.ndim() == 2 && images.shape(1) == 3072, "Cifar10 ", what,
                        ": expected images of shape [N, 3072], got ndim ", images.ndim());
             std::vector<uint8_t> pixels(images.data(), images.data() + images.size());
             return std::make_shared<io::Cifar10>(io::Cifar10::from_arrays(
                 std::move(pixels), labels, what,
                 io::Cifar10Options{mode, "", transform_from_py(transform), num_classes}));
           }), py::arg("images"), py::arg("labels"), py::arg("what"), py::arg("mode") = "train",
           py::arg("transform") = py::none(), py::arg("num_classes") = 10)
      .def_property_readonly("source", &io::Cifar10::source);
}

}  // namespace

void bind_vision(py::module_& m) {
  py::module_ v = m.def_submodule("vision", "crew::io data sets and transforms (paddle.vision)");
  bind_transforms(v);
  bind_datasets(v);
}

}  // namespace crew::python
