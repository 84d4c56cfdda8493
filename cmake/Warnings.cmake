option(RCOORD_WERROR "Treat warnings as errors" ON)
add_library(rcoord_warnings INTERFACE)
target_compile_options(rcoord_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wimplicit-fallthrough $<$<BOOL:${RCOORD_WERROR}>:-Werror>)
# GCC 12 reports -Wrestrict for plain std::string concatenation at -O3 (GCC bug 105329): a
# false positive in libstdc++'s inlined code, not in ours.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(rcoord_warnings INTERFACE -Wno-restrict)
endif()
