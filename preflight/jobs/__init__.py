"""Reading the job people run, whatever its frameworks: which files are one job, read with them.

:mod:`.read` turns paths (files, folders) into one job's ``config.<kind>.*`` facts:
:mod:`.scan` (folders), :mod:`.graph` (which files are one job), :mod:`.walk` (the steps of a
read), :mod:`.formats` (how a file is parsed), :mod:`.scripts` (text configs and launch scripts,
by the frameworks' ``launch``), :mod:`.sourcing` (``source`` in a script), :mod:`.pyjob` (Python
job files), :mod:`.unread` (what a folder holds that was not read), :mod:`.defaults` (accelerate's
default config). What each framework reads and means is in :mod:`preflight.frameworks`; the
parsing they share is :mod:`preflight.reading`. This package sits above both.
"""
