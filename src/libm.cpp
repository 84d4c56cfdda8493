#include "libm.hpp"

#ifdef RCOORD_STATIC_LIBC

// Linked statically, libm costs a start nothing: its functions are called directly.
namespace rcoord::libm {

double log2(double x) { return std::log2(x); }
double log1p(double x) { return std::log1p(x); }
double pow(double x, double y) { return std::pow(x, y); }

}  // namespace rcoord::libm

#else

#include <dlfcn.h>
#include <fmt/format.h>
#include <gnu/lib-names.h>

#include "errors.hpp"

namespace rcoord::libm {
namespace {

struct Functions {
  double (*log2)(double);
  double (*log1p)(double);
  double (*pow)(double, double);
};

template <typename Function>
Function find(void* lib, const char* name) {
  void* found = lib == nullptr ? nullptr : dlsym(lib, name);
  if (found == nullptr) {
    const char* why = dlerror();
    throw Error(kServer,
                fmt::format("cannot load {} from {}: {}", name, LIBM_SO,
                            why != nullptr ? why : "not found"),
                "check the C library's installation");
  }
  return reinterpret_cast<Function>(found);  // dlsym's documented use
}

const Functions& functions() {
  static const Functions loaded = [] {
    void* lib = dlopen(LIBM_SO, RTLD_LAZY | RTLD_LOCAL);  // kept open until exit
    return Functions{find<double (*)(double)>(lib, "log2"), find<double (*)(double)>(lib, "log1p"),
                     find<double (*)(double, double)>(lib, "pow")};
  }();
  return loaded;
}

}  // namespace

double log2(double x) { return functions().log2(x); }
double log1p(double x) { return functions().log1p(x); }
double pow(double x, double y) { return functions().pow(x, y); }

}  // namespace rcoord::libm

#endif  // RCOORD_STATIC_LIBC
