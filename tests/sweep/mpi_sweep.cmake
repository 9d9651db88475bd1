# `railsim sweep` under MPI against the same sweep run as one process (no launcher).
#   cmake -DCASE=same_bytes|bad_input -DRAILSIM=<program> -DMPIEXEC=<mpirun> -DNUMPROC_FLAG=-np
#         -DMPI_FLAGS=<list> -DGNUPLOT=<gnuplot or empty> -DWORK_DIR=<scratch> -P mpi_sweep.cmake
# same_bytes: a plan sweep and a design sweep, as text, CSV and JSON (and a plot when gnuplot is
#   there): the bytes of `mpirun -np 2` (and -np 3, both splits) equal those of one process.
# bad_input: under `mpirun -np 2`, bad input prints exactly the one-process error line, once, and
#   every rank exits 2; two ranks started with other inputs (MPMD) stop before any work, and the
#   line names the rank that differs.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs railsim with ARGN as `np` processes (0: one process without mpirun) into <name>.out and
# <name>.err; sets rc.
function(run name np)
  if(np EQUAL 0)
    set(cmd ${RAILSIM} ${ARGN})
  else()
    set(cmd ${MPIEXEC} ${NUMPROC_FLAG} ${np} ${MPI_FLAGS} ${RAILSIM} ${ARGN})
  endif()
  execute_process(COMMAND ${cmd} WORKING_DIRECTORY ${WORK_DIR}
                  OUTPUT_FILE ${WORK_DIR}/${name}.out ERROR_FILE ${WORK_DIR}/${name}.err
                  RESULT_VARIABLE code)
  set(rc ${code} PARENT_SCOPE)
endfunction()

