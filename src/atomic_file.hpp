#pragma once
/// Replacing a file so that a reader sees the old content or the new, never a part.

#include <string>
#include <string_view>

namespace rcoord {

/// Writes `content` to a temporary file in the directory of `path`, flushes it to disk and
/// renames it over `path`. The file is readable by all the umask allows (0666 less the umask),
/// as a collector running as another user needs. The temporary file's name starts with a dot
/// and has no extension, so a collector that reads `*.prom` never sees it. Throws
/// Error(kUsage) when the temporary file cannot be made there (no such directory, no right to
/// write in it) or cannot take the place of `path` (a directory), Error(kConnection) when
/// writing fails (a full disk, an I/O error); the temporary file is removed then.
void replace_file(const std::string& path, std::string_view content);

}  // namespace rcoord
