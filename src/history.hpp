#pragma once
/// The event log each lock, semaphore, election and queue keeps (SPEC §5 "history"): a
/// stream on the object's hash tag (Keys::history), capped at --history entries and expiring
/// 7 days after its newest event, appended by the very scripts that change the object
/// (src/lua/lib/history.lua). Here: what a give-back tells those scripts, and reading the
/// log back for `rcoord history`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "identity.hpp"
#include "keys.hpp"

namespace rcoord {

/// How a hold ends, for the event its give-back records.
struct Ending {
  enum class How {
    kGivenBack,  ///< `released` (`resigned` for a leader)
    kWithdrawn,  ///< a waiter that gave up: `busy` when it held nothing
    kLost,       ///< a `run` form lost it: `lost`, then whatever the give-back finds
    kTimedOut,   ///< a `run` form's command ran past --max-run: `timeout`, then `released`
  };
  How how = How::kGivenBack;
  std::string who{};                        ///< who gives it back (pack()); "" unknown
  std::optional<int> exit_code{};           ///< what a `run` form exits with
  std::optional<std::int64_t> waited_ms{};  ///< how long its take waited

  /// This ending, given back by the taker `who` whose take waited `waited` ms (what a lease
  /// knows of its take and adds to what run_holding says).
  Ending of_taker(std::string taker, std::int64_t waited) const {
    Ending e = *this;
    e.who = std::move(taker);
    e.waited_ms = waited;
    return e;
  }
};

namespace history {

/// The ARGV a recording give-back script takes after its own: the cap (Keys::history_cap),
/// who, how ('', 'withdraw', 'lost', 'timeout'), the exit code and the wait ('' when unknown).
Args ending_args(const Keys& keys, const Ending& ending);

/// One event as the stream keeps it.
struct Event {
  std::string id;         ///< the entry's id, `<ms>-<seq>`
  std::int64_t at = 0;    ///< server time of the event, ms since the epoch (from the id)
  std::string event;      ///< `acquired`, `busy`, ...
  Identity who{};         ///< who caused it (unknown when not recorded)
  std::string token{};    ///< the fields below are empty when the event has none
  std::string held_by{};  ///< packed identity of the holder a `busy` or `broken` met
  /// The other fields, as recorded (fence, term, held_ms, waited_ms, exit_code, mode,
  /// readers, id, attempts...), in the order recorded.
  std::vector<std::pair<std::string, std::string>> fields{};
};

/// Decodes one stream entry (`[id, [field, value, ...]]`). Throws Error(kServer) for
/// another shape.
Event decode_entry(const redisReply* entry);

/// What read() returns.
struct Page {
  std::vector<Event> events;  ///< oldest first
  std::string last_id;        ///< the newest entry's id in the whole log ("0-0" when empty)
  bool exists = false;        ///< the log exists
};

/// The events of log `key`: oldest first; only those at or after `since_ms` (server time)
/// when given, and of those the newest `limit` when given.
Page read(Connection& conn, const std::string& key, std::optional<std::int64_t> since_ms,
          std::optional<std::int64_t> limit);

/// Waits up to `block` (a blocking read, no polling) for events after entry `after`; empty
/// when none came.
std::vector<Event> read_after(Connection& conn, const std::string& key, const std::string& after,
                              Millis block);

/// Of `types` (`lock`, `sem`...), those under which `name` left anything: its history, or
/// its main key. One round trip (more on a cluster whose nodes keep them apart).
std::vector<std::string> types_present(Connection& conn, const Keys& keys,
                                       const std::vector<std::string>& types,
                                       std::string_view name);

/// The server's clock, ms since the epoch: the clock the events are stamped by.
std::int64_t server_ms(Connection& conn);

}  // namespace history
}  // namespace rcoord
