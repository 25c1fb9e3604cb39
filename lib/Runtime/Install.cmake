# Installs the runtime (and the libraries it links) with a CMake package
# config, so another project can find_package(FuelRuntime) and link
# Fuel::Runtime without fuelc's compiler, LLVM or MLIR.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(FUEL_RUNTIME_LIBRARIES FuelRuntime FuelArtifact FuelSupport)
foreach(lib ${FUEL_RUNTIME_LIBRARIES})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(FuelRuntime PROPERTIES EXPORT_NAME Runtime)
install(TARGETS ${FUEL_RUNTIME_LIBRARIES} EXPORT FuelRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers the runtime's interfaces (C++ and C) reach.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fuel-c
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fuel/Runtime
                  ${PROJECT_SOURCE_DIR}/include/fuel/Support
                  ${PROJECT_SOURCE_DIR}/include/fuel/Artifact
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuel)
set(configDir ${CMAKE_INSTALL_LIBDIR}/cmake/FuelRuntime)
install(EXPORT FuelRuntimeTargets NAMESPACE Fuel:: DESTINATION ${configDir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FuelRuntimeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/FuelRuntimeConfig.cmake INSTALL_DESTINATION ${configDir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/FuelRuntimeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/FuelRuntimeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/FuelRuntimeConfigVersion.cmake
        DESTINATION ${configDir})
