# Packaging: `cpack -G DEB` in the build folder makes a .deb (offline: only dpkg tools).
# Included by the root CMakeLists.txt; install rules for the binaries live next to their
# targets (app/CMakeLists.txt); the desktop integration files, the samples, the docs and
# the man pages are installed here.
include(GNUInstallDirs)

if(TARGET tilescope)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/tilescope.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/tilescope.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/tilescope.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/tilescope.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo
          RENAME org.tilescope.Tilescope.metainfo.xml)
endif()
# What a user starts from: the sample models, the hardware templates and a sweep spec
# (the welcome page finds them at ../share/tilescope/samples from the binary).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/models ${PROJECT_SOURCE_DIR}/samples/hw
                  ${PROJECT_SOURCE_DIR}/samples/sweeps
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tilescope/samples)
# The documentation: README, the user guide, the CLI reference and the documents they cite,
# in /usr/share/doc/<package> as Debian has it (GNUInstallDirs would use the project's
# capitalised name).
set(TILESCOPE_DOCDIR ${CMAKE_INSTALL_DATADIR}/doc/tilescope)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${TILESCOPE_DOCDIR} OPTIONAL)
file(GLOB TILESCOPE_DOCS ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.png)
install(FILES ${TILESCOPE_DOCS} DESTINATION ${TILESCOPE_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${TILESCOPE_DOCDIR})
# Debian wants a changelog in every package's doc folder, compressed.
set(TILESCOPE_CHANGELOG ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(
  OUTPUT ${TILESCOPE_CHANGELOG}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/packaging/changelog > ${TILESCOPE_CHANGELOG}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog)
add_custom_target(tilescope-changelog ALL DEPENDS ${TILESCOPE_CHANGELOG})
install(FILES ${TILESCOPE_CHANGELOG} DESTINATION ${TILESCOPE_DOCDIR})

# Man pages written from each program's --help (packaging/manpage.cmake), so they cannot
# drift from it; gzipped, as Debian installs them.
function(tilescope_manpage target summary)
  set(page ${CMAKE_BINARY_DIR}/man/${target}.1)
  add_custom_command(
    OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${target}> -DNAME=${target}
            -DSUMMARY=${summary} -DVERSION=${PROJECT_VERSION} -DOUT=${page}
            -P ${PROJECT_SOURCE_DIR}/packaging/manpage.cmake
    COMMAND gzip -9nf ${page}
    DEPENDS ${target} ${PROJECT_SOURCE_DIR}/packaging/manpage.cmake
    VERBATIM)
  add_custom_target(${target}-manpage ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
tilescope_manpage(tilescope-cli "schedule DNN inference on tiled accelerators from the command line")
if(TARGET tilescope)
  tilescope_manpage(tilescope "desktop explorer of DNN inference schedules on tiled accelerators")
endif()

set(CPACK_PACKAGE_NAME "tilescope")
set(CPACK_PACKAGE_VENDOR "Tilescope")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "Tilescope maintainers <tilescope-maintainers@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# The synopsis is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended description only
# (lines under 80 characters, as Debian wants).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Loads ONNX models and hardware templates, edits RA-tree inter-layer\n schedules and searches them by simulated annealing; a desktop explorer\n (tilescope) and a command-line tool (tilescope-cli), with sample models,\n hardware templates, a sweep spec, the documentation and man pages.")
# dpkg-shlibdeps derives the library dependencies (Qt 6, QCustomPlot, protobuf, onnx)
# from the binaries: no network, no hand-kept list that drifts.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
