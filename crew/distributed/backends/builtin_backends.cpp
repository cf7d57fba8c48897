#include "crew/distributed/backends/builtin_backends.h"

#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/backends/hier/hier_process_group.h"
#include "crew/distributed/backends/nccl/nccl_process_group.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist {

void register_builtin_backends() {
  const struct {
    const char* name;
    void (*register_backend)();
  } builtins[] = {
      {"gloo", register_gloo_backend},
      {"shm", register_shm_backend},
      {"hier", register_hier_backend},
      {"nccl", register_nccl_backend},
  };
  for (const auto& backend : builtins) {
    if (!is_backend_registered(backend.name)) backend.register_backend();
  }
}

}  // namespace crew::dist
