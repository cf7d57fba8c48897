#include "crew/core/env.h"

#include <cstdlib>

#include "crew/core/check.h"

namespace crew::env {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string get_string(const char* name, const std::string& fallback) {
  auto value = get(name);
  return value ? *value : fallback;
}

long long get_int(const char* name, long long fallback) {
  auto value = get(name);
  if (!value) return fallback;
  try {
    size_t used = 0;
    long long parsed = std::stoll(*value, &used);
    CREW_CHECK(used == value->size(), "environment variable ", name, "='", *value,
               "' is not an integer");
    return parsed;
  } catch (const std::logic_error&) {
    CREW_THROW(ValueError, "environment variable ", name, "='", *value, "' is not an integer");
  }
}

bool get_bool(const char* name, bool fallback) {
  auto value = get(name);
  if (!value) return fallback;
  const std::string& v = *value;
  if (v == "1" || v == "true" || v == "TRUE" || v == "True" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "FALSE" || v == "False" || v == "no" || v == "off") return false;
  CREW_THROW(ValueError, "environment variable ", name, "='", v, "' is not a boolean (use 1 or 0)");
}

std::chrono::milliseconds parse_duration(const std::string& text, const char* what) {
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::logic_error&) {
    CREW_THROW(ValueError, what, "='", text, "' is not a duration (e.g. 30s, 500ms, 5m)");
  }
  std::string unit = text.substr(used);
  double ms = 0;
  if (unit.empty() || unit == "s") ms = number * 1000.0;
  else if (unit == "ms") ms = number;
  else if (unit == "m" || unit == "min") ms = number * 60000.0;
  else if (unit == "h") ms = number * 3600000.0;
  else CREW_THROW(ValueError, what, "='", text, "' has unknown unit '", unit, "' (use ms, s, m, h)");
  CREW_CHECK(ms >= 0, what, "='", text, "' must not be negative");
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

std::chrono::milliseconds get_duration(const char* name, std::chrono::milliseconds fallback) {
  auto value = get(name);
  if (!value) return fallback;
  return parse_duration(*value, name);
}

}  // namespace crew::env
