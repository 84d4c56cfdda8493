# CPack's project config file (CPACK_PROJECT_CONFIG_FILE), read as each generator starts: the
# .deb's Maintainer is RCOORD_PACKAGE_MAINTAINER, else DEBFULLNAME and DEBEMAIL from the
# environment, as dch and dh_make take them (DEBEMAIL may also hold the whole 'Name <address>').
if(NOT CPACK_GENERATOR STREQUAL "DEB" OR CPACK_DEBIAN_PACKAGE_MAINTAINER)
  return()
endif()
if("$ENV{DEBEMAIL}" MATCHES "<.+>")
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "$ENV{DEBEMAIL}")
elseif(NOT "$ENV{DEBEMAIL}" STREQUAL "" AND NOT "$ENV{DEBFULLNAME}" STREQUAL "")
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
else()
  message(FATAL_ERROR
    "The .deb needs a maintainer, the person or team who ships it: configure with "
    "-DRCOORD_PACKAGE_MAINTAINER='Name <address>', or set DEBFULLNAME and DEBEMAIL for cpack.")
endif()