function(line_count file out)
  file(READ ${file} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()

function(expect_same a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/${a} ${WORK_DIR}/${b}
                  RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${what}: ${a} and ${b} differ")
  endif()
endfunction()

# Splits a case "ARGS|EXPECTED" into <args_out> (the arguments, a list) and <expected_out> (what
# follows '|', "" when nothing does).
function(split_case c args_out expected_out)
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 args)
  list(LENGTH parts n)
  set(expected "")
  if(n GREATER 1)
    list(GET parts 1 expected)
  endif()
  separate_arguments(args UNIX_COMMAND "${args}")
  set(${args_out} ${args} PARENT_SCOPE)
  set(${expected_out} "${expected}" PARENT_SCOPE)
endfunction()

# Checks that <name> wrote nothing to stdout and one line to stderr: "railsim: error: " and then
# the regular expression `expected`; `what` names the case in a failure.
function(expect_error_line name what expected)
  file(READ ${WORK_DIR}/${name}.err err)
  line_count(${WORK_DIR}/${name}.err lines)
  file(SIZE ${WORK_DIR}/${name}.out out_size)
  if(NOT lines EQUAL 1 OR NOT out_size EQUAL 0)
    message(FATAL_ERROR "${what}: ${lines} lines on stderr, ${out_size} bytes on stdout; "
                        "expected 1, 0:\n${err}")
  endif()
  if(NOT err MATCHES "^railsim: error: ${expected}")
    message(FATAL_ERROR "${what}: expected 'railsim: error: ${expected}', got ${err}")
  endif()
endfunction()

function(expect_ok name)
  if(NOT rc EQUAL 0)
    file(READ ${WORK_DIR}/${name}.err err)
    message(FATAL_ERROR "${name}: exit ${rc}: ${err}")
  endif()
  file(SIZE ${WORK_DIR}/${name}.err err_size)
  if(NOT err_size EQUAL 0)
    file(READ ${WORK_DIR}/${name}.err err)
    message(FATAL_ERROR "${name}: wrote to stderr: ${err}")
  endif()
endfunction()

if(CASE STREQUAL "same_bytes")
  # 6 points, 1,001 GPUs invalid (not whole HB domains of 8): its rows carry the reason.
  set(plan_sweep sweep --gpus 1001,1024,2048 --batch 1024,4096 --model GPT-1T)
  # 27 points, cost and power only.
  set(design_sweep sweep --no-perf --gpus 1024..262144x2 --oversubscription 1,2,3)
  foreach(sweep plan design)
    foreach(form text csv json)
      set(flag "")
      if(form STREQUAL "csv")
        set(flag --csv)
      elseif(form STREQUAL "json")
        set(flag --json)
      endif()
      run(${sweep}_${form}_1 0 ${${sweep}_sweep} ${flag})
      expect_ok(${sweep}_${form}_1)
      run(${sweep}_${form}_np2 2 ${${sweep}_sweep} ${flag})
      expect_ok(${sweep}_${form}_np2)
      expect_same(${sweep}_${form}_1.out ${sweep}_${form}_np2.out "${sweep} sweep, ${form}")
    endforeach()
    # Not two empty files: a header and one row per point and design.
    line_count(${WORK_DIR}/${sweep}_csv_1.out lines)
    if(sweep STREQUAL "plan")
      set(expected 19)
    else()
      set(expected 82)
    endif()
    if(NOT lines EQUAL expected)
      message(FATAL_ERROR "${sweep} sweep: ${lines} CSV lines, expected ${expected}")
    endif()
  endforeach()
  file(READ ${WORK_DIR}/plan_csv_1.out plan_csv)
  if(NOT plan_csv MATCHES "rail_only,[^\n]*tp[0-9]+ pp[0-9]+ dp[0-9]+")
    message(FATAL_ERROR "plan sweep: no best plan in the CSV:\n${plan_csv}")
  endif()
  # Three ranks: shares of 2 points each, strided and contiguous.
  foreach(split strided contiguous)
    run(plan_csv_np3_${split} 3 ${plan_sweep} --csv --split ${split})
    expect_ok(plan_csv_np3_${split})
    expect_same(plan_csv_1.out plan_csv_np3_${split}.out "plan sweep, 3 ranks, ${split}")
  endforeach()
  # More ranks than points: some ranks evaluate nothing.
  set(small_sweep sweep --gpus 2048 --batch 1024,4096)
  run(plan_csv_np8 8 ${small_sweep} --csv)
  expect_ok(plan_csv_np8)
  run(plan_csv_small_1 0 ${small_sweep} --csv)
  expect_ok(plan_csv_small_1)
  expect_same(plan_csv_small_1.out plan_csv_np8.out "plan sweep of 2 points on 8 ranks")
  if(GNUPLOT)
    foreach(np 0 2)
      run(plot_${np} ${np} ${design_sweep} --csv --plot plot_${np}.svg --plot-x gpus
          --plot-y cost_usd)
      expect_ok(plot_${np})
    endforeach()
    expect_same(plot_0.svg plot_2.svg "plot of the design sweep")
    expect_same(plot_0.out plot_2.out "design sweep with a plot")
  endif()
elseif(CASE STREQUAL "bad_input")
  set(cases
      "--gpus 0|--gpus"
      "--gpus 1001|--hb-domain"  # every point invalid: found after the ranks' rows are gathered
      "--no-such-option|"
      "--split diagonal|--split"
      "--model NoSuchModel|--model"
      "--gpus 1024 --plot no-such-dir/x.svg --plot-x gpus --plot-y cost_usd|--plot")
  set(i 0)
  foreach(c ${cases})
    split_case("${c}" args field)
    run(bad${i}_1 0 sweep ${args})
    set(rc1 ${rc})
    run(bad${i}_np2 2 sweep ${args})
    if(NOT rc1 EQUAL 2 OR NOT rc EQUAL 2)
      message(FATAL_ERROR "sweep ${c}: exit ${rc1} (one process), ${rc} (mpirun), expected 2")
    endif()
    expect_error_line(bad${i}_np2 "sweep ${c} under mpirun" "${field}")
    expect_same(bad${i}_1.err bad${i}_np2.err "sweep ${c}: the error line")
    math(EXPR i "${i} + 1")
  endforeach()
  # Two ranks started with other command lines (MPMD, "A : B"): rank 1 with other GPUs, or with
  # an option that does not parse. Every rank exits 2 and rank 0 prints one line naming rank 1,
  # before any point is evaluated (no rows of two sweeps mixed).
  set(mpmd_cases
      "--gpus 2048|mpirun: rank 1 of 2 was given other inputs than rank 0 \\('--gpus 2048' where rank 0 has '--gpus 1024'\\)"
      "--gpus 1024 --zip|mpirun: rank 1 of 2 was given other inputs than rank 0 \\('--zip true' where rank 0 has '--no-perf true'\\)"
      "--gpus 1024 --bogus|--bogus: railsim sweep has no such option \\(railsim sweep --help lists its options\\) \\(rank 1 of 2\\)")
  set(i 0)
  foreach(c ${mpmd_cases})
    split_case("${c}" args expected)
    execute_process(COMMAND ${MPIEXEC} ${MPI_FLAGS} ${NUMPROC_FLAG} 1 ${RAILSIM} sweep --no-perf
                            --gpus 1024 : ${NUMPROC_FLAG} 1 ${RAILSIM} sweep --no-perf ${args}
                    WORKING_DIRECTORY ${WORK_DIR} OUTPUT_FILE ${WORK_DIR}/mpmd${i}.out
                    ERROR_FILE ${WORK_DIR}/mpmd${i}.err RESULT_VARIABLE rc TIMEOUT 120)
    if(NOT rc EQUAL 2)
      message(FATAL_ERROR "MPMD sweep (rank 1: ${c}): exit ${rc}, expected 2")
    endif()
    expect_error_line(mpmd${i} "MPMD sweep (rank 1: ${c})" "${expected}")
    math(EXPR i "${i} + 1")
  endforeach()
else()
  message(FATAL_ERROR "CASE must be same_bytes or bad_input")
endif()
