#include "crew/launch/devices.h"

#include <dirent.h>

#include <algorithm>

#include "crew/core/check.h"
#include "crew/core/comm_affinity.h"
#include "crew/core/env.h"
#include "crew/launch/options.h"

namespace crew::launch {
namespace {

std::vector<int> usable_cpus() {
  std::vector<int> cpus = this_thread_cpus();
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// Number of GPUs the NVIDIA driver lists (0 without the driver).
int driver_gpu_count() {
  DIR* dir = ::opendir("/proc/driver/nvidia/gpus");
  if (!dir) return 0;
  int n = 0;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n;
}

std::string join(const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

}  // namespace

const char* to_string(DeviceKind kind) { return kind == DeviceKind::GPU ? "gpu" : "cpu"; }

DeviceInventory detect_devices() {
  DeviceInventory inv;
  inv.cpus = usable_cpus();
  auto visible = env::get("CUDA_VISIBLE_DEVICES");
  if (visible && *visible != "all") {
    // An explicit list: those are the GPUs, whether or not this node's driver can be read.
    if (*visible != "-1" && *visible != "none") {
      inv.kind = DeviceKind::GPU;
      inv.ids = parse_id_list(*visible, "CUDA_VISIBLE_DEVICES");
      inv.source = "CUDA_VISIBLE_DEVICES";
    }
  } else if (int n = driver_gpu_count(); n > 0) {
    inv.kind = DeviceKind::GPU;
    for (int i = 0; i < n; ++i) inv.ids.push_back(i);
    inv.source = "/proc/driver/nvidia/gpus";
  }
  if (inv.kind == DeviceKind::GPU) {
    inv.default_count = static_cast<int>(inv.ids.size());
    return inv;
  }
  const int cores = static_cast<int>(inv.cpus.size());
  int slots = static_cast<int>(env::get_int("CREW_CPU_SLOTS", std::max(cores, DeviceInventory::kMinCpuSlots)));
  CREW_CHECK(slots >= 1, "CREW_CPU_SLOTS must be >= 1, got ", slots);
  for (int i = 0; i < slots; ++i) inv.ids.push_back(i);
  inv.default_count = std::min(cores, slots);
  inv.source = str_cat("cpu slots (", cores, " usable cores)");
  return inv;
}

std::vector<WorkerSlot> plan_workers(const DeviceInventory& inv, const std::string& devices, int nproc_per_node,
                                     bool cpu_affinity) {
  std::vector<int> chosen;
  if (!devices.empty()) {
    chosen = parse_id_list(devices, "--devices");
    for (int id : chosen) {
      CREW_CHECK(std::find(inv.ids.begin(), inv.ids.end(), id) != inv.ids.end(), "launch: --devices=", devices,
                 ": device ", id, " does not exist (", to_string(inv.kind), " devices: ", join(inv.ids), ", from ",
                 inv.source, ")");
    }
    CREW_CHECK(nproc_per_node < 0 || nproc_per_node == static_cast<int>(chosen.size()), "launch: --nproc_per_node ",
               nproc_per_node, " does not match --devices=", devices, " (", chosen.size(), " devices)");
  } else {
    int n = nproc_per_node > 0 ? nproc_per_node : inv.default_count;
    CREW_CHECK(n <= static_cast<int>(inv.ids.size()), "launch: --nproc_per_node ", n, " exceeds the ",
               inv.ids.size(), " ", to_string(inv.kind), " devices of this node (", join(inv.ids), ")");
    chosen.assign(inv.ids.begin(), inv.ids.begin() + n);
  }

  const int n = static_cast<int>(chosen.size());
  const int cores = static_cast<int>(inv.cpus.size());
  std::vector<WorkerSlot> slots(n);
  for (int i = 0; i < n; ++i) {
    WorkerSlot& s = slots[i];
    s.local_rank = i;
    s.device_id = chosen[i];
    s.device_index = static_cast<int>(std::find(inv.ids.begin(), inv.ids.end(), chosen[i]) - inv.ids.begin());
    s.num_threads = std::max(1, cores / n);
    if (inv.kind == DeviceKind::CPU && cpu_affinity) {
      if (n <= cores) {
        for (int c = i * cores / n; c < (i + 1) * cores / n; ++c) s.cpus.push_back(inv.cpus[c]);
      } else {
        s.cpus.push_back(inv.cpus[i % cores]);
      }
    }
  }
  return slots;
}

}  // namespace crew::launch
