#include "keys.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace rcoord {
namespace {

// Type tag -> the word messages use for such an object.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kNouns{{
    {"lock", "lock"},
    {"sem", "semaphore"},
    {"limit", "limit"},
    {"bloom", "bloom filter"},
    {"pf", "HyperLogLog"},
    {"complete", "autocomplete index"},
    {"recent", "recent list"},
    {"elect", "election"},
    {"queue", "queue"},
    {"signal", "channel"},
    {"latch", "latch"},
    {"gate", "gate"},
}};

}  // namespace

std::string_view object_noun(std::string_view type) {
  for (const auto& [tag, noun] : kNouns) {
    if (tag == type) return noun;
  }
  return {};
}

std::optional<ObjectRef> object_of_key(std::string_view key) {
  // The object part ends at the last '}': a name may hold braces, a suffix never does.
  auto close = key.rfind('}');
  if (close == std::string_view::npos) return std::nullopt;
  if (close + 1 != key.size() && key[close + 1] != ':') return std::nullopt;
  // The first '{' that opens `<known type>:` (a --prefix may hold braces too).
  for (auto open = key.find('{'); open != std::string_view::npos && open < close;
       open = key.find('{', open + 1)) {
    auto colon = key.find(':', open + 1);
    if (colon == std::string_view::npos || colon >= close) break;
    std::string_view type = key.substr(open + 1, colon - open - 1);
    if (!object_noun(type).empty()) {
      return ObjectRef{std::string(type), std::string(key.substr(colon + 1, close - colon - 1))};
    }
  }
  return std::nullopt;
}

Error foreign_key_error(std::string_view key, std::string_view what, std::string hint) {
  if (hint.empty()) {
    hint =
        "that key is not rcoord's: use another name or --prefix, or delete it if nothing needs it";
  }
  auto object = object_of_key(key);
  if (!object) return Error(kServer, fmt::format("key '{}' holds {}", key, what), std::move(hint));
  return Error(
      kServer,
      fmt::format("{} '{}': key '{}' holds {}", object_noun(object->type), object->name, key, what),
      std::move(hint));
}

}  // namespace rcoord
