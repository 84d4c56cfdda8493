option(RCOORD_WERROR "Treat warnings as errors" ON)
add_library(rcoord_warnings INTERFACE)
target_compile_options(rcoord_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wimplicit-fallthrough $<$<BOOL:${RCOORD_WERROR}>:-Werror>)
