#pragma once
// Where a job started by a scheduler without crew's launcher (srun, mpirun) meets: rank 0
// hosts the store; every rank derives the same endpoint from the scheduler's variables, so
// `srun -n 2 bin/train_cnn` and `mpirun -np 3 bin/all_gather_object` need no MASTER_ADDR.
//
//   Slurm: 127.0.0.1 when the step runs on one node (SLURM_STEP_NUM_NODES, else SLURM_NNODES,
//          is 1), else the first host of SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST); port
//          derived from SLURM_JOB_ID and SLURM_STEP_ID.
//   Open MPI: 127.0.0.1 when every rank runs on one host (local size == world size);
//          across hosts there is no variable naming rank 0's host: set CREW_MASTER.
//          Port derived from OMPI_MCA_ess_base_jobid (else PMIX_NAMESPACE).
//
// Explicit variables (CREW_MASTER, PADDLE_MASTER, MASTER_ADDR + MASTER_PORT) always win.
#include <cstdint>
#include <string>

namespace crew {

struct ParallelEnv;

// The first host of a Slurm host list: "node[07-09,12],gpu1" -> "node07".
std::string first_slurm_host(const std::string& nodelist);
// A port in [20000, 40000) from a job's identity: the same on every rank of the job.
int derived_port(const std::string& job_key);
// Sets e->master_addr/port from the scheduler named by e->source when they are unset.
void master_from_scheduler(ParallelEnv* e);

}  // namespace crew
