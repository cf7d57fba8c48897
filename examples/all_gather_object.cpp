// The seed's all_gather_object demo: rank 0 contributes {'foo': [1, 2, 3]}, every other rank
// {'bar': [4, 5, 6]}; every rank prints the gathered list. With 3 ranks:
//   [{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]
//
//   crew launch --nproc_per_node 3 ./all_gather_object
//   ./all_gather_object          # one process: the warning, then [{'foo': [1, 2, 3]}]
#include <iostream>

#include "crew/distributed/distributed.h"

namespace dist = crew::dist;
using crew::dist::Object;

int main() {
  try {
    dist::init_parallel_env();
    Object obj = dist::get_rank() == 0
                     ? Object::dict({{"foo", Object::list({Object(1), Object(2), Object(3)})}})
                     : Object::dict({{"bar", Object::list({Object(4), Object(5), Object(6)})}});
    std::vector<Object> object_list;
    dist::all_gather_object(object_list, obj);
    std::cout << Object::list(object_list) << std::endl;
    return 0;
  } catch (const crew::Error& e) {
    std::cerr << "all_gather_object: " << e.what() << std::endl;
    return 1;
  }
}
