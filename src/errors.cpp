#include "errors.hpp"

namespace rcoord {

std::string format_error(const Error& e) {
  std::string line = "rcoord: ";
  line += e.what();
  if (!e.hint().empty()) {
    line += " (";
    line += e.hint();
    line += ")";
  }
  // One line, whatever the server or the OS put in the message.
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

}  // namespace rcoord
