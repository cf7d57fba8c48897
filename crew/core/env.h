#pragma once
// Typed reads of environment variables, with errors that name the variable.
#include <chrono>
#include <optional>
#include <string>

namespace crew::env {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> get(const char* name);
std::string get_string(const char* name, const std::string& fallback);
// Throws ValueError naming the variable when the value is not an integer.
long long get_int(const char* name, long long fallback);
bool get_bool(const char* name, bool fallback);  // 1/0, true/false, yes/no, on/off
// Parses "30", "30s", "500ms", "2m", "1h" (plain numbers are seconds).
std::chrono::milliseconds get_duration(const char* name, std::chrono::milliseconds fallback);
std::chrono::milliseconds parse_duration(const std::string& text, const char* what);

}  // namespace crew::env
