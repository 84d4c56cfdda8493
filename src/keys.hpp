#pragma once
/// Key naming. Every key of one object shares one hash tag, `{<type>:<name>}`, so all of an
/// object's keys live in one cluster slot and each Lua script touches a single slot.

#include <optional>
#include <string>
#include <string_view>

#include "errors.hpp"

namespace rcoord {

class Keys {
 public:
  explicit Keys(std::string prefix = "rcoord:", int history = 100)
      : prefix_(std::move(prefix)), history_(history) {}

  /// The main key of an object: `<prefix>{<type>:<name>}`.
  std::string object(std::string_view type, std::string_view name) const {
    std::string key;
    key.reserve(prefix_.size() + type.size() + name.size() + 3);
    key += prefix_;
    key += '{';
    key += type;
    key += ':';
    key += name;
    key += '}';
    return key;
  }
  /// An auxiliary key of the same object: `<prefix>{<type>:<name>}:<suffix>`.
  std::string aux(std::string_view type, std::string_view name, std::string_view suffix) const {
    std::string key = object(type, name);
    key += ':';
    key += suffix;
    return key;
  }
  /// The event log of an object (SPEC §5 history): a stream on its hash tag.
  std::string history(std::string_view type, std::string_view name) const {
    return aux(type, name, "history");
  }
  const std::string& prefix() const { return prefix_; }
  /// How many events each object's history keeps (--history); 0: none are recorded. It
  /// travels with the key layout because every script that changes an object appends there.
  int history_cap() const { return history_; }

 private:
  std::string prefix_;
  int history_;
};

/// Throws Error(kUsage) when an object name cannot be used (empty).
void check_name(std::string_view what, std::string_view name);

/// The object an rcoord key belongs to: its type tag (`lock`, `sem`...) and its name.
struct ObjectRef {
  std::string type;
  std::string name;
};

/// The object of a key laid out as Keys makes them (`<prefix>{<type>:<name>}`, optionally
/// followed by `:<suffix>`); nullopt for a key of another layout or an unknown type.
std::optional<ObjectRef> object_of_key(std::string_view key);

/// What messages call an object of type tag `type`: "semaphore" for sem, "bloom filter"...
std::string_view object_noun(std::string_view type);

/// The error (kServer, exit 4) for `key`, part of an rcoord object, holding `what` ("a
/// string, not the zset rcoord keeps there"): names the object and the key and says what to
/// do (`hint`, or by default: use another name or --prefix, or delete the stray key).
Error foreign_key_error(std::string_view key, std::string_view what, std::string hint = {});

}  // namespace rcoord
