// Every primitive's decoding of server replies, on replies that hiredis's own reader builds
// from arbitrary RESP bytes (so RESP parsing is fuzzed too). Byte 0 picks the decoder, the
// rest is the reply stream; decoders of two replies (TYPE then HGETALL or LRANGE) take the
// first two. A reply of a shape a decoder does not expect must end in Error(kServer) (exit
// 4), never in a crash or undefined behaviour. An error reply may also say that the server
// wants authentication, which is Error(kConnection) (exit 3) by design.

#include <hiredis/read.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bloom.hpp"
#include "complete.hpp"
#include "elect.hpp"
#include "fuzz_support.hpp"
#include "latch.hpp"
#include "limit.hpp"
#include "pf.hpp"
#include "queue.hpp"
#include "reply.hpp"
#include "semaphore.hpp"

namespace {

using namespace rcoord;

// hiredis allocates an array's element table as soon as it reads the `*N` header, before
// any element arrives: `*2000000000` alone asks for 16 GB. Under the fuzzer's malloc limit
// that is an out-of-memory report about hiredis, not rcoord; in a real process the calloc
// succeeds lazily or fails, and hiredis then reports "Out of memory", which the connection
// turns into an error. Refusing tables of more than 2^16 elements here takes the failing
// path, so the fuzzer spends its time on the decoders.
constexpr int kMaxArrayElements = 1 << 16;

const redisReplyObjectFunctions* default_functions() {
  static const redisReplyObjectFunctions* defaults = [] {
    redisReader* reader = redisReaderCreate();
    const redisReplyObjectFunctions* fn = reader->fn;
    redisReaderFree(reader);
    return fn;
  }();
  return defaults;
}

void* create_bounded_array(const redisReadTask* task, int elements) {
  if (elements > kMaxArrayElements) return nullptr;
  return default_functions()->createArray(task, elements);
}

redisReplyObjectFunctions* bounded_functions() {
  static redisReplyObjectFunctions fn = [] {
    redisReplyObjectFunctions copy = *default_functions();
    copy.createArray = create_bounded_array;
    return copy;
  }();
  return &fn;
}

std::vector<Reply> read_replies(const std::uint8_t* data, std::size_t size) {
  std::vector<Reply> out;
  redisReader* reader = redisReaderCreateWithFunctions(bounded_functions());
  if (reader == nullptr) return out;
  redisReaderFeed(reader, reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 2; ++i) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK || raw == nullptr) break;
    out.emplace_back(static_cast<redisReply*>(raw));
  }
  redisReaderFree(reader);
  return out;
}

// As many terms as an array reply of `per_term` elements per term answers for, so decoders
// that check the count get past the check as often as not.
std::vector<std::string> terms_for(const redisReply* r, std::size_t per_term) {
  std::size_t n = r->type == REDIS_REPLY_ARRAY ? r->elements / per_term : 1;
  return std::vector<std::string>(n, "term");
}

void decode(unsigned which, const std::vector<Reply>& replies) {
  const redisReply* r = replies[0].get();
  const redisReply* second = replies.size() > 1 ? replies[1].get() : r;
  const std::string key = "rcoord:fuzz";
  switch (which) {
    case 0:
      reply_integer(r);
      break;
    case 1:
      reply_string(r);
      break;
    case 2:
      check_reply(replies[0], "EVALSHA");
      break;
    case 3: {
      semaphore::Taken t;
      semaphore::decode_take(r, t);
      break;
    }
    case 4: {
      semaphore::Status s = semaphore::decode_status(r);
      fuzz::require(s.holders.size() * 6 + 3 == r->elements, "every holder is decoded");
      break;
    }
    case 5: {
      limit::Raw raw = limit::decode_raw(r);
      limit::Decision d = limit::to_decision(raw);
      // Also without the sanitizers: an overflow in the rounding shows as a negative time.
      if (raw.reset_after_us >= 0) fuzz::require(d.reset_after_ms >= 0, "µs round up to ms >= 0");
      break;
    }
    case 6: {
      elect::Campaign c;
      elect::decode_campaign(r, c);
      fuzz::require(c.ttl_ms >= 0, "a lease is not negative");
      break;
    }
    case 7:
      elect::decode_status(r);
      break;
    case 8:
      latch::decode_init(r);
      break;
    case 9: {
      std::vector<queue::Message> messages;
      queue::decode_pop(r, messages);
      break;
    }
    case 10:
      queue::decode_messages(r, "queue_peek");
      break;
    case 11:
      queue::decode_stats(r);
      break;
    case 12:
      complete::decode_add(r, terms_for(r, 2));
      break;
    case 13:
      complete::decode_remove(r, terms_for(r, 1));
      break;
    case 14: {
      complete::Suggestions s;
      complete::decode_suggest(r, key, s);
      break;
    }
    case 15: {
      complete::Suggestions s;
      complete::decode_recent(replies[0], replies.size() > 1 ? replies[1] : replies[0], key, "a",
                              10, s);
      fuzz::require(s.terms.size() <= 10, "no more suggestions than the limit");
      break;
    }
    case 16: {
      bloom::Meta meta;
      if (bloom::decode_meta(r, second, key, meta)) {
        // What add does when the last layer is full: size the next one from the metadata.
        bloom::next_layer(meta, meta.layers.size());
      }
      break;
    }
    case 17:
      if (r->type == REDIS_REPLY_ARRAY) bloom::bits_all_ones(r);
      break;
    case 18:
      bloom::decode_grant(r);
      break;
    default:
      pf::decode_count(replies[0], key);
      break;
  }
}

bool has_error_reply(const std::vector<Reply>& replies) {
  for (const auto& r : replies) {
    if (r->type == REDIS_REPLY_ERROR) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::vector<Reply> replies = read_replies(data + 1, size - 1);
  if (replies.empty()) return 0;
  unsigned which = data[0] % 20;
  if (has_error_reply(replies)) {
    fuzz::expect_errors({kServer, kConnection}, [&] { decode(which, replies); });
  } else {
    fuzz::expect_errors({kServer}, [&] { decode(which, replies); });
  }
  return 0;
}
