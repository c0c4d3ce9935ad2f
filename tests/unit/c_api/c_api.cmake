# The public headers, compiled as strict C.
add_executable(c_api_check unit/c_api/c_api_check.c unit/c_api/audiod_h_alone.c
  unit/c_api/module_h_alone.c)
set_target_properties(c_api_check PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_definitions(c_api_check PRIVATE _POSIX_C_SOURCE=200809L)
target_link_libraries(c_api_check PRIVATE audiod audiod_module_api)
add_test(NAME c_api_check COMMAND c_api_check)
audiod_label_test(c_api_check c_api_check unit)
