# CMake toolchain file: bare-metal Cortex-M4F with Zig's clang (pip package ziglang; PYTHON names the
# interpreter that has it, default python3). Any arm-none-eabi toolchain file works the same way.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-cc")
set(CMAKE_AR "${CMAKE_CURRENT_LIST_DIR}/zig-ar" CACHE FILEPATH "archiver")
set(CMAKE_RANLIB "${CMAKE_CURRENT_LIST_DIR}/zig-ranlib" CACHE FILEPATH "ranlib")
set(CMAKE_C_FLAGS_INIT "-target thumb-freestanding-eabihf -mcpu=cortex_m4+vfp4d16sp -fno-unwind-tables -fno-asynchronous-unwind-tables")
# no C library to link a test program against while CMake probes the compiler
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
