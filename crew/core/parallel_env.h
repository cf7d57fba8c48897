#pragma once
// The parallel environment as the launcher (or torchrun, mpirun, Slurm) describes it in
// environment variables. Pure data: reading it needs no initialisation, as Paddle's
// ParallelEnv. See docs/environment.md for every variable and the order of precedence.
//
//   crew::ParallelEnv env = crew::ParallelEnv::from_env();
//   if (env.world_size > 1) { ... }
//
// A launcher describes each worker with the same struct and hands it over with to_env():
//
//   crew::apply_env(worker.to_env(), &child_environment);
#include <string>
#include <vector>

namespace crew {

// One variable of a worker's environment. An empty value means "unset": from_env reads an
// empty variable as an unset one, and the launcher's own value must not reach the worker.
struct EnvVar {
  std::string name;
  std::string value;
};

struct ParallelEnv {
  int rank = 0;              // global rank
  int world_size = 1;        // number of ranks in the job
  int local_rank = 0;        // rank on this host
  int local_world_size = 1;  // ranks on this host
  int node_rank = 0;         // index of this host
  int nnodes = 1;
  int device_id = 0;                // device (or CPU slot) this rank uses
  std::string device_kind = "cpu";  // "cpu" or "gpu" (CREW_DEVICE_KIND)
  std::string master_addr;          // rendezvous store host ("" = unknown)
  int master_port = 0;              // rendezvous store port (0 = unknown)
  std::string job_id = "default";
  // The store's shared secret: CREW_JOB_TOKEN, else the contents of CREW_JOB_TOKEN_FILE.
  std::string job_token;
  bool insecure_store = false;  // CREW_INSECURE_STORE=1: rank 0 may host a store without a token
  int restart_count = 0;
  // Which launcher's variables gave rank and world size: crew, paddle, torchrun, mpi, slurm, default.
  std::string source = "default";
  std::vector<std::string> trainer_endpoints;  // PADDLE_TRAINER_ENDPOINTS, if set

  // Reads the environment: CREW_* first, then PADDLE_*, torchrun (RANK/WORLD_SIZE/...),
  // Open MPI (OMPI_COMM_WORLD_*), Slurm (SLURM_PROCID/SLURM_NTASKS/...). Throws ValueError
  // naming the variable for malformed or inconsistent values (rank >= world size, ...).
  static ParallelEnv from_env();
  // The variables a launcher sets for this worker: crew's and Paddle's name of every field
  // (CREW_RANK, PADDLE_TRAINER_ID, ..., FLAGS_selected_cpus or FLAGS_selected_gpus). In the
  // worker, from_env() gives this ParallelEnv back, with source "crew".
  std::vector<EnvVar> to_env() const;

  bool operator==(const ParallelEnv&) const = default;
  bool has_master() const { return !master_addr.empty() && master_port > 0; }
  std::string master_endpoint() const { return master_addr + ":" + std::to_string(master_port); }
};

// Sets each of `vars` in `env` ("KEY=VALUE" entries), unsetting those with an empty value.
void apply_env(const std::vector<EnvVar>& vars, std::vector<std::string>* env);

// Nominal per-rank endpoints for PADDLE_TRAINER_ENDPOINTS: host of each rank's node and
// master_port + 1 + global rank. crew's workers do not listen there (they meet through the
// store); Paddle programs that only print or split the list keep working.
std::vector<std::string> nominal_endpoints(const std::vector<std::string>& node_hosts,
                                           const std::vector<int>& node_sizes, int master_port);

// Splits "host:port" (IPv6 as "[::1]:port"); throws ValueError naming `what`.
void parse_endpoint(const std::string& endpoint, std::string* host, int* port, const char* what);

}  // namespace crew
