#pragma once
// JSON-lines metrics (train_cnn's format) and NumPy's float32 repr.
#include <fstream>
#include <string>

namespace trainer {

// The shortest decimal that reads back as the same float (NumPy's float32 repr).
std::string short_float(float v);

// Appends JSON lines to a file; a no-op without a path. `program` prefixes the open error.
class Metrics {
 public:
  Metrics(const std::string& path, const std::string& program);
  void line(const std::string& json);

 private:
  std::ofstream out_;
};

}  // namespace trainer
