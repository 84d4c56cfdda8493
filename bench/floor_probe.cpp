// The floor of a one-shot lock command (issue #20): connect to 127.0.0.1:PORT, send one
// `SET KEY 1 NX PX 30000`, read the reply line, exit. No library beyond the C library, linked
// statically by scripts/bench, so what it costs is process start-up, one connection and one
// round trip: what no one-shot client can go below.
//
//   floor_probe PORT KEY     exit 0: set, 1: the key was there, 2: anything else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "floor_probe: %s\n", what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: floor_probe PORT KEY");
  const char* key = argv[2];
  char request[512];
  int length = std::snprintf(request, sizeof request,
                             "*6\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$1\r\n1\r\n$2\r\nNX\r\n$2\r\nPX\r\n"
                             "$5\r\n30000\r\n",
                             std::strlen(key), key);
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof request) {
    return fail("key too long");
  }

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return fail("socket");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<unsigned short>(std::atoi(argv[1])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return fail("connect");
  }
  if (write(fd, request, static_cast<std::size_t>(length)) != length) return fail("write");

  char reply[64];
  std::size_t got = 0;
  while (got < sizeof reply) {
    ssize_t n = read(fd, reply + got, sizeof reply - got);
    if (n <= 0) return fail("read");
    got += static_cast<std::size_t>(n);
    if (std::memchr(reply, '\n', got) != nullptr) break;
  }
  close(fd);
  if (got >= 3 && std::memcmp(reply, "+OK", 3) == 0) return 0;
  if (got >= 3 && std::memcmp(reply, "$-1", 3) == 0) return 1;
  return fail("unexpected reply");
}
