// crew._C: Dataset (subclassable in Python), samplers, DataLoader.
#include "bindings.h"

namespace crew::python {

void bind_io(py::module_& m) { (void)m; }

}  // namespace crew::python
