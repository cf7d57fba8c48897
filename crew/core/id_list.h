#pragma once
// Device lists as the launcher and spawn take them ("0,1,2": --devices, gpus='1,3',
// CUDA_VISIBLE_DEVICES, --log_ranks): the one parser of that format.
#include <string>
#include <vector>

namespace crew {

// Comma-separated non-negative integers, none twice, e.g. "0,3" -> {0, 3}. Throws ValueError
// naming `what`, the text and the bad item: "--devices='0,x': 'x' is not a device id ...".
std::vector<int> parse_id_list(const std::string& text, const char* what);

}  // namespace crew
