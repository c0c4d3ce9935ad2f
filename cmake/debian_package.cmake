# The Debian package (cpack -G DEB, run by scripts/package on a build made
# with -DAUDIOD_SYSTEM_PACKAGE=ON, CMAKE_INSTALL_PREFIX=/usr and the
# multiarch library folder). Depends: come from dpkg-shlibdeps.
if(AUDIOD_SYSTEM_PACKAGE)
  # alsa-lib reads /etc/alsa/conf.d; Debian's packages link their snippet
  # there from /usr/share/alsa/alsa.conf.d, as this one does.
  install(CODE "
    set(link \"\$ENV{DESTDIR}/etc/alsa/conf.d/50-audiod.conf\")
    file(MAKE_DIRECTORY \"\$ENV{DESTDIR}/etc/alsa/conf.d\")
    file(CREATE_LINK \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/alsa/alsa.conf.d/50-audiod.conf\"
      \"\${link}\" SYMBOLIC)
    message(STATUS \"Installing: \${link}\")
  ")
  install(FILES doc/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
  # A native package's changelog, compressed as Debian policy asks.
  install(CODE "
    set(doc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
    file(MAKE_DIRECTORY \"\${doc}\")
    execute_process(COMMAND gzip -9n -c \"${PROJECT_SOURCE_DIR}/doc/debian/changelog\"
      OUTPUT_FILE \"\${doc}/changelog.gz\" COMMAND_ERROR_IS_FATAL ANY)
    message(STATUS \"Installing: \${doc}/changelog.gz\")
  ")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME audiod)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "audiod developers <audiod@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "low-latency audio routing server")
set(CPACK_PACKAGE_DESCRIPTION
  "audiod mixes the streams of its clients into sound cards, files and the
network with per-stream, per-application and per-sink volume, moves streams
between sinks while they play without losing a sample, and never lets a
stopped client or server hang a player. It runs headless, per user (started
by its systemd socket) or for the whole machine. Unmodified ALSA programs
play through it with the included ALSA plugin (aplay -D audiod).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # audiod_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION sound)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The ldconfig trigger, as Debian asks of a package with a shared library
# (CPack would otherwise add ldconfig calls to the scripts it writes).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/doc/debian/postinst
  ${PROJECT_SOURCE_DIR}/doc/debian/postrm ${PROJECT_SOURCE_DIR}/doc/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
