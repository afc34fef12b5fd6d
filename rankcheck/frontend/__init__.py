"""The front end: source bytes -> `ModuleSummary`, one pure function per module.

Reading and decoding source, the guard against pathological input, the libcst parse (and the
incremental re-parse of an edited buffer), node positions, scopes, and the lowering of libcst
trees to the summary IR (`rankcheck.program.ir`). Nothing here knows the rest of the project.
"""
