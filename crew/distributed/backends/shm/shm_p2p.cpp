// send/recv of the shm backend: one mailbox per ordered pair (src -> dst). The sender writes
// a chunk and bumps `sent`; the receiver copies it out and bumps `acked`; the sender writes the
// next chunk once acked caught up. A send completes when its last chunk is in the mailbox.
#include <algorithm>
#include <cstring>

#include "crew/core/check.h"
#include "crew/distributed/backends/shm/shm_comm.h"
#include "crew/distributed/backends/shm/shm_sync.h"

namespace crew::dist::detail {

void ShmComm::send(ShmOp& op, const void* data, size_t bytes, int dst, int64_t tag) {
  op.peer = dst;
  MailboxControl& box = mailbox(rank_, dst);
  uint8_t* slot = mailbox_data(rank_, dst);
  const size_t cap = geometry_.mailbox_bytes;
  size_t off = 0;
  do {
    const uint32_t sent = box.sent.value.load(std::memory_order_relaxed);  // only this thread writes it
    wait_flag(op, box.acked, sent, dst);
    const size_t n = std::min(cap, bytes - off);
    std::memcpy(slot, static_cast<const uint8_t*>(data) + off, n);
    box.chunk_bytes = n;
    box.total_bytes = bytes;
    box.tag = tag;
    publish(box.sent, sent + 1);
    off += n;
  } while (off < bytes);
}

void ShmComm::recv(ShmOp& op, void* data, size_t bytes, int src, int64_t tag) {
  op.peer = src;
  MailboxControl& box = mailbox(src, rank_);
  const uint8_t* slot = mailbox_data(src, rank_);
  const size_t cap = geometry_.mailbox_bytes;
  size_t off = 0;
  bool first = true;
  do {
    const uint32_t acked = box.acked.value.load(std::memory_order_relaxed);  // only this thread writes it
    wait_flag(op, box.sent, acked + 1, src);
    if (first && (box.tag != tag || box.total_bytes != bytes)) {
      fail<CommError>(op, str_cat("the next message from rank ", src, " has tag ", box.tag, " and ",
                                  box.total_bytes, " bytes, expected tag ", tag, " and ", bytes,
                                  " bytes (messages between two ranks arrive in send order)"));
    }
    const size_t n = std::min(cap, bytes - off);
    CREW_INTERNAL_ASSERT(box.chunk_bytes == n, "recv chunk of ", box.chunk_bytes, " bytes, expected ", n);
    std::memcpy(static_cast<uint8_t*>(data) + off, slot, n);
    publish(box.acked, acked + 1);
    off += n;
    first = false;
  } while (off < bytes);
}

}  // namespace crew::dist::detail
