#include "crew/tensor/kernels/dispatch.h"

#include <sstream>

#include "crew/tensor/tensor.h"

namespace crew::kernels {

void check_same_place(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> operands) {
  const Tensor* first = nullptr;
  bool same = true;
  for (const auto& [name, t] : operands) {
    if (t == nullptr || !t->defined()) continue;
    if (first == nullptr) {
      first = t;
    } else if (t->place() != first->place()) {
      same = false;
    }
  }
  if (same) return;
  std::ostringstream os;
  os << op << ": ";
  const char* sep = "";
  for (const auto& [name, t] : operands) {
    if (t == nullptr || !t->defined()) continue;
    os << sep << name << " on " << t->place().to_string();
    sep = ", ";
  }
  os << "; all operands must be on one place (move them with .to(place) or .cpu())";
  throw DeviceError(os.str());
}

}  // namespace crew::kernels
