#pragma once
// Collectives of crew::dist::Object values (Paddle's all_gather_object & co.).
//
//   std::vector<Object> all;
//   all_gather_object(all, Object::dict({{"rank", Object(int64_t{get_rank()})}}));
//   std::cout << Object::list(all) << "\n";   // [{'rank': 0}, {'rank': 1}]
//
// Objects travel in Object's safe binary encoding: each op all-gathers (or broadcasts) the
// encoded sizes, zero-pads every encoding to the largest, moves the bytes as one uint8
// tensor per rank and decodes each rank's prefix. Groups and the not-initialized rule are as
// for the tensor collectives (collective.h); a non-member returns with `out` untouched.
#include <vector>

#include "crew/distributed/object/object.h"
#include "crew/distributed/parallel/parallel.h"

namespace crew::dist {

// out = [rank 0's obj, rank 1's obj, ...] over the group (out is cleared first).
void all_gather_object(std::vector<Object>& out, const Object& obj, Group* group = nullptr);
// src's list replaces every rank's (receivers' lists are resized to src's length).
// src is a global rank.
void broadcast_object_list(std::vector<Object>& object_list, int src = 0, Group* group = nullptr);
// out = [src's in[group rank]]; in is read on src only and needs one object per member.
void scatter_object_list(std::vector<Object>& out, const std::vector<Object>& in, int src = 0,
                         Group* group = nullptr);

}  // namespace crew::dist
