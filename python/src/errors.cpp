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
}  // namespace

void bind_errors(py::module_& m) {
  static py::exception<StoreError> store_error(m, "StoreError", PyExc_RuntimeError);
  static py::exception<CommError> comm_error(m, "CommError", PyExc_RuntimeError);
  static py::exception<DesyncError> desync_error(m, "DesyncError", comm_error.ptr());
  static py::exception<SpawnError> spawn_error(m, "SpawnError", PyExc_RuntimeError);
  static py::exception<DeviceError> device_error(m, "DeviceError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
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
