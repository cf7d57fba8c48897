// crew._C: backward, no_grad, operators and differentiable math functions.
#include "bindings.h"

namespace crew::python {

void bind_autograd(py::module_& m) { (void)m; }

}  // namespace crew::python
