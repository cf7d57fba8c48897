#pragma once
// The backends crew ships, registered in the ProcessGroup registry in one place. Each backend
// registers through its own function (register_gloo_backend, register_shm_backend,
// register_hier_backend); this calls all of them. Explicit calls, not self-registering static
// objects: a static library's object file that nothing references is dropped by the linker.
namespace crew::dist {

// Registers "gloo", "shm" and "hier", each unless a backend of that name is registered
// already (a user's own factory wins). init_parallel_env calls it; safe to call again.
void register_builtin_backends();

}  // namespace crew::dist
