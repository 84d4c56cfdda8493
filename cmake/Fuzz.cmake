# RCOORD_FUZZ=ON builds the libFuzzer targets of tests/fuzz (clang only). Everything is
# instrumented for coverage and built with AddressSanitizer and UndefinedBehaviorSanitizer,
# which abort at the first finding so the fuzzer keeps the input.
option(RCOORD_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
if(RCOORD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RCOORD_FUZZ needs clang: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # -O1: what libFuzzer's documentation suggests, and quicker to build than -O2.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g -O1)
  add_link_options(-fsanitize=address,undefined)
endif()
