# Cross-compiling for 64-bit Arm Linux with Debian's cross compiler (g++-aarch64-linux-gnu)
# against the arm64 libraries of a multiarch system (libhiredis-dev:arm64, libssl-dev:arm64,
# libfmt-dev:arm64); the header-only dependencies are the same packages as for a native build.
# scripts/test-aarch64 installs them, builds with this file and runs the tests under qemu:
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and pkg-config files of the target only: an x86-64 libhiredis.so found by mistake
# would fail at link time, far from the cause.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)

# Test programs run under user-mode emulation on another CPU (ctest, and doctest's test
# discovery at build time). The arm64 C library of the multiarch system is where the
# emulator looks for the dynamic loader, so no sysroot prefix is needed.
find_program(RCOORD_QEMU_AARCH64 qemu-aarch64)
if(RCOORD_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${RCOORD_QEMU_AARCH64}")
endif()
