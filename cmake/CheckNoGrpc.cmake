# invariant_check_no_grpc(<target>): fails the configure step when <target>
# links gRPC (gRPC::grpc++ or gRPC::grpc, or a libgrpc / libgrpc++ file),
# directly or through any library it links, and names the chain that does.
#
# It walks LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES recursively, after
# every target involved is defined (call it once the libraries it links
# exist). $<LINK_ONLY:x> counts as x; other generator expressions are skipped.
# Used for server/handlers (server/CMakeLists.txt), whose code must stay
# transport-free.
function(invariant_check_no_grpc target)
  set(nodes ${target})
  set(parents "-")
  set(queue ${target})
  set(seen)
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    set(deps)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    if(interface)
      list(APPEND deps ${interface})
    endif()
    get_target_property(imported ${current} IMPORTED)
    if(NOT imported)
      get_target_property(direct ${current} LINK_LIBRARIES)
      if(direct)
        list(APPEND deps ${direct})
      endif()
    endif()
    foreach(dep IN LISTS deps)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      if(dep MATCHES "^\\$<" OR dep STREQUAL "")
        continue()
      endif()
      if(dep MATCHES "^(gRPC::grpc\\+\\+|gRPC::grpc|grpc\\+\\+|grpc)$"
         OR dep MATCHES "(^|/)libgrpc(\\+\\+)?\\.(so|a)")
        set(chain "${dep}")
        set(node ${current})
        while(NOT node STREQUAL "-")
          set(chain "${node} -> ${chain}")
          list(FIND nodes ${node} index)
          list(GET parents ${index} node)
        endwhile()
        message(FATAL_ERROR
          "${target} must not link gRPC, but it does: ${chain}\n"
          "Code that needs gRPC belongs in server/grpc (docs/architecture.md).")
      endif()
      if(NOT dep IN_LIST nodes)
        list(APPEND nodes ${dep})
        list(APPEND parents ${current})
      endif()
      list(APPEND queue ${dep})
    endforeach()
  endwhile()
endfunction()
