// crew._C: optimizers and LR schedules.
#include "bindings.h"

namespace crew::python {

void bind_optim(py::module_& m) { (void)m; }

}  // namespace crew::python
