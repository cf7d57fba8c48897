#include "crew/core/worker_env.h"

#include <algorithm>

namespace crew {
namespace {

bool has_entry(const std::vector<std::string>& env, const std::string& key) {
  const std::string prefix = key + "=";
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) {
    return e.size() > prefix.size() && e.compare(0, prefix.size(), prefix) == 0;
  });
}

// PYTHONUNBUFFERED= (empty) is the user's "buffer as usual" and counts as set.
bool has_key(const std::vector<std::string>& env, const std::string& key) {
  const std::string prefix = key + "=";
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
}

std::string join(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) {
    if (!out.empty()) out += ',';
    out += std::to_string(id);
  }
  return out;
}

}  // namespace

std::vector<EnvVar> WorkerEnv::to_env(const std::vector<std::string>& base) const {
  std::vector<EnvVar> vars = parallel.to_env();
  auto unless_set = [&](const char* name, const std::string& value) {
    if (!value.empty() && !has_entry(base, name)) vars.push_back({name, value});
  };
  vars.push_back({"CREW_STORE_HOSTED", store_hosted ? "1" : ""});
  vars.push_back({kSpawnChildVar, ""});
  unless_set("CREW_NUM_THREADS", std::to_string(num_threads));
  unless_set("OMP_NUM_THREADS", std::to_string(num_threads));
  if (!log_dir.empty()) vars.push_back({"PADDLE_LOG_DIR", log_dir});
  unless_set("CREW_COMM_CPUS", join(comm_cpus));
  // Gloo would otherwise bind what this host's name resolves to, which on a multi-homed host
  // (or one whose name maps to 127.0.1.1) is not the address the other nodes can reach.
  unless_set("CREW_HOST", host);
  if (python_unbuffered && !has_key(base, "PYTHONUNBUFFERED")) vars.push_back({"PYTHONUNBUFFERED", "1"});
  return vars;
}

std::vector<std::string> worker_environment(const std::vector<std::string>& base, const WorkerEnv& w) {
  std::vector<std::string> env = base;
  apply_env(w.to_env(base), &env);
  return env;
}

}  // namespace crew
