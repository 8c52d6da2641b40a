# Packaging: `cpack -G DEB` in the build folder makes a .deb (offline: only dpkg tools).
# Included by the root CMakeLists.txt; install rules for the binaries live next to their
# targets (app/CMakeLists.txt), the desktop integration files are installed here.
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
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

set(CPACK_PACKAGE_NAME "tilescope")
set(CPACK_PACKAGE_VENDOR "Tilescope")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "Tilescope maintainers <tilescope@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Schedule explorer for DNN inference on tiled accelerators\n Loads ONNX models and hardware templates, edits RA-tree inter-layer schedules\n and searches them by simulated annealing; GUI (tilescope) and CLI (tilescope-cli).")
# dpkg-shlibdeps derives the library dependencies (Qt 6, QCustomPlot, protobuf, onnx)
# from the binaries: no network, no hand-kept list that drifts.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
