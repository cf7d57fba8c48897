#pragma once
// Python values <-> crew::dist::Object, for the object collectives (all_gather_object & co.).
//
// Plain values (None, bool, int within int64, float, str, bytes, list, tuple, dict with str
// or int keys; nested at most 64 deep) travel in Object's typed encoding, so Python and C++
// ranks exchange them and nothing runs on the receiver; a tuple arrives as a list, as in the
// C++ API. Anything else needs pickle, which is off unless this process enabled it
// (set_object_pickle(true), crew.distributed.set_object_pickle(True) or CREW_OBJECT_PICKLE=1):
//   - on:  the value is pickled (Paddle's rule) and sent as bytes behind kPickleMagic, and
//          pickled bytes from peers are unpickled. Unpickling runs code the sender chose, so
//          only for jobs whose every process is trusted (docs/python.md).
//   - off: the sender sends a refusal marker naming the type (so the collective still
//          completes on every rank) and raises TypeError; a receiver raises ValueError for a
//          marker or for pickled bytes, and never unpickles.
// A bytes value that starts with one of the markers counts as not plain (pickled when on).
#include <pybind11/pybind11.h>

#include <string>

#include "crew/distributed/object/object.h"

namespace crew::python {

namespace py = pybind11;

// (The "\x00" "crew" split keeps the escape from reading the 'c' as a hex digit.)
inline constexpr const char kPickleMagic[] = "\x00" "crew.pickle\x00";
inline constexpr size_t kPickleMagicSize = sizeof(kPickleMagic) - 1;
// Followed by the Python type name of the value that was not sent.
inline constexpr const char kRefusedMagic[] = "\x00" "crew.not-plain\x00";
inline constexpr size_t kRefusedMagicSize = sizeof(kRefusedMagic) - 1;

// Whether this process pickles non-plain values and unpickles peers' (CREW_OBJECT_PICKLE,
// default off, until set_object_pickle is called).
bool object_pickle_enabled();
void set_object_pickle(bool enabled);

// The wire form of a Python value (needs the GIL). With pickling off, a non-plain value
// becomes a refusal marker and `*refused` (when given) is set to a TypeError message naming
// `op` and the value's type; raise it after the collective.
dist::Object object_from_py(py::handle value, const char* op = "object collective",
                            std::string* refused = nullptr);

// Where a received object came from, for error messages.
struct ObjectSource {
  const char* op = "object collective";  // "all_gather_object", ...
  int rank = -1;                         // the sender (group rank for all_gather_object)
};

// The Python value back (needs the GIL); ValueError for pickled bytes while pickling is off
// and for a peer's refusal marker.
py::object object_to_py(const dist::Object& obj, const ObjectSource& from = {});

}  // namespace crew::python
