# Run by cpack (CPACK_PRE_BUILD_SCRIPTS) once the package's files are staged: adds the Debian
# changelog, packaging/changelog with the maintainer in its trailer lines, compressed as Debian
# policy asks (gzip -9n: no name or time inside, so the same text gives the same bytes).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
file(READ "${CPACK_RCOORD_CHANGELOG}" changelog)
if(NOT changelog MATCHES "^rcoord \\(([^)]+)\\)")
  message(FATAL_ERROR "${CPACK_RCOORD_CHANGELOG}: the first line is not 'rcoord (VERSION) ...'")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL CPACK_PACKAGE_VERSION)
  message(FATAL_ERROR "${CPACK_RCOORD_CHANGELOG}: the latest entry is for ${CMAKE_MATCH_1}, the "
                      "package is ${CPACK_PACKAGE_VERSION}: add an entry for it at the top")
endif()
string(REPLACE "@RCOORD_PACKAGE_MAINTAINER@" "${CPACK_DEBIAN_PACKAGE_MAINTAINER}" changelog
       "${changelog}")
set(doc "${CPACK_TEMPORARY_INSTALL_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}/${CPACK_RCOORD_DOCDIR}")
file(WRITE "${doc}/changelog" "${changelog}")
execute_process(COMMAND gzip -9nf "${doc}/changelog" RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "gzip could not compress ${doc}/changelog")
endif()
