#include "crew/distributed/collective/object_collectives.h"

#include <algorithm>
#include <cstring>

#include "crew/core/check.h"
#include "crew/core/logging.h"

namespace crew::dist {

namespace {

std::vector<uint8_t> encode_object(const Object& obj) { return obj.encode(); }

Object decode_object(const uint8_t* data, size_t size) { return Object::decode(data, size); }

// The group's ProcessGroup, or null (after a warning) for a non-member.
ProcessGroup* member_pg(Group& group, const char* op) {
  if (group.is_member()) return group.process_group();
  CREW_LOG(WARNING) << op << ": current global rank " << get_rank() << " is not in group " << group.name()
                    << "; the call does nothing";
  return nullptr;
}

// The group rank of global rank src, the root of op; ValueError when src is not a member.
int root_of(Group& group, int src, const char* op) {
  const int root = group.get_group_rank(src);
  CREW_CHECK(root >= 0, op, " (rank ", group.rank(), ", group ", group.name(), "): src ", src,
             " is not a member of the group");
  return root;
}

// A uint8 tensor of `padded` bytes: `bytes` followed by zeros.
Tensor padded_bytes(const std::vector<uint8_t>& bytes, int64_t padded) {
  std::vector<uint8_t> buffer(static_cast<size_t>(padded), 0);
  std::copy(bytes.begin(), bytes.end(), buffer.begin());
  return Tensor::from_bytes(buffer.data(), {padded}, DType::UINT8);
}

Object decode_prefix(const Tensor& t, int64_t size, const char* op, int from) {
  CREW_CHECK(size >= 0 && size <= t.numel(), op, ": rank ", from, " announced ", size, " bytes, buffer has ",
             t.numel());
  const std::vector<uint8_t> bytes = t.slice(0, size).to_vector<uint8_t>();
  return decode_object(bytes.data(), bytes.size());
}

std::vector<int64_t> all_gather_sizes(ProcessGroup& pg, int64_t mine) {
  std::vector<Tensor> sizes;
  for (int r = 0; r < pg.size(); ++r) sizes.push_back(Tensor::empty({1}, DType::INT64));
  pg.all_gather(sizes, Tensor::from_vector<int64_t>({mine}), {.async_op = false})->wait();
  std::vector<int64_t> out;
  for (auto& s : sizes) out.push_back(s.to_vector<int64_t>()[0]);
  return out;
}

}  // namespace

void all_gather_object(std::vector<Object>& out, const Object& obj, Group* group) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "all_gather_object");
  if (!pg) return;
  const std::vector<uint8_t> bytes = encode_object(obj);
  const std::vector<int64_t> sizes = all_gather_sizes(*pg, static_cast<int64_t>(bytes.size()));
  const int64_t max_size = std::max<int64_t>(1, *std::max_element(sizes.begin(), sizes.end()));
  std::vector<Tensor> gathered;
  for (int r = 0; r < pg->size(); ++r) gathered.push_back(Tensor::empty({max_size}, DType::UINT8));
  pg->all_gather(gathered, padded_bytes(bytes, max_size), {.async_op = false})->wait();
  out.clear();
  for (int r = 0; r < pg->size(); ++r)
    out.push_back(decode_prefix(gathered[r], sizes[r], "all_gather_object", r));
}

void broadcast_object_list(std::vector<Object>& object_list, int src, Group* group) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "broadcast_object_list");
  if (!pg) return;
  const int root = root_of(g, src, "broadcast_object_list");
  const bool is_root = pg->rank() == root;
  // Round 1: how many objects; round 2: their sizes; round 3: the bytes.
  Tensor count = Tensor::from_vector<int64_t>({is_root ? static_cast<int64_t>(object_list.size()) : 0});
  pg->broadcast(count, {.root = root, .async_op = false})->wait();
  const int64_t n = count.to_vector<int64_t>()[0];
  CREW_CHECK(n >= 0, "broadcast_object_list: src announced ", n, " objects");
  if (n == 0) {
    object_list.clear();
    return;
  }
  std::vector<uint8_t> all_bytes;
  std::vector<int64_t> root_sizes(static_cast<size_t>(n), 0);
  if (is_root) {
    for (int64_t i = 0; i < n; ++i) {
      auto b = encode_object(object_list[i]);
      root_sizes[static_cast<size_t>(i)] = static_cast<int64_t>(b.size());
      all_bytes.insert(all_bytes.end(), b.begin(), b.end());
    }
  }
  Tensor sizes = Tensor::from_vector<int64_t>(root_sizes);
  pg->broadcast(sizes, {.root = root, .async_op = false})->wait();
  const auto size_list = sizes.to_vector<int64_t>();
  int64_t total = 0;
  for (int64_t s : size_list) {
    CREW_CHECK(s >= 0, "broadcast_object_list: src announced an object of ", s, " bytes");
    total += s;
  }
  Tensor data = padded_bytes(all_bytes, std::max<int64_t>(total, 1));
  pg->broadcast(data, {.root = root, .async_op = false})->wait();
  if (is_root) return;
  object_list.clear();
  const std::vector<uint8_t> received = data.to_vector<uint8_t>();
  const uint8_t* p = received.data();
  for (int64_t s : size_list) {
    object_list.push_back(decode_object(p, static_cast<size_t>(s)));
    p += s;
  }
}

void scatter_object_list(std::vector<Object>& out, const std::vector<Object>& in, int src, Group* group) {
  Group& g = detail::resolve_group(group);
  ProcessGroup* pg = member_pg(g, "scatter_object_list");
  if (!pg) return;
  const int root = root_of(g, src, "scatter_object_list");
  const bool is_root = pg->rank() == root;
  std::vector<std::vector<uint8_t>> encoded;
  int64_t max_size = 1;
  if (is_root) {
    CREW_CHECK(static_cast<int>(in.size()) == pg->size(), "scatter_object_list (rank ", g.rank(), ", group ",
               g.name(), "): expected ", pg->size(), " input objects, got ", in.size());
    for (const auto& obj : in) {
      encoded.push_back(encode_object(obj));
      max_size = std::max<int64_t>(max_size, static_cast<int64_t>(encoded.back().size()));
    }
  }
  // On the given group (Paddle broadcasts this size on the global group).
  Tensor max_tensor = Tensor::from_vector<int64_t>({max_size});
  pg->broadcast(max_tensor, {.root = root, .async_op = false})->wait();
  max_size = max_tensor.to_vector<int64_t>()[0];
  CREW_CHECK(max_size >= 1, "scatter_object_list: src announced ", max_size, " bytes");
  std::vector<Tensor> data_in, size_in;
  for (const auto& bytes : encoded) {
    data_in.push_back(padded_bytes(bytes, max_size));
    size_in.push_back(Tensor::from_vector<int64_t>({static_cast<int64_t>(bytes.size())}));
  }
  Tensor data = Tensor::empty({max_size}, DType::UINT8);
  Tensor size = Tensor::empty({1}, DType::INT64);
  pg->scatter(data, data_in, {.root = root, .async_op = false})->wait();
  pg->scatter(size, size_in, {.root = root, .async_op = false})->wait();
  out.clear();
  out.push_back(decode_prefix(data, size.to_vector<int64_t>()[0], "scatter_object_list", root));
}

}  // namespace crew::dist
