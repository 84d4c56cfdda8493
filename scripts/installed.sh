# Sourced by the scripts that install what they need with apt-get.
#
# installed PKG[:ARCH]: whether the package is installed for this machine's architecture (or
# for ARCH). Not `dpkg -s PKG`: it fails once a package is installed for two architectures (the
# arm64 libraries scripts/test-aarch64 adds), and every run then installed it again.
installed() {
  local name=${1%%:*} arch=${1#*:}
  [ "$arch" != "$1" ] || arch="$(dpkg --print-architecture)|all"
  dpkg-query -W -f='${Architecture} ${db:Status-Abbrev}\n' "$name" 2>/dev/null |
    grep -Eq "^($arch) ii"
}
