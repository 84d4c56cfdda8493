# RCOORD_SANITIZE=address,undefined builds everything (library, binary, tests) instrumented.
set(RCOORD_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined")
if(RCOORD_SANITIZE)
  add_compile_options(-fsanitize=${RCOORD_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${RCOORD_SANITIZE})
endif()
