# The licence that goes with every install, and the .deb that `cpack -G DEB` makes in the build
# directory (rcoord_<version>_<arch>.deb). The package is a native one (no Debian revision): it
# is built from the project's own tree, so its changelog is /usr/share/doc/rcoord/changelog.gz.

# --- /usr/share/doc/rcoord/copyright: LICENSE in Debian's machine-readable format ----------
# Made from LICENSE, so the two cannot disagree: its copyright line becomes the Copyright field
# and the text after it the licence paragraph (each line indented, a blank line as " ."). The
# MIT licence's text is the one Debian calls Expat.
file(READ "${CMAKE_CURRENT_SOURCE_DIR}/LICENSE" rcoord_license)
if(NOT rcoord_license MATCHES "\nCopyright \\(c\\) ([^\n]+)\n\n(.+)$")
  message(FATAL_ERROR "LICENSE: no 'Copyright (c) ...' line followed by the licence text")
endif()
set(rcoord_copyright_holders "${CMAKE_MATCH_1}")
string(STRIP "${CMAKE_MATCH_2}" rcoord_license_text)
string(REPLACE "\n\n" "\n.\n" rcoord_license_text "${rcoord_license_text}")
string(REPLACE "\n" "\n " rcoord_license_text " ${rcoord_license_text}")
file(CONFIGURE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/copyright" CONTENT
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: rcoord

Files: *
Copyright: ${rcoord_copyright_holders}
License: Expat
${rcoord_license_text}
")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/copyright" DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- the .deb --------------------------------------------------------------------------------
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "rcoord")
set(CPACK_PACKAGE_VENDOR "rcoord")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Coordination primitives on Redis for shell scripts, cron and CI")
# Debian wants the lines of the long description within 80 columns.
set(CPACK_PACKAGE_DESCRIPTION
    "Locks, semaphores, rate limits, Bloom filters, HyperLogLog counts, leader\n\
election, reliable queues, signals, latches and autocomplete, each a\n\
subcommand of one binary, with text or JSON output and exit codes a shell\n\
script can trust.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
# dpkg-shlibdeps derives the versioned Depends from the shared libraries the binary needs: the
# C library alone when libstdc++, hiredis and OpenSSL are linked in (RCOORD_BUNDLE_LIBS, the
# default), all four with -DRCOORD_BUNDLE_LIBS=OFF, as a distribution builds it so that their
# security updates reach rcoord without a rebuild.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server")
# The installed binary without its symbol table (cmake --install --strip does the same).
set(CPACK_STRIP_FILES ON)

# The Maintainer field names whoever builds and ships the package: the project has no address
# of its own to put there, and an invented one would be a contact that reaches nobody. It is
# RCOORD_PACKAGE_MAINTAINER, else DEBFULLNAME and DEBEMAIL from cpack's environment (as
# Debian's own tools read them); without either, cpack -G DEB stops and says so
# (DebMaintainer.cmake). The changelog's trailer line names the same person.
set(RCOORD_PACKAGE_MAINTAINER "" CACHE STRING
    "Maintainer of the .deb, 'Name <address>' (empty: DEBFULLNAME and DEBEMAIL when cpack runs)")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${RCOORD_PACKAGE_MAINTAINER}")
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_CURRENT_LIST_DIR}/DebMaintainer.cmake")
# packaging/changelog, its trailer filled in and compressed, is added to the staged files.
set(CPACK_RCOORD_CHANGELOG "${CMAKE_CURRENT_SOURCE_DIR}/packaging/changelog")
set(CPACK_RCOORD_DOCDIR "${CMAKE_INSTALL_DOCDIR}")
set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_CURRENT_LIST_DIR}/DebChangelog.cmake")
# The bundled binary is not position-independent, on purpose: lintian is told why.
if(RCOORD_BUNDLE_LIBS)
  install(FILES "${CMAKE_CURRENT_SOURCE_DIR}/packaging/lintian-overrides"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME rcoord)
endif()
include(CPack)
