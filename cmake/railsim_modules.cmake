# The module graph: the one place that says which railsim module may use which.
#
# RAILSIM_MODULES lists the modules in dependency order; RAILSIM_MODULE_DEPS_<m> lists the modules
# <m> builds on directly. A module may use those and, transitively, everything they use (topo may
# include core/ headers because spec does). CMakeLists.txt links each railsim_<m> library to its
# direct dependencies from here, and cmake/check_layering.cmake (the `layering` test) fails when a
# file of src/<m>/, include/railsim/<m>/ or tests/<m>/ includes "railsim/<x>/..." for a module <x>
# outside that set. ARCHITECTURE.md describes the graph.
#
#   core <- report  (the output toolkit: tables, CSV/JSON/text, number formats, files, plots,
#                    heatmaps, progress)
#   report <- spec <- topo <- cost
#                     topo <- perf <- traffic
#                             perf <- sim      (each module owns the views of its results)
#              cost, sim <- fail  (failure what-ifs on the Fabric, goodput under failures)
#     cost, sim, traffic <- sweep  (parameter studies: lists and ranges of inputs, tidy rows)
#              cost, sim <- optimize  (the cheapest network that trains the models fast enough)
#            sweep, fail <- html  (the one-file HTML report)
#         html, optimize <- command  (each command: its inputs as a field table, its run function)
set(RAILSIM_MODULES core report spec topo cost perf traffic sim fail sweep optimize html command)
set(RAILSIM_MODULE_DEPS_core "")
set(RAILSIM_MODULE_DEPS_report core)
set(RAILSIM_MODULE_DEPS_spec report)
set(RAILSIM_MODULE_DEPS_topo spec)
set(RAILSIM_MODULE_DEPS_cost topo)
set(RAILSIM_MODULE_DEPS_perf topo)
set(RAILSIM_MODULE_DEPS_traffic perf)
set(RAILSIM_MODULE_DEPS_sim perf)
set(RAILSIM_MODULE_DEPS_fail cost sim)
set(RAILSIM_MODULE_DEPS_sweep cost sim traffic)
set(RAILSIM_MODULE_DEPS_optimize cost sim)
set(RAILSIM_MODULE_DEPS_html sweep fail)
set(RAILSIM_MODULE_DEPS_command html optimize)

# Sets <out> to every module <module> may use: itself and its dependencies, transitively.
function(railsim_module_closure module out)
  set(result ${module})
  set(todo ${RAILSIM_MODULE_DEPS_${module}})
  while(todo)
    list(POP_FRONT todo m)
    if(NOT m IN_LIST result)
      list(APPEND result ${m})
      list(APPEND todo ${RAILSIM_MODULE_DEPS_${m}})
    endif()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
