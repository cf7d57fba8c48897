// crew._C: Layer (subclassable in Python), the C++ layers, nn.functional.
#include "bindings.h"

namespace crew::python {

void bind_nn(py::module_& m) { (void)m; }

}  // namespace crew::python
