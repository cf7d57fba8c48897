// crew._C: init_parallel_env, collectives, object collectives, spawn.
#include "bindings.h"

namespace crew::python {

void bind_distributed(py::module_& m) { (void)m; }

}  // namespace crew::python
