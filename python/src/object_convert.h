#pragma once
// Python values <-> crew::dist::Object, for the object collectives (all_gather_object & co.).
//
// Plain values (None, bool, int within int64, float, str, bytes, list, tuple, dict with str
// or int keys; nested at most 64 deep) travel in Object's typed encoding, so Python and C++
// ranks exchange them; a tuple arrives as a list, as in the C++ API. Anything else is
// pickled (Paddle's rule) and sent as bytes behind kPickleMagic; unpickling runs code, so
// only trusted peers may send such objects (docs/python.md). A bytes value that happens to
// start with the magic is pickled too, so it comes back as the same bytes.
#include <pybind11/pybind11.h>

#include "crew/distributed/object/object.h"

namespace crew::python {

namespace py = pybind11;

inline constexpr const char kPickleMagic[] = "\x00crew.pickle\x00";
inline constexpr size_t kPickleMagicSize = sizeof(kPickleMagic) - 1;

// The wire form of a Python value (needs the GIL).
dist::Object object_from_py(py::handle value);
// The Python value back (needs the GIL).
py::object object_to_py(const dist::Object& obj);

}  // namespace crew::python
