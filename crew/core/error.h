#pragma once
// crew's error hierarchy. Every error crew throws derives from crew::Error.
//
//   try { crew::dist::all_reduce(t); }
//   catch (const crew::TimeoutError& e) { std::cerr << e.what(); }
#include <stdexcept>
#include <string>

namespace crew {

// Root of all crew errors.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument or input value (shape, dtype, option, file content).
class ValueError : public Error {
 public:
  using Error::Error;
};

// An op given a dtype it has no kernel for, or operands of different dtypes; messages name
// the op and the dtypes ("matmul: x is bfloat16, y is float32"). Python raises TypeError.
class DTypeError : public ValueError {
 public:
  using ValueError::ValueError;
};

// An index or key out of range.
class IndexError : public Error {
 public:
  using Error::Error;
};

// A call made in the wrong state (e.g. a collective before init_parallel_env).
class StateError : public Error {
 public:
  using Error::Error;
};

// A blocking call that did not finish within its timeout.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// A file or OS-level I/O failure; messages carry the path and strerror(errno).
class IOError : public Error {
 public:
  using Error::Error;
};

// A rendezvous-store failure (connection, protocol, missing key).
class StoreError : public Error {
 public:
  using Error::Error;
};

// A collective-communication failure (peer died, transport error, mismatch).
class CommError : public Error {
 public:
  using Error::Error;
};

// Ranks of a group issued different collectives (op, size, dtype or root) at the same
// point, or one of them stopped issuing them; the message holds every rank's report.
class DesyncError : public CommError {
 public:
  using CommError::CommError;
};

// Memory or a kernel on the wrong device: host code asking for the elements of device
// memory, operands on different places, an op with no kernel for a device, a device crew
// was not built for. Messages name the op and the places.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// A child process started by crew::dist::spawn failed.
class SpawnError : public Error {
 public:
  using Error::Error;
};

// A crew bug: an internal invariant did not hold.
class InternalError : public Error {
 public:
  using Error::Error;
};

// Returns "what: strerror(errno)" for the current errno.
std::string errno_message(const std::string& what);
// Returns "what: strerror(err)".
std::string errno_message(const std::string& what, int err);

}  // namespace crew
