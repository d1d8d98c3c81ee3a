# knee report (src/html): the JSON parser it links and the assets it embeds.
#
# jansson (Debian libjansson-dev) parses run JSON; other commands may reuse it.
# uPlot, the chart library, is pinned (version and npm integrity hash) in scripts/fetch-uplot.sh,
# fetched once into this build tree and compiled into libknee together with knee's own chart
# script and CSS (src/html/report.js, report.css), so `knee` alone writes a self-contained report.
# Included right after add_library(libknee) in CMakeLists.txt.

pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
target_link_libraries(libknee PUBLIC PkgConfig::JANSSON)

file(STRINGS ${CMAKE_SOURCE_DIR}/scripts/fetch-uplot.sh KNEE_UPLOT_VERSION_LINE REGEX "^UPLOT_VERSION=")
string(REGEX REPLACE "^UPLOT_VERSION=" "" KNEE_UPLOT_VERSION "${KNEE_UPLOT_VERSION_LINE}")
set(KNEE_UPLOT_DIR ${CMAKE_BINARY_DIR}/_deps/uplot-${KNEE_UPLOT_VERSION})

# Fetch at configure time, so a missing library stops the build at once with the reason.
execute_process(COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fetch-uplot.sh ${KNEE_UPLOT_DIR}
                RESULT_VARIABLE KNEE_UPLOT_RC)
if(NOT KNEE_UPLOT_RC EQUAL 0)
  message(FATAL_ERROR "knee report embeds uPlot ${KNEE_UPLOT_VERSION}, and scripts/fetch-uplot.sh could not "
                      "fetch it into ${KNEE_UPLOT_DIR} (message above). It needs npm and the npm registry once "
                      "per build tree; offline, set KNEE_UPLOT_TARBALL=/path/uplot-${KNEE_UPLOT_VERSION}.tgz.")
endif()

set(KNEE_HTML_ASSETS_C ${CMAKE_BINARY_DIR}/generated/html_assets.c)
set(KNEE_HTML_ASSET_INPUTS
    ${KNEE_UPLOT_DIR}/uPlot.iife.min.js ${KNEE_UPLOT_DIR}/uPlot.min.css ${KNEE_UPLOT_DIR}/LICENSE
    ${CMAKE_SOURCE_DIR}/src/html/report.js ${CMAKE_SOURCE_DIR}/src/html/report.css)
add_custom_command(
  OUTPUT ${KNEE_HTML_ASSETS_C}
  COMMAND ${CMAKE_COMMAND} -DOUT=${KNEE_HTML_ASSETS_C} -DUPLOT_DIR=${KNEE_UPLOT_DIR}
          -DUPLOT_VERSION=${KNEE_UPLOT_VERSION} -DSRC=${CMAKE_SOURCE_DIR}/src/html
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_assets.cmake
  DEPENDS ${KNEE_HTML_ASSET_INPUTS} ${CMAKE_SOURCE_DIR}/cmake/embed_assets.cmake
  COMMENT "Embedding uPlot ${KNEE_UPLOT_VERSION} and knee's report script")
target_sources(libknee PRIVATE ${KNEE_HTML_ASSETS_C})
