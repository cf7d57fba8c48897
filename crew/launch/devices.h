#pragma once
// Devices a node offers and how the launcher hands them to its workers.
//
// GPUs: the ids in CUDA_VISIBLE_DEVICES (or every GPU the driver lists when it is unset or
// "all"); a worker gets FLAGS_selected_gpus = the index of its id within those, as Paddle.
// No GPU: a device id names a CPU slot. A node has as many slots as usable cores, at least
// kMinCpuSlots (so `--devices=0,1,2,3` runs on a small machine), or CREW_CPU_SLOTS. The
// workers of a node split its usable cores evenly: worker i of N is pinned (sched_setaffinity)
// to its contiguous share and gets CREW_NUM_THREADS = max(1, cores / N); with more workers
// than cores they share cores round-robin. `--cpu_affinity=off` skips the pinning, and a
// CREW_NUM_THREADS already in the environment wins.
#include <string>
#include <vector>

namespace crew::launch {

enum class DeviceKind { CPU, GPU };

struct DeviceInventory {
  static constexpr int kMinCpuSlots = 8;

  DeviceKind kind = DeviceKind::CPU;
  std::vector<int> ids;   // the device ids a worker may be given (visible GPUs or CPU slots)
  int default_count = 1;  // workers started when neither --devices nor --nproc_per_node is given
  std::vector<int> cpus;  // usable CPU cores of this process (sched_getaffinity)
  std::string source;     // where the ids came from, for the log ("CUDA_VISIBLE_DEVICES", ...)
};

// One worker's share of the node.
struct WorkerSlot {
  int local_rank = 0;
  int device_id = 0;       // the id as the user names it (CUDA_VISIBLE_DEVICES label or CPU slot)
  int device_index = 0;    // FLAGS_selected_*: index of device_id within the visible ids
  std::vector<int> cpus;   // affinity; empty = inherit
  int num_threads = 1;     // intra-op threads (CREW_NUM_THREADS)
};

// Looks at CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus and the CPU affinity mask.
DeviceInventory detect_devices();

// Plans the node's workers (Paddle's pod_replicas rule): --nproc_per_node if given, else one
// per id in `devices`, else default_count. Throws ValueError naming a device id that does not
// exist, or a --nproc_per_node that does not match --devices.
std::vector<WorkerSlot> plan_workers(const DeviceInventory& inventory, const std::string& devices,
                                     int nproc_per_node, bool cpu_affinity);

const char* to_string(DeviceKind kind);

}  // namespace crew::launch
