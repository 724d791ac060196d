"""Safe file output: the one way any command writes a file.

``safe_write`` writes to a temporary file beside the target and publishes it by an
atomic rename, never replacing a file the user edited (see DESIGN.md, "Writing
files"); ``interrupt`` turns SIGTERM and SIGHUP into an unwinding exception so that
cleanup runs, and opens zip archives whose closing hides no error.  It imports only
``errors``; the workbook writer, the engines and the command line import it.
"""
