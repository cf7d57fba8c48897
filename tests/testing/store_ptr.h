#pragma once
// A non-owning shared_ptr to a Store, for APIs that take shared ownership of a store the test
// keeps alive itself. Header-only: include it only from suites that link crew_store.
#include <memory>

#include "crew/distributed/store/store.h"

namespace crew::testing {

// `store` as a shared_ptr that never deletes it; it must outlive every copy.
inline std::shared_ptr<dist::Store> borrow_store(dist::Store& store) {
  return std::shared_ptr<dist::Store>(&store, [](dist::Store*) {});
}

}  // namespace crew::testing
