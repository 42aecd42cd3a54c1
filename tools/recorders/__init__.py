"""The recorders of tools/record_traces.py, by what they record.

- `common`: paths, running a tool under a timeout, the trace venvs, records beside recordings.
- `python_programs`, `library_programs`, `library_pools`: the VizTracer suite's Python programs
  (standard library; third-party libraries; third-party libraries in pools of threads).
- `viztracer`, `chromium`, `jax_torch`, `python_samplers`: how each tool of the suite records.
- `suite`: the VizTracer suite (`SUITE`, `record`, `print_table`).
- `firefox`, `go_pprof`, `node`, `native` (callgrind, perf, uftrace), `python_samplers` (py-spy,
  pyinstrument), `chromium` (JSON and Perfetto): other tools' formats, each
  ``record_<tool>(out_dir) -> path`` (`common.RecordingSkipped` when the tool is missing).
- `format_suite`: those recordings together, and shipping the small ones for the tests;
  `summaries`: what each file holds, read from the file itself.
- ``programs/``: the programs the format recorders run (C, Go, JavaScript, HTML, Python).

tools/record_traces.py imports this folder as the package ``recorders`` by its path (it is
itself loaded by path, by tests/support/realtraces.py, without tools/ on sys.path).
"""
