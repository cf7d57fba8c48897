#pragma once
// BackendUnavailableError: a backend could not be set up on this machine for lack of a
// resource (e.g. /dev/shm too small for the shared-memory buffers). Every rank of the group
// throws it together (the ranks agree through the store first), so a caller that chose the
// backend automatically can fall back to another one on all ranks alike.
#include "crew/core/error.h"

namespace crew::dist {

class BackendUnavailableError : public CommError {
 public:
  using CommError::CommError;
};

}  // namespace crew::dist
