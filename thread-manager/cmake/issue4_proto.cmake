# Sets DJAVA_ISSUE4_PROTO to a library target that provides tm.pb.h and
# monitor.pb.h. Normally that is the proto library of proto/CMakeLists.txt
# (helper A's, which globs every proto/*.proto); until it exists we generate
# our two files ourselves so that issue 4 builds on its own.
if(TARGET djava_proto)
  set(DJAVA_ISSUE4_PROTO djava_proto)
elseif(TARGET djava_issue4_proto)
  set(DJAVA_ISSUE4_PROTO djava_issue4_proto)
else()
  set(_gen ${CMAKE_BINARY_DIR}/issue4-proto)
  file(MAKE_DIRECTORY ${_gen})
  set(_srcs)
  foreach(name tm monitor)
    add_custom_command(
      OUTPUT ${_gen}/${name}.pb.cc ${_gen}/${name}.pb.h
      COMMAND protobuf::protoc --cpp_out=${_gen} -I${CMAKE_SOURCE_DIR}/proto
              ${CMAKE_SOURCE_DIR}/proto/${name}.proto
      DEPENDS ${CMAKE_SOURCE_DIR}/proto/${name}.proto protobuf::protoc)
    list(APPEND _srcs ${_gen}/${name}.pb.cc)
  endforeach()
  add_library(djava_issue4_proto STATIC ${_srcs})
  target_include_directories(djava_issue4_proto PUBLIC ${_gen})
  target_link_libraries(djava_issue4_proto PUBLIC protobuf::libprotobuf)
  set(DJAVA_ISSUE4_PROTO djava_issue4_proto)
endif()
