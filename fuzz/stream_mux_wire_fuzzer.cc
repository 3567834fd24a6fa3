// ScoreStreams' entry readers (proto/stream_mux_wire.h) on the input's bytes, as a
// ScoreStreamsRequest and as a ScoreStreamsResponse, held in slices of the size the first byte
// picks (1 to 256 bytes: gRPC hands a message over in slices of any size). Besides crashes, it
// aborts where a reader breaks its contract: entries read are written back (header + payload)
// and read again as the same entries, and no payload is larger than the message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "proto/stream_mux_wire.h"
#include "tests/byte_buffer_pieces.h"

namespace {

namespace wire = gmmscore::wire;
using gmmscore::testing::InSlices;
using gmmscore::testing::Join;

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = size_t(data[0]) + 1;
  const std::string message(reinterpret_cast<const char*>(data) + 1, size - 1);

  if (auto requests = wire::ReadStreamsRequest(InSlices(message, piece)); requests.ok()) {
    std::string again;
    for (const wire::StreamRequestView& e : *requests) {
      const std::string payload = Join(e.request);
      Check(payload.size() <= message.size());
      again +=
          wire::StreamRequestHeader(e.tag, e.has_request, payload.size(), e.writes_done, e.cancel) +
          payload;
    }
    auto reread = wire::ReadStreamsRequest(InSlices(again, piece));
    Check(reread.ok() && reread->size() == requests->size());
    for (size_t i = 0; i < requests->size(); ++i) {
      const wire::StreamRequestView &a = (*requests)[i], &b = (*reread)[i];
      Check(a.tag == b.tag && a.has_request == b.has_request && a.writes_done == b.writes_done &&
            a.cancel == b.cancel && a.holds_config == b.holds_config &&
            Join(a.request) == Join(b.request));
    }
  }

  if (auto replies = wire::ReadStreamsResponse(InSlices(message, piece)); replies.ok()) {
    std::string again;
    for (const wire::StreamReplyView& e : *replies) {
      if (e.has_status) {
        again += wire::StreamStatusReply(e.tag, e.code, e.message);
      } else if (e.has_response) {
        const std::string payload = Join(e.response);
        Check(payload.size() <= message.size());
        again += wire::StreamReplyHeader(e.tag, payload.size()) + payload;
      } else {
        again += wire::StreamReplyHeader(e.tag, 0);  // neither: read back as an empty response
      }
    }
    auto reread = wire::ReadStreamsResponse(InSlices(again, piece));
    Check(reread.ok() && reread->size() == replies->size());
    for (size_t i = 0; i < replies->size(); ++i) {
      const wire::StreamReplyView &a = (*replies)[i], &b = (*reread)[i];
      Check(a.tag == b.tag && a.has_status == b.has_status && a.code == b.code &&
            a.message == b.message && Join(a.response) == Join(b.response));
    }
  }
  return 0;
}
