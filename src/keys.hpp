#pragma once
/// Key naming. Every key of one object shares one hash tag, `{<type>:<name>}`, so all of an
/// object's keys live in one cluster slot and each Lua script touches a single slot.

#include <string>
#include <string_view>

namespace rcoord {

class Keys {
 public:
  explicit Keys(std::string prefix = "rcoord:") : prefix_(std::move(prefix)) {}

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
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
};

/// Throws Error(kUsage) when an object name cannot be used (empty).
void check_name(std::string_view what, std::string_view name);

}  // namespace rcoord
