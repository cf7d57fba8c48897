// crew._C: built-in datasets and transforms.
#include "bindings.h"

namespace crew::python {

void bind_vision(py::module_& m) { (void)m; }

}  // namespace crew::python
