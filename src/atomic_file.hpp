#pragma once
/// Replacing a file so that a reader sees the old content or the new, never a part.

#include <string>
#include <string_view>

namespace rcoord {

/// Throws Error(kUsage) unless `path` can be replaced by a regular file: it must name a file
/// (not be empty or end in '/'), and when something exists there already (lstat: a symbolic
/// link is not followed) it must be a regular file. A device node (`/dev/full`), a FIFO, a
/// socket, a directory or a symbolic link (`/dev/stdout`) is refused: a rename over it would
/// put a plain file in its place.
void check_replaceable(const std::string& path);

/// Writes `content` to a temporary file in the directory of `path`, flushes it to disk and
/// renames it over `path`, after check_replaceable(path) (asked again just before the
/// rename). The file is readable by all the umask allows (0666 less the umask), as a
/// collector running as another user needs. The temporary file's name starts with a dot and
/// has no extension, so a collector that reads `*.prom` never sees it. Throws Error(kUsage)
/// when the temporary file cannot be made there (no such directory, no right to write in it)
/// or cannot take the place of `path` (a directory), Error(kConnection) when writing fails (a
/// full disk, an I/O error); the temporary file is removed then.
void replace_file(const std::string& path, std::string_view content);

}  // namespace rcoord
