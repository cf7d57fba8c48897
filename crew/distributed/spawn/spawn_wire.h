#pragma once
// Internals shared by the two halves of crew::dist::spawn: the parent (spawn.cpp) and the
// child's pre-main hook (spawn_child.cpp).
#include <cstddef>

#include "crew/core/worker_env.h"

namespace crew::dist::detail {

// The child's rank is in crew::kSpawnChildVar (crew/core/worker_env.h).
inline constexpr const char* kSpawnEntryVar = "CREW_SPAWN_ENTRY";  // "<entry offset>,<fn offset>"
inline constexpr const char* kSpawnFdVar = "CREW_SPAWN_FD";        // socket to the parent

// Offsets of spawned functions are taken from here. It is defined in spawn_child.cpp, so a
// program that calls spawn also links the child hook.
void spawn_anchor();
// Writes all bytes to a socket (MSG_NOSIGNAL; a vanished peer is ignored).
void spawn_write_exact(int fd, const void* data, size_t size);

}  // namespace crew::dist::detail
