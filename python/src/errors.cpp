// crew's typed errors become the Python exceptions a Paddle user catches: ValueError,
// IndexError, TimeoutError, OSError; the rest RuntimeError. crew.CommError and friends
// subclass RuntimeError so `except RuntimeError` still catches them.
#include <exception>

#include "bindings.h"
#include "crew/core/error.h"
#include "crew/distributed/parallel/parallel.h"

namespace crew::python {

namespace {
constexpr const char* kNotInitializedPython =
    "Call paddle.distributed.init_parallel_env first to initialize the distributed environment.";
// "long" -> "int", "crew::Tensor" -> "Tensor", "std::vector<long, ...>" -> "list": the C++
// type of a detailed pybind11 cast_error in Python's words.
std::string python_type_words(std::string cpp) {
  if (cpp.rfind("std::vector", 0) == 0 || cpp.rfind("std::array", 0) == 0) return "a list";
  if (cpp.rfind("std::map", 0) == 0 || cpp.rfind("std::unordered_map", 0) == 0) return "a dict";
  if (cpp.rfind("std::__cxx11::basic_string", 0) == 0 || cpp.rfind("std::string", 0) == 0) return "str";
  if (cpp == "bool") return "bool";
  if (cpp == "float" || cpp == "double") return "float";
  if (cpp.find("long") != std::string::npos || cpp == "int" || cpp == "unsigned int") return "int";
  if (cpp.rfind("std::shared_ptr<", 0) == 0) cpp = cpp.substr(16, cpp.size() - 17);
  const size_t colon = cpp.rfind("::");
  return colon == std::string::npos ? cpp : cpp.substr(colon + 2);
}

// pybind11's "Unable to cast Python instance of type <class 'list'> to C++ type 'long'" as
// "expected int, got list" (a conversion that did not go through cast_arg).
std::string cast_error_text(const std::string& what) {
  const std::string from_key = "of type <class '", to_key = "to C++ type '";
  const size_t from = what.find(from_key), to = what.find(to_key);
  if (from == std::string::npos || to == std::string::npos) {
    return "an argument has a type crew cannot convert (" + what + ")";
  }
  const size_t from_end = what.find("'", from + from_key.size());
  const size_t to_end = what.rfind("'");
  std::string got = what.substr(from + from_key.size(), from_end - from - from_key.size());
  const size_t dot = got.rfind('.');
  if (dot != std::string::npos) got = got.substr(dot + 1);
  return "an argument must be " + python_type_words(what.substr(to + to_key.size(), to_end - to - to_key.size())) +
         ", got " + got;
}

}  // namespace

void throw_bad_argument(py::handle value, const char* func, const char* arg, const char* accepted) {
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) {
      const std::string what = *arg ? std::string(func) + "(): argument '" + arg + "'" : std::string(func);
      throw py::value_error(what + " = " + std::string(py::str(value)) +
                            " is out of range (64-bit integers); expected " + accepted);
    }
  }
  const std::string got = py::str(py::type::handle_of(value).attr("__name__"));
  const std::string what = *arg ? std::string(func) + "(): argument '" + arg + "'" : std::string(func);
  throw py::type_error(what + " must be " + accepted + ", got " + got);
}

void bind_errors(py::module_& m) {
  static py::exception<StoreError> store_error(m, "StoreError", PyExc_RuntimeError);
  static py::exception<CommError> comm_error(m, "CommError", PyExc_RuntimeError);
  static py::exception<DesyncError> desync_error(m, "DesyncError", comm_error.ptr());
  static py::exception<SpawnError> spawn_error(m, "SpawnError", PyExc_RuntimeError);
  static py::exception<DeviceError> device_error(m, "DeviceError", PyExc_RuntimeError);
  // A dtype an op has no kernel for, or operands of different dtypes: TypeError as Python
  // spells it, and ValueError too, as crew raised for dtypes before DTypeError existed.
  static PyObject* dtype_error = [&] {
    py::tuple bases = py::make_tuple(py::handle(PyExc_TypeError), py::handle(PyExc_ValueError));
    PyObject* cls = PyErr_NewException("crew.DTypeError", bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    m.add_object("DTypeError", py::handle(cls));
    return cls;
  }();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DTypeError& e) {
      PyErr_SetString(dtype_error, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TimeoutError& e) {
      PyErr_SetString(PyExc_TimeoutError, e.what());
    } catch (const IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const StoreError& e) {
      PyErr_SetString(store_error.ptr(), e.what());
    } catch (const DesyncError& e) {
      PyErr_SetString(desync_error.ptr(), e.what());
    } catch (const CommError& e) {
      PyErr_SetString(comm_error.ptr(), e.what());
    } catch (const SpawnError& e) {
      PyErr_SetString(spawn_error.ptr(), e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device_error.ptr(), e.what());
    } catch (const py::cast_error& e) {
      PyErr_SetString(PyExc_TypeError, cast_error_text(e.what()).c_str());
    } catch (const StateError& e) {
      // Using the distributed API before init: Paddle's AssertionError, in Paddle's words.
      if (std::string(e.what()).find(dist::kNotInitializedMessage) != std::string::npos) {
        PyErr_SetString(PyExc_AssertionError, kNotInitializedPython);
      } else {
        PyErr_SetString(PyExc_RuntimeError, e.what());
      }
    }
  });
}

}  // namespace crew::python
