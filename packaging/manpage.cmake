# Writes a man page from a program's --help, so the page cannot drift from the program:
#   cmake -DPROGRAM=<exe> -DNAME=<name> -DSUMMARY=<one line> -DVERSION=<v> -DOUT=<file.1>
#         -P manpage.cmake
# The help text becomes the DESCRIPTION as preformatted text; FILES and SEE ALSO say where
# the installed samples and documentation are.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ${PROGRAM} --help
  OUTPUT_VARIABLE help ERROR_VARIABLE help_err RESULT_VARIABLE rc)
if(help STREQUAL "")
  set(help "${help_err}") # a program may print its usage on stderr
endif()
if(help STREQUAL "")
  message(FATAL_ERROR "${PROGRAM} --help printed nothing (exit ${rc})")
endif()
# Qt's usage line names the program by the path it was started from: the build tree's.
string(REPLACE "${PROGRAM}" "${NAME}" help "${help}")
# roff: a backslash is \e; a line starting with . or ' would be a request.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(TOUPPER "${NAME}" upper)
string(TIMESTAMP date "%Y-%m-%d" UTC) # honours SOURCE_DATE_EPOCH (reproducible builds)
file(WRITE ${OUT} ".TH ${upper} 1 \"${date}\" \"Tilescope ${VERSION}\" \"User Commands\"
.SH NAME
${NAME} \\- ${SUMMARY}
.SH DESCRIPTION
The text below is the program's own \\fB\\-\\-help\\fR.
.PP
.nf
${help}
.fi
.SH FILES
.TP
.I /usr/share/tilescope/samples
Sample models (models/*.onnx), hardware templates (hw/*.json) and a sweep specification
(sweeps/small.json) to start from.
.TP
.I /usr/share/doc/tilescope
The user guide (gui.md), the command-line reference (cli.md) and the documents on the
method, the cost model and the file formats.
.SH SEE ALSO
.BR tilescope (1),
.BR tilescope-cli (1)
")
